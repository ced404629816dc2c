"""``Session``: the single owner of a conversation's state, and its user actions.

A session is a tree, a store, a provider and a current leaf. It is the one place where
the chapter's operations become things a user does (ask, edit, retry, switch,
fork-before-tool-use, compact, label), and it announces every change as an event so
the views (the magic, the panel, ...) can redraw without touching the tree themselves.

Reliability: a user message is on disk (fsynced) before the request is sent; a reply
cut short by an error or by KeyboardInterrupt is kept, marked ``interrupted`` (with the
thinking that had arrived, unsigned, so it is never sent back); if the file cannot be
written, the conversation goes on in memory and says so. A request the API would refuse
(preflight.py: the thinking budget, temperature with thinking, a tool turn's thinking, a
question over the context window) is refused before anything is stored or sent.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

from ..errors import (
    FeatureMissing,
    PromptTooLong,
    ProviderError,
    SessionBusy,
    SessionNotSaved,
    TreeError,
)
from ..history.grade_record import Grades
from ..history.store import (
    FileStore,
    LoadResult,
    MemoryStore,
    Problem,
    Store,
    hidden_record,
    label_record,
    leaf_record,
)
from ..history.tree import (
    Message,
    Node,
    SessionTree,
    is_real_user_message,
    is_tool_result,
    only_thinking,
    tool_uses,
)
from ..i18n import _
from ..language import COMPACTION, path_language
from ..measures import preflight
from ..measures.budget import Sizes
from ..measures.models import CONTEXT_WINDOWS, PRICES, Price, by_model
from ..measures.usage import Meter, exact_meter, meter
from ..providers.base import (
    Degraded,
    Finished,
    Provider,
    ReplyRequest,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolSpec,
    ToolUseReady,
    can_count,
    check_request,
    route_of,
)
from ..providers.endpoints import PRESETS, known_prices, known_windows
from ..providers.toolbox import Toolbox
from ..providers.tools import (
    KEPT_DEFINITIONS,
    ToolRegistry,
    definitions_called,
    kept_definitions,
)
from . import budgeting, cellrule, experiment
from .events import (
    Event,
    LeafChanged,
    Listener,
    NodeAdded,
    Notice,
    ReplyEnded,
    ReplyStarted,
    Turn,
    TurnInterrupted,
)
from .fanout import answer_all
from .replies import (
    DELTA_INTERVAL_S,
    DeltaBatch,
    PartialReply,
    partial_meta,
    reply_meta,
    stop_reason_error,
    tool_names_meta,
)
from .settings import ChatSettings, with_root_system
from .variants import Fanout

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


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
    def guarded(self: Session, *args: Any, **kwargs: Any) -> Any:
        if not self._lock.acquire(blocking=False):
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


class Session:
    """A conversation tree bound to a store and a provider; the views' only way in."""

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
        self._depth = 0  # actions running on this thread (one may call another)

    @classmethod
    def open(cls, path: str | Path, provider: Provider, **kwargs: Any) -> Session:
        """A session over the file at ``path`` (created on the first append)."""
        return cls(FileStore(path), provider, **kwargs)

    @classmethod
    def in_memory(cls, provider: Provider, **kwargs: Any) -> Session:
        return cls(MemoryStore(), provider, **kwargs)

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
        found = self.store.read_new()
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

    # -- actions -----------------------------------------------------------------------

    @exclusive
    def ask(
        self,
        content: str | list[dict[str, Any]],
        *,
        parent: str | None = None,
        new_root: bool = False,
        meta: dict[str, Any] | None = None,
        settings: ChatSettings | None = None,
        fanout: Fanout | None = None,
    ) -> Turn:
        """Add a user message (under ``parent``, default the leaf) and get the reply
        (or, with ``fanout``, every answer it asks for: see fanout.py).

        If the chosen parent is itself an unanswered question, the new question goes
        beside it instead of stacking two user messages, and a notice says so.
        """
        notices: list[str] = []
        if new_root:
            parent_id = None
        else:
            parent_id = self.tree.leaf if parent is None else self.resolve(parent).id
        if parent_id is not None:
            above = self.tree.get(parent_id)
            if is_tool_result(above.message):
                raise TreeError(
                    _(
                        "the last tool round got no answer from the model; run `%chat retry` "
                        "to let the model continue, or fork from an earlier reply"
                    )
                )
            if above.role == "assistant" and only_thinking(above.message):
                notices.append(
                    _(
                        "The reply {node} was cut short while the model was thinking; "
                        "this question is asked beside its question."
                    ).format(node=above.id[:7])
                )
                above = self.tree.get(above.parent_id) if above.parent_id else above
                parent_id = above.id
            if above.role == "user":
                parent_id = above.parent_id
                if not notices:
                    notices.append(
                        _("The question {node} got no answer; this one is asked beside it.").format(
                            node=above.id[:7]
                        )
                    )
        settings = self._settings(settings)
        message: Message = {"role": "user", "content": content, "timestamp": self.now()}
        self._preflight(self.path(parent_id) if parent_id else [], message, settings, fanout)
        user = self._add(parent_id, message, meta, durable=True)
        turn = Turn(user)
        for line in notices:
            self.notice(line, "info", turn)
        return self._respond(user, turn, settings, fanout)

    @exclusive
    def edit(
        self,
        node_ref: str,
        content: str | list[dict[str, Any]],
        *,
        meta: dict[str, Any] | None = None,
        settings: ChatSettings | None = None,
        fanout: Fanout | None = None,
    ) -> Turn:
        """Edit a user message: a new sibling with new content, then its reply (or replies)."""
        original = self.resolve(node_ref)
        if original.role != "user" or is_tool_result(original.message):
            raise TreeError(
                _(
                    "node {node} is a {role} message; only your own messages can be edited "
                    "(retry an answer instead)"
                ).format(node=original.id[:7], role=original.role)
            )
        settings = self._settings(settings)
        above = self.path(original.parent_id) if original.parent_id else []
        self._preflight(above, {"role": "user", "content": content}, settings, fanout)
        node = Node(
            self.new_id(),
            original.parent_id,
            {**original.message, "content": content, "timestamp": self.now()},
            {**(meta or {}), "edited_from": original.id},
        )
        user = self.record(node, durable=True)
        return self._respond(user, Turn(user), settings, fanout)

    @exclusive
    def retry(
        self,
        node_ref: str | None = None,
        *,
        settings: ChatSettings | None = None,
        fanout: Fanout | None = None,
    ) -> Turn:
        """A new answer (or ``fanout``'s answers) beside the old one, for the leaf or any
        user/assistant node."""
        ref = node_ref if node_ref is not None else self.tree.leaf
        if ref is None:
            raise TreeError(_("the session is empty; ask something first"))
        point = self.tree.retry_point(self.resolve(ref).id)
        settings = self._settings(settings)
        self._preflight(self.path(point.id), None, settings, fanout)
        return self._respond(point, Turn(None), settings, fanout)

    @exclusive
    def switch(self, node_ref: str, *, deepest: bool = True) -> str:
        """Make a branch current: ``node_ref``'s deepest leaf (or the node itself)."""
        node = self.resolve(node_ref)
        target = self.tree.deepest_leaf(node.id) if deepest else node.id
        self.tree.switch(target)
        self._persist([leaf_record(target)], durable=True)
        self.emit(LeafChanged(target))
        return target

    @exclusive
    def fork_before_tool_use(
        self, content: str | None = None, *, settings: ChatSettings | None = None
    ) -> Turn:
        """Ask the last real user message again, from before the tool call it led to.

        ``content`` defaults to the original text; the model decides afresh and never
        sees the old tool call or its result.
        """
        point = self.tree.fork_before_tool_use_point()
        new_content = point.message.get("content") if content is None else content
        settings = self._settings(settings)
        above = self.path(point.parent_id) if point.parent_id else []
        self._preflight(above, {"role": "user", "content": new_content}, settings)
        node = Node(
            self.new_id(),
            point.parent_id,
            {**point.message, "content": new_content, "timestamp": self.now()},
            {"forked_before_tool_use": point.id},
        )
        user = self.record(node, durable=True)
        return self._respond(user, Turn(user), settings)

    @exclusive
    def compact(
        self, instructions: str | None = None, *, settings: ChatSettings | None = None
    ) -> Turn:
        """Summarise the current path into a new root; the old branch stays, one switch away."""
        if self.tree.leaf is None:
            raise TreeError(_("the session is empty; there is nothing to compact"))
        summarised = self.tree.leaf
        path = self.path()
        while path and (path[-1].role == "user" or only_thinking(path[-1].message)):
            path.pop()  # an unanswered question cannot be followed by the request below
        # in the conversation's own language, so the summary and its frame are too
        texts = COMPACTION[path_language([n.message for n in path])]
        ask = texts.request + (" " + instructions if instructions else "")
        settings = replace(self._settings(settings), thinking=None)  # a summary needs none
        asked: Message = {"role": "user", "content": ask}
        request = self.context_request(path, settings, extra=[asked], summarize=False)
        text, error = budgeting.collect_text(self.provider, request)
        if error is not None:
            error = self.explained(error, request.messages, settings)
            self.notice(_("Compaction failed: {error}").format(error=error), "error")
            return Turn(None, error=error)
        root, ack = self.tree.compact(
            text,
            summarised,
            self.new_id(),
            self.new_id(),
            self.now(),
            heading=texts.heading,
            acknowledgement=texts.acknowledgement,
        )
        for node in (root, ack):
            self._persist([node.to_record()], durable=node is ack)
            self.emit(NodeAdded(node))
        self.emit(LeafChanged(ack.id))
        return Turn(root, [ack])

    @exclusive
    def label(self, node_ref: str, label: str) -> Node:
        """Name a node (``""`` removes the label); labels are records, nodes stay as they are."""
        node = self.resolve(node_ref)
        self._persist([label_record(node.id, label)], durable=True)
        if label:
            self.labels[node.id] = label
        else:
            self.labels.pop(node.id, None)
        self.emit(LeafChanged(self.tree.leaf))
        return node

    @exclusive
    def hide(self, node_ref: str, hidden: bool = True) -> bool:
        """Hide (or show again) the branch from a node; the nodes stay in the file.

        Returns whether anything changed. The current path cannot be hidden: the
        conversation under way would vanish from every view.
        """
        node = self.resolve(node_ref)
        if hidden and node.id in {n.id for n in self.path()}:
            raise TreeError(
                _(
                    "{node} is on the current path, which cannot be hidden; "
                    "switch to another branch first"
                ).format(node=node.id[:7])
            )
        if hidden == (node.id in self.hidden):
            return False
        self._persist([hidden_record(node.id, hidden)], durable=True)
        if hidden:
            self.hidden.add(node.id)
        else:
            self.hidden.discard(node.id)
        self.emit(LeafChanged(self.tree.leaf))
        return True

    # -- the reply loop ---------------------------------------------------------------

    def _respond(
        self, user: Node, turn: Turn, settings: ChatSettings | None, fanout: Fanout | None = None
    ) -> Turn:
        """Stream replies under ``user``, running tools until the model stops."""
        settings = with_root_system(self._settings(settings), self.path(user.id))
        if fanout is not None:
            variants = fanout.variants(settings, self.provider.default_model)
            if len(variants) > 1:
                return answer_all(self, user, turn, variants)
            settings = variants[0].settings
        specs = self.tool_specs(settings)
        parent = user
        for round_number in range(settings.max_tool_rounds + 1):
            reply = self._stream_reply(parent, settings, specs, turn)
            if reply is None or turn.error is not None:
                break
            uses = tool_uses(reply.message)
            if not uses or reply.meta is None or reply.meta.get("stop_reason") != "tool_use":
                break
            if round_number == settings.max_tool_rounds:
                self.notice(
                    _(
                        "Stopped after {rounds} tool rounds; "
                        "run `%chat retry` to let the model go on."
                    ).format(rounds=settings.max_tool_rounds),
                    "warning",
                    turn,
                )
            offered = {spec.name for spec in specs}
            try:
                results = self.run_tools(uses, settings, turn, offered)
            except KeyboardInterrupt:  # the reply that asked stays, unanswered
                self._sync()
                self.emit(LeafChanged(self.tree.leaf))
                raise TurnInterrupted(turn) from None
            parent = self._add(
                reply.id,
                {"role": "user", "content": results, "timestamp": self.now()},
                {"tool_results": True, KEPT_DEFINITIONS: definitions_called(specs, uses)},
            )
        self._sync(wait=False)  # the reply is written; the disk need not be waited for
        self.emit(LeafChanged(self.tree.leaf))
        return turn

    def _stream_reply(
        self, parent: Node, settings: ChatSettings, specs: tuple[Any, ...], turn: Turn
    ) -> Node | None:
        request = self.context_request(self.tree.path_nodes(parent.id), settings, specs)
        self.tree.switch(parent.id)
        self.emit(ReplyStarted(parent.id))
        partial = PartialReply()
        pieces = DeltaBatch(self.emit, parent.id, self.delta_interval)
        finished: Finished | None = None
        started = time.monotonic()
        try:
            for event in self.provider.stream(request):
                if isinstance(event, TextDelta):
                    partial.add(event)
                    pieces.text(event.text)
                elif isinstance(event, ThinkingDelta):
                    partial.think(event)
                    pieces.think(event.text)
                elif isinstance(event, ThinkingReady):
                    partial.thought(event)
                elif isinstance(event, ToolUseReady):
                    partial.tools.append(event.block)
                elif isinstance(event, Finished):
                    finished = event
                elif isinstance(event, Degraded):
                    pieces.flush()
                    self.notice(event.message, "warning", turn)
            pieces.flush()
        except ProviderError as failure:
            pieces.flush()
            turn.error = self.explained(failure, request.messages, settings)
        except KeyboardInterrupt:
            with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C: store first
                pieces.flush()  # the views show all that is kept
            why = "interrupted by the user"
            node = self._store_partial(parent, partial, settings, started, why, request.context)
            if node is not None:
                turn.replies.append(node)
            self._sync()
            self.emit(ReplyEnded(parent.id, node))
            self.emit(LeafChanged(self.tree.leaf))
            raise TurnInterrupted(turn) from None
        if finished is None:
            error = turn.error or ProviderError(_("the reply ended without a final message"))

            turn.error = error
            why = error.kind if isinstance(error, ProviderError) else "provider_error"
            node = self._store_partial(parent, partial, settings, started, why, request.context)
            if node is not None:
                turn.replies.append(node)
            self.notice(str(error), "error", turn)
            self.emit(ReplyEnded(parent.id, node, error))
            return node
        seconds = time.monotonic() - started
        route = route_of(self.provider, self.model_of(settings))
        meta = reply_meta(route, finished, settings, seconds, request.context)
        meta = tool_names_meta(self.tools, finished.message, meta)
        message = {**finished.message, "timestamp": self.now()}
        node = self._add(parent.id, message, meta)
        turn.replies.append(node)
        stop_error = stop_reason_error(finished, settings)
        if stop_error is not None:
            self.notice(str(stop_error), "warning", turn)
        self.emit(ReplyEnded(parent.id, node))
        return node

    def _store_partial(
        self,
        parent: Node,
        partial: PartialReply,
        settings: ChatSettings,
        started: float,
        why: str,
        context: dict[str, Any] | None,
    ) -> Node | None:
        message = partial.message()
        if message is None:
            return None  # nothing arrived: the question stays unanswered at the leaf
        message["timestamp"] = self.now()
        seconds = time.monotonic() - started
        route = route_of(self.provider, self.model_of(settings))
        meta = partial_meta(route, settings, why, seconds)
        if context is not None:
            meta["context"] = context
        return self._add(parent.id, message, meta)

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
        (``known_tools``: the provider sends them marked not callable, toolwire.py)."""
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

    def _preflight(
        self,
        path: list[Node],
        question: Message | None,
        settings: ChatSettings,
        fanout: Fanout | None = None,
    ) -> None:
        """Refuse, before anything is stored or sent, a request the API would refuse.

        ``path`` leads to where the reply will hang; ``question`` is the new user
        message (None for a retry, which may continue a tool turn). A fan-out is
        checked variant by variant: each is a request of its own."""
        if fanout is not None:
            preflight.check_fanout_thinking(settings.thinking, fanout.temperatures)
            variants = [v.settings for v in fanout.variants(settings, self.provider.default_model)]
        else:
            variants = [settings]
        extra = [] if question is None else [question]
        messages = [*(node.message for node in path), *extra]
        measured: set[str] = set()
        for asked in variants:
            preflight.check_thinking(
                asked.thinking, max_tokens=asked.max_tokens, temperature=asked.temperature
            )
            if question is None:
                preflight.check_tool_turn(path, asked.thinking)
            self.tool_specs(asked)  # named tools exist, their MCP servers start (or say why)
            model = self.model_of(asked)
            if model not in measured:  # the window is the model's: one reading each
                measured.add(model)
                whole = self.meter(path, asked, extra=extra)
                budgeting.check_fits(self, path, asked, self.tool_specs(asked), extra, whole)
            # what the model's endpoint lacks (images, a temperature range, its key, ...)
            check_request(self.provider, self.build_request(messages, asked))

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
        allowed = settings.allow_destructive
        pending = [self.tools.start(b, allow_destructive=allowed, offered=offered) for b in uses]
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
        self.tree.add(node)
        self.tree.leaf = node.id
        self._persist([node.to_record()], durable=durable)
        self.emit(NodeAdded(node))
        return node

    def _persist(self, records: Iterable[dict[str, Any]], *, durable: bool) -> None:
        if self.save_error is not None:
            return
        try:
            self.store.append(records, durable=durable)
        except SessionNotSaved as error:
            self.save_error = error
            self.notice(str(error), "error")

    def record_facts(self, records: Iterable[dict[str, Any]]) -> None:
        """Append records that judge nodes (grades, preferences: grading.py); never a node."""
        self._persist(records, durable=True)

    def record_all(self, nodes: Iterable[Node], *, durable: bool = True) -> None:
        """Store ``nodes`` (an experiment's questions, or its answers) in one append, the
        leaf left where it is; announce them."""
        nodes = list(nodes)
        for node in nodes:
            self.tree.add(node)
        self._persist([node.to_record() for node in nodes], durable=durable)
        for node in nodes:
            self.emit(NodeAdded(node))

    @exclusive
    def run_experiment(self, plan: experiment.Plan, **how: Any) -> Turn:
        """One question over many rows, each row a sibling question (experiment.py)."""
        return experiment.run(self, plan, **how)

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

    # -- the notebook-native rule -----------------------------------------------------

    @exclusive
    def run_cell(
        self,
        text: str | list[dict[str, Any]],
        *,
        cell_id: str | None,
        settings: ChatSettings | None = None,
        from_node: str | None = None,
        new_root: bool = False,
        continue_leaf: bool = False,
        meta: dict[str, Any] | None = None,
        fanout: Fanout | None = None,
    ) -> Turn:
        """What running a ``%%chat`` cell does (see cellrule.py); options override the rule.

        ``text`` is the question's content (a string, or blocks with images and files);
        ``meta`` goes on a new user node beside the cell id (e.g. ``context``).
        """
        meta = {**({"cell_id": cell_id} if cell_id else {}), **(meta or {})} or None
        how: dict[str, Any] = {"settings": settings, "fanout": fanout}
        if new_root:
            return self.ask(text, new_root=True, meta=meta, **how)
        if from_node is not None:
            return self.ask(text, parent=from_node, meta=meta, **how)
        if continue_leaf:
            return self.ask(text, meta=meta, **how)
        decision = cellrule.decide(self.tree, cell_id, text)
        if decision.action == "retry" and decision.node is not None:
            return self.retry(decision.node.id, **how)
        if decision.action == "edit" and decision.node is not None:
            return self.edit(decision.node.id, text, meta=meta, **how)
        return self.ask(text, meta=meta, **how)
