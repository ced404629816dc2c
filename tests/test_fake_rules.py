"""The fake Messages API refuses what the real one refuses (fake_rules.py)."""

from __future__ import annotations

import anthropic
import pytest
from fake_anthropic import FakeAnthropic
from fake_rules import validate

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
    signed = {"type": "thinking", "thinking": "so", "signature": "EuYBCkQ"}
    assert validate(body(user("hi"), assistant([signed, USE]), user([RESULT]))) is None


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
        (body(user([{"type": "toolCall", "id": "x"}])), "Input tag 'toolCall' found using 'type'"),
        (
            body(user("a"), assistant([USE]), user([{**RESULT, "agentId": "a1"}])),
            "messages.2.content.0.tool_result.agentId: Extra inputs are not permitted",
        ),
        (body(user([{"type": "text", "text": ""}])), "text content blocks must be non-empty"),
        (
            body(user("a"), assistant([{"type": "thinking", "thinking": "x", "signature": ""}])),
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
        (
            body(user("a"), assistant([{**USE, "input": "x"}])),
            "input: Input should be a valid dict",
        ),
        (body(user(["a string"])), "Input should be a valid dictionary"),
    ],
)
def test_the_fake_refuses_what_the_api_refuses(request_body, says):
    problem = validate(request_body)
    assert problem is not None and says in problem


def test_the_sdk_sees_a_400_with_the_rule(fake_anthropic: FakeAnthropic):
    client = anthropic.Anthropic(api_key="k", base_url=fake_anthropic.base_url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="roles in a row"):
        client.messages.create(model="m", max_tokens=5, messages=[user("a"), user("b")])
