"""The kernel's ``Err``: the error each cell raised, kept the way IPython keeps ``Out``.

``{Err[3]}`` and ``{Err}`` (the last error) in a question need errors that outlive the
cell that raised them. IPython keeps a cell's source (``In``) and result (``Out``) but
not its error, so this module listens to ``post_run_cell`` (which runs after IPython has
shown the traceback, and changes nothing about how it shows) and keeps each error as
text: its type, message and the last frames of its traceback. The exception itself is
not kept, so its frames (and every value they reference) are freed as before.

``Err`` is put in the user namespace like ``Out`` (unless the user has a variable of that
name), so ``Err[3]`` works in code too.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..i18n import _

log = logging.getLogger(__name__)

#: the user-namespace name, like IPython's ``Out``
ERR_VARIABLE = "Err"
#: frames kept of a traceback: the ones nearest the error, where the fix usually is
MAX_FRAMES = 6


@dataclass(frozen=True)
class CellError:
    """The error cell ``count`` raised, as text: ``ZeroDivisionError: division by zero``."""

    count: int
    type: str
    message: str
    traceback: str

    @property
    def headline(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type

    def __str__(self) -> str:
        return self.traceback

    def __repr__(self) -> str:
        return f"<CellError In[{self.count}]: {self.headline}>"


def describe_error(error: BaseException, count: int, cell_names: Mapping[str, int]) -> CellError:
    """``error`` as a ``CellError``: the last ``MAX_FRAMES`` frames of the user's code."""
    summary = traceback.TracebackException.from_exception(error, capture_locals=False)
    frames = [frame for frame in summary.stack if not _is_ipython(frame)]
    for frame in frames:
        frame.filename = _cell_name(frame.filename, cell_names)
    if getattr(summary, "filename", None) is not None:  # a SyntaxError names its file
        summary.filename = _cell_name(summary.filename, cell_names)
    lines = ["Traceback (most recent call last):\n"] if frames else []
    if len(frames) > MAX_FRAMES:
        lines.append(f"  ... {len(frames) - MAX_FRAMES} earlier frames left out\n")
    lines += traceback.StackSummary.from_list(frames[-MAX_FRAMES:]).format()
    only = list(summary.format_exception_only())
    lines += only
    headline = only[-1].strip() if only else type(error).__name__
    message = headline.split(": ", 1)[1] if ": " in headline else ""
    return CellError(count, type(error).__name__, message, "".join(lines).rstrip())


def _cell_name(filename: str, cell_names: Mapping[str, int]) -> str:
    cell = cell_names.get(filename)
    return filename if cell is None else f"Cell In[{cell}]"


def _is_ipython(frame: traceback.FrameSummary) -> bool:
    name = frame.filename.replace("\\", "/")
    return "/IPython/" in name or "/ipykernel/" in name


class CellErrors:
    """Listens to a shell's cells and keeps their errors; ``install`` / ``uninstall``."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.errors: dict[int, CellError] = {}
        self._installed = False

    def install(self) -> None:
        if self._installed or self.shell is None or not hasattr(self.shell, "events"):
            return
        self.shell.events.register("post_run_cell", self.after_cell)
        user_ns = self.shell.user_ns
        if ERR_VARIABLE not in user_ns or isinstance(user_ns[ERR_VARIABLE], dict):
            user_ns[ERR_VARIABLE] = self.errors
        self._installed = True

    def uninstall(self) -> None:
        if not self._installed:
            return
        self._installed = False
        with contextlib.suppress(ValueError):
            self.shell.events.unregister("post_run_cell", self.after_cell)
        if self.shell.user_ns.get(ERR_VARIABLE) is self.errors:
            del self.shell.user_ns[ERR_VARIABLE]

    def after_cell(self, result: Any) -> None:
        """Keep the error of the cell that just ran; never fails (it runs after every cell)."""
        try:
            error = result.error_before_exec or result.error_in_exec
            count = result.execution_count
            if error is not None and isinstance(count, int):
                self.errors[count] = describe_error(error, count, self._cell_names())
        except Exception:
            log.exception("could not keep the error of the last cell")

    def last(self) -> CellError | None:
        return self.errors[max(self.errors)] if self.errors else None

    def _cell_names(self) -> Mapping[str, int]:
        """Cell file name → execution count (IPython's own map, where it has one)."""
        names = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
        return names if isinstance(names, Mapping) else {}


def cell_source(shell: Any, count: int) -> str | None:
    """What cell ``count`` held, as typed (``In[count]``), or None."""
    sources = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if not isinstance(sources, list) or not 0 < count < len(sources):
        return None
    return str(sources[count])


def cell_output(shell: Any, count: int) -> tuple[bool, Any]:
    """``(True, Out[count])`` if cell ``count`` had a result, else ``(False, None)``."""
    outputs = getattr(getattr(shell, "history_manager", None), "output_hist", None)
    if not isinstance(outputs, Mapping) or count not in outputs:
        return False, None
    return True, outputs[count]


def counts(mapping: Mapping[int, Any], most: int = 8) -> str:
    """``3, 5, 8`` (the newest ``most``) for a one-line hint."""
    shown = sorted(mapping)[-most:]
    return ", ".join(map(str, shown)) if shown else _("none yet")
