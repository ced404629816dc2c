"""Many answers to one question at once: samples, models and temperatures (a fan-out).

Comparing sibling answers is one of the things this project is for; asking for them one
after another is slow and changes settings by hand. A fan-out asks for every variant
(``n`` samples × ``models`` × ``temperatures``, at most ``MAX_VARIANTS``) under one user
node, concurrently, and stores each answer as a sibling with its own ``meta``.

It lives apart from ``session.py`` because the concurrency has rules of its own:

- **Cache first.** The first request starts first; the others start once its response
  has begun (its first stream event arrived), because the API makes the prompt-cache
  entry a request writes readable only from then on: started together, they would all
  write the shared prefix instead of reading it.
- **One thread owns the tree.** Each answer streams on a worker thread, but the workers
  only read from the network and report what they got on a queue; the calling thread
  (the one holding the session's one-action-at-a-time lock) makes every node, appends
  to the tree and the file, emits every event and runs every tool function. So tool
  functions run in the kernel one call at a time, views are called from one thread,
  and no worker ever needs the session's lock.
- **Deterministic.** Whatever order the answers finish in, they are appended in variant
  order (an answer waits for the ones before it), the siblings' ids are taken in that
  order, and the current leaf is the first variant's answer, so running a notebook twice
  gives the same tree.
- **Faults stay local.** One answer failing (a 429 after the SDK's retries, a dropped
  stream, an ``error`` event) keeps what it received (marked ``interrupted`` with the
  error) and the others go on. Ctrl-C keeps what every answer had received, each
  unfinished one marked interrupted, then raises ``TurnInterrupted``.
- **Each answer may think.** With thinking on, every variant asks for it (the session
  refused, before any request, a fan-out over temperatures: the API takes none with
  thinking); an answer's thinking streams as ``ReplyThinking`` with its variant and is
  kept like a single reply's, unsigned if cut short.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ChatError, FanoutTooLarge, ProviderError
from .events import (
    FanoutEnded,
    FanoutStarted,
    LeafChanged,
    ReplyDelta,
    ReplyEnded,
    ReplyStarted,
    ReplyThinking,
    Turn,
    TurnInterrupted,
)
from .providers.base import (
    Began,
    Finished,
    Message,
    ReplyRequest,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
)
from .store import leaf_record
from .tree import Node, tool_uses

if TYPE_CHECKING:
    from .session import ChatSettings, Session

log = logging.getLogger(__name__)

MAX_VARIANTS = 12
"""The most answers one fan-out asks for (each is a full request, billed as one)."""

_POLL_S = 0.1
"""How often a waiting thread looks at the cancel flag."""


@dataclass(frozen=True)
class Fanout:
    """What to ask for: ``n`` samples of each model × temperature combination.

    ``models``/``temperatures`` empty means "the settings' own one". The checks run
    here, so a view can refuse a bad fan-out before anything is written.
    """

    n: int = 1
    models: tuple[str, ...] = ()
    temperatures: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ChatError(f"the number of answers must be at least 1, not {self.n}")
        if self.count > MAX_VARIANTS:
            raise FanoutTooLarge(
                f"{self.describe()} is {self.count} answers; at most {MAX_VARIANTS} at once: "
                "ask for fewer samples, models or temperatures"
            )

    @property
    def count(self) -> int:
        return self.n * max(len(self.models), 1) * max(len(self.temperatures), 1)

    def describe(self) -> str:
        parts = [f"{self.n} sample{'s' if self.n != 1 else ''}"]
        if self.models:
            parts.append(f"{len(self.models)} models")
        if self.temperatures:
            parts.append(f"{len(self.temperatures)} temperatures")
        return " × ".join(parts)

    def variants(self, base: ChatSettings, default_model: str) -> list[Variant]:
        """Every combination, in variant order: model, then temperature, then sample."""
        models: Sequence[str | None] = self.models or (base.model,)
        temperatures: Sequence[float | None] = self.temperatures or (base.temperature,)
        found = []
        for model, temperature in itertools.product(models, temperatures):
            settings = base.merged(model=model, temperature=temperature)
            for sample in range(1, self.n + 1):
                found.append(Variant(settings, settings.model or default_model, sample, self.n))
        return found


@dataclass(frozen=True)
class Variant:
    """One of the answers a fan-out asks for: its settings and where it stands."""

    settings: ChatSettings
    model: str
    sample: int = 1
    samples: int = 1

    @property
    def temperature(self) -> float | None:
        return self.settings.temperature

    @property
    def label(self) -> str:
        """``claude-sonnet-4-6 · temperature 0.7 · sample 2/3`` (the parts that vary)."""
        parts = [self.model]
        if self.temperature is not None:
            parts.append(f"temperature {self.temperature:g}")
        if self.samples > 1:
            parts.append(f"sample {self.sample}/{self.samples}")
        return " · ".join(parts)


@dataclass
class Answer:
    """What one variant produced: its nodes (reply, tool results, reply, ...) and faults."""

    variant: Variant
    nodes: list[Node] = field(default_factory=list)
    error: ChatError | None = None
    interrupted: bool = False
    done: bool = False

    @property
    def head(self) -> Node | None:
        """The sibling under the question (the node a switch or a compare names)."""
        return self.nodes[0] if self.nodes else None

    @property
    def final(self) -> Node | None:
        """The last reply of this answer (after any tool rounds)."""
        return next((n for n in reversed(self.nodes) if n.role == "assistant"), None)


# -- what the workers report ----------------------------------------------------------


@dataclass(frozen=True)
class _Report:
    variant: int
    kind: str  # "start" | "delta" | "think" | "thought" | "finished" | "tools" | "limit" |
    # "failed" | "done"
    payload: Any = None
    seconds: float = 0.0


class _Worker:
    """Streams one variant's answer, its tool rounds included, reporting on ``reports``.

    It never touches the tree: tool calls are handed to the owning thread, which runs
    them and hands the results back on ``results``.
    """

    def __init__(self, run: _FanoutRun, index: int, variant: Variant) -> None:
        self.run = run
        self.index = index
        self.variant = variant
        self.results: queue.Queue[list[dict[str, Any]]] = queue.Queue()
        self.thread = threading.Thread(
            target=self.work, name=f"tree-chat-answer-{index + 1}", daemon=True
        )

    def report(self, kind: str, payload: Any = None, seconds: float = 0.0) -> None:
        self.run.reports.put(_Report(self.index, kind, payload, seconds))

    def work(self) -> None:
        try:
            self._answer()
        except ProviderError as error:
            self.report("failed", error)
        except Exception as error:  # a bug must end this answer, not hang the fan-out
            log.exception("answer %d of a fan-out failed", self.index + 1)
            self.report("failed", ProviderError(f"{type(error).__name__}: {error}"))
        finally:
            self.run.first_began.set()  # never leave the others waiting
            self.report("done")

    def _answer(self) -> None:
        run, settings = self.run, self.variant.settings
        messages = list(run.path)
        if self.index > 0 and not self._wait(run.first_began):
            return
        for round_number in range(settings.max_tool_rounds + 1):
            finished = self._stream(run.session._request(messages, settings, run.specs))
            if finished is None:
                return
            uses = tool_uses(finished.message)
            if not uses or finished.stop_reason != "tool_use":
                return
            if round_number == settings.max_tool_rounds:
                self.report("limit")
                return
            self.report("tools", uses)
            results = self._take_results()
            if results is None:
                return
            messages += [finished.message, {"role": "user", "content": results}]

    def _stream(self, request: ReplyRequest) -> Finished | None:
        started = time.monotonic()
        self.report("start")
        finished: Finished | None = None
        events = self.run.session.provider.stream(request)
        try:
            for event in events:
                if self.run.cancelled.is_set():
                    return None
                if isinstance(event, TextDelta):
                    self.report("delta", event.text)
                elif isinstance(event, ThinkingDelta):
                    self.report("think", event)
                elif isinstance(event, ThinkingReady):
                    self.report("thought", event)
                elif isinstance(event, Began):
                    if self.index == 0:
                        self.run.first_began.set()
                elif isinstance(event, Finished):
                    finished = event
        finally:  # a cancelled answer frees its connection now, not when collected
            close = getattr(events, "close", None)
            if close is not None:
                close()
        if finished is None:
            raise ProviderError("the reply ended without a final message")
        self.report("finished", finished, time.monotonic() - started)
        return finished

    def _wait(self, flag: threading.Event) -> bool:
        while not flag.wait(_POLL_S):
            if self.run.cancelled.is_set():
                return False
        return not self.run.cancelled.is_set()

    def _take_results(self) -> list[dict[str, Any]] | None:
        while not self.run.cancelled.is_set():
            try:
                return self.results.get(timeout=_POLL_S)
            except queue.Empty:
                continue
        return None


# -- the owning thread ------------------------------------------------------------------


class _FanoutRun:
    """One fan-out under ``question``: starts the workers and owns every change."""

    def __init__(self, session: Session, question: Node, variants: list[Variant]) -> None:
        from .session import _PartialReply

        self.session = session
        self.question = question
        self.path: list[Message] = session.tree.active_path(question.id)
        self.specs = session.tool_specs(variants[0].settings)
        self.answers = [Answer(v) for v in variants]
        self.workers = [_Worker(self, i, v) for i, v in enumerate(variants)]
        self.partials = [_PartialReply() for _ in variants]
        self.started = [0.0 for _ in variants]
        # the siblings' ids are taken in variant order now, whatever order they finish in
        self.head_ids = [session._new_id() for _ in variants]
        self.reports: queue.Queue[_Report] = queue.Queue()
        self.first_began = threading.Event()
        self.cancelled = threading.Event()
        self._committed = 0

    def run(self, turn: Turn) -> Turn:
        session = self.session
        session.tree.switch(self.question.id)
        session._emit(FanoutStarted(self.question.id, tuple(a.variant for a in self.answers)))
        for worker in self.workers:
            worker.thread.start()
        try:
            running = len(self.workers)
            while running:
                report = self.reports.get()
                if report.kind == "done":
                    running -= 1
                self._handle(report, turn)
        except KeyboardInterrupt:
            self.cancelled.set()
            self._keep_what_arrived()
            self._finish(turn)
            session._emit(FanoutEnded(self.question.id, tuple(self.answers)))
            raise TurnInterrupted(turn) from None
        self._finish(turn)
        session._emit(FanoutEnded(self.question.id, tuple(self.answers)))
        return turn

    def _handle(self, report: _Report, turn: Turn) -> None:
        session, i = self.session, report.variant
        answer, parent = self.answers[i], self._parent_of(i)
        if report.kind == "delta":
            self.partials[i].add(TextDelta(report.payload))
            session._emit(ReplyDelta(parent, report.payload, variant=i))
        elif report.kind == "think":
            self.partials[i].think(report.payload)
            session._emit(ReplyThinking(parent, report.payload.text, variant=i))
        elif report.kind == "thought":
            self.partials[i].thought(report.payload)
        elif report.kind == "start":
            self.partials[i] = type(self.partials[i])()
            self.started[i] = time.monotonic()
            session._emit(ReplyStarted(parent, variant=i))
        elif report.kind == "finished":
            finished: Finished = report.payload
            meta = session._reply_meta(finished, answer.variant.settings, report.seconds)
            message = {**finished.message, "timestamp": session._now()}
            node = self._node(i, parent, message, meta)
            answer.nodes.append(node)
            self.partials[i] = type(self.partials[i])()
            stop = session._stop_reason_error(finished, answer.variant.settings)
            if stop is not None:
                session._notice(f"Answer {i + 1} ({answer.variant.label}): {stop}", "warning", turn)
            session._emit(ReplyEnded(parent, node, variant=i))
        elif report.kind == "tools":
            results = [session.tools.run(block) for block in report.payload]
            message = {"role": "user", "content": results, "timestamp": session._now()}
            answer.nodes.append(self._node(i, parent, message, {"tool_results": True}))
            self.workers[i].results.put(results)
        elif report.kind == "limit":
            rounds = answer.variant.settings.max_tool_rounds
            session._notice(
                f"Answer {i + 1} stopped after {rounds} tool rounds; "
                "run `%chat retry` on it to let the model go on.",
                "warning",
                turn,
            )
        elif report.kind == "failed":
            self._fail(i, report.payload, turn)
        elif report.kind == "done":
            answer.done = True
            self._commit_ready(turn)

    def _fail(self, i: int, error: ChatError, turn: Turn) -> None:
        answer = self.answers[i]
        answer.error = error
        node = self._partial_node(i, error.kind if isinstance(error, ProviderError) else "error")
        self.session._notice(
            f"Answer {i + 1} ({answer.variant.label}) failed: {error}", "warning", turn
        )
        self.session._emit(ReplyEnded(self._parent_of(i), node, error, variant=i))

    def _partial_node(self, i: int, why: str) -> Node | None:
        """What variant ``i`` streamed of its unfinished reply, stored marked interrupted."""
        message = self.partials[i].message()
        answer = self.answers[i]
        answer.interrupted = True
        if message is None:
            return None
        seconds = time.monotonic() - self.started[i] if self.started[i] else 0.0
        message["timestamp"] = self.session._now()
        meta = self.session._partial_meta(answer.variant.settings, why, seconds)
        node = self._node(i, self._parent_of(i), message, meta)
        answer.nodes.append(node)
        self.partials[i] = type(self.partials[i])()
        return node

    def _keep_what_arrived(self) -> None:
        for i, answer in enumerate(self.answers):
            if not answer.done:
                self._partial_node(i, "interrupted by the user")
                answer.done = True

    def _node(self, i: int, parent: str, message: Message, meta: dict[str, Any]) -> Node:
        first = not self.answers[i].nodes
        node_id = self.head_ids[i] if first else self.session._new_id()
        return Node(node_id, parent, message, meta)

    def _parent_of(self, i: int) -> str:
        nodes = self.answers[i].nodes
        return nodes[-1].id if nodes else self.question.id

    def _commit_ready(self, turn: Turn) -> None:
        """Append every finished answer whose earlier variants are all appended."""
        while self._committed < len(self.answers) and self.answers[self._committed].done:
            answer = self.answers[self._committed]
            for node in answer.nodes:
                if node.id in self.session.tree:  # a Ctrl-C cut this loop short before
                    continue
                self.session._add_node(node)
                if node.role == "assistant":
                    turn.replies.append(node)
            self._committed += 1

    def _finish(self, turn: Turn) -> None:
        session = self.session
        self._commit_ready(turn)
        turn.answers = list(self.answers)
        first = next((a for a in self.answers if a.nodes), None)
        leaf = first.nodes[-1].id if first is not None else self.question.id
        if session.tree.leaf != leaf:
            session.tree.switch(leaf)
            session._persist([leaf_record(leaf)], durable=False)
        if all(a.error is not None for a in self.answers):
            turn.error = self.answers[0].error
        session._sync()
        session._emit(LeafChanged(session.tree.leaf))
        for worker in self.workers:
            worker.thread.join(timeout=_POLL_S)


def answer_all(session: Session, question: Node, turn: Turn, variants: list[Variant]) -> Turn:
    """Ask every variant under ``question`` at once (see the module docstring)."""
    return _FanoutRun(session, question, variants).run(turn)
