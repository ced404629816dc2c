"""The fake Chat Completions server keeps OpenAI's rules, so tests against it mean something.

Each case is a request OpenAI refuses (or answers in a particular way), sent through the
real SDK with no translation of ours in between.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from fakes.fake_openai import ONE_CHOICE, FakeOpenAI


@pytest.fixture
def client() -> Any:
    with FakeOpenAI() as server:
        yield openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0), server


def call(call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "add", "arguments": "{}"}}


def refused(client: Any, **body: Any) -> str:
    body.setdefault("model", "gpt-4.1")
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(**body)
    return str(caught.value)


def test_a_tool_message_must_answer_a_preceding_tool_call(client):
    sdk, _ = client
    orphan = [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "call_9", "content": "5"},
    ]
    assert "must be a response to a preceeding message with 'tool_calls'" in refused(
        sdk, messages=orphan
    )
    unanswered = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_1"), call("call_2")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
        {"role": "user", "content": "and?"},
    ]
    assert "did not have response messages: call_2" in refused(sdk, messages=unanswered)


def test_roles_and_message_fields_are_checked(client):
    sdk, _ = client
    assert "Supported values are" in refused(sdk, messages=[{"role": "model", "content": "x"}])
    with_reasoning = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "y", "reasoning_content": "z"},
        {"role": "user", "content": "w"},
    ]
    assert "'reasoning_content' was unexpected" in refused(sdk, messages=with_reasoning)
    assert "expected a string, got null" in refused(
        sdk, messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": None}]
    )


def test_usage_comes_in_a_stream_only_when_asked(client):
    sdk, _ = client
    messages = [{"role": "user", "content": "hi"}]
    plain = list(sdk.chat.completions.create(model="gpt-4.1", messages=messages, stream=True))
    assert all(chunk.usage is None for chunk in plain)
    asked = list(
        sdk.chat.completions.create(
            model="gpt-4.1", messages=messages, stream=True, stream_options={"include_usage": True}
        )
    )
    assert asked[-1].choices == [] and asked[-1].usage.prompt_tokens > 0
    assert "only allowed when 'stream' is enabled" in refused(
        sdk, messages=messages, stream_options={"include_usage": True}
    )


def test_arguments_arrive_in_fragments(client):
    sdk, server = client
    server.enqueue(tool_calls=[{"name": "add", "arguments": {"a": 12345, "b": 67890}}])
    chunks = list(
        sdk.chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "add"}], stream=True
        )
    )
    pieces = [
        chunk.choices[0].delta.tool_calls[0].function.arguments
        for chunk in chunks
        if chunk.choices and chunk.choices[0].delta.tool_calls
    ]
    assert len(pieces) > 3 and "".join(pieces) == '{"a": 12345, "b": 67890}'


def test_a_429_carries_retry_after(client):
    sdk, server = client
    server.enqueue_error(429, retry_after=7)
    with pytest.raises(openai.RateLimitError) as caught:
        sdk.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "x"}])
    assert caught.value.response.headers["retry-after"] == "7"


def test_the_llama_cpp_dialect_refuses_n_and_takes_reasoning_back():
    with FakeOpenAI(dialect="llama.cpp") as server:
        sdk = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        messages = [{"role": "user", "content": "x"}]
        assert ONE_CHOICE in refused(sdk, model="smollm2", messages=messages, n=2)
        back = [*messages, {"role": "assistant", "content": "y", "reasoning_content": "z"},
                {"role": "user", "content": "w"}]  # fmt: skip
        assert sdk.chat.completions.create(model="smollm2", messages=back).choices


def test_n_choices_are_answered_where_the_server_takes_n(client):
    sdk, _ = client
    reply = sdk.chat.completions.create(
        model="gpt-4.1", messages=[{"role": "user", "content": "x"}], n=2
    )
    assert [choice.index for choice in reply.choices] == [0, 1]
    assert reply.choices[0].message.content != reply.choices[1].message.content
