"""The tools a session offers: the kernel's own functions, and tools from elsewhere.

A request offers tools by name. A plain name (``add``) is a Python function registered in
a ``ToolRegistry`` (functions.py); ``server:tool`` and ``server:*`` are tools of an MCP
server, which a ``ToolSource`` (providers/mcp/) resolves, on first use starting the
server. A few servers are built in (``builtin``, by server name: the kernel's ``notebook``
server, kernel/notebook_tools/): named ``server:tool`` like MCP's, answered in the kernel,
each call told whether the user allowed code to run (``allow_run``). All become plain
ToolSpecs in the request and run through one loop, so the tree, the wire rules and the
views see one kind of tool.

Running is two steps, so that calls can overlap where they may: ``start`` begins a call
and returns a ``PendingTool``; its ``answer()`` is the ``tool_result`` block (and, where the
user must hear of it, a one-line notice: a destructive tool refused, a server that
crashed, a call past its timeout). A kernel function runs at once, on the calling thread
(user code is not made to run elsewhere); an MCP call runs on the MCP event loop while
the caller goes on. The owning thread of a turn starts every call and stores every answer.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ...errors import ToolError
from ...i18n import _
from ..base import ToolSpec
from .functions import ToolRegistry

_POLL_S = 0.1


@dataclass(frozen=True)
class ToolAnswer:
    """A ``tool_result`` block, and a line for the user if something went wrong."""

    result: dict[str, Any]
    notice: str | None = None


class PendingTool:
    """A started tool call: ``answer()`` waits for it (Ctrl-C stops the wait)."""

    def __init__(
        self,
        future: concurrent.futures.Future[Any],
        finish: Callable[[Any], ToolAnswer] = lambda value: value,
        *,
        wait: Callable[[concurrent.futures.Future[Any]], Any] | None = None,
        watch: Callable[[concurrent.futures.Future[Any]], None] | None = None,
    ) -> None:
        self._future = future
        self._finish = finish
        self._wait = wait  # e.g. the MCP loop, run by the waiting thread itself
        self._watch = watch  # told when the call is waited for by a callback instead

    @classmethod
    def ready(cls, answer: ToolAnswer) -> PendingTool:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_result(answer)
        return cls(future)

    def done(self) -> bool:
        return self._future.done()

    def answer(self) -> ToolAnswer:
        if self._wait is not None:
            return self._finish(self._wait(self._future))
        while True:
            try:
                return self._finish(self._future.result(_POLL_S))
            except concurrent.futures.TimeoutError:
                continue

    def cancel(self) -> None:
        """Stop the call (an MCP server is told it was cancelled)."""
        self._future.cancel()

    def when_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` (from any thread) once the call has ended."""
        self._future.add_done_callback(lambda _future: callback())
        if self._watch is not None:
            self._watch(self._future)


class ToolSource(Protocol):
    """Tools named ``server:tool`` that live outside the kernel (MCP servers)."""

    def resolve(self, selector: str, *, start: bool = True) -> list[ToolSpec]:
        """The specs ``server:tool`` or ``server:*`` names; ``ToolError`` if there are none.
        With ``start=False`` a server that is not running gives none (nothing starts)."""
        ...

    def owns(self, wire_name: str) -> bool: ...

    def display_name(self, wire_name: str) -> str | None:
        """``server:tool`` for a wire name this source gave out."""
        ...

    def start(self, block: Mapping[str, Any], *, allow_destructive: bool) -> PendingTool: ...


class BuiltinServer(Protocol):
    """A tool server built into the kernel, named like an MCP server (``notebook:run``)."""

    def resolve(self, selector: str, *, start: bool = True) -> list[ToolSpec]: ...

    def owns(self, wire_name: str) -> bool: ...

    def display_name(self, wire_name: str) -> str | None: ...

    def start(self, block: Mapping[str, Any], *, allow_run: bool) -> PendingTool: ...


class LazySource:
    """A ``ToolSource`` made on first use (by ``make``): until a cell names one of its
    tools, it owns nothing, and nothing of it (nor the SDK behind it) is imported."""

    def __init__(self, make: Callable[[], ToolSource]) -> None:
        self._make = make
        self.made: ToolSource | None = None

    def source(self) -> ToolSource:
        if self.made is None:
            self.made = self._make()
        return self.made

    def resolve(self, selector: str, *, start: bool = True) -> list[ToolSpec]:
        if self.made is None and not start:
            return []
        return self.source().resolve(selector, start=start)

    def owns(self, wire_name: str) -> bool:
        return self.made is not None and self.made.owns(wire_name)

    def display_name(self, wire_name: str) -> str | None:
        return None if self.made is None else self.made.display_name(wire_name)

    def start(self, block: Mapping[str, Any], *, allow_destructive: bool) -> PendingTool:
        return self.source().start(block, allow_destructive=allow_destructive)


