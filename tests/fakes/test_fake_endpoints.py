"""tests/fakes/fake_endpoints.py: the fake API's modes refuse what each endpoint's docs say.

The routing tests trust these modes, so each documented behaviour is checked here with
the real SDK over real HTTP, the way a client would meet it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from helpers.content_blocks import TINY_PDF, image_block, pdf_block, tiny_png

from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_endpoints import DEEPSEEK_THINKING

CACHED = {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
PDF = pdf_block(TINY_PDF)
IMAGE = image_block(tiny_png())


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[FakeAnthropic] = []

    def start(mode: str | None) -> anthropic.Anthropic:
        server = FakeAnthropic(endpoint=mode).start()
        servers.append(server)
        return anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)

    yield start
    for server in servers:
        server.stop()


def refused(call: Any) -> anthropic.APIStatusError:
    with pytest.raises(anthropic.APIStatusError) as caught:
        call()
    return caught.value


def models_of(client: anthropic.Anthropic) -> tuple[int, Any]:
    request = urllib.request.Request(
        str(client.base_url).rstrip("/") + "/v1/models", headers={"x-api-key": "k"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def tool_loop(thinking: bool) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "tool_use", "id": "t1", "name": "add", "input": {}}]
    if thinking:
        content.insert(0, {"type": "thinking", "thinking": "add", "signature": ""})
    return [
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "3"}]},
    ]


TOOLS = [{"name": "add", "description": "add", "input_schema": {"type": "object"}}]
THINK = {"type": "enabled", "budget_tokens": 1024}


def test_the_default_mode_is_the_anthropic_api_and_lists_claude_models(serve):
    client = serve(None)
    reply = client.messages.create(
        model="claude-sonnet-4-6", max_tokens=100, messages=[{"role": "user", "content": [CACHED]}]
    )
    assert reply.content[0].type == "text"
    status, body = models_of(client)
    assert status == 200 and "claude-sonnet-4-6" in [m["id"] for m in body["data"]]


def test_ollama_refuses_cache_control_and_documents_and_has_no_count_tokens(serve):
    client = serve("ollama")
    hello = [{"role": "user", "content": "hi"}]
    assert client.messages.create(model="llama3.2:3b", max_tokens=50, messages=hello).content
    error = refused(
        lambda: client.messages.create(
            model="llama3.2:3b", max_tokens=50, messages=[{"role": "user", "content": [CACHED]}]
        )
    )
    assert error.status_code == 400 and "cache_control" in str(error)
    error = refused(
        lambda: client.messages.create(
            model="llama3.2:3b", max_tokens=50, messages=[{"role": "user", "content": [PDF]}]
        )
    )
    assert error.status_code == 400 and "document" in str(error)
    error = refused(lambda: client.messages.count_tokens(model="llama3.2:3b", messages=hello))
    assert error.status_code == 404
    status, body = models_of(client)
    assert status == 200 and body["object"] == "list" and body["data"][0]["id"] == "llama3.2:3b"


def test_deepseek_thinks_unless_told_not_to(serve):
    client = serve("deepseek")
    hello = [{"role": "user", "content": "hi"}]
    default = client.messages.create(model="deepseek-chat", max_tokens=2048, messages=hello)
    assert [b.type for b in default.content] == ["thinking", "text"]
    off = client.messages.create(
        model="deepseek-chat", max_tokens=2048, messages=hello, thinking={"type": "disabled"}
    )
    assert [b.type for b in off.content] == ["text"]


def test_deepseek_wants_a_tool_turns_thinking_back_in_thinking_mode(serve):
    client = serve("deepseek")

    def ask(messages: list[dict[str, Any]], **options: Any) -> Any:
        return client.messages.create(
            model="deepseek-chat", max_tokens=2048, messages=messages, tools=TOOLS, **options
        )

    error = refused(lambda: ask(tool_loop(thinking=False), thinking=THINK))
    assert error.status_code == 400 and DEEPSEEK_THINKING in str(error)
    assert ask(tool_loop(thinking=True), thinking=THINK).content  # unsigned: its own
    assert ask(tool_loop(thinking=False), thinking={"type": "disabled"}).content


def test_deepseek_refuses_redacted_thinking_unknown_models_and_hot_temperatures(serve):
    client = serve("deepseek")
    redacted = tool_loop(thinking=False)
    redacted[1]["content"].insert(0, {"type": "redacted_thinking", "data": "x"})
    error = refused(
        lambda: client.messages.create(
            model="deepseek-chat", max_tokens=2048, messages=redacted, tools=TOOLS
        )
    )
    assert "redacted_thinking is not supported" in str(error)
    hello = [{"role": "user", "content": "hi"}]
    error = refused(lambda: client.messages.create(model="gpt-5", max_tokens=50, messages=hello))
    assert "Model Not Exist" in str(error)

    def at(temperature: float) -> Any:
        return client.messages.create(
            model="deepseek-chat",
            max_tokens=50,
            messages=hello,
            thinking={"type": "disabled"},
            extra_body={"temperature": temperature},  # whatever the API version says
        )

    assert at(2.0).content
    assert "out of range" in str(refused(lambda: at(2.5)))
    assert (
        refused(
            lambda: client.messages.count_tokens(model="deepseek-chat", messages=hello)
        ).status_code
        == 404
    )
    assert models_of(client)[0] == 404


def test_minimax_takes_text_and_tools_only_and_temperatures_above_zero(serve):
    client = serve("minimax")
    for block in (IMAGE, PDF):
        error = refused(
            lambda block=block: client.messages.create(
                model="MiniMax-M2", max_tokens=50, messages=[{"role": "user", "content": [block]}]
            )
        )
        assert error.status_code == 400 and "not supported" in str(error)
    hello = [{"role": "user", "content": "hi"}]

    def at(temperature: float) -> Any:
        return client.messages.create(
            model="MiniMax-M2",
            max_tokens=50,
            messages=hello,
            extra_body={"temperature": temperature},
        )

    assert at(1.0).content
    assert "out of range (0.0, 1.0]" in str(refused(lambda: at(0)))
    error = refused(
        lambda: client.messages.create(
            model="MiniMax-M2",
            max_tokens=2048,
            messages=tool_loop(thinking=False),
            tools=TOOLS,
            thinking=THINK,
        )
    )
    assert DEEPSEEK_THINKING in str(error)
