"""``insert(code)``: a new cell proposed below the asking cell, never run.

Two ways to put it there, both the user's to run or delete:

- **The turn control's Insert below**, where the lab extension is present (a view told
  the kernel its page has the lab's insert command: ``can_insert_below``). The code waits
  here until the turn's control is shown (``take``), and the control runs the same lab
  command its "Insert below" buttons run, once per proposal, under the asking cell.
- **IPython's next input** elsewhere: a ``set_next_input`` payload of the cell's execute
  reply puts the code into a new cell below it when the cell finishes (JupyterLab,
  Notebook 7 and VS Code honour it). A reply carries one such payload, so a turn's
  proposals are joined into that one cell.

Headless (no front end: a script, nbclient, a kernel that was sent no cell id) there is
no cell to put it in, and the model is told so rather than told a cell appeared; so it is
in a turn a view started (a retry in the panel), where no cell is running.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...i18n import _
from ..notebook import current_cell_id


class Inserts:
    """The code proposed during the cell that is running, by execution count."""

    def __init__(self, can_insert_below: Callable[[], bool] = lambda: False) -> None:
        self.can_insert_below = can_insert_below
        self._count: int | None = None
        self._codes: list[str] = []  # this cell's proposals
        self._waiting: list[str] = []  # those the turn control is to insert

    def take(self) -> list[str]:
        """The proposals of the running cell that wait for its turn control (then gone)."""
        codes, self._waiting = self._waiting, []
        return codes

    def propose(self, shell: Any, code: str) -> tuple[str, bool]:
        """Propose ``code``; what the model is told, and whether a cell will appear."""
        if not code.strip():
            return _("Nothing was inserted: the code is empty."), False
        if _from_a_view(shell):
            return (
                _(
                    "No cell was inserted: this turn was started from a view (a retry or an "
                    "edit in the panel), not from a cell. Give the code in your answer: its "
                    "Insert below button puts it in a cell."
                ),
                False,
            )
        if getattr(shell, "kernel", None) is None or current_cell_id(shell) is None:
            return (
                _(
                    "No cell was inserted: this kernel has no notebook front end to show one "
                    "(it runs headless). Give the code in your answer instead."
                ),
                False,
            )
        count = getattr(shell, "execution_count", None)
        if count != self._count:
            self._count, self._codes, self._waiting = count, [], []
        self._codes.append(code.rstrip("\n"))
        if self.can_insert_below():
            self._waiting.append(self._codes[-1])
            return (
                _(
                    "Proposed: a new cell below the asking cell holds this code once the "
                    "answer ends ({count} proposed in this turn, each its own cell). It was "
                    "not run; the user decides."
                ).format(count=len(self._codes)),
                True,
            )
        shell.set_next_input("\n\n".join(self._codes), replace=False)
        if len(self._codes) == 1:
            return (
                _(
                    "Proposed: a new cell below the asking cell holds this code once the "
                    "answer ends. It was not run; the user decides."
                ),
                True,
            )
        return (
            _(
                "Proposed: added to the new cell below the asking cell ({count} proposals of "
                "this turn, one cell). It was not run; the user decides."
            ).format(count=len(self._codes)),
            True,
        )


def _from_a_view(shell: Any) -> bool:
    """Whether the kernel is answering a widget's message (a comm), not a cell."""
    try:
        parent = shell.kernel.get_parent()
    except Exception:  # no kernel, or no request in flight
        return False
    header = parent.get("header") if isinstance(parent, dict) else None
    return isinstance(header, dict) and header.get("msg_type") == "comm_msg"
