"""The fake Messages API refuses what the real one refuses (fake_rules.py)."""

from __future__ import annotations

import anthropic
import pytest
from fake_anthropic import FakeAnthropic
from fake_rules import COUNT_RULES, redacted_data, sign_thinking, validate

USE = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}


def body(*messages: dict) -> dict:
    return {"model": "m", "max_tokens": 10, "messages": list(messages)}


def user(content) -> dict:
    return {"role": "user", "content": content}


def assistant(content) -> dict:
    return {"role": "assistant", "content": content}


def test_a_valid_tool_loop_passes():
    assert (
        validate(body(user("hi"), assistant([USE]), user([RESULT, {"type": "text", "text": "ok"}])))
        is None
    )
    assert validate(body(user("hi"), assistant("prefill"))) is None


@pytest.mark.parametrize(
    ("request_body", "says"),
    [
        ({"model": "m", "max_tokens": 1}, "messages: Field required"),
        (body(), "at least one message"),
        (body(assistant("hi")), 'first message must use the "user" role'),
        (body(user("a"), user("b")), 'multiple "user" roles in a row'),
        (body(user("a"), assistant("b"), assistant("c")), 'multiple "assistant" roles'),
        (body(user(""), assistant("b")), "must have non-empty content"),
        (body(user("a"), assistant([USE]), user("no result")), "without `tool_result` blocks"),
        (body(user("a"), assistant("b"), user([RESULT])), "unexpected `tool_use_id`"),
        (
            body(user("a"), assistant([USE]), user([{"type": "text", "text": "x"}, RESULT])),
            "must come first",
        ),
        (body(user("a"), assistant([{**USE, "id": "call_1|fc_2"}]), user([RESULT])), "pattern"),
        (
            {**body(user("a")), "messages": [{"role": "user", "content": "a", "id": "x"}]},
            "Extra inputs",
        ),
    ],
)
def test_the_fake_refuses_what_the_api_refuses(request_body, says):
    problem = validate(request_body)
    assert problem is not None and says in problem


def test_the_sdk_sees_a_400_with_the_rule(fake_anthropic: FakeAnthropic):
    client = anthropic.Anthropic(api_key="k", base_url=fake_anthropic.base_url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="roles in a row"):
        client.messages.create(model="m", max_tokens=5, messages=[user("a"), user("b")])


# -- thinking ------------------------------------------------------------------------------

ON = {"type": "enabled", "budget_tokens": 1024}


def thinking_body(*messages: dict, thinking=ON, **extra) -> dict:
    return {
        "model": "m",
        "max_tokens": 2048,
        "messages": list(messages),
        "thinking": thinking,
        **extra,
    }


def signed(reply: str, position: int, count: int, text: str) -> dict:
    return {
        "type": "thinking",
        "thinking": text,
        "signature": sign_thinking(reply, position, count, text),
    }


def redacted(reply: str, position: int, count: int) -> dict:
    return {"type": "redacted_thinking", "data": redacted_data(reply, position, count)}


def test_a_tool_loop_with_its_thinking_passed_back_whole_passes():
    turn = assistant([signed("r1", 0, 2, "Add them."), redacted("r1", 1, 2), USE])
    assert validate(thinking_body(user("add"), turn, user([RESULT]))) is None
    earlier = assistant([signed("r0", 0, 1, "Hi."), {"type": "text", "text": "Hello"}])
    assert validate(thinking_body(user("hi"), earlier, user("add"), turn, user([RESULT]))) is None
    assert validate(thinking_body(user("hi"), earlier, user("more"), thinking=None)) is None


@pytest.mark.parametrize(
    ("request_body", "says"),
    [
        (
            thinking_body(user("a"), thinking={"type": "enabled", "budget_tokens": 1000}),
            "greater than or equal to 1024",
        ),
        (
            thinking_body(user("a"), thinking={"type": "enabled", "budget_tokens": 2048}),
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        ),
        (thinking_body(user("a"), thinking={"type": "sometimes"}), "thinking.type"),
        (thinking_body(user("a"), temperature=0.5), "`temperature` may only be set to 1"),
        (
            thinking_body(user("a"), thinking={"type": "adaptive"}, temperature=0),
            "`temperature` may only be set to 1",
        ),
        (thinking_body(user("a"), top_k=5), "`top_k` must be unset"),
        (
            thinking_body(
                user("a"),
                assistant([{**signed("r", 0, 1, "x"), "thinking": "y"}, USE]),
                user([RESULT]),
            ),
            "Invalid `signature` in `thinking` block",
        ),
        (
            thinking_body(
                user("a"),
                assistant(
                    [
                        {"type": "thinking", "thinking": "x", "signature": ""},
                        {"type": "text", "text": "b"},
                    ]
                ),
                user("c"),
            ),
            "Invalid `signature`",
        ),
        (
            thinking_body(
                user("a"),
                assistant([{"type": "redacted_thinking", "data": "bm9wZQ=="}, USE]),
                user([RESULT]),
            ),
            "Invalid `data` in `redacted_thinking` block",
        ),
        (
            thinking_body(user("a"), assistant([USE]), user([RESULT])),
            "must start with a thinking block",
        ),
        (
            thinking_body(user("a"), assistant([signed("r", 0, 2, "x"), USE]), user([RESULT])),
            "passed back exactly as they were received, none left out",
        ),
        (
            thinking_body(
                user("a"),
                assistant([redacted("r", 1, 2), signed("r", 0, 2, "x"), USE]),
                user([RESULT]),
            ),
            "none left out",
        ),
        (
            thinking_body(
                user("a"),
                assistant(
                    [{**signed("r", 0, 1, "x"), "cache_control": {"type": "ephemeral"}}, USE]
                ),
                user([RESULT]),
            ),
            "cache_control cannot be set for thinking",
        ),
    ],
)
def test_the_fake_refuses_what_the_api_refuses_about_thinking(request_body, says):
    problem = validate(request_body)
    assert problem is not None and says in problem


def test_without_thinking_a_tool_turn_needs_no_thinking_and_adaptive_may_skip_it():
    loop = (user("a"), assistant([USE]), user([RESULT]))
    assert validate(thinking_body(*loop, thinking=None)) is None
    assert validate(thinking_body(*loop, thinking={"type": "adaptive"})) is None


def test_a_count_needs_no_max_tokens_but_follows_the_other_rules():
    counted = {"model": "m", "messages": [user("hi")], "thinking": ON}
    assert validate(counted, COUNT_RULES) is None
    assert "max_tokens: Field required" in validate(counted)
    assert "roles in a row" in validate(
        {**counted, "messages": [user("a"), user("b")]}, COUNT_RULES
    )
