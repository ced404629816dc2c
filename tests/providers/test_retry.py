"""providers/retry.py: the waiting rule (pure), and the router asking again through the real
SDKs over real HTTP against the fake servers: the server's ``retry-after`` waited, one
``Retrying`` line per retry, the same request sent again, no silent SDK retry on top."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import FakeOpenAI

from jupyter_tree_chat.errors import (
    BadRequest,
    ConnectionFailed,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
)
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.base import Began, Finished, ReplyRequest, Retrying, TextDelta
from jupyter_tree_chat.providers.endpoints.config import PRESETS
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.providers.retry import (
    RetryRule,
    heeded,
    retried,
    retry_after,
    retry_line,
    shown_seconds,
)

# -- the rule (pure) --------------------------------------------------------------------------


def limited(after: float | None = None) -> RateLimited:
    error = RateLimited("Rate limited by x (429): retry in a minute.")
    error.retry_after = after
    return error


def test_the_servers_word_is_read_as_both_sdks_read_it():
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "0.25"}) == 0.25  # floats, as the SDKs allow
    assert retry_after({"retry-after-ms": "200", "retry-after": "9"}) == 0.2  # ms first
    date = "Wed, 21 Oct 2026 07:28:10 GMT"
    now = time.mktime((2026, 10, 21, 7, 28, 0, 0, 0, 0)) - time.timezone
    assert retry_after({"retry-after": date}, now=now) == pytest.approx(10.0)
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_the_servers_wait_is_waited_as_said_and_a_long_one_not_at_all():
    rule = RetryRule()
    assert rule.wait(limited(2.0), 1, draw=0.9) == 2.0
    assert rule.wait(limited(0.0), 1, draw=0.9) == 0.0
    assert rule.wait(limited(rule.longest_wait), 1, draw=0.0) == rule.longest_wait
    assert rule.wait(limited(rule.longest_wait + 1), 1, draw=0.0) is None  # the row fails now


def test_without_a_word_the_wait_backs_off_with_jitter_up_to_a_cap():
    rule = RetryRule(attempts=20)
    assert rule.wait(limited(), 1, draw=0.0) == 0.5  # half of 1 s at the least
    assert rule.wait(limited(), 1, draw=0.999) == pytest.approx(1.0, abs=0.001)
    assert 2.0 <= rule.wait(limited(), 3, draw=0.5) <= 4.0  # 1, 2, 4 s ...
    assert rule.wait(limited(), 12, draw=0.999) <= rule.longest_backoff


def test_only_what_may_pass_is_asked_again_and_only_so_often():
    rule = RetryRule(attempts=3)
    assert rule.wait(BadRequest("refused"), 1, draw=0.5) is None
    assert rule.wait(ConnectionFailed("down"), 1, draw=0.5) is None  # a server not running
    assert rule.wait(Overloaded("busy"), 1, draw=0.5) is not None
    assert rule.wait(ServerError("500"), 2, draw=0.5) is not None
    assert rule.wait(limited(1.0), 3, draw=0.5) is None  # the third was the last attempt


def test_the_servers_should_retry_header_is_obeyed_and_408_is_retried():
    assert heeded(limited(), {"x-should-retry": "false", "retry-after": "1"}).retryable is False
    refused = BadRequest("timeout")
    refused.status = 408
    assert heeded(refused, {"retry-after": "2"}).retry_after == 2.0
    assert heeded(BadRequest("no"), {"x-should-retry": "true"}).retryable is True


def test_a_retry_is_one_line_naming_who_the_wait_and_the_attempt():
    line = retry_line(limited(2), "local at http://127.0.0.1:8080", 2.0, 2, 5)
    assert (
        line == "Rate limited by local at http://127.0.0.1:8080: retrying in 2 s (attempt 2 of 5)."
    )
    assert retry_line(Overloaded("x"), "the Anthropic API", 1.5, 3, 5) == (
        "The Anthropic API is overloaded: retrying in 1.5 s (attempt 3 of 5)."
    )
    failed = ServerError("x")
    failed.status = 502
    assert "failed (502): retrying in 45 s" in retry_line(failed, "w", 45.2, 2, 5)
    assert [shown_seconds(s) for s in (0.001, 0.3, 1.0, 2.25, 12.6)] == [
        "0.001",
        "0.3",
        "1",
        "2.2",
        "13",
    ]


def test_the_loop_waits_what_is_left_once_asked_for_more_and_closing_it_sends_nothing():
    opened: list[int] = []
    slept: list[float] = []

    def attempt() -> Iterator[Any]:
        opened.append(1)
        if len(opened) < 3:
            raise limited(4.0)
        yield TextDelta("hi")

    clock = iter([0.0, 1.0, 10.0, 14.0]).__next__  # the reader waited 1 s, then all 4
    events = list(retried(attempt, "w", RetryRule(), sleep=slept.append, clock=clock))
    assert [type(e) for e in events] == [Retrying, Retrying, TextDelta]
    assert slept == [3.0]  # what was left of the first wait; the second was waited already
    stream = retried(attempt, "w", RetryRule(), sleep=slept.append)
    opened.clear()
    assert isinstance(next(stream), Retrying)
    stream.close()  # a reader cancelled during the wait
    assert len(opened) == 1


def test_a_failure_after_the_reply_began_is_never_asked_again():
    def attempt() -> Iterator[Any]:
        yield Began("m")
        yield TextDelta("half")
        raise Overloaded("overloaded mid-reply")

    stream = retried(attempt, "w", RetryRule(), sleep=lambda s: None)
    with pytest.raises(Overloaded):
        list(stream)


# -- through the router, the real SDKs, real HTTP ------------------------------------------------


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for endpoint in PRESETS.values():
        for variable in endpoint.key_env:
            monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def local() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def router_to(**entries: dict[str, Any]) -> Router:
    return Router(OfflineProvider(), endpoint_table(entries))


def ask(model: str) -> ReplyRequest:
    return ReplyRequest(messages=[{"role": "user", "content": "hello"}], model=model, max_tokens=64)


def replies(server: FakeAnthropic | FakeOpenAI) -> list[Any]:
    return [r for r in server.requests if r.path.endswith(("/messages", "/chat/completions"))]


def test_a_429_is_waited_as_retry_after_says_then_asked_again_the_same(local):
    router = router_to(local={"base_url": local.base_url})
    local.enqueue_error(429, retry_after=1)  # seconds, as Anthropic's API sends it
    local.enqueue(text="after the wait")
    events = list(router.stream(ask("local:smollm2")))
    notes = [e for e in events if isinstance(e, Retrying)]
    assert [n.message for n in notes] == [
        f"Rate limited by local at {local.base_url}: retrying in 1 s (attempt 2 of 5)."
    ]
    assert isinstance(events[-1], Finished)
    assert events[-1].message["content"][0]["text"] == "after the wait"
    sent = replies(local)
    assert len(sent) == 2  # no silent SDK retry: the note is the only retry
    assert sent[0].raw == sent[1].raw and sent[0].path == sent[1].path  # the same request
    assert sent[1].received - sent[0].ended >= 1.0  # the server's wait was waited


def test_a_529_in_the_milliseconds_form_and_an_overload_before_any_text(local):
    router = router_to(local={"base_url": local.base_url})
    local.enqueue_error(529, retry_after_ms=300)
    local.enqueue(text="cut", error_event_after=1)  # overloaded_error after message_start
    local.enqueue(text="whole")
    events = list(router.stream(ask("local:smollm2")))
    notes = [e for e in events if isinstance(e, Retrying)]
    assert notes[0].seconds == 0.3
    assert notes[0].message.endswith("is overloaded: retrying in 0.3 s (attempt 2 of 5).")
    assert notes[1].attempt == 3 and 0.5 <= notes[1].seconds <= 2.0  # no word: a backoff
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "whole"
    assert len(replies(local)) == 3


def test_when_attempts_run_out_the_error_says_so(local):
    router = router_to(local={"base_url": local.base_url})
    local.enqueue_error(429, retry_after_ms=1, times=5)
    events: list[Any] = []
    with pytest.raises(RateLimited, match=r"\(gave up after 5 attempts\)$"):
        events.extend(router.stream(ask("local:smollm2")))
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2, 3, 4, 5]
    assert len(replies(local)) == 5


def test_the_default_providers_sdk_retries_are_off_under_a_router(local):
    provider = AnthropicProvider(api_key="sk-test", base_url=local.base_url)
    router = Router(provider, endpoint_table({}))
    local.enqueue_error(429, retry_after_ms=1)
    local.enqueue(text="ok")
    events = list(router.stream(ask("claude-sonnet-4-6")))
    assert [e.message for e in events if isinstance(e, Retrying)] == [
        "Rate limited by the Anthropic API: retrying in 0.001 s (attempt 2 of 5)."
    ]
    assert len(replies(local)) == 2
    local.enqueue_error(429, retry_after_ms=1)  # asked alone, the SDK still retries twice
    local.enqueue(text="ok")
    events = list(AnthropicProvider(api_key="sk-test", base_url=local.base_url).stream(ask("m")))
    assert not any(isinstance(e, Retrying) for e in events) and len(replies(local)) == 4


def test_chat_completions_429_and_503_are_asked_again_too():
    with FakeOpenAI() as server:
        router = router_to(lab={"base_url": server.base_url, "api": "openai-chat"})
        server.enqueue_error(429, retry_after_ms=200)
        server.enqueue_error(503, retry_after=0)
        server.enqueue(text="third time")
        events = list(router.stream(ask("lab:gpt-5-mini")))
        notes = [e.message for e in events if isinstance(e, Retrying)]
        where = f"lab at {server.base_url}"
        assert notes == [
            f"Rate limited by {where}: retrying in 0.2 s (attempt 2 of 5).",
            f"{where} is overloaded: retrying in 0 s (attempt 3 of 5).",
        ]
        assert isinstance(events[-1], Finished)
        sent = replies(server)
        assert len(sent) == 3 and sent[0].body == sent[2].body


def test_n_choices_in_one_request_are_asked_again_as_one(local):
    with FakeOpenAI(dialect="openai") as server:
        router = router_to(lab={"base_url": server.base_url, "api": "openai-chat"})
        server.enqueue_error(429, retry_after_ms=1)
        server.enqueue(text="x")
        pairs = list(router.stream_choices(ask("lab:gpt-5-mini"), 2))
        assert isinstance(pairs[0][1], Retrying) and pairs[0][0] == 0
        assert {choice for choice, event in pairs if isinstance(event, Finished)} == {0, 1}
        assert len(replies(server)) == 2 and replies(server)[1].body["n"] == 2


def test_an_error_that_cannot_pass_is_raised_at_once(local):
    router = router_to(local={"base_url": local.base_url})
    local.enqueue_error(401)
    with pytest.raises(ProviderError) as raised:
        list(router.stream(ask("local:smollm2")))
    assert not isinstance(raised.value, RateLimited)
    assert len(replies(local)) == 1


def test_a_compaction_refused_for_now_says_its_retry_too(local):
    from jupyter_tree_chat.conversation.events import Notice
    from jupyter_tree_chat.conversation.session import Session

    provider = AnthropicProvider(api_key="sk-test", base_url=local.base_url)
    session = Session.in_memory(Router(provider, endpoint_table({})))
    said: list[str] = []
    session.subscribe(
        lambda event: said.append(event.message) if isinstance(event, Notice) else None
    )
    session.ask("hello")
    local.enqueue_error(429, retry_after_ms=1)
    local.enqueue(text="A summary.")
    session.compact()
    assert "Rate limited by the Anthropic API: retrying in 0.001 s (attempt 2 of 5)." in said
    assert any("A summary." in node.text for node in session.tree)  # the compaction was made
    assert len(replies(local)) == 3  # the question, the refused summary, the summary


def test_a_connection_closed_without_a_response_is_asked_again_not_called_down(local):
    # a server of your own closing a kept-alive connection as it is reused is running: the
    # line "is not answering: start it" is for a connection nobody took
    router = router_to(local={"base_url": local.base_url})
    local.enqueue_hang_up()
    local.enqueue(text="on a new connection")
    events = list(router.stream(ask("local:smollm2")))
    notes = [e.message for e in events if isinstance(e, Retrying)]
    assert len(notes) == 1 and notes[0].startswith(f"Could not reach local at {local.base_url}")
    assert "not answering" not in notes[0] and notes[0].endswith("(attempt 2 of 5).")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "on a new connection"
    assert len(replies(local)) == 2


def test_a_chat_completions_server_closing_the_connection_is_asked_again_too():
    with FakeOpenAI() as server:
        router = router_to(**{"local-openai": {"base_url": server.base_url}})
        server.enqueue_hang_up()
        server.enqueue(text="second connection")
        events = list(router.stream(ask("local-openai:smollm2")))
        notes = [e.message for e in events if isinstance(e, Retrying)]
        assert len(notes) == 1 and "not answering" not in notes[0]
        assert notes[0].startswith(f"Could not reach local-openai at {server.base_url}")
        assert isinstance(events[-1], Finished)
        assert len(replies(server)) == 2
