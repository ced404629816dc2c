"""The kernel's MCP servers: started on first use, once each, stopped with the kernel.

The official ``mcp`` SDK is asynchronous (anyio); the session's tool loop is not, and
must not become so. So one asyncio event loop serves every server of the kernel, run by
the thread waiting for a call while it waits and by a background thread otherwise
(shared_loop.py), and the loop's side is all this module does:

- **A connection is one task.** The SDK's transports and ``ClientSession`` are context
  managers that must be entered and left in one task, so each server gets a task that
  opens its transport (``stdio_client``: a child process, through ``guard.py`` so that it
  dies with the kernel; ``streamable_http_client`` for a URL), initialises, lists its tools
  and then waits until it is stopped or its connection is lost.
- **Starting is checked.** A server that exits, cannot be run, prints something that is not
  JSON-RPC on its stdout, or does not answer within ``startup_timeout`` is a
  ``McpServerFailed`` with the last lines of its stderr, raised to the thread that asked.
- **Calls** go to the server's session from tasks of their own, one at a time per server
  (an ``asyncio.Lock``) unless its configuration says ``"concurrent": true``, each with
  the SDK's own read timeout (which also tells the server the call was cancelled). A
  connection that breaks mid-call (the server crashed or was killed) is marked failed and
  closed; the next use starts the server again.
- **Stopping** leaves the transports' context managers, which close stdin, then stop the
  process group (the SDK's shutdown); ``stop_all`` is called when the kernel exits.

The SDK is imported by the first server started, never before: a kernel that uses no MCP
server pays nothing for it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import logging
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ...errors import McpServerFailed, MissingExtra
from ...i18n import _
from .config import ServerConfig, ServerConfigs
from .shared_loop import SharedLoop

log = logging.getLogger(__name__)

#: how the cell says how to get the SDK
MCP_EXTRA_HINT = "pip install 'jupyter-tree-chat[mcp]'"
STARTUP_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
STDERR_LINES = 3
_GUARD = Path(__file__).with_name("guard.py")
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")
#: what a tool may do, by the MCP spec's annotations (``readOnlyHint`` false and
#: ``destructiveHint`` true when not given: a tool that says nothing is destructive)
READ_ONLY, NOT_DESTRUCTIVE, DESTRUCTIVE = "read-only", "not destructive", "destructive"


@dataclass(frozen=True)
class ServerTool:
    """One tool a server offers, as it described itself."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    safety: str = DESTRUCTIVE  # READ_ONLY, NOT_DESTRUCTIVE or DESTRUCTIVE
    annotated: bool = False  # ``safety`` is the server's word, not the spec's default
    trusted: bool = False  # named in its server's ``allowed_tools``: runs ungated

    @property
    def read_only(self) -> bool:
        return self.safety == READ_ONLY

    @property
    def destructive(self) -> bool:
        return self.safety == DESTRUCTIVE

    @property
    def gated(self) -> bool:
        """Runs only with ``--allow-destructive``: destructive, and the user has not
        named it in ``allowed_tools`` (the user's word over the server's)."""
        return self.destructive and not self.trusted


@dataclass(frozen=True)
class ServerState:
    """What ``%chat mcp`` says of a server."""

    name: str
    state: str  # "not started" | "starting" | "running" | "failed" | "stopped"
    reason: str = ""
    stderr: tuple[str, ...] = ()
    tools: tuple[ServerTool, ...] = ()


@dataclass(frozen=True)
class CallOutcome:
    """How a call ended: ``result`` (the SDK's ``CallToolResult``) or a ``failure``
    (``kind`` "crashed", "timeout" or "error") with a one-line ``message``."""

    result: Any = None
    kind: str = "ok"
    message: str = ""


