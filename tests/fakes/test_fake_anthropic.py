"""The fake Messages API server behaves like the real one where tests rely on it."""

from __future__ import annotations

import http.client
import json
from typing import Any

import anthropic
import pytest

from fakes.fake_anthropic import FIXTURES, FakeAnthropic

USER_HI = [{"role": "user", "content": "hi"}]


def client_for(server: FakeAnthropic, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test-key", base_url=server.base_url, **options)


VERSIONED = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def raw_post(
    server: FakeAnthropic, body: dict[str, Any], headers: dict[str, str] = VERSIONED
) -> tuple[int, dict[str, str], bytes]:
    host, port = server.base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        connection.request("POST", "/v1/messages", json.dumps(body), headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def event_names(raw: bytes) -> list[str]:
    return [line[7:] for line in raw.decode().splitlines() if line.startswith("event: ")]


def test_stream_events_come_in_the_real_api_order(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="I'll call it", tool_use={"name": "add", "input": {"a": 1, "b": 2}})
    body = {"model": "m", "max_tokens": 10, "messages": USER_HI, "stream": True}

    status, headers, raw = raw_post(fake_anthropic, body)

    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    names = event_names(raw)
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    json_pieces = [
        data["delta"]["partial_json"]
        for line in raw.decode().splitlines()
        if line.startswith("data: ")
        and (data := json.loads(line[6:]))["type"] == "content_block_delta"
        and data["delta"]["type"] == "input_json_delta"
    ]
    assert len(json_pieces) > 2
    assert json.loads("".join(json_pieces)) == {"a": 1, "b": 2}


def test_sdk_stream_accumulates_the_scripted_reply(fake_anthropic: FakeAnthropic) -> None:
    text = "I'll call the add tool to sum these numbers."
    fake_anthropic.enqueue(text=text, tool_use={"name": "add", "input": {"a": 1}})

    with client_for(fake_anthropic).messages.stream(
        model="m", max_tokens=10, messages=USER_HI
    ) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()

    assert "".join(texts) == text
    assert len(texts) > 1
    assert [block.type for block in final.content] == ["text", "tool_use"]
    assert final.content[1].input == {"a": 1}  # type: ignore[union-attr]
    assert final.stop_reason == "tool_use"


def test_non_streaming_request_gets_the_whole_message(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="whole", stop_reason="max_tokens")

    message = client_for(fake_anthropic).messages.create(model="m", max_tokens=5, messages=USER_HI)

    assert message.content[0].text == "whole"  # type: ignore[union-attr]
    assert message.stop_reason == "max_tokens"


def test_default_reply_is_deterministic_and_names_the_path(fake_anthropic: FakeAnthropic) -> None:
    client = client_for(fake_anthropic)
    messages = [*USER_HI, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "q"}]

    first = client.messages.create(model="m", max_tokens=5, messages=messages)
    second = client.messages.create(model="m", max_tokens=5, messages=messages)

    assert first.content == second.content
    assert first.content[0].text == "Fake reply to 3 message(s); the last said: q"  # type: ignore[union-attr]


def test_long_reply_streams_one_delta_per_token(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(tokens=500)

    with client_for(fake_anthropic).messages.stream(
        model="m", max_tokens=10, messages=USER_HI
    ) as stream:
        pieces = list(stream.text_stream)
        usage = stream.get_final_message().usage

    assert len(pieces) == 500
    assert usage.output_tokens == 500


@pytest.mark.parametrize(
    "fixture", ["basic_response.sse", "tool_use_response.sse", "refusal_response.sse"]
)
def test_replay_sends_the_recording_byte_for_byte(
    fake_anthropic: FakeAnthropic, fixture: str
) -> None:
    fake_anthropic.enqueue(replay=fixture)
    body = {"model": "m", "max_tokens": 10, "messages": USER_HI, "stream": True}

    _, _, raw = raw_post(fake_anthropic, body)

    assert raw == (FIXTURES / fixture).read_bytes()


def test_requests_are_recorded_with_body_and_headers(fake_anthropic: FakeAnthropic) -> None:
    client_for(fake_anthropic).messages.create(model="m", max_tokens=5, messages=USER_HI)

    request = fake_anthropic.last_request
    assert request.path == "/v1/messages"
    assert request.body["messages"] == USER_HI
    assert "test-key" in (request.headers.get("x-api-key") or request.headers["authorization"])
    assert "anthropic-version" in request.headers


def test_refuses_extra_message_keys_like_the_real_api(fake_anthropic: FakeAnthropic) -> None:
    messages = [{"role": "user", "content": "hi", "timestamp": 1}]

    with pytest.raises(anthropic.BadRequestError, match=r"messages\.0\.timestamp"):
        client_for(fake_anthropic).messages.create(model="m", max_tokens=5, messages=messages)  # type: ignore[typeddict-unknown-key]


def test_refuses_more_than_four_cache_breakpoints(fake_anthropic: FakeAnthropic) -> None:
    marked = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    messages = [{"role": "user", "content": [marked] * 5}]

    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks"):
        client_for(fake_anthropic).messages.create(model="m", max_tokens=5, messages=messages)  # type: ignore[arg-type]


def test_wrong_key_is_refused_when_the_server_has_one() -> None:
    with FakeAnthropic(api_key="right") as server:
        client = anthropic.Anthropic(api_key="wrong", base_url=server.base_url)
        with pytest.raises(anthropic.AuthenticationError):
            client.messages.create(model="m", max_tokens=5, messages=USER_HI)


def test_injected_429_carries_retry_headers_then_the_reply_follows(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue_error(429, retry_after_ms=1, retry_after=7)
    body = {"model": "m", "max_tokens": 10, "messages": USER_HI}

    status, headers, raw = raw_post(fake_anthropic, body)
    status_after, _, _ = raw_post(fake_anthropic, body)

    assert status == 429
    assert headers["retry-after-ms"] == "1"
    assert headers["retry-after"] == "7"
    assert json.loads(raw)["error"]["type"] == "rate_limit_error"
    assert status_after == 200


def cached_request(prefix_turns: int, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A long conversation with a breakpoint on its last message."""
    messages: list[dict[str, Any]] = []
    for turn in range(prefix_turns):
        messages.append({"role": "user", "content": f"question {turn} " + "x" * 2000})
        messages.append({"role": "assistant", "content": f"answer {turn} " + "y" * 2000})
    messages.append({"role": "user", "content": [{"type": "text", "text": "last question"}]})
    messages[-1]["content"][0]["cache_control"] = {"type": "ephemeral"}
    return {"model": "m", "max_tokens": 10, "messages": messages + (extra or [])}


def test_cache_creation_then_read_for_the_same_prefix(fake_anthropic: FakeAnthropic) -> None:
    first = fake_anthropic.cache.usage(cached_request(3))
    again = fake_anthropic.cache.usage(cached_request(3))

    assert first["cache_creation_input_tokens"] > 1024
    assert first["cache_read_input_tokens"] == 0
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert again["cache_creation_input_tokens"] == 0


def test_a_longer_request_reads_the_cached_prefix_and_pays_for_the_rest(
    fake_anthropic: FakeAnthropic,
) -> None:
    first = fake_anthropic.cache.usage(cached_request(3))
    tail = [{"role": "assistant", "content": "reply"}, {"role": "user", "content": "more"}]

    longer = fake_anthropic.cache.usage(cached_request(3, tail))

    assert longer["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert longer["input_tokens"] > 0


def test_short_prefixes_are_not_cached(fake_anthropic: FakeAnthropic) -> None:
    short = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }
    fake_anthropic.cache.usage(short)

    assert fake_anthropic.cache.usage(short)["cache_read_input_tokens"] == 0


def test_usable_without_pytest_as_a_context_manager() -> None:
    with FakeAnthropic() as server:
        client = client_for(server, max_retries=0)
        reply = client.messages.create(model="m", max_tokens=5, messages=USER_HI)
    assert reply.content[0].text.startswith("Fake reply")  # type: ignore[union-attr]
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(model="m", max_tokens=5, messages=USER_HI)


THINK = {"type": "enabled", "budget_tokens": 1024}


def stream_data(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def test_thinking_streams_first_with_one_signature_then_the_text(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(thinking="Two and two make four.", redacted=1, text="Four.")
    body = {
        "model": "m",
        "max_tokens": 2048,
        "messages": USER_HI,
        "stream": True,
        "thinking": THINK,
    }

    _, _, raw = raw_post(fake_anthropic, body)

    events = stream_data(raw)
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [block["type"] for block in starts] == ["thinking", "redacted_thinking", "text"]
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    kinds = [delta["type"] for delta in deltas]
    assert kinds[-1] == "signature_delta" and kinds.count("signature_delta") == 1
    assert set(kinds[:-1]) == {"thinking_delta"} and len(kinds) > 2
    assert "".join(d["thinking"] for d in deltas[:-1]) == "Two and two make four."
    assert starts[1]["data"]


def test_no_thinking_unless_the_request_asks_and_enabled_always_thinks(
    fake_anthropic: FakeAnthropic,
) -> None:
    client = client_for(fake_anthropic)
    fake_anthropic.enqueue(thinking="unasked", text="Hi")
    plain = client.messages.create(model="m", max_tokens=5, messages=USER_HI)
    asked = client.messages.create(model="m", max_tokens=2048, messages=USER_HI, thinking=THINK)

    assert [block.type for block in plain.content] == ["text"]
    assert [block.type for block in asked.content] == ["thinking", "text"]
    assert asked.content[0].signature  # type: ignore[union-attr]


def test_count_tokens_equals_what_the_same_request_is_charged_for_input(
    fake_anthropic: FakeAnthropic,
) -> None:
    client = client_for(fake_anthropic)
    messages = [{"role": "user", "content": "count these words please"}]

    counted = client.messages.count_tokens(model="m", messages=messages, system="Be brief.")
    reply = client.messages.create(model="m", max_tokens=5, messages=messages, system="Be brief.")

    usage = reply.usage
    charged = (
        usage.input_tokens
        + (usage.cache_creation_input_tokens or 0)
        + (usage.cache_read_input_tokens or 0)
    )
    assert counted.input_tokens == charged > 0
    assert fake_anthropic.requests[0].path == "/v1/messages/count_tokens"


def test_scripted_usage_is_reported_as_scripted(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="ok", usage={"input_tokens": 150_000, "output_tokens": 7})

    reply = client_for(fake_anthropic).messages.create(model="m", max_tokens=5, messages=USER_HI)

    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (150_000, 7)


# -- when a cache entry becomes readable, the pace of a stream, the request log ------------


def test_a_cache_entry_is_readable_once_its_response_has_begun(fake_anthropic) -> None:
    pending: list[str] = []
    first = fake_anthropic.cache.usage(cached_request(3), pending)
    meanwhile = fake_anthropic.cache.usage(cached_request(3), [])

    fake_anthropic.cache.publish(pending)
    after = fake_anthropic.cache.usage(cached_request(3), [])

    assert first["cache_creation_input_tokens"] > 1024
    assert meanwhile == first  # started before the first began: it writes too
    assert after["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


def test_concurrent_streams_read_only_what_a_begun_response_wrote() -> None:
    with FakeAnthropic(tokens_per_second=100) as server:
        client = client_for(server)
        body = cached_request(3)
        kwargs = {"model": "m", "max_tokens": 10, "messages": body["messages"]}
        first = client.messages.create(**kwargs, stream=True)
        events = iter(first)
        next(events)  # message_start arrived: the first response has begun
        second = client.messages.create(**kwargs)
        list(events)
    begun, after = server.requests
    assert begun.received < begun.first_event <= after.received < begun.ended
    assert begun.usage["cache_creation_input_tokens"] > 1024
    assert second.usage.cache_read_input_tokens == begun.usage["cache_creation_input_tokens"]


def test_tokens_per_second_paces_the_text_deltas() -> None:
    with FakeAnthropic(tokens_per_second=100) as server:
        server.enqueue(tokens=30)
        with client_for(server).messages.stream(
            model="m", max_tokens=100, messages=USER_HI
        ) as stream:
            text = "".join(stream.text_stream)
    request = server.requests[0]
    assert len(text.split()) == 30
    assert 0.3 <= request.ended - request.first_event < 1.5


def test_a_reply_can_be_scripted_for_the_requests_it_fits(fake_anthropic) -> None:
    fake_anthropic.enqueue("for b", when=lambda body: body["model"] == "b")
    fake_anthropic.enqueue("for anyone")
    client = client_for(fake_anthropic)

    a = client.messages.create(model="a", max_tokens=5, messages=USER_HI)
    b = client.messages.create(model="b", max_tokens=5, messages=USER_HI)

    assert a.content[0].text == "for anyone"  # type: ignore[union-attr]
    assert b.content[0].text == "for b"  # type: ignore[union-attr]


def test_the_sampling_parameters_are_refused_unless_the_legacy_version_is_asked(
    fake_anthropic,
) -> None:
    client = client_for(fake_anthropic, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="temperature: Extra inputs"):
        client.messages.create(
            model="m", max_tokens=5, messages=USER_HI, extra_body={"temperature": 1.0}
        )
    reply = client.messages.create(
        model="m",
        max_tokens=5,
        messages=USER_HI,
        extra_body={"temperature": 1.0},
        extra_headers={"anthropic-version": "2023-06-01"},
    )
    assert reply.stop_reason == "end_turn"
