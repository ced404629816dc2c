"""``SessionHost``: a session's state, and what its actions and a fan-out build on.

``Session`` (session.py) is this with the user's actions on top: ``Asking`` (asking.py)
adds a question and its reply loop, ``Session`` the tree's own actions and the
notebook-native rule. Here are the rest, each the one place for it:

- observing and reading: listeners and events, the path, ids by prefix or label, what
  other kernels appended;
- the hand-off to fan-outs and budgets (``many.workers.FanoutHost``, ``budgeting``): requests
  built to the context budget, errors explained, tools offered and run, the meter;
- persistence: a node recorded (tree, file, event), the leaf settled, the store's appends
  and syncs; a failed write is said once and the conversation goes on in memory.

``exclusive`` keeps to one action at a time.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from typing import Any, NamedTuple, TypeVar, cast

from ..errors import (
    FeatureMissing,
    PromptTooLong,
    ProviderError,
    SessionBusy,
    SessionNotSaved,
)
from ..history.batch_record import Batches, take_all
from ..history.grade_record import Grades
from ..history.store import (
    LoadResult,
    NewRecords,
    Problem,
    Store,
    leaf_record,
)
from ..history.tree import (
    Message,
    Node,
    SessionTree,
    is_real_user_message,
)
from ..history.uninterrupted import interrupts_held
from ..i18n import _
from ..measures.budget import Sizes
from ..measures.models import CONTEXT_WINDOWS, PRICES, Price, by_model
from ..measures.usage import Meter, exact_meter, meter
from ..providers.base import (
    Provider,
    ReplyRequest,
    ToolSpec,
    can_count,
)
from ..providers.endpoints.config import PRESETS, known_prices, known_windows
from ..providers.tools.functions import (
    ToolRegistry,
    kept_definitions,
)
from ..providers.tools.toolbox import Toolbox
from . import budgeting
from .events import (
    Event,
    LeafChanged,
    Listener,
    NodeAdded,
    Notice,
    Turn,
)
from .replies import (
    DELTA_INTERVAL_S,
)
from .settings import ChatSettings, with_root_system

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

BACKGROUND_WAIT_S = 60.0
"""The longest an action waits for a batch's results being written (a chunk at a time)."""


class Refilled(NamedTuple):
    """A question typed again (an edit in a view): its content, meta and the line that
    says which fields were filled in again (empty: none)."""

    content: str | list[dict[str, Any]]
    meta: dict[str, Any] | None
    note: str


Refill = Callable[[Node, str], Refilled]
"""``refill(question, typed_text)``: the edit of what ``question`` was typed as, its
``{fields}`` filled in from the notebook now (the kernel sets ``Session.refill``)."""


def exclusive(method: F) -> F:
    """One action at a time: a second thread (a widget click while a cell streams) is told
    the session is busy instead of interleaving with the running turn. Re-entrant, so an
    action may call another."""

    @functools.wraps(method)
    def guarded(self: SessionHost, *args: Any, **kwargs: Any) -> Any:
        if not self._lock.acquire(blocking=False) and not (
            self.background and self._lock.acquire(timeout=BACKGROUND_WAIT_S)
        ):  # a batch's results being written (many/batch_poll.py) are waited for
            raise SessionBusy(
                _("the session is busy writing a reply; wait for it to finish, then try again")
            )
        try:
            self._depth += 1
            if self._depth == 1:
                self._read_new()  # what other kernels appended since, before acting on it
            return method(self, *args, **kwargs)
        finally:
            self._depth -= 1
            self._lock.release()

    return cast(F, guarded)


def new_node_id() -> str:
    """A fresh node id: 16 hex digits, shortened like git ids for display."""
    return uuid.uuid4().hex[:16]