@dataclass
class _Connection:
    config: ServerConfig
    ready: concurrent.futures.Future[tuple[ServerTool, ...]] = field(
        default_factory=concurrent.futures.Future
    )
    stderr: IO[bytes] | None = None
    session: Any = None
    lock: asyncio.Lock | None = None
    closed: asyncio.Event | None = None
    startup: Any = None  # the anyio CancelScope of initialisation
    garbage: str | None = None
    failure: str | None = None
    finished: bool = False

    def stderr_tail(self, lines: int = STDERR_LINES) -> tuple[str, ...]:
        """The last lines the server wrote to its stderr, control characters removed."""
        if self.stderr is None:
            return ()
        try:
            size = self.stderr.seek(0, os.SEEK_END)
            self.stderr.seek(max(0, size - 8192))
            text = self.stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ()
        kept = [_CONTROL.sub("", line).strip() for line in text.splitlines()]
        return tuple(line[:300] for line in kept if line)[-lines:]


class McpServers:
    """The kernel's servers by name, from ``configs()`` (read again at each use)."""

    def __init__(
        self,
        configs: Callable[[], ServerConfigs],
        *,
        environ: Mapping[str, str] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
    ) -> None:
        self.configs = configs
        self.environ = os.environ if environ is None else environ
        self.startup_timeout = startup_timeout
        self._connections: dict[str, _Connection] = {}
        self._lock = threading.Lock()
        self._shared: SharedLoop | None = None

    # -- asking ---------------------------------------------------------------------

    def tools(self, name: str) -> tuple[ServerTool, ...]:
        """Server ``name``'s tools, starting it if it is not running (blocking).

        ``McpServerFailed`` (one line, its stderr's tail) if it cannot start;
        ``MissingExtra`` without the ``mcp`` package.
        """
        return self.wait(self._connection(name).ready)

    def running_tools(self, name: str) -> tuple[ServerTool, ...] | None:
        """Server ``name``'s tools if it is running now, else None (nothing starts)."""
        with self._lock:
            connection = self._connections.get(name)
        if connection is None or connection.failure is not None or not connection.ready.done():
            return None
        return connection.ready.result()

    def call(
        self, name: str, tool: str, arguments: dict[str, Any], timeout: float | None
    ) -> concurrent.futures.Future[CallOutcome]:
        """Call ``tool`` on server ``name`` (started if need be); the outcome's future.

        Cancelling the future cancels the call (the server is told so).
        """
        with self._lock:  # a running server is used as it is: the cell checked its config
            connection = self._connections.get(name)
            shared = self._shared
        if connection is None or connection.finished or connection.failure is not None:
            connection = self._connection(name)  # started (again)
        if connection.session is None or shared is None:  # not running yet
            try:
                self.wait(connection.ready)
            except McpServerFailed as failure:
                done: concurrent.futures.Future[CallOutcome] = concurrent.futures.Future()
                done.set_result(CallOutcome(kind="crashed", message=str(failure)))
                return done
            shared = self._event_loop()
        return shared.submit(self._call(connection, tool, arguments, timeout))

    def wait(self, future: concurrent.futures.Future[Any], timeout: float | None = None) -> Any:
        """A future of ``call`` (or a start's), the calling thread running the event loop
        until it is done (shared_loop.py); Ctrl-C stops the wait."""
        if future.done():  # e.g. a start that failed before any loop was made
            return future.result()
        return self._event_loop().wait(future, timeout)

    def when_done(self, future: concurrent.futures.Future[Any]) -> None:
        """``future`` is waited for by a callback, not by ``wait``: the loop runs now."""
        if self._shared is not None and not future.done():
            self._shared.wake()

    def states(self) -> list[ServerState]:
        """Every configured server's state, in configuration order (nothing is started)."""
        found = []
        for name in self.configs().names():
            with self._lock:
                connection = self._connections.get(name)
            found.append(self._state(name, connection))
        return found

    def state(self, name: str) -> ServerState:
        with self._lock:
            connection = self._connections.get(name)
        return self._state(name, connection)

    def _state(self, name: str, connection: _Connection | None) -> ServerState:
        if connection is None:
            return ServerState(name, "not started")
        if connection.failure is not None:
            return ServerState(name, "failed", connection.failure, connection.stderr_tail())
        if connection.finished:
            return ServerState(name, "stopped")
        if not connection.ready.done():
            return ServerState(name, "starting")
        return ServerState(name, "running", tools=connection.ready.result())

    # -- lifetimes --------------------------------------------------------------------

    def stop(self, name: str, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop server ``name`` if it runs (its next use starts it again)."""
        with self._lock:
            connection = self._connections.pop(name, None)
        if connection is not None:
            self._close([connection], timeout)

    def stop_all(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop every server and the event loop: the kernel is going away."""
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
            shared, self._shared = self._shared, None
        if shared is None:
            return
        self._close(connections, timeout, shared)
        shared.close(timeout)

    def _close(
        self,
        connections: list[_Connection],
        timeout: float,
        shared: SharedLoop | None = None,
    ) -> None:
        shared = shared or self._shared
        if shared is None or not connections:
            return

        async def close_all() -> None:
            for connection in connections:
                if connection.closed is not None:
                    connection.closed.set()
            while not all(c.finished for c in connections):
                await asyncio.sleep(0.02)

        future = shared.submit(close_all())
        with contextlib.suppress(concurrent.futures.TimeoutError):
            shared.wait(future, timeout)

    # -- the loop's side --------------------------------------------------------------

    def _connection(self, name: str) -> _Connection:
        configs = self.configs()
        config = configs.get(name)
        if config is None:
            known = ", ".join(configs.names()) or _("none")
            problem = f" ({configs.problems[0]})" if configs.problems else ""
            raise McpServerFailed(
                _(
                    "no MCP server named {server} (configured: {known}){problem}; add it to "
                    ".mcp.json beside the notebook or to TreeChat.mcp_servers"
                ).format(server=name, known=known, problem=problem)
            )
        with self._lock:
            connection = self._connections.get(name)
            if connection is not None and connection.config.name == name:
                stale = connection.finished or connection.failure is not None
                changed = connection.config != config and not connection.finished
                if not stale and not changed:
                    return connection
            if connection is not None and not connection.finished:
                self._close_soon(connection)
            connection = _Connection(config)
            self._connections[name] = connection
        try:
            expanded = config.expanded(self.environ)
            _import_sdk()
        except (McpServerFailed, MissingExtra) as error:
            connection.failure = str(error)
            connection.finished = True
            connection.ready.set_exception(error)
            return connection
        self._event_loop().submit(self._run(connection, expanded))
        return connection

    def _close_soon(self, connection: _Connection) -> None:
        shared = self._shared
        if shared is not None and connection.closed is not None:
            shared.loop.call_soon_threadsafe(connection.closed.set)
            shared.wake()

    def _event_loop(self) -> SharedLoop:
        with self._lock:
            if self._shared is None:
                self._shared = SharedLoop("jupyter-tree-chat MCP")
                atexit.register(self.stop_all)  # a kernel that exits stops its servers
            return self._shared

    async def _run(self, connection: _Connection, config: ServerConfig) -> None:
        """One server's life: open, initialise, list, wait; then close, whatever happened."""
        import anyio
        from mcp.client.session import ClientSession

        connection.closed = asyncio.Event()
        connection.lock = None if config.concurrent else asyncio.Lock()
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(connection, config))
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=_garbage_catcher(connection))
                )
                with anyio.CancelScope() as scope:
                    connection.startup = scope
                    with anyio.fail_after(self.startup_timeout):
                        await session.initialize()
                        tools = await _list_tools(config, session)
                connection.startup = None
                if scope.cancelled_caught or connection.garbage is not None:
                    raise McpServerFailed(self._failed(connection, _not_mcp(connection)))
                connection.session = session
                connection.ready.set_result(tools)
                await connection.closed.wait()
        except Exception as raised:  # anyio may wrap it in an exception group
            error = _unwrapped(raised)
            if isinstance(error, McpServerFailed):
                self._fail(connection, error)
            elif isinstance(error, TimeoutError):
                why = _("it did not answer within {seconds:g} s").format(
                    seconds=self.startup_timeout
                )
                self._fail(connection, McpServerFailed(self._failed(connection, why)))
            else:  # the transport's errors: the server exited, refused, ...
                why = (
                    _("it exited before answering")
                    if config.transport == "stdio"
                    else _("its URL did not answer ({error})").format(error=_one_line(error))
                )
                if connection.garbage is not None:
                    why = _not_mcp(connection)
                self._fail(connection, McpServerFailed(self._failed(connection, why)), error)
        finally:
            connection.session = None
            connection.finished = True
            if not connection.ready.done():
                connection.ready.set_exception(
                    McpServerFailed(self._failed(connection, _("it stopped while starting")))
                )

    def _transport(self, connection: _Connection, config: ServerConfig) -> Any:
        if config.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            @contextlib.asynccontextmanager
            async def http() -> Any:
                client = httpx2.AsyncClient(
                    headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0)
                )
                async with client, streamable_http_client(config.url, http_client=client) as pair:
                    yield pair

            return http()
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command = _resolve(config)
        # kept open for the stderr tail after a failure; closed with the connection
        connection.stderr = tempfile.TemporaryFile(prefix="jupyter-tree-chat-mcp-")  # noqa: SIM115
        argv = [command, *config.args]
        if os.name == "posix":  # see guard.py: the server dies with the kernel
            argv = [sys.executable, "-I", str(_GUARD), str(os.getpid()), *argv]
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(config.env) or None, cwd=config.cwd
        )
        return stdio_client(params, errlog=connection.stderr)  # type: ignore[arg-type]

    async def _call(
        self, connection: _Connection, tool: str, arguments: dict[str, Any], timeout: float | None
    ) -> CallOutcome:
        MCPError, gone, CONNECTION_CLOSED, REQUEST_TIMEOUT = _call_errors()
        lock = connection.lock or contextlib.nullcontext()
        async with lock:
            session = connection.session
            if session is None or connection.finished:
                gone_why = self._failed(connection, _("it stopped"))
                return CallOutcome(kind="crashed", message=gone_why)
            try:
                result = await session.call_tool(tool, arguments, read_timeout_seconds=timeout)
            except MCPError as error:
                if error.code == REQUEST_TIMEOUT:
                    return CallOutcome(kind="timeout", message=f"{timeout:g}")
                if error.code != CONNECTION_CLOSED:
                    return CallOutcome(kind="error", message=_one_line(error))
                return self._lost(connection, error)
            except gone as error:  # a broken pipe, a closed stream: the server is gone
                return self._lost(connection, error)
            except Exception as error:  # e.g. a result that breaks the tool's output schema
                return CallOutcome(kind="error", message=_one_line(_unwrapped(error)))
        return CallOutcome(result)

    def _lost(self, connection: _Connection, error: BaseException) -> CallOutcome:
        failure = McpServerFailed(self._failed(connection, _("it stopped during the call")))
        self._fail(connection, failure, error)
        if connection.closed is not None:
            connection.closed.set()
        return CallOutcome(kind="crashed", message=str(failure))

    def _fail(
        self, connection: _Connection, failure: McpServerFailed, cause: BaseException | None = None
    ) -> None:
        if cause is not None:
            log.debug("MCP server %s failed", connection.config.name, exc_info=cause)
        connection.failure = str(failure)
        if not connection.ready.done():
            connection.ready.set_exception(failure)

    def _failed(self, connection: _Connection, why: str) -> str:
        """``MCP server git cannot be used: WHY; its stderr ends: a | b | c``."""
        line = _("MCP server {server} cannot be used: {why}").format(
            server=connection.config.name, why=why
        )
        tail = connection.stderr_tail()
        if tail:
            line += _("; its stderr ends: {tail}").format(tail=" | ".join(tail))
        return line


