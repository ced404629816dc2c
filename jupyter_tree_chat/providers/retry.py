"""Asking again after a 429 or an overload: how long to wait, and the loop that waits.

A big run (a fan-out, an experiment's thousand rows) meets the servers' limits: HTTP 429
("rate limited"), Anthropic's 529 and a Chat Completions server's 503 ("overloaded"),
Anthropic's ``overloaded_error`` event before any text arrived. The SDKs would retry
twice, silently, with their own waits; a user watching a cell would see nothing and then,
maybe, a failure. So the router asks again itself (``retried``), with the SDKs' own
retries of streamed replies turned off (``sdk_retries``), and each retry is one line in
the cell (a ``Retrying`` event): the note is true and the wait is not doubled.

The waiting rule (``RetryRule.wait``, pure):

- only an error that may pass (``ProviderError.retryable``: a limit, an overload, a 5xx, a
  network failure before the reply began), and only before any of the reply arrived:
  the request sent again is the same request, its question stored once;
- the server's word first: ``retry-after-ms`` (milliseconds, which Anthropic's and
  OpenAI's SDKs read first), else ``retry-after`` (seconds, or an HTTP date), waited as
  said; a server asking for more than ``longest_wait`` is not waited for (the row fails
  with its line, which says when to ask again);
- without a word, exponential backoff from ``first_wait`` (1, 2, 4 ... s, at most
  ``longest_backoff``), each wait jittered to between half and all of it, so the workers
  of a fan-out that were refused together do not come back together;
- at most ``attempts`` requests in all (5): the last error is then raised, saying how
  many attempts were made, and the row fails as any failing row does.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ConnectionFailed, Overloaded, ProviderError, RateLimited
from ..i18n import _
from .base import (
    Finished,
    ReplyEvent,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
)

T = TypeVar("T")
_Error = TypeVar("_Error", bound=ProviderError)

REPLY_EVENTS = (TextDelta, ThinkingDelta, ThinkingReady, ToolUseReady, Finished)
"""Events that are part of the reply: once one arrived, a failure is never retried."""


@dataclass(frozen=True)
class RetryRule:
    """How many times to ask, and how long to wait between (see the module docstring)."""

    attempts: int = 5
    """Requests in all, the first included."""
    first_wait: float = 1.0
    """Seconds before the second attempt when the server says nothing."""
    longest_backoff: float = 30.0
    """The longest wait chosen here (the server's own word may be longer)."""
    longest_wait: float = 120.0
    """The longest wait the server may ask for; a longer one is not waited for."""

    def wait(self, error: ProviderError, attempt: int, draw: float) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` after ``error``, or None: do not
        ask again. ``draw`` is a number in [0, 1) that jitters a backoff."""
        if not error.retryable or attempt >= self.attempts:
            return None
        if error.retry_after is not None:
            if error.retry_after > self.longest_wait:
                return None
            return max(error.retry_after, 0.0)
        backoff = min(self.longest_backoff, self.first_wait * 2 ** (attempt - 1))
        return backoff * (0.5 + draw / 2)


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The seconds a response's headers say to wait (``retry-after-ms``, else
    ``retry-after`` in seconds or as an HTTP date), or None if they say nothing usable."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    said = headers.get("retry-after")
    if not said:
        return None
    try:
        return max(float(said), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(said)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def heeded(error: _Error, headers: Mapping[str, str]) -> _Error:
    """``error`` with what the response's headers say of asking again: ``x-should-retry``
    (``true``/``false``, which both SDKs obey over the status) and the wait."""
    if error.status in (408, 409):  # a request timeout, a lock: retried by the SDKs too
        error.retryable = True
    said = headers.get("x-should-retry")
    if said in ("true", "false"):
        error.retryable = said == "true"
    if error.retryable:
        error.retry_after = retry_after(headers)
    return error


def shown_seconds(seconds: float) -> str:
    """``2``, ``1.5``, ``0.01``, ``45``: a wait as the note says it."""
    if seconds >= 10:
        return str(round(seconds))
    if seconds < 1:
        return f"{seconds:.2g}"
    return f"{seconds:.1f}".rstrip("0").rstrip(".")


def retry_line(error: ProviderError, who: str, seconds: float, attempt: int, attempts: int) -> str:
    """The one line a retry shows: what refused, how long the wait, which attempt comes."""
    if isinstance(error, RateLimited):
        why = _("Rate limited by {who}").format(who=who)
    elif isinstance(error, Overloaded):
        why = _("{who} is overloaded").format(who=who)
    elif isinstance(error, ConnectionFailed):
        why = _("Could not reach {who}").format(who=who)
    else:
        why = _("{who} failed ({status})").format(who=who, status=error.status or error.kind)
    then = _("retrying in {seconds} s (attempt {attempt} of {attempts})").format(
        seconds=shown_seconds(seconds), attempt=attempt, attempts=attempts
    )
    line = _("{why}: {then}.").format(why=why, then=then)
    return line[:1].upper() + line[1:] if line.startswith("the ") else line  # Service.subject


def gave_up(error: ProviderError, attempts: int) -> ProviderError:
    """``error`` saying it came after ``attempts`` attempts (the same type and fields)."""
    said = _("{error} (gave up after {attempts} attempts)").format(
        error=str(error).rstrip("."), attempts=attempts
    )
    error.args = (said, *error.args[1:])
    return error


def passing(error: _Error) -> _Error:
    """``error``, marked as one that may pass if asked again (a network failure before
    the reply began; the SDKs retried those too)."""
    error.retryable = True
    return error


def _same(item: Any) -> Any:
    return item


def retried(
    open_stream: Callable[[], Iterator[T]],
    who: str,
    rule: RetryRule | None = None,
    *,
    event_of: Callable[[T], ReplyEvent] = _same,
    wrap: Callable[[Retrying], T] = _same,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    draw: Callable[[], float] = random.random,
) -> Iterator[T]:
    """What ``open_stream()`` yields, asked again after a failure ``rule`` retries.

    Before each new attempt it yields a ``Retrying`` (made an item by ``wrap``) and, when
    asked for more, sleeps what is left of the wait: a reader that waited already pays
    nothing, one that closes the stream instead sends nothing more. ``event_of`` reads
    the reply event of an item (``stream_choices`` yields ``(choice, event)`` pairs)."""
    rule = rule or RetryRule()
    attempt = 1
    while True:
        replied = False
        stream = open_stream()
        failure: ProviderError | None = None
        wait: float | None = None
        try:
            for item in stream:
                yield item
                if isinstance(event_of(item), REPLY_EVENTS):
                    replied = True
                    break
            if replied:  # the rest as it comes, nothing more to look at per event
                yield from stream
            return
        except ProviderError as error:
            wait = None if replied else rule.wait(error, attempt, draw())
            if wait is None:
                if not replied and error.retryable and attempt >= rule.attempts > 1:
                    gave_up(error, attempt)
                raise
            failure = error
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        assert failure is not None and wait is not None  # the loop returns or raises otherwise
        attempt += 1
        line = retry_line(failure, who, wait, attempt, rule.attempts)
        asked = clock()
        yield wrap(Retrying(line, wait, attempt, rule.attempts))
        left = wait - (clock() - asked)
        if left > 0:
            sleep(left)
