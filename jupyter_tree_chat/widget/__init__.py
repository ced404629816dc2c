"""The anywidget view: the per-turn control and the full panel (``widgets``), what they
send to the browser (``protocol``), and the hooks the kernel calls (``hooks``).

The front end is built from ``labextension/src`` (``panel/`` and the shared ``components/``)
into ``static/widget.js``, its stylesheet into ``static/widget.css``. Importing this
package does not import anywidget; ``TreePanel`` and ``TurnControl`` load it on first use,
so ``%load_ext`` stays cheap and a terminal IPython never pays for widgets.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TreePanel", "TurnControl"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import widgets

        return getattr(widgets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
