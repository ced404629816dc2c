"""The fake Messages API refuses what the real one refuses (fake_rules.py)."""

from __future__ import annotations

import io
import os

import anthropic
import pytest
from helpers.content_blocks import image_block, pdf_block

from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_rules import COUNT_RULES, redacted_data, sign_thinking, validate

USE = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}
ADD = {"name": "add", "description": "Add.", "input_schema": {"type": "object"}}


def with_tools(messages: list[dict], extra: dict) -> dict:
    """The ``tools`` a correct client sends beside tool blocks (unless ``extra`` names its own)."""
    kinds = {
        block.get("type")
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict)
    }
    if "tools" not in extra and kinds & {"tool_use", "tool_result"}:
        return {"tools": [ADD], **extra}
    return {key: value for key, value in extra.items() if value is not None}


def body(*messages: dict, **extra) -> dict:
    return {
        "model": "m",
        "max_tokens": 10,
        "messages": list(messages),
        **with_tools(messages, extra),
    }


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
    signed = {"type": "thinking", "thinking": "so", "signature": sign_thinking("r", 0, 1, "so")}
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
        (
            {**body(user("a")), "tools": [{"name": "git:git_log", "input_schema": {}}]},
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        ),
        (
            {
                **body(user("a")),
                "tools": [
                    {"name": "add", "input_schema": {"type": "object"}},
                    {"name": "add", "input_schema": {"type": "object"}},
                ],
            },
            "Tool names must be unique",
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
        **with_tools(messages, extra),
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
            "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
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


# -- image and document blocks ------------------------------------------------------------


def png(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def test_valid_image_and_document_blocks_pass():
    text = {"type": "text", "text": "what is this?"}
    assert (
        validate(body(user([image_block(png(30, 20)), pdf_block(b"%PDF-1.4 ..."), text]))) is None
    )
    in_result = {**RESULT, "content": [image_block(png(8, 8))]}
    assert validate(body(user("a"), assistant([USE]), user([in_result]))) is None


@pytest.mark.parametrize(
    ("block", "says"),
    [
        (
            image_block(b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
            "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', "
            "'image/png', 'image/gif' or 'image/webp'",
        ),
        (
            image_block("*"),
            "messages.0.content.0.image.source.base64.data: invalid base64 data",
        ),
        (
            image_block(png(10, 10), "image/jpeg"),
            "Image does not match the provided media type image/jpeg",
        ),
        (
            image_block(b"not an image at all"),
            "Image does not match the provided media type image/png",
        ),
        (image_block(png(8001, 2)), "exceed max allowed size: 8000 pixels"),
        (
            image_block(os.urandom(4 * 1024 * 1024)),
            "image exceeds 5 MB maximum: 5592408 bytes > 5242880",
        ),
        (
            pdf_block(b"%PDF-1.4", media_type="application/x-pdf"),
            "Input should be 'application/pdf'",
        ),
        (
            pdf_block(b"GIF89a..."),
            "messages.0.content.0.pdf.source.base64.data: The PDF specified was",
        ),
        ({"type": "image", "source": {"type": "path", "path": "/etc"}}, "Input tag 'path' found"),
    ],
)
def test_the_fake_refuses_the_image_and_document_blocks_the_api_refuses(block, says):
    problem = validate(body(user([block])))
    assert problem is not None and says in problem


def test_more_than_20_images_may_be_at_most_2000_px():
    many = [image_block(png(8, 8)) for _ in range(20)]
    assert validate(body(user([*many, image_block(png(1999, 10))]))) is None
    problem = validate(body(user([*many, image_block(png(2001, 10))])))
    assert problem is not None and "for many-image requests: 2000 pixels" in problem


def test_a_body_over_32_mb_is_refused_with_413(fake_anthropic: FakeAnthropic):
    client = anthropic.Anthropic(api_key="k", base_url=fake_anthropic.base_url, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(model="m", max_tokens=5, messages=[user("x" * (33 * 1024 * 1024))])
    assert caught.value.status_code == 413
