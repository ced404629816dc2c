"""The fake's Message Batches follow the real API's rules (fake_batches.py), each checked
here through the official SDK over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from fakes.fake_anthropic import FakeAnthropic


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def client(fake: FakeAnthropic) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="k", base_url=fake.base_url, max_retries=0)


def request(custom_id: str, text: str = "hi", **params: Any) -> dict[str, Any]:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": text}],
    }
    return {"custom_id": custom_id, "params": {**body, **params}}


def test_a_batch_is_in_progress_until_it_ends_then_counts_each_outcome(fake, client):
    fake.batches.hold = True
    fake.batches.fail(lambda params: "boom" in str(params["messages"]))
    batch = client.messages.batches.create(requests=[request("a"), request("b", "boom")])
    assert batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 2  # every request processing until the end
    assert batch.results_url is None
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"

    fake.batches.finish(batch.id)
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.ended_at is not None
    counts = ended.request_counts
    assert (counts.processing, counts.succeeded, counts.errored) == (0, 1, 1)
    assert ended.results_url is not None and ended.results_url.startswith(fake.base_url)
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a"].type == "succeeded"
    assert results["a"].message.content[0].text.endswith("the last said: hi")
    assert results["b"].type == "errored" and results["b"].error.error.type == "api_error"


def test_results_come_in_another_order_than_the_requests(fake, client):
    ids = [f"r{i}" for i in range(30)]
    batch = client.messages.batches.create(requests=[request(i, i) for i in ids])
    got = [r.custom_id for r in client.messages.batches.results(batch.id)]
    assert sorted(got) == sorted(ids) and got != ids


def test_custom_ids_must_be_the_api_s_and_unique(fake, client):
    for bad in ("", "has space", "x" * 65, "dot.ted"):
        with pytest.raises(anthropic.BadRequestError, match="custom_id"):
            client.messages.batches.create(requests=[request(bad)])
    with pytest.raises(anthropic.BadRequestError, match="not unique"):
        client.messages.batches.create(requests=[request("same"), request("same")])
    assert fake.batches.created == []


def test_a_batch_holds_one_to_the_limit_and_no_streaming(fake, client):
    with pytest.raises(anthropic.BadRequestError, match="at least 1"):
        client.messages.batches.create(requests=[])
    with pytest.raises(anthropic.BadRequestError, match="stream"):
        client.messages.batches.create(requests=[request("a", stream=True)])
    with pytest.raises(anthropic.BadRequestError, match="at most 100000"):
        client.messages.batches.create(requests=[request(f"r{i}") for i in range(100_001)])


def test_a_batch_over_the_byte_limit_is_refused_whole(fake, client):
    fake.batches.max_bytes = 2000  # the API's 256 MB, lowered so a test can pass it
    with pytest.raises(anthropic.APIStatusError) as refused:
        client.messages.batches.create(requests=[request(f"r{i}", "x" * 100) for i in range(20)])
    assert refused.value.status_code == 413
    assert fake.batches.created == []


def test_params_the_messages_api_refuses_error_their_request_not_the_batch(fake, client):
    batch = client.messages.batches.create(requests=[request("ok"), request("bad", max_tokens=0)])
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["ok"].type == "succeeded"
    assert results["bad"].type == "errored"
    assert results["bad"].error.error.type == "invalid_request_error"


def test_a_scripted_reply_or_error_reaches_a_batch_request(fake, client):
    fake.enqueue("Scripted answer", when=lambda body: "one" in str(body["messages"]))
    fake.enqueue_error(529, when=lambda body: "two" in str(body["messages"]))
    batch = client.messages.batches.create(requests=[request("a", "one"), request("b", "two")])
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a"].message.content[0].text == "Scripted answer"
    assert results["b"].error.error.type == "overloaded_error"


def test_cancel_then_end_marks_what_was_not_answered_canceled(fake, client):
    fake.batches.hold = True
    batch = client.messages.batches.create(requests=[request("a"), request("b")])
    canceling = client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling"
    assert canceling.cancel_initiated_at is not None
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended"
    assert ended.request_counts.canceled == 2


def test_expiry_ends_a_batch_with_its_unanswered_requests_expired(fake, client):
    fake.batches.hold = True
    batch = client.messages.batches.create(requests=[request("a")])
    assert batch.expires_at > batch.created_at  # 24 hours after its create
    fake.batches.expire(batch.id)
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.request_counts.expired == 1
    (line,) = client.messages.batches.results(batch.id)
    assert line.result.type == "expired"


def test_a_slow_batch_ends_by_itself_after_its_seconds(fake, client):
    fake.batches.seconds = 0.3
    batch = client.messages.batches.create(requests=[request("a")])
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    import time

    time.sleep(0.35)
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"


def test_results_of_a_batch_that_has_not_ended_are_refused(fake, client):
    fake.batches.hold = True
    batch = client.messages.batches.create(requests=[request("a")])
    with pytest.raises(anthropic.AnthropicError, match="results_url"):
        client.messages.batches.results(batch.id)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve("msgbatch_nope")


def test_another_key_is_refused(fake):
    fake.api_key = "right"
    wrong = anthropic.Anthropic(api_key="wrong", base_url=fake.base_url, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError):
        wrong.messages.batches.create(requests=[request("a")])
