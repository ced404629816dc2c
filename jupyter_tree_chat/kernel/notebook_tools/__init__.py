"""The built-in ``notebook`` tool server: the model looks at the notebook it lives in.

A cell offers it like an MCP server (``%%chat --tools notebook:*`` or
``notebook:variables``); its tools are answered here, in the kernel, because they read
IPython's namespace and history:

- ``looking``: ``variables`` (names, types, sizes: never values), ``describe(name)`` (one
  value as ``{name}`` would send it) and ``cells(last=N)`` (the cells as run);
- ``running``: ``run(code)``, only where the user allowed it (``--allow-run``,
  ``TreeChat.allow_run``), stopped by ``TreeChat.tool_timeout`` or Ctrl-C;
- ``inserting``: ``insert(code)``, a new cell proposed below the asking cell, not run;
- ``limit``: ``TreeChat.tool_timeout`` for code the model runs;
- ``keys``: any endpoint's key found in a result is redacted before it leaves the kernel;
- ``server``: ``NotebookTools``, the ``BuiltinServer`` the kernel's ``Toolbox`` asks.

``LazyNotebookTools`` stands in for it until a cell names a ``notebook:`` tool, so
``%load_ext`` imports none of the modules above.

May import the core, ``providers`` (the toolbox's ``BuiltinServer``) and the kernel's cell
path (values as ``{name}`` sends them), IPython; never ``kernel.commands`` or the widget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...providers.base import ToolSpec
    from ...providers.tools.toolbox import PendingTool
    from .server import NotebookTools

#: the server's name, reserved (providers/mcp/config.py refuses it in .mcp.json)
NOTEBOOK = "notebook"

__all__ = ["NOTEBOOK", "LazyNotebookTools"]


class LazyNotebookTools:
    """The ``notebook`` server, made by ``make`` when a cell first names one of its tools;
    until then it owns no wire name (none was offered)."""

    def __init__(self, make: Callable[[], NotebookTools]) -> None:
        self._make = make
        self.made: NotebookTools | None = None

    def server(self) -> NotebookTools:
        if self.made is None:
            self.made = self._make()
        return self.made

    def resolve(self, selector: str, *, start: bool = True) -> list[ToolSpec]:
        return self.server().resolve(selector, start=start)

    def owns(self, wire_name: str) -> bool:
        return self.made is not None and self.made.owns(wire_name)

    def display_name(self, wire_name: str) -> str | None:
        return None if self.made is None else self.made.display_name(wire_name)

    def start(self, block: Mapping[str, Any], *, allow_run: bool) -> PendingTool:
        return self.server().start(block, allow_run=allow_run)

    def take_inserts(self) -> list[str]:
        """The running cell's proposals that wait for its turn control (see inserting.py)."""
        return [] if self.made is None else self.made.inserts.take()
