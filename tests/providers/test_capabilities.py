"""providers/endpoints/capabilities.py and build_kwargs: what an endpoint is never sent, and
refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.content_blocks import TINY_PDF, image_block, pdf_block, tiny_png

from jupyter_tree_chat.providers.anthropic.provider import build_kwargs
from jupyter_tree_chat.providers.anthropic.wire import api_messages
from jupyter_tree_chat.providers.base import ReplyRequest, ToolSpec
from jupyter_tree_chat.providers.endpoints.capabilities import (
    THINKING_ALL,
    Supports,
    fitted_messages,
    refusal,
)
from jupyter_tree_chat.providers.endpoints.config import PRESETS

IMAGE = image_block(tiny_png())
PDF = pdf_block(TINY_PDF)
ADD = ToolSpec("add", "Add two numbers", {"type": "object", "properties": {}})


def ask(*messages: dict[str, Any], **options: Any) -> ReplyRequest:
    return ReplyRequest(messages=list(messages), **{"model": "m", **options})


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def tool_turn(thinking: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A question, a reply that called a tool (with ``thinking`` first), its result."""
    content = [{"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}]
    if thinking is not None:
        content.insert(0, thinking)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"}
    return [user("add them"), {"role": "assistant", "content": content}, user([result])]


def text_of(kwargs: dict[str, Any]) -> str:
    return json.dumps(kwargs)


# -- refused before anything is sent ------------------------------------------------------


def test_an_image_or_pdf_to_an_endpoint_without_them_is_refused_with_the_fix():
    local = PRESETS["local"].supports
    problem = refusal(ask(user([{"type": "text", "text": "what is it?"}, IMAGE])), local, "local")
    assert problem is not None and "local reads no image blocks" in problem
    assert "holds 1" in problem and "--model" in problem
    assert "'images': True" in problem  # how to say that this server does read them
    in_a_tool_result = user([{"type": "tool_result", "tool_use_id": "t", "content": [IMAGE]}])
    assert refusal(ask(in_a_tool_result), local, "local") is not None
    assert "document" in (refusal(ask(user([PDF])), PRESETS["ollama"].supports, "ollama") or "")
    assert refusal(ask(user([IMAGE])), PRESETS["ollama"].supports, "ollama") is None


@pytest.mark.parametrize(
    ("endpoint", "temperature", "refused"),
    [
        ("deepseek", 2.0, False),
        ("deepseek", 2.1, True),
        ("minimax", 0.0, True),  # (0, 1]: zero is out
        ("minimax", 0.5, False),
        ("moonshot", 1.2, True),
        ("local", 1.5, False),
    ],
)
def test_a_temperature_outside_the_endpoints_range_is_refused(endpoint, temperature, refused):
    problem = refusal(
        ask(user("hi"), temperature=temperature), PRESETS[endpoint].supports, endpoint
    )
    assert (problem is not None) is refused
    if refused:
        assert f"temperature {temperature:g} is outside what {endpoint} takes" in problem


def test_thinking_is_refused_where_it_is_lacking_and_adaptive_where_only_budgets_are():
    assert "no extended thinking" in refusal(
        ask(user("hi"), thinking=2048), PRESETS["local"].supports, "local"
    )
    deepseek = PRESETS["deepseek"].supports
    assert refusal(ask(user("hi"), thinking=2048), deepseek, "deepseek") is None
    assert "give a budget" in refusal(ask(user("hi"), thinking="adaptive"), deepseek, "deepseek")
    assert refusal(ask(user("hi"), thinking="adaptive"), Supports(), "anthropic") is None


# -- what goes on the wire ------------------------------------------------------------------


def test_no_cache_control_anywhere_where_caching_is_lacking():
    request = ask(
        user("one"),
        {"role": "assistant", "content": "two"},
        user("three"),
        system="S",
        tools=(ADD,),
    )
    cached = build_kwargs(request)
    assert "cache_control" in text_of(cached)
    plain = build_kwargs(request, PRESETS["ollama"].supports)
    assert "cache_control" not in text_of(plain)
    assert plain["system"] == [{"type": "text", "text": "S"}]
    assert plain["tools"] == [ADD.to_api()]


def test_no_tools_are_offered_where_tools_are_lacking():
    request = ask(user("one"), tools=(ADD,))
    assert "tools" not in build_kwargs(request, Supports(tools=False))


def test_deepseek_is_told_when_no_thinking_is_wanted():
    deepseek = PRESETS["deepseek"].supports
    assert build_kwargs(ask(user("hi")), deepseek)["thinking"] == {"type": "disabled"}
    assert build_kwargs(ask(user("hi"), thinking=2048), deepseek)["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2048,
    }
    assert "thinking" not in build_kwargs(ask(user("hi")))  # Anthropic's API: not at all


def test_deepseek_gets_its_unsigned_thinking_back_and_anthropic_does_not():
    stored = tool_turn({"type": "thinking", "thinking": "sum them", "signature": ""})
    deepseek = build_kwargs(ask(*stored, thinking=2048, tools=(ADD,)), PRESETS["deepseek"].supports)
    assert deepseek["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "sum them",
        "signature": "",
    }
    anthropic = build_kwargs(ask(*stored, thinking=2048, tools=(ADD,)))
    assert [b["type"] for b in anthropic["messages"][1]["content"]] == ["tool_use"]


def test_a_tool_turn_without_thinking_gets_an_empty_block_where_thinking_must_come_back():
    stored = tool_turn(None)
    minimax = PRESETS["minimax"].supports
    sent = build_kwargs(ask(*stored, thinking=2048, tools=(ADD,)), minimax)["messages"][1][
        "content"
    ]
    assert sent[0] == {"type": "thinking", "thinking": "", "signature": ""}
    assert sent[1]["type"] == "tool_use"
    without = build_kwargs(ask(*stored, tools=(ADD,)), minimax)["messages"][1]["content"]
    assert [b["type"] for b in without] == ["tool_use"]  # thinking off: nothing to send back


def test_redacted_thinking_never_goes_where_thinking_goes_back_unsigned():
    redacted = {"type": "redacted_thinking", "data": "abc"}
    stored = tool_turn(redacted)
    fitted = fitted_messages(
        api_messages(stored), stored, Supports(thinking_replay=THINKING_ALL), True
    )
    assert "redacted_thinking" not in text_of({"m": fitted})


def test_an_endpoint_without_thinking_is_sent_none_and_no_message_is_left_empty():
    stored = [
        user("hi"),
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"}],
        },
        user("again"),
    ]
    sent = build_kwargs(ask(*stored), PRESETS["local"].supports)["messages"]
    assert "thinking" not in text_of({"m": sent})
    assert [b["text"] for b in sent[1]["content"]] == ["(empty message)"]


def test_the_stored_messages_are_never_changed():
    stored = tool_turn({"type": "thinking", "thinking": "sum", "signature": ""})
    before = json.dumps(stored)
    build_kwargs(ask(*stored, thinking=2048), PRESETS["deepseek"].supports)
    build_kwargs(ask(*stored), PRESETS["local"].supports)
    assert json.dumps(stored) == before


@pytest.mark.parametrize(
    ("model", "temperature", "refused"),
    [
        ("gpt-5-mini", 0.0, True),
        ("o3-mini", 0.7, True),
        ("gpt-5-mini", 1.0, False),  # its default, which it takes
        ("gpt-5-chat-latest", 0.0, False),  # the chat models take any
        ("gpt-4.1-mini", 0.0, False),
    ],
)
def test_openais_reasoning_models_take_no_temperature_but_their_default(
    model, temperature, refused
):
    supports = PRESETS["openai"].supports
    problem = refusal(ask(user("hi"), temperature=temperature, model=model), supports, "openai")
    assert (problem is not None) is refused
    assert supports.takes_temperature(temperature, model) is not refused
    if refused:
        assert problem == (
            f"{model} at openai takes no temperature but its default (1): drop --temperature, "
            "or ask another model"
        )


def test_which_models_take_only_their_default_is_said_per_endpoint_as_a_pattern():
    supports = Supports.merged(Supports(), {"default_temperature_only": "my-reasoner"})
    assert not supports.takes_temperature(0.2, "my-reasoner-2") and supports.takes_temperature(0.2)
    with pytest.raises(ValueError, match="must be a regular expression of model names"):
        Supports.merged(Supports(), {"default_temperature_only": "(unclosed"})
