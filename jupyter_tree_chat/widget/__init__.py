"""The anywidget view: the panel (``widgets``) and the per-turn control (``turn``), what
they share (``base``: events to the browser, actions from it; ``actions``: edit,
fan-out, where a click is taken), what they send (``protocol``), the small ``_esm``
every instance carries (``loader``: the front end's code comes once per page), an
exported page from the panel (``sharing``), an experiment's clickable grid
(``experiment_grid``), grades in the panel (``grading``), the language the views speak
and whether the page has the lab's Insert below (``speaking``), and the hooks the kernel
calls (``hooks``).

The front end is built from ``labextension/src`` (``panel/`` and the shared
``components/``) into ``static/widget.js``, its stylesheet into ``static/widget.css``.
Importing this package does not import anywidget; ``TreePanel`` and ``TurnControl`` load
it on first use, so ``%load_ext`` stays cheap and a terminal IPython never pays for
widgets.

May import the core, ``providers`` and anywidget/ipywidgets/traitlets; never ``kernel``,
``cli`` or ``server`` (the kernel reaches the widget only through the hook in
``kernel.sessions``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["TreePanel", "TurnControl"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import widgets

        return getattr(widgets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
