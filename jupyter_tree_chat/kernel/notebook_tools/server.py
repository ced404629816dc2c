"""``NotebookTools``: the built-in ``notebook`` server, as the kernel's ``Toolbox`` sees it.

It offers five tools, named ``notebook:variables`` and so on for people and
``notebook__variables`` on the wire, chosen per cell like an MCP server's
(``--tools notebook:*``). Each call is answered at once, on the thread that asked (the
kernel's: the values live there), within ``TreeChat.tool_timeout``; every text it
returns has the kernel's keys redacted (keys.py). What can go wrong is a result the
model reads (``is_error``), never a crash of the turn; ``run`` without the user's
leave runs nothing, and the cell says how to allow it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ...context import Limits
from ...context.sent import Block
from ...errors import ToolError
from ...i18n import _
from ...providers.base import ToolSpec
from ...providers.tools.toolbox import PendingTool, ToolAnswer
from ..history import CellErrors
from . import NOTEBOOK
from .inserting import Inserts
from .keys import redact
from .limit import TimedOut, time_limit
from .looking import LookFailed, cells, describe, variables
from .running import run_code

log = logging.getLogger(__name__)

SEPARATOR = "__"

_STRING = {"type": "string"}
_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "variables": (
        "List the notebook's user variables (the names %who lists): each name with its type "
        "and size or shape. No values; use describe for one.",
        {"type": "object", "properties": {}},
    ),
    "describe": (
        "One variable's value as the user would send it: a DataFrame as a table (first and "
        "last rows), an array's summary, a figure as an image, else its repr, within limits.",
        {
            "type": "object",
            "properties": {"name": {**_STRING, "description": "A name variables listed."}},
            "required": ["name"],
        },
    ),
    "cells": (
        "The notebook's cells as they were run (In), newest last, each saying whether it "
        "raised; with outputs=true also each cell's result (Out) and error (Err). %%chat "
        "cells are questions to you; their answers are in this conversation.",
        {
            "type": "object",
            "properties": {
                "last": {"type": "integer", "description": "How many cells.", "default": 10},
                "outputs": {"type": "boolean", "default": False},
            },
        },
    ),
    "run": (
        "Run Python in the notebook's kernel (its namespace: variables persist) and get its "
        "stdout, stderr, result, displayed output (figures as images) and error. Runs only "
        "if the user allowed it; the kernel's state is not undone by anything later.",
        {
            "type": "object",
            "properties": {"code": {**_STRING, "description": "Python source."}},
            "required": ["code"],
        },
    ),
    "insert": (
        "Propose code as a new cell below the user's cell, not run: the user reads it and "
        "decides. Use it for code the user should keep in the notebook.",
        {
            "type": "object",
            "properties": {"code": {**_STRING, "description": "Python source for the cell."}},
            "required": ["code"],
        },
    ),
}
TOOL_NAMES = tuple(_SPECS)


class NotebookTools:
    """The ``notebook`` server over one IPython shell (see the module docstring)."""

    def __init__(
        self,
        shell: Any,
        errors: CellErrors,
        limits: Callable[[], Limits],
        timeout: Callable[[], float | None],
        keys: Callable[[], tuple[str, ...]],
        can_insert_below: Callable[[], bool] = lambda: False,
    ) -> None:
        self.shell = shell
        self.errors = errors
        self.limits = limits  # read at each call: %config may change them
        self.timeout = timeout
        self.keys = keys
        self.inserts = Inserts(can_insert_below)

    # -- offering -------------------------------------------------------------------------

    def resolve(self, selector: str, *, start: bool = True) -> list[ToolSpec]:
        _server, _sep, wanted = selector.partition(":")
        wanted = wanted.strip()
        if wanted == "*":
            return [self._spec(name) for name in TOOL_NAMES]
        if wanted not in _SPECS:
            raise ToolError(
                _("The notebook server has no tool named {tool!r} (its tools: {have})").format(
                    tool=wanted, have=", ".join(TOOL_NAMES)
                )
            )
        return [self._spec(wanted)]

    def owns(self, wire_name: str) -> bool:
        return self._tool_of(wire_name) is not None

    def display_name(self, wire_name: str) -> str | None:
        tool = self._tool_of(wire_name)
        return f"{NOTEBOOK}:{tool}" if tool is not None else None

    def _spec(self, tool: str) -> ToolSpec:
        description, schema = _SPECS[tool]
        return ToolSpec(f"{NOTEBOOK}{SEPARATOR}{tool}", description, schema, f"{NOTEBOOK}:{tool}")

    def _tool_of(self, wire_name: str) -> str | None:
        prefix = NOTEBOOK + SEPARATOR
        tool = wire_name[len(prefix) :] if wire_name.startswith(prefix) else None
        return tool if tool in _SPECS else None

    # -- answering ------------------------------------------------------------------------

    def start(self, block: Mapping[str, Any], *, allow_run: bool) -> PendingTool:
        return PendingTool.ready(self.answer(block, allow_run=allow_run))

    def answer(self, block: Mapping[str, Any], *, allow_run: bool) -> ToolAnswer:
        """The ``tool_result`` for one call (and a line for the cell, if it needs one)."""
        tool_use_id = str(block.get("id", ""))
        tool = self._tool_of(str(block.get("name")))
        shown = f"{NOTEBOOK}:{tool}"
        arguments = block.get("input") or {}
        if tool is None or not isinstance(arguments, Mapping):
            bad = _("Bad call: input must be a JSON object.")
            return ToolAnswer(_result(tool_use_id, [bad], True))
        if tool == "run" and not allow_run:
            return _refused(tool_use_id)
        notice = None
        try:
            with time_limit(self.timeout()):
                pieces, failed = self._call(tool, arguments)
        except TimedOut:
            seconds = f"{self.timeout():g}"
            pieces, failed = (
                [_("Stopped after {seconds} s (the time limit).").format(seconds=seconds)],
                True,
            )
            notice = _(
                "{tool} ran longer than TreeChat.tool_timeout ({seconds} s) and was stopped; the "
                "model was told. Allow more with %config TreeChat.tool_timeout = 300"
            ).format(tool=shown, seconds=seconds)
        except (LookFailed, ValueError, TypeError) as error:
            pieces, failed = [str(error)], True
        except Exception as error:  # the kernel's own state, read in an odd moment
            pieces, failed = [f"{type(error).__name__}: {error}"], True
            # the message only, redacted below like the result: a traceback could hold a key
            log.debug("notebook:%s failed", tool)
        keys = self.keys()
        kept = [redact(p, keys) if isinstance(p, str) else p for p in pieces]
        return ToolAnswer(_result(tool_use_id, kept, failed), notice)

    def _call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[list[str | Block], bool]:
        limits = self.limits()
        if tool == "variables":
            return [variables(self.shell, self.errors)], False
        if tool == "describe":
            return describe(self.shell, _text(arguments, "name"), limits), False
        if tool == "cells":
            last = arguments.get("last", 10)
            if not isinstance(last, int) or isinstance(last, bool):
                raise ValueError(_("last must be a whole number of cells"))
            outputs = arguments.get("outputs", False)
            if not isinstance(outputs, bool):
                raise ValueError(_("outputs must be true or false"))
            return [cells(self.shell, self.errors, last, outputs, limits)], False
        if tool == "run":
            return run_code(self.shell, _text(arguments, "code"), limits)
        said, _inserted = self.inserts.propose(self.shell, _text(arguments, "code"))
        return [said], False


def _text(arguments: Mapping[str, Any], key: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str):
        raise ValueError(_("{key} must be a string").format(key=key))
    return value


def _result(tool_use_id: str, pieces: list[str | Block], failed: bool = False) -> dict[str, Any]:
    content: str | list[Block]
    if all(isinstance(p, str) for p in pieces):
        content = "\n\n".join(str(p) for p in pieces)
    else:
        content = [{"type": "text", "text": p} if isinstance(p, str) else p for p in pieces]
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if failed:
        result["is_error"] = True
    return result


def _refused(tool_use_id: str) -> ToolAnswer:
    text = _(
        "notebook:run was not run: the user has not allowed code to run here. Ask the user "
        "to allow it, or do without it (variables, describe and cells only look)."
    )
    notice = _(
        "notebook:run was not run: running code needs your leave. Allow it with %%chat "
        "--allow-run (this cell) or %config TreeChat.allow_run = True"
    )
    return ToolAnswer(_result(tool_use_id, [text], True), notice)