class Toolbox:
    """A registry of kernel functions and, optionally, a source of ``server:tool`` tools."""

    def __init__(
        self,
        functions: ToolRegistry | None = None,
        remote: ToolSource | None = None,
        builtin: Mapping[str, BuiltinServer] | None = None,
    ):
        self.functions = functions if functions is not None else ToolRegistry()
        self.remote = remote
        self.builtin = dict(builtin or {})

    @classmethod
    def of(cls, tools: ToolRegistry | Toolbox | None) -> Toolbox:
        return tools if isinstance(tools, Toolbox) else cls(tools)

    # -- the kernel's functions, as before ----------------------------------------------

    def register(self, fn: Any = None, **kwargs: Any) -> Any:
        """``ToolRegistry.register`` on the kernel's functions (``@session.tools.register``)."""
        return self.functions.register(fn, **kwargs)

    def names(self) -> tuple[str, ...]:
        return self.functions.names()

    def get(self, name: str) -> Any:
        """A registered function's ``Tool`` (``ToolError`` if there is none)."""
        return self.functions.get(name)

    def __len__(self) -> int:
        return len(self.functions)

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    # -- offering ------------------------------------------------------------------------

    def specs(
        self, names: Iterable[str] | None = None, *, start: bool = True
    ) -> tuple[ToolSpec, ...]:
        """The specs a request offers: every function when ``names`` is None, else the
        named ones in that order (``server:*`` standing for all of a server's tools).

        ``ToolError`` for a name nothing answers to; an MCP server that cannot start is a
        ``McpServerFailed`` (one line with its stderr's tail), before anything is sent.
        ``start=False`` (a measurement, not a request) starts no server and leaves out
        the tools of those not running.
        """
        if names is None:
            return self.functions.specs()
        if isinstance(names, str):  # one name, not its characters
            names = (names,)
        found: dict[str, ToolSpec] = {}
        for name in dict.fromkeys(names):
            if ":" not in name:
                if not start and name not in self.functions:
                    continue
                spec = self.functions.get(name).spec
                found.setdefault(spec.name, spec)
                continue
            server = self.builtin.get(name.partition(":")[0].strip())
            if server is not None:
                for spec in server.resolve(name, start=start):
                    found.setdefault(spec.name, spec)
                continue
            if self.remote is None:
                if not start:
                    continue
                raise ToolError(
                    _(
                        "{name} names an MCP tool, and this session has no MCP servers; "
                        "use it from a notebook kernel with jupyter_tree_chat loaded"
                    ).format(name=name)
                )
            for spec in self.remote.resolve(name, start=start):
                found.setdefault(spec.name, spec)
        return tuple(found.values())

    def display_names(self, message: Mapping[str, Any]) -> dict[str, str]:
        """``{wire name: server:tool}`` for the MCP tools a reply asks for (stored in its
        ``meta.tool_names``, so every view can show the name a person knows)."""
        content = message.get("content")
        sources: list[BuiltinServer | ToolSource] = [*self.builtin.values()]
        if self.remote is not None:
            sources.append(self.remote)
        if not sources or not isinstance(content, list):
            return {}
        shown: dict[str, str] = {}
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                wire = str(block.get("name"))
                for source in sources:
                    name = source.display_name(wire)
                    if name is not None:
                        shown[wire] = name
                        break
        return shown

    # -- running -------------------------------------------------------------------------

    def start(
        self,
        block: Mapping[str, Any],
        *,
        allow_destructive: bool = False,
        allow_run: bool = False,
        offered: Collection[str] | None = None,
    ) -> PendingTool:
        """Begin answering a ``tool_use`` block (see the module docstring). A call to a
        tool the request did not offer (``offered``) runs nothing: the model gets the
        registry's error saying which tools it may call. ``allow_run`` opens a built-in
        server's gate for running code (only that: MCP tools have their own gates)."""
        name = block.get("name")
        if offered is not None and name not in offered:
            return PendingTool.ready(ToolAnswer(self.functions.run(block, offered)))
        if isinstance(name, str) and name not in self.functions:
            for server in self.builtin.values():
                if server.owns(name):
                    return server.start(block, allow_run=allow_run)
        if (
            self.remote is not None
            and isinstance(name, str)
            and name not in self.functions
            and self.remote.owns(name)
        ):
            return self.remote.start(block, allow_destructive=allow_destructive)
        return PendingTool.ready(ToolAnswer(self.functions.run(block)))

    def run(
        self,
        block: Mapping[str, Any],
        offered: Collection[str] | None = None,
        *,
        allow_destructive: bool = False,
        allow_run: bool = False,
    ) -> dict[str, Any]:
        """Answer a ``tool_use`` block, waiting for it: its ``tool_result`` block."""
        started = self.start(
            block, allow_destructive=allow_destructive, allow_run=allow_run, offered=offered
        )
        return started.answer().result
