"""The second wire against a real model server: llama.cpp's ``llama-server`` (SmolLM2-135M)
on ``/v1/chat/completions``, through the real ``openai`` SDK.

Its answers are real and so not fixed: these tests check structure (what was streamed,
stored and sent), never words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.providers.base import (
    Began,
    Finished,
    ReplyEvent,
    ReplyRequest,
    TextDelta,
    ToolSpec,
)
from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider
from jupyter_tree_chat.providers.tools.functions import ToolRegistry

ADD = ToolSpec(
    "add",
    "Add two numbers.",
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)


@pytest.fixture
def local(llama_server: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(
        api_key="no-key-needed",
        base_url=llama_server.base_url + "/v1",
        default_model=llama_server.model,
    )


def ask(messages: list[dict[str, Any]], **options: Any) -> ReplyRequest:
    """A request at temperature 0: the model's answer is then the same on every run, so a
    test that passes once passes every time (sampling once ended a count in 4 tokens)."""
    options.setdefault("max_tokens", 24)
    options.setdefault("temperature", 0.0)
    return ReplyRequest(messages=messages, model="smollm2", **options)


def finished(events: list[ReplyEvent]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def test_a_reply_streams_with_usage_from_the_real_server(local):
    events = list(local.stream(ask([{"role": "user", "content": "Name a colour."}])))
    assert events[0] == Began("smollm2")
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = finished(events)
    assert len(deltas) > 1 and "".join(deltas) == done.message["content"][0]["text"]
    assert done.stop_reason in ("end_turn", "max_tokens")
    assert done.usage["input_tokens"] > 0 and 0 < done.usage["output_tokens"] <= 24


def test_the_limit_is_reported_as_max_tokens(local):
    question = [{"role": "user", "content": "Count from 1 to 100, one number a line."}]
    events = list(local.stream(ask(question, max_tokens=5)))
    done = finished(events)
    assert done.stop_reason == "max_tokens" and done.usage["output_tokens"] == 5


def test_a_shared_prefix_is_read_from_the_servers_cache(local):
    background = "Trees grow from seeds and need light and water. " * 30
    first = finished(list(local.stream(ask([{"role": "user", "content": background + "Why?"}]))))
    second = finished(list(local.stream(ask([{"role": "user", "content": background + "How?"}]))))
    assert second.usage["cache_read_input_tokens"] > first.usage["input_tokens"] // 2
    assert second.usage["input_tokens"] < first.usage["input_tokens"]


def test_a_path_from_claude_with_signed_thinking_and_a_tool_loop_is_taken(local, llama_server):
    path = [
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Use the tool.", "signature": "EqQBCgIYAhIM"},
                {"type": "tool_use", "id": "toolu_01AbC", "name": "add", "input": {"a": 2, "b": 3}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01AbC", "content": "5"}],
        },
    ]
    mark = llama_server.prompt_mark()
    done = finished(list(local.stream(ask(path, tools=(ADD,)))))
    assert done.message["role"] == "assistant" and done.message["content"]
    (prompt,) = llama_server.prompts(since=mark)
    assert "Use the tool." not in prompt  # Claude's thinking is not this wire's
    assert "<|im_start|>tool\n5" in prompt  # the result reached the model as a tool turn


def test_n_answers_come_in_one_request_from_this_llama_cpp(local):
    pairs = list(local.stream_choices(ask([{"role": "user", "content": "Say hi."}]), 2))
    ends = {choice: event for choice, event in pairs if isinstance(event, Finished)}
    assert sorted(ends) == [0, 1]
    assert all(end.message["content"][0]["text"] for end in ends.values())


def test_a_session_on_the_local_model_stores_its_replies_and_reloads_them(local, tmp_path: Path):
    file = tmp_path / "nb.chat.jsonl"
    session = Session.open(file, local, tools=ToolRegistry(), settings=ChatSettings(max_tokens=24))
    first = session.ask("Hello!")
    second = session.ask("And again?")
    assert first.error is None and second.error is None
    stored = load_file(file)
    path = stored.tree.path_nodes(stored.tree.leaf)
    assert [n.role for n in path] == ["user", "assistant", "user", "assistant"]
    assert path[-1].meta["provider"] == "openai-chat" and path[-1].meta["model"] == "smollm2"
    assert path[-1].meta["usage"]["input_tokens"] > 0