def _garbage_catcher(connection: _Connection) -> Any:
    """The session's message handler: a line on stdout that is not JSON-RPC while the
    server starts means it does not speak MCP; starting stops at once."""

    async def handle(message: Any) -> None:
        if isinstance(message, Exception) and connection.garbage is None:
            connection.garbage = _offending_line(message)
            if connection.startup is not None:
                connection.startup.cancel()

    return handle


def _offending_line(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            found = errors()
            if found and isinstance(found[0].get("input"), str):
                return _CONTROL.sub("", found[0]["input"]).strip()[:80]
    return _one_line(error)[:80]


def _not_mcp(connection: _Connection) -> str:
    return _("it does not speak MCP (its stdout said {line!r})").format(
        line=connection.garbage or "?"
    )


def tool_safety(notes: Any) -> tuple[str, bool]:
    """What a tool may do by its annotations (the SDK's ``ToolAnnotations`` or None), and
    whether that is the server's word (True) or the spec's default (False).

    By the spec, ``readOnlyHint`` is false and ``destructiveHint`` true unless the server
    says otherwise; ``destructiveHint`` means something only when not read-only.
    """
    read_only = getattr(notes, "read_only_hint", None)
    destructive = getattr(notes, "destructive_hint", None)
    if read_only:
        return READ_ONLY, True
    if destructive is False:
        return NOT_DESTRUCTIVE, True
    return DESTRUCTIVE, destructive is True


async def _list_tools(config: ServerConfig, session: Any) -> tuple[ServerTool, ...]:
    from mcp_types import PaginatedRequestParams

    found: list[ServerTool] = []
    cursor = None
    for _page in range(100):  # a server that pages forever cannot hang the kernel
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        for tool in listing.tools:
            safety, annotated = tool_safety(tool.annotations)
            found.append(
                ServerTool(
                    config.name,
                    tool.name,
                    tool.description or "",
                    dict(tool.input_schema or {"type": "object"}),
                    safety,
                    annotated,
                    tool.name in config.allowed_tools,
                )
            )
        cursor = listing.next_cursor
        if not cursor:
            break
    return tuple(found)


def _resolve(config: ServerConfig) -> str:
    """The server's command as a path, or ``McpServerFailed`` saying it is not found."""
    path = dict(config.env).get("PATH") or os.environ.get("PATH")
    command = config.command
    if os.sep in command and config.cwd and not Path(command).is_absolute():
        command = str(Path(config.cwd) / command)
    found = shutil.which(command, path=path)
    if found is None:
        raise McpServerFailed(
            _(
                "MCP server {server} cannot be used: its command {command!r} is not found "
                "(not on PATH, or not executable); install it or give its full path"
            ).format(server=config.name, command=config.command)
        )
    return found


def _import_sdk() -> None:
    try:
        import mcp.client.session  # noqa: F401
    except ImportError:
        raise MissingExtra(
            _("MCP servers need the mcp package: {command}").format(command=MCP_EXTRA_HINT)
        ) from None
    # the SDK logs a server's stray stdout lines as errors; they are reported here, once
    logging.getLogger("mcp").addHandler(logging.NullHandler())


@functools.cache
def _call_errors() -> tuple[Any, tuple[type[BaseException], ...], int, int]:
    """The SDK's error types and codes a call tells apart (looked up once, not per call)."""
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    gone = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)
    return MCPError, gone, CONNECTION_CLOSED, REQUEST_TIMEOUT


def _unwrapped(error: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, or the error itself."""
    while True:
        inner = getattr(error, "exceptions", None)
        if not inner:
            return error
        error = inner[0]


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]
