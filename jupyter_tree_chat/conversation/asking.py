"""``Asking``: a question and its reply, the way every action that asks the model goes.

``ask``, ``edit`` and ``retry`` put the question on disk (fsynced) first, then run the
reply loop: stream a reply (``_stream_reply``), run the tools it asks for, and go on
until the model stops; a reply cut short is kept, marked ``interrupted``
(``_store_partial``). ``_preflight`` refuses, before anything is stored or sent, a
request the API would refuse. A fan-out hands its question to ``fanout.answer_all``.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

from ..errors import (
    ProviderError,
    TreeError,
)
from ..history.store import leaf_record
from ..history.tree import (
    Message,
    Node,
    is_tool_result,
    only_thinking,
    tool_uses,
)
from ..i18n import _
from ..measures import preflight
from ..providers.base import (
    Degraded,
    Finished,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
    check_request,
    route_of,
)
from ..providers.tools.functions import (
    KEPT_DEFINITIONS,
    definitions_called,
)
from . import budgeting
from .events import (
    LeafChanged,
    ReplyEnded,
    ReplyStarted,
    Turn,
    TurnInterrupted,
)
from .host import SessionHost, exclusive
from .many.batch import send, wires_for
from .many.batch_poll import watch
from .many.fanout import answer_all
from .many.variants import Fanout
from .replies import (
    DeltaBatch,
    PartialReply,
    partial_meta,
    reply_meta,
    stop_reason_error,
    tool_names_meta,
)
from .settings import ChatSettings, with_root_system


class Asking(SessionHost):
    """The actions that ask the model a question, and the reply loop they share."""

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
        user = self._question(Node(self.new_id(), parent_id, message, meta or None), fanout)
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
        user = self._question(node, fanout)
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
        waiting = self.batches.pending_questions().get(point.id)
        if waiting is not None:
            raise TreeError(
                _(
                    "question {id} is waiting for batch {batch}; its answer comes when the "
                    "batch ends (`%chat batch` says where it stands)"
                ).format(id=point.id[:7], batch=waiting)
            )
        settings = self._settings(settings)
        self._preflight(self.path(point.id), None, settings, fanout)
        return self._respond(point, Turn(None), settings, fanout)

    def _question(self, node: Node, fanout: Fanout | None) -> Node:
        """Store a new question: durable, the leaf on it. For a batch, not yet: it is
        written with the batch's plan in one append (``_send_batch``), and the leaf stays
        where it was until the answers come."""
        if fanout is not None and fanout.batch:
            return node
        return self.record(node, durable=True)

    def _send_batch(
        self, user: Node, turn: Turn, settings: ChatSettings | None, fanout: Fanout
    ) -> Turn:
        """``user``'s requests as vendor batches (many/batch.py); a new question is
        written with the plan, in one append."""
        above = self.path(user.parent_id) if user.parent_id else []
        settings = with_root_system(self._settings(settings), [*above, user])
        variants = fanout.variants(settings, self.provider.default_model)
        new = [] if user.id in self.tree else [user]
        send(self, [user], new, turn, variants, cell_id=(user.meta or {}).get("cell_id"))
        watch(self)
        return turn

    def continue_tools(self, reply: Node, settings: ChatSettings) -> Turn:
        """A batch answer that stopped at ``tool_use``: its tools run here and the loop
        goes on outside the batch, streamed at the standard price (many/batch.py); the
        current leaf stays where it was."""
        leaf = self.tree.leaf
        settings = with_root_system(settings, self.path(reply.id))
        specs = self.tool_specs(settings)
        turn = Turn(None)
        uses = tool_uses(reply.message)
        results = self.run_tools(uses, settings, turn, {spec.name for spec in specs})
        asked = self._add(
            reply.id,
            {"role": "user", "content": results, "timestamp": self.now()},
            {"tool_results": True, KEPT_DEFINITIONS: definitions_called(specs, uses)},
        )
        self._respond(asked, turn, settings)
        if leaf is not None and self.tree.leaf != leaf:
            self.tree.switch(leaf)
            self._persist([leaf_record(leaf)], durable=True)
            self.emit(LeafChanged(leaf))
        return turn

    # -- the reply loop ---------------------------------------------------------------

    def _respond(
        self, user: Node, turn: Turn, settings: ChatSettings | None, fanout: Fanout | None = None
    ) -> Turn:
        """Stream replies under ``user``, running tools until the model stops."""
        if fanout is not None and fanout.batch:
            return self._send_batch(user, turn, settings, fanout)
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
        answered = [n for n in self.tree.children(parent.id) if n.role == "assistant"]
        request = replace(request, attempt=len(answered) + 1)
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
            fanned = fanout.variants(settings, self.provider.default_model)
            if fanout.batch:  # every endpoint has a batch API, or one line says which not
                wires_for(self, fanned)
            variants = [v.settings for v in fanned]
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
