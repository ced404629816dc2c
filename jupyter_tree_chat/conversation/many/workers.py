"""A fan-out's workers: each streams one answer on a thread of the run's pool and reports
on a queue.

A worker never touches the tree: it reads from the network, hands tool calls to the
owning thread (``fanout._FanoutRun``, the one holding the session's lock) and waits for
their results; every node, event and write is the owning thread's (fanout.py says why).
The pool has as many threads as answers run at once (``concurrency``), not one per
answer: an experiment of 1,000 rows starts 8 threads, not 1,000.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ...errors import ProviderError
from ...history.tree import Node, SessionTree, tool_uses
from ...i18n import _
from ...providers.base import (
    Began,
    Degraded,
    Finished,
    Message,
    Provider,
    ReplyRequest,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
)
from ...providers.tools.toolbox import Toolbox
from ..events import (
    Event,
    Turn,
)
from ..settings import ChatSettings
from .choices import SharedChoices
from .variants import Variant

log = logging.getLogger(__name__)

POLL_S = 0.1
"""How often a waiting thread looks at the cancel flag."""


class FanoutHost(Protocol):
    """What a fan-out needs of the session that runs it: ``Session`` is one, through its
    public calls only (so the two modules do not import each other)."""

    tree: SessionTree
    provider: Provider
    tools: Toolbox

    def context_request(
        self,
        path: list[Node],
        settings: ChatSettings,
        tools: tuple[Any, ...] = (),
        extra: list[Message] | tuple[Message, ...] = (),
        *,
        summarize: bool = True,
    ) -> ReplyRequest: ...

    def tool_specs(self, settings: ChatSettings | None = None) -> tuple[Any, ...]: ...

    def explained(
        self, error: ProviderError, messages: list[Message], settings: ChatSettings
    ) -> ProviderError: ...

    def new_id(self) -> str: ...

    def now(self) -> int: ...

    def record(self, node: Node) -> Node: ...

    def record_all(self, nodes: list[Node], *, durable: bool = True) -> None: ...

    def emit(self, event: Event) -> None: ...

    def notice(self, message: str, level: str = "info", turn: Turn | None = None) -> None: ...

    def settle(self, leaf: str) -> None: ...


class FanoutRun(Protocol):
    """What a worker reads of the fan-out it is part of (``fanout._FanoutRun``)."""

    session: FanoutHost
    paths: list[list[Node]]
    specs: tuple[Any, ...]
    rows: bool
    reports: queue.Queue[Report]
    cancelled: threading.Event


@dataclass(frozen=True)
class Report:
    variant: int
    kind: str  # "start" | "delta" | "think" | "thought" | "finished" | "tools" |
    # "tool_done" | "limit" | "degraded" | "retrying" | "failed" | "done"
    payload: Any = None
    seconds: float = 0.0


class Worker:
    """Streams one variant's answer, its tool rounds included, reporting on ``reports``.

    It never touches the tree: tool calls are handed to the owning thread, which runs
    them and hands the results back on ``results``.
    """

    def __init__(self, run: FanoutRun, index: int, variant: Variant, question: int = 0) -> None:
        self.run = run
        self.index = index
        self.variant = variant
        self.question = question
        """Which of the run's questions this answer is under (an experiment's row)."""
        self.attempt = 1
        """Which answer to its question this is (a retry's is one more than those there)."""
        self.results: queue.Queue[list[dict[str, Any]]] = queue.Queue()
        self.began = threading.Event()
        """Set once this answer's response has begun (or it ended): what waits on it."""
        self.waits_for: Worker | None = None
        """The answer of the same caching endpoint that must begin first, if any."""
        #: what the budget left out of this answer's latest request (its meta.context)
        self.context: dict[str, Any] | None = None
        #: the one request this answer is a choice of (its samples share it), if any
        self.choices: tuple[SharedChoices, int] | None = None
        #: an experiment's text of the request streaming now, kept here rather than sent a
        #: piece at a time (its cell shows progress, not text): handed over if it is cut
        self.held: list[str] = []

    def report(self, kind: str, payload: Any = None, seconds: float = 0.0) -> None:
        self.run.reports.put(Report(self.index, kind, payload, seconds))

    def work(self) -> None:
        try:
            self._answer()
        except ProviderError as error:
            self._hand_over()
            self.report("failed", error)
        except Exception as error:  # a bug must end this answer, not hang the fan-out
            log.exception("answer %d of a fan-out failed", self.index + 1)
            self._hand_over()
            self.report("failed", ProviderError(f"{type(error).__name__}: {error}"))
        finally:
            self.began.set()  # never leave the others waiting
            self.report("done")

    def _hand_over(self) -> None:
        """What a failing answer had received (kept, as a fan-out keeps its deltas)."""
        if self.held:
            self.report("delta", "".join(self.held))

    def _answer(self) -> None:
        run, settings = self.run, self.variant.settings
        rounds: list[Message] = []  # this answer's tool rounds, not stored yet
        if self.waits_for is not None and not self._wait(self.waits_for.began):
            return
        for round_number in range(settings.max_tool_rounds + 1):
            request = run.session.context_request(
                run.paths[self.question], settings, run.specs, rounds, summarize=False
            )
            if round_number == 0:  # which answer to the question this is (offline says it)
                request = replace(request, attempt=self.attempt)
            self.context = request.context  # for a reply cut short
            try:
                finished = self._stream(request, first=round_number == 0)
            except ProviderError as error:
                raise run.session.explained(error, request.messages, settings) from error
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
            rounds += [finished.message, {"role": "user", "content": results}]

    def _stream(self, request: ReplyRequest, *, first: bool = False) -> Finished | None:
        started = time.monotonic()
        self.report("start")
        self.held = []
        quiet = bool(self.run.rows)  # an experiment: no text shown while it streams
        finished: Finished | None = None
        shared = self.choices if first else None
        if shared is not None:
            events = shared[0].events(shared[1], request)
        else:
            events = self.run.session.provider.stream(request)
        try:
            for event in events:
                if self.run.cancelled.is_set():
                    return None
                if isinstance(event, TextDelta):
                    if quiet:
                        self.held.append(event.text)
                    else:
                        self.report("delta", event.text)
                elif isinstance(event, ThinkingDelta):
                    self.report("think", event)
                elif isinstance(event, ThinkingReady):
                    self.report("thought", event)
                elif isinstance(event, Began):
                    self.began.set()
                elif isinstance(event, Finished):
                    finished = event
                elif isinstance(event, Degraded):
                    self.report("degraded", event.message)
                elif isinstance(event, Retrying):
                    self.report("retrying", event.message)
                    if self.run.cancelled.wait(event.seconds):  # Ctrl-C: nothing more is sent
                        return None
        finally:  # a cancelled answer frees its connection now, not when collected
            close = getattr(events, "close", None)
            if close is not None:
                close()
        if finished is None:
            raise ProviderError(_("the reply ended without a final message"))
        self.held = []
        choice = None
        if shared is not None and shared[0].shared:
            choice = {"index": shared[1] + 1, "of": shared[0].n}
        seconds = time.monotonic() - started
        self.report("finished", (finished, request.context, choice), seconds)
        return finished

    def _wait(self, flag: threading.Event) -> bool:
        while not flag.wait(POLL_S):
            if self.run.cancelled.is_set():
                return False
        return not self.run.cancelled.is_set()

    def _take_results(self) -> list[dict[str, Any]] | None:
        while not self.run.cancelled.is_set():
            try:
                return self.results.get(timeout=POLL_S)
            except queue.Empty:
                continue
        return None


class Pool:
    """The threads a fan-out's answers stream on, each running one answer after another:
    at most ``size`` of them, started as the first answers are handed over. The owning
    thread hands an answer over only while fewer than ``size`` run (``_start_more``), so
    one is always free or about to be (an answer reports "done" as its last act)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.waiting: queue.SimpleQueue[Worker | None] = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []

    def run(self, worker: Worker) -> None:
        self.waiting.put(worker)
        if len(self.threads) < self.size:
            name = f"tree-chat-answer-{len(self.threads) + 1}"
            thread = threading.Thread(target=self._serve, name=name, daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self) -> None:
        while (worker := self.waiting.get()) is not None:
            if not worker.run.cancelled.is_set():  # Ctrl-C: what was not started is not sent
                worker.work()

    def close(self, timeout: float) -> None:
        """Let the threads end once their answers have (each waited for ``timeout``)."""
        for _thread in self.threads:
            self.waiting.put(None)
        for thread in self.threads:
            thread.join(timeout=timeout)
