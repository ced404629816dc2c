"""providers/anthropic/batches.py and ``Router.batch_wire``: Message Batches through the real
SDK against the fake API, and which endpoints have a batch API at all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes.fake_anthropic import FakeAnthropic

from jupyter_tree_chat.errors import AuthenticationFailed, EndpointRefuses
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.base import ReplyRequest, ToolSpec
from jupyter_tree_chat.providers.batches import CUSTOM_ID, BatchItem, BatchWire, batch_wire
from jupyter_tree_chat.providers.endpoints.config import PRESETS, endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.providers.offline.provider import OfflineProvider

KEY = "sk-ant-batch-sentinel"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=KEY) as server:
        yield server


@pytest.fixture
def wire(fake: FakeAnthropic) -> BatchWire:
    return AnthropicProvider(api_key=KEY, base_url=fake.base_url).batch_wire("claude-sonnet-4-6")


def item(custom_id: str, text: str, **options) -> BatchItem:
    request = ReplyRequest(
        messages=[{"role": "user", "content": text}], model="claude-sonnet-4-6", **options
    )
    return BatchItem(custom_id, request)


def test_a_batch_goes_out_as_streamed_requests_would_and_comes_back_by_custom_id(fake, wire):
    fake.batches.hold = True
    tool = ToolSpec("add", "Add two numbers", {"type": "object", "properties": {}})
    state = wire.submit(
        [
            item("q1-0", "Hello", system="Be brief", tools=(tool,)),
            item("q2-0", "Warm or cold?", temperature=0.3),
        ]
    )
    assert isinstance(wire, BatchWire) and wire.name == "anthropic"
    assert state.status == "in_progress" and state.counts.processing == 2
    (sent,) = fake.batches.created
    params = {r["custom_id"]: r["params"] for r in sent}
    assert "stream" not in params["q1-0"]
    assert params["q1-0"]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert params["q1-0"]["tools"][0]["name"] == "add"
    assert params["q2-0"]["temperature"] == 0.3  # in the params, the batch as 2023-06-01
    create = next(r for r in fake.requests if r.path == "/v1/messages/batches")
    assert create.headers["anthropic-version"] == "2023-06-01"

    fake.batches.finish()
    assert wire.state(state.id).ended
    results = {r.custom_id: r for r in wire.results(state.id)}
    assert set(results) == {"q1-0", "q2-0"}
    first = results["q1-0"]
    assert first.outcome == "succeeded" and first.finished is not None
    assert first.finished.message["content"][0]["text"].endswith("the last said: Hello")
    assert set(first.finished.usage) >= {"input_tokens", "output_tokens"}
    assert first.finished.stop_reason == "end_turn"


def test_errored_expired_and_canceled_requests_come_back_as_one_line_each(fake, wire):
    fake.batches.hold = True
    fake.batches.fail(lambda params: "bad" in str(params["messages"]), "overloaded_error", "busy")
    first = wire.submit([item("a", "bad"), item("b", "fine")])
    fake.batches.finish(first.id)
    lines = {r.custom_id: r for r in wire.results(first.id)}
    assert lines["a"].outcome == "errored" and lines["a"].error == "overloaded_error: busy"
    assert lines["b"].outcome == "succeeded"

    second = wire.submit([item("c", "late")])
    fake.batches.expire(second.id)
    (expired,) = wire.results(second.id)
    assert expired.outcome == "expired" and "24 hours" in (expired.error or "")

    third = wire.submit([item("d", "never")])
    assert wire.cancel(third.id).status == "canceling"
    assert wire.state(third.id).counts.canceled == 1
    (canceled,) = wire.results(third.id)
    assert canceled.outcome == "canceled"


def test_a_refused_key_is_the_provider_s_one_line_without_the_key(fake):
    bad = AnthropicProvider(api_key="sk-wrong-key", base_url=fake.base_url, max_retries=0)
    with pytest.raises(AuthenticationFailed) as refused:
        bad.batch_wire(None).submit([item("a", "hi")])
    assert "sk-wrong-key" not in str(refused.value)
    assert "\n" not in str(refused.value)


def test_only_endpoints_with_a_batch_api_give_one(fake, monkeypatch):
    table = endpoint_table(
        {
            "local": {"base_url": fake.base_url},
            "lab": {
                "base_url": fake.base_url,
                "key_env": ["LAB_KEY"],
                "batch": True,
                "batch_price": 0.5,
            },
        }
    )
    monkeypatch.setenv("LAB_KEY", KEY)
    router = Router(OfflineProvider(), table)
    with pytest.raises(
        EndpointRefuses, match=r"^offline has no batch API: run the cell without --batch$"
    ):
        batch_wire(router, "claude-sonnet-4-6")
    with pytest.raises(EndpointRefuses, match=r"^local has no batch API"):
        batch_wire(router, "local:smollm2")
    lab = batch_wire(router, "lab:claude-haiku-4-5")
    assert lab.name == "lab" and getattr(lab, "price", None) == 0.5
    fake.batches.hold = True
    lab.submit(
        [
            BatchItem(
                "x-0",
                ReplyRequest(
                    messages=[{"role": "user", "content": "hi"}], model="lab:claude-haiku-4-5"
                ),
            )
        ]
    )
    assert (
        fake.batches.created[-1][0]["params"]["model"] == "claude-haiku-4-5"
    )  # its own name there

    anthropic_router = Router(AnthropicProvider(api_key=KEY, base_url=fake.base_url), table)
    direct = batch_wire(anthropic_router, "claude-sonnet-4-6")
    assert direct.name == "anthropic" and getattr(direct, "price", None) == 0.5


def test_the_messages_api_presets_have_no_batch_api_but_anthropic_s_own():
    """Of the Messages-API presets, none documents Message Batches on its endpoint
    (docs/endpoints.md): only Anthropic's own API (the default provider) has it."""
    messages_presets = [e for e in PRESETS.values() if e.api == "anthropic-messages"]
    assert messages_presets and not any(e.batch for e in messages_presets)


def test_custom_ids_the_session_makes_are_the_api_s():
    assert CUSTOM_ID.match("3f2a9c1e0b7d4e21-11")
    assert not CUSTOM_ID.match("3f2a.9c")