class SessionHost:
    """A session's state, its events, its reading, its requests and its writes."""

    def __init__(
        self,
        store: Store,
        provider: Provider,
        *,
        settings: ChatSettings | None = None,
        tools: ToolRegistry | Toolbox | None = None,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = new_node_id,
        loaded: LoadResult | None = None,
    ) -> None:
        loaded = store.load() if loaded is None else loaded
        self.store = store
        self.provider = provider
        self.settings = settings or ChatSettings()
        self.tools = Toolbox.of(tools)
        self.tree: SessionTree = loaded.tree
        self.labels: dict[str, str] = loaded.labels
        self.hidden: set[str] = loaded.hidden
        self.grades: Grades = loaded.grades
        #: vendor batches asked from this file, by any kernel (history/batch_record.py)
        self.batches: Batches = loaded.batches
        #: seconds between two looks at a pending batch at first (it backs off from there)
        self.batch_poll = 5.0
        self.problems: list[Problem] = loaded.problems
        self.save_error: SessionNotSaved | None = None
        #: the model tables (models.py, and what the endpoint presets know of their models,
        #: as ``endpoint:model``) the session measures with; views may override
        self.context_windows: dict[str, int] = {**CONTEXT_WINDOWS, **known_windows(PRESETS)}
        self.prices: dict[str, Price] = {**PRICES, **known_prices(PRESETS)}
        #: fills a question's ``{fields}`` again for an edit of what was typed; set by the
        #: kernel (its values), None where there are none (the command line, a test)
        self.refill: Refill | None = None
        #: what each node costs of a context budget, counted once (measures/budget.py)
        self.sizes = Sizes()
        self._clock = clock
        self._new_id = new_id
        self._listeners: list[Listener] = []
        #: the least seconds between two announced pieces of a streaming reply
        #: (``replies.DeltaBatch``); 0 announces every delta as it comes
        self.delta_interval = DELTA_INTERVAL_S
        self._lock = threading.RLock()
        #: threads writing in the background (batch results) that an action waits for
        self.background = 0
        self._depth = 0  # actions running on this thread (one may call another)

    @property
    def tools(self) -> Toolbox:
        """The tools a request may offer: kernel functions and MCP servers' tools."""
        return self._tools

    @tools.setter
    def tools(self, tools: ToolRegistry | Toolbox | None) -> None:
        self._tools = Toolbox.of(tools)  # a plain registry of functions is welcome too

    # -- observing ---------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event; returns the function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Tell every listener (a failing one is logged, never breaks the conversation)."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken view must not break the conversation
                log.exception("session listener failed on %s", type(event).__name__)

    def notice(self, message: str, level: str = "info", turn: Turn | None = None) -> None:
        """Say something to the user: on ``turn`` (its cell shows it) and as a ``Notice``."""
        if turn is not None:
            turn.notices.append(message)
        self.emit(Notice(message, level))

    # -- reading -----------------------------------------------------------------------

    @property
    def leaf(self) -> str | None:
        return self.tree.leaf

    @property
    def location(self) -> str:
        return self.store.location

    def path(self, leaf: str | None = None) -> list[Node]:
        leaf = self.tree.leaf if leaf is None else leaf
        return [] if leaf is None else self.tree.path_nodes(leaf)

    def resolve(self, ref: str) -> Node:
        """A node by whole id, unique prefix, or label."""
        for node_id, label in self.labels.items():
            if label == ref and ref not in self.tree:
                return self.tree.get(node_id)
        return self.tree.resolve(ref)

    def user_turns(self) -> list[Node]:
        """The real user messages on the current path, in order (``edit N`` counts these)."""
        return [n for n in self.path() if is_real_user_message(n.message)]

    def refresh(self) -> list[Node]:
        """Read what other processes appended to the session file since the last read.

        Every action does this first; a view may call it to show other kernels' nodes
        sooner. Their nodes join the tree (``NodeAdded`` for each); the current leaf
        stays this session's own. Returns the new nodes ([] while an action runs).
        """
        if not self._lock.acquire(blocking=False):
            return []  # the running action read them when it began
        try:
            return self._read_new()
        finally:
            self._lock.release()

    def _read_new(self) -> list[Node]:
        return self._announce(self.store.read_new())

    def _announce(self, found: NewRecords) -> list[Node]:
        """Say what reading other processes' appends found, and announce their nodes."""
        if found.note:
            self.notice(found.note, "warning")
        if found.problems:
            first = found.problems[0]
            self.notice(
                _(
                    "{count} damaged or unknown line(s) appended to {location} by another "
                    "process were skipped (first: {first})"
                ).format(count=len(found.problems), location=self.location, first=first),
                "warning",
            )
        for node in found.nodes:
            self.emit(NodeAdded(node))
        return found.nodes

    # -- plumbing ----------------------------------------------------------------------

    def build_request(
        self,
        messages: list[Message],
        settings: ChatSettings,
        tools: tuple[Any, ...] = (),
        known: tuple[ToolSpec, ...] = (),
    ) -> ReplyRequest:
        """The request for ``messages`` (a path, as stored) asked with ``settings``,
        offering ``tools``; ``known`` defines the other tools the path used
        (``known_tools``: the provider sends them marked not callable, tools/wire.py)."""
        return ReplyRequest(
            messages=messages,
            model=self.model_of(settings),
            max_tokens=settings.max_tokens,
            system=settings.system,
            temperature=settings.temperature,
            tools=tools,
            thinking=settings.thinking,
            known_tools=known,
        )

    def known_tools(self, path: list[Node]) -> tuple[ToolSpec, ...]:
        """Definitions of the tools ``path`` may have used: those kept in its tool rounds
        (as offered when each call was made, newest first), then every registered tool
        (kernel functions and MCP servers' tools alike)."""
        return (*kept_definitions(node.meta for node in path), *self.tools.specs())

    def explained(
        self, error: ProviderError, messages: list[Message], settings: ChatSettings
    ) -> ProviderError:
        """``error`` as a user can act on it: a prompt over the window names the path's size."""
        if not isinstance(error, PromptTooLong):
            return error
        reading = meter(
            [],
            model=self.model_of(settings),
            windows=self.context_windows,
            system=settings.system,
            tools=[spec.to_api() for spec in self.tool_specs(settings)],
            extra=messages,
        )
        text = _(
            "This path is too long for {model}: {messages} message(s), about {tokens} "
            "tokens as estimated here (the API says: {detail}). Run `%chat compact`, or "
            "fork from an earlier message with `%%chat --from ID`."
        ).format(
            model=self.model_of(settings),
            messages=len(messages),
            tokens=f"{reading.tokens:,}",
            detail=error.api_message,
        )
        return PromptTooLong(text, error.api_message)

    def context_request(
        self,
        path: list[Node],
        settings: ChatSettings,
        tools: tuple[Any, ...] = (),
        extra: list[Message] | tuple[Message, ...] = (),
        *,
        summarize: bool = True,
    ) -> ReplyRequest:
        """The request for ``path`` (and ``extra`` messages not stored yet) built to the
        settings' context budget (budgeting.py): the whole path when it fits, else whole
        exchanges, newest first, with a summary or a note for the rest. ``summarize`` lets
        it write a summary first when ``summarize_dropped`` asks for one."""
        return budgeting.request(self, path, settings, tools, extra, summarize=summarize)

    def record_aside(self, nodes: Iterable[Node]) -> None:
        """Store nodes that leave the current leaf where it is (a compaction made for the
        budget), durably, and announce them."""
        for node in nodes:
            self.tree.add(node)
            self._persist([node.to_record()], durable=True)
            self.emit(NodeAdded(node))

    # -- measuring ---------------------------------------------------------------------

    def meter(
        self,
        path: list[Node] | None = None,
        settings: ChatSettings | None = None,
        *,
        extra: Iterable[Message] = (),
    ) -> Meter:
        """How full the context window is for ``path`` (default: the current path) and
        ``extra`` messages, for the model ``settings`` name (see usage.py)."""
        settings = self._settings(settings)
        nodes = self.path() if path is None else path
        return meter(
            nodes,
            model=self.model_of(settings),
            windows=self.context_windows,
            system=with_root_system(settings, nodes).system,
            tools=[spec.to_api() for spec in self.tools.specs(settings.tools, start=False)],
            extra=extra,
        )

    def count_tokens(
        self, question: str | None = None, *, settings: ChatSettings | None = None
    ) -> Meter | None:
        """The API's own count of the current path (and ``question``, if given), by
        count_tokens; None if the provider cannot count or the path ends with a reply
        and no question is given (a count needs a request that ends with a user turn)."""
        settings = self._settings(settings)
        model = self.model_of(settings)
        if not can_count(self.provider, model):
            return None
        path = self.path()
        extra: list[Message] = [] if question is None else [{"role": "user", "content": question}]
        last = extra[-1] if extra else (path[-1].message if path else None)
        if last is None or last.get("role") != "user":
            return None
        asked = with_root_system(settings, path)
        request = self.context_request(
            path, asked, self.tool_specs(settings), extra, summarize=False
        )
        try:
            tokens = self.provider.count_tokens(request)  # type: ignore[attr-defined]
        except FeatureMissing as missing:  # said once; the meter estimates from now on
            self.notice(str(missing), "warning")
            return None
        return exact_meter(tokens, by_model(self.context_windows, self.model_of(settings)))

    def tool_specs(self, settings: ChatSettings | None = None) -> tuple[Any, ...]:
        """The tools a request with ``settings`` offers the model (every registered function
        by default; MCP tools when named: see toolbox.py)."""
        return self.tools.specs(self._settings(settings).tools)

    def run_tools(
        self,
        uses: list[dict[str, Any]],
        settings: ChatSettings,
        turn: Turn | None = None,
        offered: Collection[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Answer a reply's tool_use blocks, in order; calls to MCP servers may overlap.
        A call to a tool not in ``offered`` runs nothing (see ``ToolRegistry.run``).
        Ctrl-C cancels the calls still running and is raised."""
        gates = settings.allow_destructive, settings.allow_run
        pending = [
            self.tools.start(b, allow_destructive=gates[0], allow_run=gates[1], offered=offered)
            for b in uses
        ]
        try:
            answers = [call.answer() for call in pending]
        except KeyboardInterrupt:
            for call in pending:
                call.cancel()
            raise
        for answer in answers:
            if answer.notice:
                self.notice(answer.notice, "warning", turn)
        return [answer.result for answer in answers]

    def model_of(self, settings: ChatSettings) -> str:
        """The model a request with ``settings`` asks (the provider's default if none)."""
        return settings.model or self.provider.default_model

    def _settings(self, settings: ChatSettings | None) -> ChatSettings:
        return self.settings if settings is None else settings

    def now(self) -> int:
        """The time a new message is stamped with, in whole seconds."""
        return int(self._clock())

    def new_id(self) -> str:
        """A fresh node id (the session's ``new_id``, injected for tests)."""
        return self._new_id()

    def _add(
        self,
        parent_id: str | None,
        message: Message,
        meta: dict[str, Any] | None,
        *,
        durable: bool = False,
    ) -> Node:
        return self.record(Node(self._new_id(), parent_id, message, meta or None), durable=durable)

    def record(self, node: Node, *, durable: bool = False) -> Node:
        """Add ``node`` to the tree and the file, make it the leaf, announce it."""
        with interrupts_held():  # a Ctrl-C never leaves it in the tree and not on disk
            self.tree.add(node)
            self.tree.leaf = node.id
            self._persist([node.to_record()], durable=durable)
        self.emit(NodeAdded(node))
        return node

    def record_facts(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records that judge nodes (grades, preferences: grading.py); never a node."""
        self._persist(records, durable=True)

    def record_all(
        self,
        nodes: Iterable[Node],
        *,
        durable: bool = True,
        records: Iterable[dict[str, Any]] = (),
    ) -> None:
        """Store ``nodes`` (an experiment's questions, or its answers) in one append, the
        leaf left where it is, with ``records`` after them (a batch's plan); announce them."""
        nodes, records = list(nodes), list(records)
        with interrupts_held():  # all in the tree and on disk, or none
            for node in nodes:
                self.tree.add(node)
            take_all(self.batches, records)  # this process's appends are not read back
            self._persist([node.to_record() for node in nodes] + records, durable=durable)
        for node in nodes:
            self.emit(NodeAdded(node))

    def append_checked(
        self, decide: Callable[[], tuple[list[Node], list[dict[str, Any]]]]
    ) -> list[Node]:
        """Store what ``decide`` makes (nodes off the current path, and records) after
        reading what other kernels appended, under the file's lock, so ``decide`` sees
        their records first: a batch's results land once however many kernels apply
        them (many/batch.py). Durable; the nodes are announced and returned."""
        made: list[Node] = []
        decided = False

        def under_lock(_found: NewRecords) -> list[dict[str, Any]]:
            nonlocal decided
            decided = True
            nodes, records = decide()
            for node in nodes:
                self.tree.add(node)
            take_all(self.batches, records)
            made.extend(nodes)
            return [node.to_record() for node in nodes] + records

        found = NewRecords()
        if self.save_error is None:
            try:
                found = self.store.append_checked(under_lock)
            except SessionNotSaved as error:
                self.save_error = error
                self.notice(str(error), "error")
        if not decided:  # not saved: the session goes on in memory
            under_lock(found)
        self._announce(found)
        for node in made:
            self.emit(NodeAdded(node))
        return made

    def _persist(self, records: Iterable[dict[str, Any]], *, durable: bool) -> None:
        if self.save_error is not None:
            return
        try:
            self.store.append(records, durable=durable)
        except SessionNotSaved as error:
            self.save_error = error
            self.notice(str(error), "error")

    def settle(self, leaf: str) -> None:
        """End a turn at ``leaf``: make it current (on disk too), flush, announce it."""
        if self.tree.leaf != leaf:
            self.tree.switch(leaf)
            self._persist([leaf_record(leaf)], durable=False)
        self._sync()
        self.emit(LeafChanged(self.tree.leaf))

    def _sync(self, *, wait: bool = True) -> None:
        if self.save_error is not None:
            self.notice(str(self.save_error), "error")
            return
        try:
            self.store.sync(wait=wait)
        except SessionNotSaved as error:
            self.save_error = error
            self.notice(str(error), "error")
