"""The kernel's sessions: one ``Session`` per session file, shared by every view.

``%%chat`` cells and the panel must act on the same object, or one would not see the
other's nodes and they would both append to the file from stale trees. This registry
hands out that one object per (notebook, session name), keeps its provider and settings
in step with ``TreeChat``, and says once per kernel what a user must know (the offline
model is in use; there is no notebook path, so where the file went).

For views (this is the one documented hook between ``kernel/`` and other views: the
kernel never imports ``widget/``; ``load_ipython_extension`` plugs the widget in here)::

    from jupyter_tree_chat.kernel import sessions
    session = sessions.current_session()      # what the next %%chat cell uses
    remove = sessions.add_turn_hook(hook)     # hook(session, turn) after each turn
    sessions.registry().panel_hook = show     # show(session) is what `%chat panel` displays
    sessions.registry().grid_hook = grid      # grid(session, question, html) -> the bundle
                                              # an experiment cell ends with

A turn hook runs inside the cell that ran the turn, after its footer, so anything it
displays (a per-turn control) appears under that cell's reply.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conversation.events import Turn
from ..conversation.host import Refill
from ..conversation.many.batch_poll import watch
from ..conversation.session import Session
from ..errors import SessionNameError
from ..history.store import SESSION_SUFFIX, session_path
from ..i18n import _
from ..providers import Provider, choose_provider
from ..providers.endpoints.config import OPENAI_CHAT, split_model
from ..providers.endpoints.router import EndpointPool, Router
from ..providers.tools.functions import default_registry
from ..providers.tools.toolbox import LazySource, Toolbox
from .config import TreeChat
from .history import CellErrors
from .notebook import fallback_notebook, notebook_path

if TYPE_CHECKING:  # imported when a cell first names an MCP tool: %load_ext pays nothing
    from ..providers.mcp.config import ServerConfigs
    from ..providers.mcp.servers import McpServers
    from ..providers.mcp.tools import McpTools
    from .notebook_tools.server import NotebookTools

log = logging.getLogger(__name__)

TurnHook = Callable[[Session, Turn], None]
PanelHook = Callable[[Session], Any]
GridHook = Callable[[Session, str, dict[str, str]], dict[str, Any]]


class KernelSessions:
    """Sessions, providers and one-time notes for one IPython shell."""

    def __init__(self, shell: Any, config: TreeChat, say: Callable[[str], None] = print) -> None:
        self.shell = shell
        self.config = config
        self.say = say
        self.turn_hooks: list[TurnHook] = []
        self.panel_hook: PanelHook | None = None
        self.grid_hook: GridHook | None = None
        #: fills a question's {fields} from this kernel for an edit in a view (magics.py)
        self.refill: Refill | None = None
        self._sessions: dict[Path, Session] = {}
        self._providers: dict[str | None, Provider] = {}
        self._routers: dict[str | None, Router] = {}
        self.endpoints = EndpointPool()
        """The endpoints' providers and what each turned out to lack, for every router."""
        self._said: set[str] = set()
        self._warming: dict[str | None, threading.Thread] = {}
        self._warmed: dict[str | None, tuple[Provider, str | None]] = {}
        #: the kernel's functions, and its MCP servers' tools (made on first use)
        self.tools = Toolbox(default_registry, LazySource(lambda: self.mcp_tools))
        self._mcp: McpServers | None = None
        self._mcp_tools: McpTools | None = None
        self._mcp_json: tuple[Path, float | None, ServerConfigs] | None = None
        #: whether the page has the lab's Insert below (the package root asks the widget)
        self.can_insert_below: Callable[[], bool] = lambda: False

    # -- where -------------------------------------------------------------------------

    def notebook(self) -> Path:
        """The notebook's path, or the fallback in the working directory (noted once)."""
        user_ns = getattr(self.shell, "user_ns", {}) if self.shell is not None else {}
        found = notebook_path(user_ns)
        if found is not None:
            return found
        fallback = fallback_notebook()
        self._say_once(
            "no-notebook",
            _(
                "No notebook path reached this kernel; sessions are saved in {path} (and NAME "
                "sessions beside it)."
            ).format(path=session_path(fallback)),
        )
        return fallback

    def session_file(self, name: str | None = None) -> Path:
        """The file of session ``name`` (default: ``TreeChat.session``) of this notebook."""
        if name is None:
            if self.config.session_file:  # a file named outright (an exported branch)
                return self._named_file(self.config.session_file)
            name = self.config.session
        elif name == "default":
            name = None
        return session_path(self.notebook(), name).resolve()

    def _named_file(self, name: str) -> Path:
        """``TreeChat.session_file`` beside the notebook; checked here as well, since
        ``%config`` keeps a value its validator refused (it only logs the error)."""
        if not name.endswith(SESSION_SUFFIX):
            raise SessionNameError(
                _(
                    "TreeChat.session_file must name a *{suffix} file, not {name!r}; "
                    "set it to one, or to None for the notebook's own session"
                ).format(suffix=SESSION_SUFFIX, name=name)
            )
        return (self.notebook().parent / name).resolve()

    @property
    def mcp(self) -> McpServers:
        """The kernel's MCP servers (none runs before a cell names one of their tools)."""
        if self._mcp is None:
            from ..providers.mcp.servers import McpServers

            self._mcp = McpServers(self.mcp_configs)
        return self._mcp

    @property
    def mcp_tools(self) -> McpTools:
        """The servers' tools as the sessions' tool source."""
        if self._mcp_tools is None:
            from ..providers.mcp.tools import McpTools

            self._mcp_tools = McpTools(self.mcp, taken=lambda name: name in default_registry)
            self._apply_mcp_settings()
        return self._mcp_tools

    def _apply_mcp_settings(self) -> None:
        if self._mcp_tools is not None:
            self._mcp_tools.timeout = self.config.tool_timeout
            self._mcp_tools.max_chars = self.config.max_chars

    def mcp_configs(self) -> ServerConfigs:
        """The MCP servers: ``TreeChat.mcp_servers`` over ``.mcp.json`` beside the notebook
        (read again when it changes)."""
        from ..providers.mcp.config import MCP_JSON, parse_servers, read_mcp_json

        folder = self.notebook().parent
        path = folder / MCP_JSON
        try:
            stamp: float | None = path.stat().st_mtime
        except OSError:
            stamp = None
        if self._mcp_json is None or self._mcp_json[:2] != (path, stamp):
            self._mcp_json = (path, stamp, read_mcp_json(path))
        configured = parse_servers(self.config.mcp_servers, "TreeChat.mcp_servers", str(folder))
        return configured.over(self._mcp_json[2])

    def serve_notebook(self, errors: CellErrors) -> None:
        """Offer the built-in ``notebook`` server (kernel/notebook_tools/) to cells that
        name it; ``errors`` is the kernel's ``Err``, for ``cells``. Nothing of it is
        imported before a cell names one of its tools."""
        from .notebook_tools import NOTEBOOK, LazyNotebookTools

        def make() -> NotebookTools:
            from .notebook_tools.keys import key_values
            from .notebook_tools.server import NotebookTools

            return NotebookTools(
                self.shell,
                errors,
                self.config.limits,
                lambda: self.config.tool_timeout,
                lambda: key_values(self.config.endpoint_table()),
                lambda: self.can_insert_below(),
            )

        self.tools.builtin[NOTEBOOK] = LazyNotebookTools(make)

    def take_inserts(self) -> list[str]:
        """The cells ``notebook:insert`` proposed in the running cell, for its turn control
        to insert (each once: they are gone from here)."""
        from .notebook_tools import NOTEBOOK, LazyNotebookTools

        server = self.tools.builtin.get(NOTEBOOK)
        return server.take_inserts() if isinstance(server, LazyNotebookTools) else []

    def stop_servers(self) -> None:
        """Stop the kernel's MCP servers (the extension unloads, or the kernel exits)."""
        if self._mcp is not None:
            self._mcp.stop_all()

    # -- what ------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Start making the provider the first cell will use, in a background thread.

        Importing the ``anthropic`` SDK and building its client take about a second;
        done here (``%load_ext``), the first ``%%chat`` cell finds them ready, or waits
        only for what is left. Nothing goes over the network. The offline model needs
        neither, so with no API key (and no ``TreeChat.provider = 'anthropic'``) there is
        nothing to do, unless ``TreeChat.model`` names another endpoint: then its wire's
        SDK is imported (the client is made at the first request, with the key as it is).
        """
        name = self.config.provider
        if not self.config.warm_up or name in self._providers or name in self._warming:
            return
        if name == "offline" or (name is None and not os.environ.get("ANTHROPIC_API_KEY")):
            endpoint, _model = split_model(self.config.model or "", self.config.endpoint_table())
            if endpoint is not None:
                threading.Thread(
                    target=_import_wire,
                    args=(endpoint.api,),
                    name="jupyter-tree-chat warm-up",
                    daemon=True,
                ).start()
            return

        def make() -> None:
            try:
                self._warmed[name] = choose_provider(name, prepare=True)
            except Exception:  # the cell makes it again and shows the error there
                log.debug("warming up provider %r failed", name, exc_info=True)

        thread = threading.Thread(target=make, name="jupyter-tree-chat warm-up", daemon=True)
        self._warming[name] = thread
        thread.start()

    def provider(self, name: str | None = None) -> Router:
        """The kernel's provider for bare model names called ``name`` (None: by API key),
        made once, inside the router that sends ``endpoint:model`` names to their
        endpoints (``TreeChat.endpoints`` as it is now)."""
        default = self._default_provider(name)
        router = self._routers.get(name)
        if router is None or router.default is not default:
            router = Router(default, pool=self.endpoints)
            self._routers[name] = router
        router.endpoints = self.config.endpoint_table()
        return router

    def _default_provider(self, name: str | None) -> Provider:
        provider = self._providers.get(name)
        if provider is None and name in self._warming:
            self._warming.pop(name).join()  # only if it is not ready yet
            provider, notice = self._warmed.pop(name, (None, None))
            if provider is not None:
                self._providers[name] = provider
                if notice:
                    self._say_once("provider-notice", notice)
        if provider is None:
            provider, notice = choose_provider(name)
            self._providers[name] = provider
            if notice:
                self._say_once("provider-notice", notice)
        if hasattr(provider, "delay") and provider.name == "offline":
            provider.delay = self.config.offline_delay
        return provider

    def session(self, name: str | None = None) -> Session:
        """The one ``Session`` over session ``name``'s file, in step with ``TreeChat``."""
        path = self.session_file(name)
        session = self._sessions.get(path)
        provider = self.provider(self.config.provider)
        if session is None:
            session = Session.open(path, provider, tools=self.tools)
            self._sessions[path] = session
            if session.problems:
                first = session.problems[0]
                self._say_once(
                    f"problems:{path}",
                    _(
                        "{name}: {count} damaged or unknown line(s) skipped (first: {first}); "
                        "`jupyter-tree-chat check {path}` lists them."
                    ).format(name=path.name, count=len(session.problems), first=first, path=path),
                )
        session.provider = provider
        session.refill = self.refill
        session.settings = self.config.chat_settings()
        self._apply_mcp_settings()
        self.config.apply_tables(session)
        session.refresh()  # what other kernels appended, before a cell or command uses it
        session.batch_poll = max(0.05, self.config.batch_poll)
        watch(session)  # its pending batches, whichever kernel sent them (batch_poll.py)
        return session

    def open_sessions(self) -> dict[Path, Session]:
        return dict(self._sessions)

    def run_turn_hooks(self, session: Session, turn: Turn) -> None:
        """Call each turn hook; a failing hook is logged, never breaks the cell."""
        for hook in list(self.turn_hooks):
            try:
                hook(session, turn)
            except Exception:
                log.exception("turn hook %r failed", hook)

    def _say_once(self, key: str, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.say(message)


_WIRE_IMPORTS = {
    OPENAI_CHAT: ("jupyter_tree_chat.providers.openai.provider", "openai", "openai.types.chat"),
}
_MESSAGES_IMPORTS = (
    "jupyter_tree_chat.providers.anthropic.provider",
    "anthropic.lib.streaming",
    "anthropic.types",
)


def _import_wire(api: str) -> None:
    """Import the SDK of the wire ``api`` and its streaming types (no network)."""
    try:
        for module in _WIRE_IMPORTS.get(api, _MESSAGES_IMPORTS):
            importlib.import_module(module)
    except Exception:  # the cell imports it again and shows the error there
        log.debug("warming up the SDK of %s failed", api, exc_info=True)


# -- the kernel's one registry -----------------------------------------------------------

_registry: KernelSessions | None = None


def install(registry: KernelSessions | None) -> None:
    """Set (or with ``None`` clear) the kernel's registry; the extension does this."""
    global _registry
    _registry = registry


def registry() -> KernelSessions:
    """The kernel's registry; loading the extension creates it."""
    if _registry is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError(_("not in IPython; run `%load_ext jupyter_tree_chat` in a notebook"))
        shell.extension_manager.load_extension("jupyter_tree_chat")
    assert _registry is not None
    return _registry


def current_session(name: str | None = None) -> Session:
    """The session the next ``%%chat`` cell uses (or session ``name`` of this notebook)."""
    return registry().session(name)


def add_turn_hook(hook: TurnHook) -> Callable[[], None]:
    """Run ``hook(session, turn)`` after each ``%%chat`` turn; returns the remover."""
    hooks = registry().turn_hooks
    hooks.append(hook)

    def remove() -> None:
        if hook in hooks:
            hooks.remove(hook)

    return remove
