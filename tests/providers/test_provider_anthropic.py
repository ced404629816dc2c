"""AnthropicProvider: the real SDK, over real HTTP, against the local fake Messages API."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fakes.fake_anthropic import FakeAnthropic

from jupyter_tree_chat.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    MissingApiKey,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
    StreamError,
)
from jupyter_tree_chat.providers.anthropic.provider import (
    DEFAULT_MODEL,
    AnthropicProvider,
    build_kwargs,
)
from jupyter_tree_chat.providers.base import (
    Began,
    Finished,
    Provider,
    ReplyEvent,
    ReplyRequest,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    TokenCounter,
    ToolSpec,
    ToolUseReady,
)

SENTINEL_KEY = "sk-ant-SENTINEL-never-show-me-0123456789"
ADD_TOOL = ToolSpec(
    "add",
    "Add two numbers.",
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)


def provider_for(server: FakeAnthropic, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(api_key=SENTINEL_KEY, base_url=server.base_url, **options)


def ask(text: str = "hello", **options: Any) -> ReplyRequest:
    message = {"role": "user", "content": text, "timestamp": 1718400000}
    return ReplyRequest(messages=[message], model=DEFAULT_MODEL, **options)


def collect(provider: AnthropicProvider, request: ReplyRequest) -> list[ReplyEvent]:
    return list(provider.stream(request))


def streamed_text(events: list[ReplyEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def finished(events: list[ReplyEvent]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def long_path(turns: int) -> list[dict[str, Any]]:
    """A conversation long enough (> 1024 fake tokens) to be worth caching."""
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        messages.append({"role": "user", "content": f"question {turn}: " + "q" * 1500})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "a" * 1500}]})
    messages.append({"role": "user", "content": "and now?"})
    return messages


def cache_marks(body: dict[str, Any]) -> list[str]:
    """Where the request carried cache_control: "tool:NAME", "system", "message:N"."""
    marks = [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        marks += ["system" for block in system if "cache_control" in block]
    for n, message in enumerate(body["messages"]):
        if isinstance(message["content"], list):
            marks += [f"message:{n}" for b in message["content"] if "cache_control" in b]
    return marks


# -- construction ---------------------------------------------------------------------


def test_satisfies_the_provider_protocol(fake_anthropic: FakeAnthropic) -> None:
    provider = provider_for(fake_anthropic)
    assert isinstance(provider, Provider)
    assert provider.name == "anthropic"
    assert provider.default_model == DEFAULT_MODEL


def test_no_key_raises_missing_api_key_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile either

    with pytest.raises(MissingApiKey) as caught:
        AnthropicProvider()

    assert str(caught.value) == (
        "No Anthropic API key: set ANTHROPIC_API_KEY or use the offline provider."
    )


def test_a_broken_credentials_profile_is_missing_api_key_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))  # holds no profile

    with pytest.raises(MissingApiKey) as caught:
        AnthropicProvider()

    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith("set ANTHROPIC_API_KEY or use the offline provider.")


def test_environment_key_and_base_url_are_honoured(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    fake_anthropic.enqueue(text="from the environment")

    events = collect(AnthropicProvider(), ask())

    assert streamed_text(events) == "from the environment"
    headers = fake_anthropic.last_request.headers
    assert SENTINEL_KEY in (headers.get("x-api-key") or headers["authorization"])


def test_a_client_passed_in_is_used_as_is(fake_anthropic: FakeAnthropic) -> None:
    import anthropic

    client = anthropic.Anthropic(api_key="other", base_url=fake_anthropic.base_url)
    provider = AnthropicProvider(client)

    assert provider.client is client
    assert streamed_text(collect(provider, ask("hi"))).startswith("Fake reply to 1 message(s)")


def test_repr_never_shows_the_key(fake_anthropic: FakeAnthropic) -> None:
    provider = provider_for(fake_anthropic)
    assert SENTINEL_KEY not in repr(provider)
    assert fake_anthropic.base_url in repr(provider)


# -- streaming ------------------------------------------------------------------------


def test_text_streams_in_pieces_and_finishes_with_the_whole_message(
    fake_anthropic: FakeAnthropic,
) -> None:
    reply = "Branches share a prefix; the model only sees the active path."
    fake_anthropic.enqueue(text=reply)

    events = collect(provider_for(fake_anthropic), ask())

    deltas = [event for event in events if isinstance(event, TextDelta)]
    assert len(deltas) > 2
    assert streamed_text(events) == reply
    end = finished(events)
    assert end.message == {"role": "assistant", "content": [{"type": "text", "text": reply}]}
    assert end.stop_reason == "end_turn"
    assert end.model == DEFAULT_MODEL
    assert set(end.usage) >= {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }
    assert end.usage["output_tokens"] > 0


def test_the_response_says_when_it_began_before_any_text(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="Hello there, this is long enough for pieces.")

    events = collect(provider_for(fake_anthropic), ask())

    assert isinstance(events[0], Began) and events[0].model == DEFAULT_MODEL
    assert [type(e) for e in events].count(Began) == 1
    assert isinstance(events[1], TextDelta)


def test_a_temperature_is_sent_as_the_api_version_that_still_takes_it(
    fake_anthropic: FakeAnthropic,
) -> None:
    collect(provider_for(fake_anthropic), ask(temperature=0.3))
    collect(provider_for(fake_anthropic), ask())

    warm, plain = fake_anthropic.requests
    assert warm.body["temperature"] == 0.3
    assert warm.headers["anthropic-version"] == "2023-06-01"
    assert "temperature" not in plain.body
    assert plain.headers["anthropic-version"] == anthropic._constants.ANTHROPIC_API_VERSION
    assert plain.headers["anthropic-version"] != "2023-06-01"


def test_tool_use_is_ready_when_its_block_completes(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(
        text="I'll call it", tool_use={"id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
    )

    events = collect(provider_for(fake_anthropic), ask("2+3?", tools=(ADD_TOOL,)))

    ready = [event for event in events if isinstance(event, ToolUseReady)]
    tool_block = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
    assert [event.block for event in ready] == [tool_block]
    assert events.index(ready[0]) < len(events) - 1  # before Finished
    end = finished(events)
    assert end.message["content"] == [{"type": "text", "text": "I'll call it"}, tool_block]
    assert end.stop_reason == "tool_use"


def test_replay_basic_recording(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(replay="basic_response.sse")

    events = collect(provider_for(fake_anthropic), ask())

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " there", "!"]
    end = finished(events)
    assert end.message["content"] == [{"type": "text", "text": "Hello there!"}]
    assert end.model == "claude-3-opus-latest"
    assert end.stop_reason == "end_turn"
    assert end.usage == {
        "input_tokens": 11,
        "output_tokens": 6,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def test_replay_tool_use_recording_parses_input_from_json_pieces(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(replay="tool_use_response.sse")

    events = collect(provider_for(fake_anthropic), ask("weather in Paris?"))

    tool_block = {
        "type": "tool_use",
        "id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        "name": "get_weather",
        "input": {"location": "Paris"},
    }
    assert [e.block for e in events if isinstance(e, ToolUseReady)] == [tool_block]
    end = finished(events)
    assert end.message["content"] == [
        {"type": "text", "text": "I'll check the current weather in Paris for you."},
        tool_block,
    ]
    assert end.stop_reason == "tool_use"
    assert end.usage["input_tokens"] == 377
    assert end.usage["output_tokens"] == 65


def test_replay_refusal_recording_is_a_stop_reason_not_an_error(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(replay="refusal_response.sse")

    events = collect(provider_for(fake_anthropic), ask())

    end = finished(events)
    assert end.stop_reason == "refusal"
    assert end.message["content"] == [{"type": "text", "text": ""}]
    assert streamed_text(events) == ""


def test_a_thinking_stream_yields_thinking_then_signed_blocks_then_text(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(replay="thinking_response.sse")

    events = collect(provider_for(fake_anthropic), ask("27 * 453?", thinking=2048, max_tokens=4096))

    thinking = [e.text for e in events if isinstance(e, ThinkingDelta)]
    assert thinking == ["The user asks for 27 * 453. ", "27 * 453 = 12231."]
    signed = {
        "type": "thinking",
        "thinking": "The user asks for 27 * 453. 27 * 453 = 12231.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    }
    redacted = {
        "type": "redacted_thinking",
        "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
    }
    assert [(e.index, e.block) for e in events if isinstance(e, ThinkingReady)] == [
        (0, signed),
        (1, redacted),
    ]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ThinkingReady") < kinds.index("TextDelta")
    end = finished(events)
    assert end.message["content"] == [
        signed,
        redacted,
        {"type": "text", "text": "27 * 453 = 12,231"},
    ]
    assert end.usage["output_tokens"] == 85


def test_thinking_asks_for_a_budget_or_adaptive_with_its_thinking_shown() -> None:
    assert "thinking" not in build_kwargs(ask())
    assert build_kwargs(ask(thinking=2048))["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2048,
    }
    assert build_kwargs(ask(thinking="adaptive"))["thinking"] == {
        "type": "adaptive",
        "display": "summarized",
    }


def test_signed_thinking_goes_back_unchanged_and_unsigned_thinking_stays_home() -> None:
    signed = {"type": "thinking", "thinking": "Add.", "signature": "c2ln"}
    redacted = {"type": "redacted_thinking", "data": "ZW5j"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
    cut = {"type": "thinking", "thinking": "Hm", "signature": ""}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [cut, {"type": "text", "text": "Partial"}]},
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": [signed, redacted, use]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"}],
        },
    ]

    asked = ReplyRequest(
        messages=copy.deepcopy(messages), model="m", thinking=2048, tools=(ADD_TOOL,)
    )
    sent = build_kwargs(asked)

    assert sent["messages"][1]["content"] == [{"type": "text", "text": "Partial"}]
    assert sent["messages"][3]["content"][:2] == [signed, redacted]  # as they came
    assert sent["messages"][3]["content"][2] == {**use, "cache_control": {"type": "ephemeral"}}


def test_count_tokens_asks_the_api_and_leaves_out_what_counting_takes_not(
    fake_anthropic: FakeAnthropic,
) -> None:
    provider = provider_for(fake_anthropic)
    request = ask("count me", temperature=0.5, system="Be brief.", tools=(ADD_TOOL,))

    tokens = provider.count_tokens(request)

    assert isinstance(provider, TokenCounter)
    body = fake_anthropic.last_request.body
    assert fake_anthropic.last_request.path == "/v1/messages/count_tokens"
    assert sorted(body) == ["messages", "model", "system", "tools"]
    assert tokens > 0


def test_a_refused_count_is_the_projects_error_without_the_key(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue_error(500, times=3)
    with pytest.raises(ServerError) as caught:
        provider_for(fake_anthropic, max_retries=0).count_tokens(ask())
    assert SENTINEL_KEY not in str(caught.value)


def test_max_tokens_is_a_stop_reason_not_an_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="cut sho", stop_reason="max_tokens")

    end = finished(collect(provider_for(fake_anthropic), ask()))

    assert end.stop_reason == "max_tokens"
    assert end.message["content"] == [{"type": "text", "text": "cut sho"}]


# -- what goes on the wire ------------------------------------------------------------


def test_timestamp_is_stripped_on_the_wire_but_kept_in_the_stored_messages(
    fake_anthropic: FakeAnthropic,
) -> None:
    request = ask("hi")
    stored_before = copy.deepcopy(request.messages)

    collect(provider_for(fake_anthropic), request)

    sent = fake_anthropic.last_request.body["messages"]
    assert sent == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert request.messages == stored_before
    assert request.messages[0]["timestamp"] == 1718400000


def test_cache_breakpoints_on_last_tool_system_and_last_two_messages(
    fake_anthropic: FakeAnthropic,
) -> None:
    other_tool = ToolSpec("mul", "Multiply.", {"type": "object"})
    request = ReplyRequest(
        messages=long_path(2), model="m", system="You are terse.", tools=(other_tool, ADD_TOOL)
    )

    collect(provider_for(fake_anthropic), request)

    body = fake_anthropic.last_request.body
    last = len(body["messages"]) - 1
    assert cache_marks(body) == ["tool:add", "system", f"message:{last - 1}", f"message:{last}"]
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    # strings stay strings where no breakpoint is needed
    assert isinstance(body["messages"][0]["content"], str)


def test_never_more_than_four_breakpoints_even_if_stored_messages_carry_some() -> None:
    marked = {"type": "text", "text": "old", "cache_control": {"type": "ephemeral"}}
    messages = [
        {"role": "user", "content": [marked]},
        {"role": "assistant", "content": [marked]},
        {"role": "user", "content": [marked, {"type": "text", "text": "new"}]},
    ]
    request = ReplyRequest(messages=messages, model="m", system="s", tools=(ADD_TOOL,))

    kwargs = build_kwargs(request)

    assert len(cache_marks(kwargs)) == 4
    assert kwargs["messages"][2]["content"][1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in kwargs["messages"][2]["content"][0]
    assert messages[0]["content"][0] is marked and "cache_control" in marked


def test_empty_text_blocks_and_none_fields_are_not_sent() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": ""},
                {"type": "text", "text": "ok", "citations": None},
            ],
        },
        {"role": "user", "content": "again"},
    ]

    kwargs = build_kwargs(ReplyRequest(messages=messages, model="m"))

    assert kwargs["messages"][1]["content"] == [
        {"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}
    ]


def test_a_retry_of_a_long_path_reads_the_prefix_from_the_cache(
    fake_anthropic: FakeAnthropic,
) -> None:
    provider = provider_for(fake_anthropic)
    path = long_path(3)

    first = finished(collect(provider, ReplyRequest(messages=path, model="m")))
    retry = finished(collect(provider, ReplyRequest(messages=path, model="m")))

    assert first.usage["cache_creation_input_tokens"] > 0
    assert first.usage["cache_read_input_tokens"] == 0
    assert retry.usage["cache_read_input_tokens"] > 1024


def test_a_fork_that_adds_a_message_reads_the_shared_prefix_from_the_cache(
    fake_anthropic: FakeAnthropic,
) -> None:
    provider = provider_for(fake_anthropic)
    path = long_path(3)
    finished(collect(provider, ReplyRequest(messages=path, model="m")))

    longer = [*path, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    fork = finished(collect(provider, ReplyRequest(messages=longer, model="m")))

    assert fork.usage["cache_read_input_tokens"] > 1024
    assert fork.usage["input_tokens"] < fork.usage["cache_read_input_tokens"]


# -- errors ---------------------------------------------------------------------------


def one_line_error(error: ProviderError) -> str:
    message = str(error)
    assert message and "\n" not in message
    assert SENTINEL_KEY not in message
    assert SENTINEL_KEY not in repr(error)
    return message


def test_429_then_success_succeeds_thanks_to_sdk_retries(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue_error(429, retry_after_ms=1)
    fake_anthropic.enqueue(text="after the retry")

    events = collect(provider_for(fake_anthropic), ask())

    assert streamed_text(events) == "after the retry"
    assert len(fake_anthropic.requests) == 2


def test_persistent_429_is_rate_limited(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue_error(429, retry_after_ms=1, times=3)

    with pytest.raises(RateLimited) as caught:
        collect(provider_for(fake_anthropic, max_retries=2), ask())

    assert "Rate limited" in one_line_error(caught.value)
    assert "after 2 retries" in str(caught.value)
    assert len(fake_anthropic.requests) == 3


def test_persistent_529_is_overloaded(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue_error(529, retry_after_ms=1, times=3)

    with pytest.raises(Overloaded) as caught:
        collect(provider_for(fake_anthropic, max_retries=2), ask())

    assert "overloaded" in one_line_error(caught.value)


def test_500_is_a_server_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue_error(500, message="Internal server error", times=1)

    with pytest.raises(ServerError) as caught:
        collect(provider_for(fake_anthropic, max_retries=0), ask())

    assert "(500)" in one_line_error(caught.value)
    assert "Internal server error" in str(caught.value)


def test_refused_key_is_authentication_failed_without_the_key() -> None:
    with (
        FakeAnthropic(api_key="the-right-key") as server,
        pytest.raises(AuthenticationFailed) as caught,
    ):
        collect(provider_for(server), ask())

    message = one_line_error(caught.value)
    assert "ANTHROPIC_API_KEY" in message
    assert "(401)" in message


def test_bad_request_names_what_the_api_refused(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue_error(400, message="max_tokens: must be at most 64000")

    with pytest.raises(BadRequest) as caught:
        collect(provider_for(fake_anthropic), ask())

    assert "max_tokens: must be at most 64000" in one_line_error(caught.value)


def test_dropped_connection_mid_stream_keeps_the_deltas_already_yielded(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(
        text="0123456789abcdef" * 4, drop_after=5
    )  # start, block, ping, 2 deltas
    seen: list[ReplyEvent] = []

    with pytest.raises(ConnectionFailed) as caught:
        for event in provider_for(fake_anthropic).stream(ask()):
            seen.append(event)

    assert streamed_text(seen) == "0123456789abcdef" * 2
    assert "mid-reply" in one_line_error(caught.value)


def test_unreachable_server_is_connection_failed() -> None:
    with FakeAnthropic() as server:
        url = server.base_url
    provider = AnthropicProvider(api_key=SENTINEL_KEY, base_url=url, max_retries=0)

    with pytest.raises(ConnectionFailed) as caught:
        collect(provider, ask())

    assert "Could not reach the Anthropic API" in one_line_error(caught.value)


def test_overloaded_error_event_mid_stream_is_overloaded(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="0123456789abcdef" * 4, error_event_after=4)
    seen: list[ReplyEvent] = []

    with pytest.raises(Overloaded) as caught:
        for event in provider_for(fake_anthropic).stream(ask()):
            seen.append(event)

    assert streamed_text(seen) == "0123456789abcdef"
    assert "mid-reply" in one_line_error(caught.value)


def test_other_error_event_mid_stream_is_a_stream_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="hello there", error_event_after=3, error_event_type="api_error")

    with pytest.raises(StreamError) as caught:
        collect(provider_for(fake_anthropic), ask())

    assert "api_error" in one_line_error(caught.value)


def test_malformed_event_is_a_stream_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(text="hello there", malformed_after=3)

    with pytest.raises(StreamError) as caught:
        collect(provider_for(fake_anthropic), ask())

    assert "malformed" in one_line_error(caught.value)


def test_a_server_echoing_the_key_never_gets_it_into_the_message(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue_error(400, message=f"bad key {SENTINEL_KEY} in request")

    with pytest.raises(BadRequest) as caught:
        collect(provider_for(fake_anthropic), ask())

    assert "[redacted]" in one_line_error(caught.value)


def test_stopping_early_leaves_the_provider_usable_for_the_next_reply(
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.enqueue(tokens=1000)
    provider = provider_for(fake_anthropic)
    replies = provider.stream(ask())

    first = next(event for event in replies if isinstance(event, TextDelta))
    replies.close()  # what a KeyboardInterrupt in the consumer amounts to
    fake_anthropic.enqueue(text="next one")

    assert first.text == "alpha"
    assert streamed_text(collect(provider, ask())) == "next one"
