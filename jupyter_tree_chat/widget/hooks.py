"""Where the widget meets the magic, without importing ipywidgets until it is needed.

``load_ipython_extension`` registers ``turn_hook`` with the kernel's sessions: after each
``%%chat`` turn it shows the per-turn control under the reply (with the cells the
notebook server's ``insert`` proposed, for the control to put below the cell).
``%chat panel`` calls ``show_panel``. Both import ``widget`` lazily, so loading the
extension stays cheap and a terminal IPython (no kernel, no widgets) never pays for it.
``lab_inserts_below`` (lab.py) says whether a view has told the kernel its page has the
lab's Insert below command (the lab extension is present).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..conversation.events import Turn
from ..conversation.session import Session
from .speaking import lab_inserts_below

__all__ = ["compare_traits", "lab_inserts_below", "show_panel", "turn_hook"]


def turn_hook(session: Session, turn: Turn, inserts: Sequence[str] = ()) -> None:
    """Display the ``‹ 2/3 ›`` / retry / edit control for ``turn`` (in a kernel only);
    ``inserts``: code for new cells below the asking cell, which the control puts there."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return
    from .turn import show_turn_control

    show_turn_control(session, turn, cell_id=_cell_id(shell), inserts=inserts)


def show_panel(session: Session, choices: dict[str, list[Any]] | None = None) -> Any:
    """Display the full panel for ``session`` and return it; ``choices`` holds the
    ``models`` and ``temperatures`` its fan-out offers."""
    from IPython.display import display

    from .widgets import TreePanel

    panel = TreePanel(session, **compare_traits(choices))
    display(panel)
    return panel


_grids_by_cell: dict[tuple[int, str], Any] = {}


def experiment_grid(session: Session, question_id: str, fallback: dict[str, str]) -> dict[str, Any]:
    """The output an experiment cell ends with: its clickable grid, ``fallback`` (the
    static grid) beside it for renderers without widgets. The cell's previous grid (a
    re-run) is closed, as the turn control's is."""
    from IPython import get_ipython

    from .experiment_grid import ExperimentGrid

    grid = ExperimentGrid(session, question_id, fallback)
    shell = get_ipython()
    cell_id = _cell_id(shell) if shell is not None else None
    if cell_id:
        previous = _grids_by_cell.pop((id(session), cell_id), None)
        if previous is not None:
            previous.close()
        _grids_by_cell[(id(session), cell_id)] = grid
    bundle = grid._repr_mimebundle_()
    return dict(bundle[0] if isinstance(bundle, tuple) else bundle)


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
