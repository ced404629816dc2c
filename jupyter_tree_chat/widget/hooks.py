"""Where the widget meets the magic, without importing ipywidgets until it is needed.

``load_ipython_extension`` registers ``turn_hook`` with the kernel's sessions: after each
``%%chat`` turn it shows the per-turn control under the reply. ``%chat panel`` calls
``show_panel``. Both import ``widget`` lazily, so loading the extension stays cheap and
a terminal IPython (no kernel, no widgets) never pays for it.
"""

from __future__ import annotations

from typing import Any

from ..conversation.events import Turn
from ..conversation.session import Session


def turn_hook(session: Session, turn: Turn) -> None:
    """Display the ``‹ 2/3 ›`` / retry / edit control for ``turn`` (in a kernel only)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    from .turn import show_turn_control

    show_turn_control(session, turn, cell_id=_cell_id(shell))


def show_panel(session: Session, choices: dict[str, list[Any]] | None = None) -> Any:
    """Display the full panel for ``session`` and return it; ``choices`` holds the
    ``models`` and ``temperatures`` its fan-out offers."""
    from IPython.display import display

    from .widgets import TreePanel

    panel = TreePanel(session, **compare_traits(choices))
    display(panel)
    return panel


def compare_traits(choices: dict[str, list[Any]] | None) -> dict[str, list[Any]]:
    choices = choices or {}
    return {
        "compare_models": list(choices.get("models", [])),
        "compare_temperatures": list(choices.get("temperatures", [])),
    }


def _cell_id(shell: Any) -> str | None:
    try:
        metadata = shell.kernel.get_parent().get("metadata") or {}
    except Exception:  # no parent message (e.g. called outside a cell)
        return None
    cell_id = metadata.get("cellId")
    return cell_id if isinstance(cell_id, str) else None
