"""Many answers to one question at once: samples, models and temperatures (a fan-out).

Comparing sibling answers is one of the things this project is for; asking for them one
after another is slow and changes settings by hand. A fan-out asks for every variant
(``n`` samples × ``models`` × ``temperatures``, at most ``MAX_VARIANTS``) under one user
node, concurrently, and stores each answer as a sibling with its own ``meta``.

It lives apart from ``session.py`` because the concurrency has rules of its own:

- **Cache first.** Among the answers of one caching endpoint (``cache_group``), the
  first request starts first; the others start once its response has begun (its first
  stream event arrived), because the API makes the prompt-cache entry a request writes
  readable only from then on: started together, they would all write the shared prefix
  instead of reading it. Answers of different endpoints share no cache, so each
  endpoint's first answer starts at once, and an endpoint without caching has all its
  answers start at once.
- **One thread owns the tree.** Each answer streams on a worker thread (a pool of
  ``concurrency`` threads: workers.py), but the workers
  only read from the network and report what they got on a queue; the calling thread
  (the one holding the session's one-action-at-a-time lock) makes every node, appends
  to the tree and the file, emits every event and runs every tool function. So tool
  functions run in the kernel one call at a time, views are called from one thread,
  and no worker ever needs the session's lock.
- **Deterministic.** Whatever order the answers finish in, they are appended in variant
  order (an answer waits for the ones before it), the siblings' ids are taken in that
  order, and the current leaf is the first variant's answer, so running a notebook twice
  gives the same tree. An experiment appends the answers that have arrived together, at
  most every ``COMMIT_EVERY_S`` (one write and one announcement for many rows).
- **Each endpoint at its pace.** At most ``concurrency`` requests run at once (``--concurrency``;
  a plain fan-out: all), and at most an endpoint's own limit to that endpoint
  (``Endpoint.concurrency``, a llama-server's slots), each endpoint counted apart; the
  cell says once when an endpoint's limit lowers what was asked. A request refused for
  now (a 429, an overload) is asked again by the router after the server's wait, one
  line in the cell per retry (``Retrying``); the worker waits on the cancel flag, so
  Ctrl-C during a wait sends nothing more.
- **Faults stay local.** One answer failing (a 429 after every attempt, a dropped
  stream, an ``error`` event) keeps what it received (marked ``interrupted`` with the
  error) and the others go on. Ctrl-C keeps what every answer had received, each
  unfinished one marked interrupted, then raises ``TurnInterrupted``.
- **Samples in one request.** Where the model's endpoint takes ``n`` (Chat Completions:
  OpenAI's, llama.cpp's), the samples of one model and temperature are asked in one
  request and each answer reads its choice of it (``choices.SharedChoices``); an
  endpoint that refuses ``n`` is said once and asked once per answer from then on. The
  request's usage is recorded on its first answer; each answer's ``meta.choice`` says
  which of how many it was.
- **Each answer may think.** With thinking on, every variant asks for it (the session
  refused, before any request, a fan-out over temperatures: the API takes none with
  thinking); an answer's thinking streams as ``ReplyThinking`` with its variant and is
  kept like a single reply's, unsigned if cut short.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from typing import Any

from ...errors import ChatError, ProviderError
from ...history.tree import Node
from ...i18n import _, ngettext
from ...providers.base import (
    Message,
    Provider,
    TextDelta,
    cache_group,
    endpoint_limit,
    route_of,
    slot_group,
    takes_n,
)
from ...providers.tools.functions import KEPT_DEFINITIONS, definitions_called
from ...providers.tools.toolbox import PendingTool
from ..events import (
    ExperimentEnded,
    ExperimentProgress,
    ExperimentStarted,
    FanoutEnded,
    FanoutStarted,
    ReplyDelta,
    ReplyEnded,
    ReplyStarted,
    ReplyThinking,
    Turn,
    TurnInterrupted,
)
from ..replies import (
    PartialReply,
    partial_meta,
    reply_meta,
    stop_reason_error,
    tool_names_meta,
)
from .choices import SharedChoices
from .variants import Answer, Variant
from .workers import POLL_S, FanoutHost, Pool, Report, Worker

log = logging.getLogger(__name__)

IDLE_S = 1.0
"""After this long without a report, an experiment says its progress again."""
COMMIT_EVERY_S = 0.2
"""How often an experiment appends the answers that have arrived: one write (and one
announcement to the views) for all of them, not one per row; its last ones at its end."""


# -- the owning thread ------------------------------------------------------------------


class _FanoutRun:
    """One fan-out: every ``(question, variant)`` job, ``concurrency`` at a time (None: all
    at once); it starts the workers and owns every change. A plain fan-out has one
    question; an experiment (experiment.py) one per row, and then streams no text to the
    views: they show its progress (``ExperimentProgress``), not a column per answer."""

    def __init__(
        self,
        session: FanoutHost,
        questions: list[Node],
        jobs: list[tuple[int, Variant]],
        concurrency: int | None = None,
    ) -> None:
        self.session = session
        self.questions = questions
        self.question = questions[0]
        self.rows = len(questions) > 1
        above = session.tree.path_nodes(questions[0].parent_id) if questions[0].parent_id else []
        # the rows share the path above them: one list each, not one walk of the tree each
        self.paths: list[list[Node]] = [[*above, q] for q in questions]
        variants = [variant for _question, variant in jobs]
        self.specs = session.tool_specs(variants[0].settings)
        self.answers = [Answer(v, question_id=questions[q].id) for q, v in jobs]
        self.workers = [Worker(self, i, v, q) for i, (q, v) in enumerate(jobs)]
        had = [
            sum(1 for n in session.tree.children(q.id) if n.role == "assistant") for q in questions
        ]
        for worker in self.workers:  # the answers a question had, then this run's, in order
            had[worker.question] += 1
            worker.attempt = had[worker.question]
        self.concurrency = concurrency or len(jobs)
        self._waiting = list(range(len(jobs)))  # not started yet, in order
        self.pool = Pool(self.concurrency)
        self._running = 0
        self._done = 0
        self.failed = 0
        self.partials = [PartialReply() for _ in variants]
        self.started = [0.0 for _ in variants]
        # the siblings' ids are taken in variant order now, whatever order they finish in
        self.head_ids = [session.new_id() for _ in variants]
        self.calls: list[list[PendingTool]] = [[] for _ in variants]  # tool calls running
        self.asked: list[list[dict[str, Any]]] = [[] for _ in variants]  # their tool_use blocks
        self.reports: queue.Queue[Report] = queue.Queue()
        self.cancelled = threading.Event()
        self.shared = self._share_requests(session.provider)
        leaders: dict[str, Worker] = {}
        for worker in self.workers:  # the first answer of each caching endpoint goes first
            if worker.choices is not None and worker.choices[1] > 0:
                continue  # a later choice of a request: it comes when the first does
            group = cache_group(session.provider, worker.variant.model)
            if group is None:
                continue
            worker.waits_for = leaders.get(group)
            leaders.setdefault(group, worker)
        self._committed = 0
        self.slots = _Slots(session.provider, self.workers)
        self._commit_due = 0.0  # an experiment's next append of what has arrived

    def _share_requests(self, provider: Provider) -> list[SharedChoices]:
        """One request for the samples of each model and temperature whose endpoint takes
        ``n`` (see the module docstring); each of those workers gets its choice of it."""
        groups: dict[tuple[int, str, float | None], list[Worker]] = {}
        for worker in self.workers:
            variant = worker.variant
            if variant.samples > 1 and takes_n(provider, variant.model):
                key = (worker.question, variant.model, variant.temperature)
                groups.setdefault(key, []).append(worker)
        shared = []
        for members in groups.values():
            if len(members) > 1:
                choices = SharedChoices(provider, len(members), self.cancelled)
                shared.append(choices)
                for choice, worker in enumerate(members):
                    worker.choices = (choices, choice)
        return shared

    def run(self, turn: Turn) -> Turn:
        try:
            return self._run(turn)
        finally:  # the pool's threads end, whatever ended the run
            self.pool.close(timeout=POLL_S)

    def _run(self, turn: Turn) -> Turn:
        session = self.session
        session.tree.switch(self.question.id)
        for worker in self.workers:  # a summary the budget asks for, made here, not by a worker
            if worker.question == 0:
                session.context_request(self.paths[0], worker.variant.settings, self.specs)
        self._announce_start()
        for line in self.slots.lowered(self.concurrency):
            session.notice(line, "info", turn)
        self._start_more()
        try:
            running = len(self.workers)
            while running:
                try:
                    report = self.reports.get(timeout=IDLE_S if self.rows else None)
                except queue.Empty:  # a quiet spell (a retry's wait): the count, again
                    self._progress(step=0)
                    continue
                if report.kind == "done":
                    running -= 1
                    self._running -= 1
                    self.slots.release(report.variant)
                self._handle(report, turn)
                if report.kind == "done":
                    self._start_more()
        except KeyboardInterrupt:
            self.cancelled.set()
            for call in (c for calls in self.calls for c in calls):
                call.cancel()
            self._keep_what_arrived()
            self._finish(turn)
            self._announce_end()
            raise TurnInterrupted(turn) from None
        self._finish(turn)
        self._announce_end()
        return turn

    def _start_more(self) -> None:
        """Start waiting answers, in order, while fewer than ``concurrency`` run, each
        where its endpoint has a free slot (an answer of a full endpoint waits, a later
        one of another endpoint goes first)."""
        for index in list(self._waiting):
            if self._running >= self.concurrency:
                return
            if not self.slots.take(index):
                continue
            self._waiting.remove(index)
            self.pool.run(self.workers[index])
            self._running += 1

    def _announce_start(self) -> None:
        variants = tuple(a.variant for a in self.answers)
        if self.rows:
            ids = tuple(q.id for q in self.questions)
            self.session.emit(ExperimentStarted(ids, variants))
        else:
            self.session.emit(FanoutStarted(self.question.id, variants))

    def _announce_end(self) -> None:
        if self.rows:
            ids = tuple(q.id for q in self.questions)
            self.session.emit(ExperimentEnded(ids, tuple(self.answers)))
        else:
            self.session.emit(FanoutEnded(self.question.id, tuple(self.answers)))

    def _progress(self, step: int = 1) -> None:
        """Say how many answers are done (``step`` 0: the same count again, so a view that
        held back the last one, as a throttled progress bar does, shows it)."""
        self._done += step
        self.session.emit(ExperimentProgress(self._done, len(self.answers), self.failed))

    def _handle(self, report: Report, turn: Turn) -> None:
        session, i = self.session, report.variant
        answer, parent = self.answers[i], self._parent_of(i)
        if report.kind == "delta":
            self.partials[i].add(TextDelta(report.payload))
            if not self.rows:
                session.emit(ReplyDelta(parent, report.payload, variant=i))
        elif report.kind == "think":
            self.partials[i].think(report.payload)
            if not self.rows:
                session.emit(ReplyThinking(parent, report.payload.text, variant=i))
        elif report.kind == "thought":
            self.partials[i].thought(report.payload)
        elif report.kind == "start":
            self.partials[i] = PartialReply()
            self.started[i] = time.monotonic()
            if not self.rows:
                session.emit(ReplyStarted(parent, variant=i))
        elif report.kind == "finished":
            finished, context, choice = report.payload
            route = route_of(session.provider, answer.variant.model)
            meta = reply_meta(route, finished, answer.variant.settings, report.seconds, context)
            if choice is not None:
                meta["choice"] = choice
            meta = tool_names_meta(session.tools, finished.message, meta)
            message = {**finished.message, "timestamp": session.now()}
            node = self._node(i, parent, message, meta)
            answer.nodes.append(node)
            self.partials[i] = PartialReply()
            stop = stop_reason_error(finished, answer.variant.settings)
            if stop is not None:
                session.notice(self._about(i, stop), "warning", turn)
            if not self.rows:
                session.emit(ReplyEnded(parent, node, variant=i))
        elif report.kind == "tools":  # started here; MCP calls go on while others stream
            asked = answer.variant.settings
            start = functools.partial(
                session.tools.start,
                allow_destructive=asked.allow_destructive,
                allow_run=asked.allow_run,
                offered={spec.name for spec in self.specs},
            )
            self.asked[i] = report.payload
            self.calls[i] = [start(b) for b in report.payload]
            done = Report(i, "tool_done")
            for call in self.calls[i]:
                call.when_done(functools.partial(self.reports.put, done))
        elif report.kind == "tool_done" and self.calls[i] and all(c.done() for c in self.calls[i]):
            answers = [call.answer() for call in self.calls[i]]
            self.calls[i] = []
            for line in (a.notice for a in answers if a.notice):
                session.notice(self._about(i, line), "warning", turn)
            results = [a.result for a in answers]
            message = {"role": "user", "content": results, "timestamp": session.now()}
            kept = definitions_called(self.specs, self.asked[i])
            meta = {"tool_results": True, KEPT_DEFINITIONS: kept}
            answer.nodes.append(self._node(i, parent, message, meta))
            self.workers[i].results.put(results)
        elif report.kind in ("degraded", "retrying"):
            session.notice(self._about(i, report.payload), "warning", turn)
        elif report.kind == "limit":
            rounds = answer.variant.settings.max_tool_rounds
            session.notice(
                _(
                    "Answer {number} stopped after {rounds} tool rounds; "
                    "run `%chat retry` on it to let the model go on."
                ).format(number=i + 1, rounds=rounds),
                "warning",
                turn,
            )
        elif report.kind == "failed":
            self._fail(i, report.payload, turn)
        elif report.kind == "done":
            answer.done = True
            if not self.rows or time.monotonic() >= self._commit_due:
                self._commit_ready(turn)
            if self.rows:
                self._progress()

    def _fail(self, i: int, error: ChatError, turn: Turn) -> None:
        answer = self.answers[i]
        answer.error = error
        node = self._partial_node(i, error.kind if isinstance(error, ProviderError) else "error")
        self.failed += 1
        if self.rows:  # the grid marks each failed row; one line sums them up (experiment.py)
            return
        self.session.notice(
            _("Answer {number} ({variant}) failed: {error}").format(
                number=i + 1, variant=answer.variant.label, error=error
            ),
            "warning",
            turn,
        )
        self.session.emit(ReplyEnded(self._parent_of(i), node, error, variant=i))

    def _about(self, i: int, notice: object) -> str:
        """A notice about answer ``i``, saying which answer (an experiment's: which row)."""
        variant = self.answers[i].variant.label
        if self.rows:
            row = self.workers[i].question + 1
            return _("Row {row} ({variant}): {notice}").format(
                row=row, variant=variant, notice=notice
            )
        return _("Answer {number} ({variant}): {notice}").format(
            number=i + 1, variant=variant, notice=notice
        )

    def _partial_node(self, i: int, why: str) -> Node | None:
        """What variant ``i`` streamed of its unfinished reply, stored marked interrupted."""
        message = self.partials[i].message()
        answer = self.answers[i]
        answer.interrupted = True
        if message is None:
            return None
        seconds = time.monotonic() - self.started[i] if self.started[i] else 0.0
        message["timestamp"] = self.session.now()
        route = route_of(self.session.provider, answer.variant.model)
        meta = partial_meta(route, answer.variant.settings, why, seconds)
        if self.workers[i].context is not None:
            meta["context"] = self.workers[i].context
        node = self._node(i, self._parent_of(i), message, meta)
        answer.nodes.append(node)
        self.partials[i] = PartialReply()
        return node

    def _keep_what_arrived(self) -> None:
        for i, answer in enumerate(self.answers):
            if not answer.done:
                self.partials[i].add(TextDelta("".join(self.workers[i].held)))
                self._partial_node(i, "interrupted by the user")
                answer.done = True

    def _node(self, i: int, parent: str, message: Message, meta: dict[str, Any]) -> Node:
        first = not self.answers[i].nodes
        node_id = self.head_ids[i] if first else self.session.new_id()
        return Node(node_id, parent, message, meta)

    def _parent_of(self, i: int) -> str:
        nodes = self.answers[i].nodes
        return nodes[-1].id if nodes else self.questions[self.workers[i].question].id

    def _commit_ready(self, turn: Turn) -> None:
        """Append every finished answer whose earlier variants are all appended."""
        ready: list[Node] = []  # an experiment's: appended together, one write for them all
        while self._committed < len(self.answers) and self.answers[self._committed].done:
            answer = self.answers[self._committed]
            for node in answer.nodes:
                if node.id in self.session.tree:  # a Ctrl-C cut this loop short before
                    continue
                if self.rows:
                    ready.append(node)
                else:
                    self.session.record(node)
                if node.role == "assistant":
                    turn.replies.append(node)
            self._committed += 1
        if ready:
            self.session.record_all(ready, durable=False)
            self._commit_due = time.monotonic() + COMMIT_EVERY_S

    def _finish(self, turn: Turn) -> None:
        session = self.session
        self._commit_ready(turn)
        turn.answers = list(self.answers)
        first = next((a for a in self.answers if a.nodes), None)
        leaf = first.nodes[-1].id if first is not None else self.question.id
        if all(a.error is not None for a in self.answers):
            turn.error = self.answers[0].error
        session.settle(leaf)
        for choices in self.shared:
            choices.join(timeout=POLL_S)


class _Slots:
    """How many requests each endpoint has running, against its own limit
    (``providers.base.endpoint_limit``). A later choice of a shared request
    (choices.py) sends none, so it takes no slot."""

    def __init__(self, provider: Provider, workers: list[Worker]) -> None:
        self.group: list[str | None] = []
        self.limits: dict[str, tuple[str, int]] = {}
        for worker in workers:
            model = worker.variant.model
            if worker.choices is not None and worker.choices[1] > 0:
                self.group.append(None)
                continue
            group = slot_group(provider, model)
            self.group.append(group)
            limit = endpoint_limit(provider, model)
            if limit is not None:
                self.limits[group] = limit
        self.running: dict[str, int] = dict.fromkeys(self.limits, 0)

    def take(self, index: int) -> bool:
        """Take a slot for answer ``index``'s request; False if its endpoint is full."""
        group = self.group[index]
        if group is None or group not in self.limits:
            return True
        if self.running[group] >= self.limits[group][1]:
            return False
        self.running[group] += 1
        return True

    def release(self, index: int) -> None:
        group = self.group[index]
        if group is not None and group in self.limits:
            self.running[group] -= 1

    def lowered(self, concurrency: int) -> list[str]:
        """A line for each endpoint whose limit is below what was asked of it."""
        lines = []
        for group, (where, limit) in self.limits.items():
            asked = min(concurrency, sum(1 for g in self.group if g == group))
            if limit < asked:
                lines.append(
                    ngettext(
                        "{where} takes {limit} request at once (its concurrency): "
                        "asking it {limit} at a time, not {asked}.",
                        "{where} takes {limit} requests at once (its concurrency): "
                        "asking it {limit} at a time, not {asked}.",
                        limit,
                    ).format(where=where, limit=limit, asked=asked)
                )
        return lines


def answer_all(
    session: FanoutHost,
    question: Node,
    turn: Turn,
    variants: list[Variant],
    concurrency: int | None = None,
) -> Turn:
    """Ask every variant under ``question``, ``concurrency`` at a time (None: all at
    once), each endpoint within its own limit (see the module docstring)."""
    return _FanoutRun(session, [question], [(0, v) for v in variants], concurrency).run(turn)


def answer_rows(
    session: FanoutHost,
    questions: list[Node],
    turn: Turn,
    variants: list[Variant],
    concurrency: int,
) -> Turn:
    """Ask every variant under each of ``questions`` (an experiment's rows, siblings),
    ``concurrency`` requests at a time; one question is a fan-out, the same run."""
    jobs = [(q, variant) for q in range(len(questions)) for variant in variants]
    return _FanoutRun(session, questions, jobs, concurrency).run(turn)
