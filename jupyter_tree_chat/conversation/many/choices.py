"""A fan-out's samples of one model in one request, where its endpoint takes ``n``.

``%%chat --n 3`` asks one model three times. A Chat Completions endpoint that takes ``n``
(OpenAI's, llama.cpp's) answers all three in one request, their chunks interleaved: one
prompt read, billed once, one connection. The fan-out still wants each answer as its own
stream (its column, its node, its tool rounds), so ``SharedChoices`` sits between: the
worker of the first sample starts the one request (``Provider.stream_choices``) on a
thread of its own, which hands each choice's events to that sample's worker; each worker
reads ``events(choice, request)`` as if it had asked alone.

If the endpoint refuses ``n`` before anything arrived (the router raises
``FeatureMissing``, having learnt that the endpoint lacks it), every worker asks on its
own instead, now and in later fan-outs, and the first says so in one line (a
``Degraded`` event). A request refused for now is asked again by the router: the first
answer says so (``Retrying``) and this thread waits on the cancel flag. A failure after
the stream began is each unfinished choice's failure; a cancelled fan-out stops the
request.

The server reports one usage for the whole request: it arrives with the first choice's
``Finished`` (``openai.stream.read_choices``), the others have none.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any

from ...errors import FeatureMissing, ProviderError
from ...providers.base import (
    Began,
    Degraded,
    Finished,
    Provider,
    ReplyEvent,
    ReplyRequest,
    Retrying,
)

log = logging.getLogger(__name__)

_POLL_S = 0.1
"""How often a waiting worker looks at the cancel flag."""
_END = object()
"""Put in every queue when the request is over: nothing more will come."""


class _Refused:
    """The endpoint refused ``n``: ``line`` says so, and each worker asks on its own."""

    def __init__(self, line: str) -> None:
        self.line = line


class SharedChoices:
    """``n`` samples of one request (see the module docstring)."""

    def __init__(self, provider: Provider, n: int, cancelled: threading.Event) -> None:
        self.provider = provider
        self.n = n
        self.cancelled = cancelled
        self.queues: list[queue.Queue[Any]] = [queue.Queue() for _ in range(n)]
        self.thread: threading.Thread | None = None
        self.shared = False
        """True once the one request has begun: the answers came from it."""

    def events(self, choice: int, request: ReplyRequest) -> Iterator[ReplyEvent]:
        """Choice ``choice``'s events; choice 0 starts the request (with ``request``)."""
        if choice == 0:
            self.thread = threading.Thread(
                target=self._feed, args=(request,), name="tree-chat-choices", daemon=True
            )
            self.thread.start()
        inbox = self.queues[choice]
        while True:
            try:
                item = inbox.get(timeout=_POLL_S)
            except queue.Empty:
                if self.cancelled.is_set():
                    return
                continue
            if item is _END:
                return
            if isinstance(item, _Refused):
                if choice == 0:  # said once, by the first answer
                    yield Degraded(item.line)
                yield from self.provider.stream(request)  # an answer of its own
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def _feed(self, request: ReplyRequest) -> None:
        finished: set[int] = set()
        stream_choices = getattr(self.provider, "stream_choices")  # noqa: B009 (takes_n checked it)
        pairs = stream_choices(request, self.n)
        try:
            for choice, event in pairs:
                if self.cancelled.is_set():
                    break
                if isinstance(event, Retrying):  # said by the first answer; waited here
                    self.queues[0].put(event)
                    if self.cancelled.wait(event.seconds):
                        break
                    continue
                self.shared = True
                if isinstance(event, Began):  # every answer has begun
                    for inbox in self.queues:
                        inbox.put(event)
                    continue
                self.queues[choice].put(event)
                if isinstance(event, Finished):
                    finished.add(choice)
        except FeatureMissing as missing:
            if self.shared:
                self._fail(missing, finished)
            else:
                for inbox in self.queues:
                    inbox.put(_Refused(str(missing)))
        except ProviderError as error:
            self._fail(error, finished)
        except Exception as error:  # a bug must end these answers, not hang the fan-out
            log.exception("a request of %d choices failed", self.n)
            self._fail(ProviderError(f"{type(error).__name__}: {error}"), finished)
        finally:
            close = getattr(pairs, "close", None)
            if close is not None:
                close()
            for inbox in self.queues:
                inbox.put(_END)

    def _fail(self, error: ProviderError, finished: set[int]) -> None:
        for choice, inbox in enumerate(self.queues):
            if choice not in finished:
                inbox.put(error)

    def join(self, timeout: float) -> None:
        if self.thread is not None:
            self.thread.join(timeout=timeout)
