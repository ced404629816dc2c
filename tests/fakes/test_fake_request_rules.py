"""The fake refuses what the real Messages API refuses about a whole request, with its
words (fake_request_rules.py, the text rules in fake_rules.py, fake_models.py), and caches
as its model does (fake_cache.py: each model's shortest prefix, 5 minutes or 1 hour)."""

from __future__ import annotations

import http.client
import json

import anthropic
import pytest

from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_request_rules import NO_PREFILL, TOOLS_REQUIRED
from fakes.fake_rules import COUNT_RULES, sign_thinking, validate

ADD = {"name": "add", "description": "Add.", "input_schema": {"type": "object"}}
USE = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}
ON = {"type": "enabled", "budget_tokens": 1024}


def user(content) -> dict:
    return {"role": "user", "content": content}


def assistant(content) -> dict:
    return {"role": "assistant", "content": content}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def request(*messages: dict, model: str = "m", max_tokens: int = 2048, **extra) -> dict:
    return {"model": model, "max_tokens": max_tokens, "messages": list(messages), **extra}


LOOP = (user("add 1 and 1"), assistant([USE]), user([RESULT]))


def test_a_request_as_a_correct_client_sends_it_passes():
    assert validate(request(*LOOP, tools=[ADD])) is None
    adaptive = request(*LOOP, tools=[ADD], thinking={"type": "adaptive"}, top_p=0.95)
    assert validate(adaptive, api_version="2023-06-01") is None  # top_p: the older version
    assert validate(request(user("hi"), tools=[ADD], tool_choice={"type": "any"})) is None
    assert validate(request(user("hi"), model="claude-sonnet-4-5", max_tokens=64_000)) is None
    assert validate(request(user("hi"), assistant("Sure:"), model="claude-sonnet-4-5")) is None
    thought = {"type": "thinking", "thinking": "so", "signature": sign_thinking("r", 0, 1, "so")}
    assert validate(request(user("hi"), assistant([thought]), thinking=ON)) is None


@pytest.mark.parametrize(
    ("body", "says"),
    [
        # tool blocks need tools
        (request(*LOOP), TOOLS_REQUIRED),
        (request(*LOOP, tools=[]), TOOLS_REQUIRED),
        (request(user("a"), assistant([USE])), TOOLS_REQUIRED),
        # text blocks hold more than whitespace (messages and system)
        (
            request(user([text(" \n\t")])),
            "messages: text content blocks must contain non-whitespace text",
        ),
        (
            request(user("a"), system=" "),
            "system: text content blocks must contain non-whitespace text",
        ),
        (request(user("a"), system=[text("")]), "system: text content blocks must be non-empty"),
        (
            request(*LOOP[:2], user([{**RESULT, "content": [text("  ")]}]), tools=[ADD]),
            "text content blocks must contain non-whitespace text",
        ),
        # tool_use ids are unique
        (
            request(*LOOP, assistant([text("again"), USE]), user([RESULT]), tools=[ADD]),
            "messages.3.content.1: `tool_use` ids must be unique",
        ),
        # a tool_result holds text, image, search_result, document or tool_reference
        (
            request(*LOOP[:2], user([{**RESULT, "content": [USE]}]), tools=[ADD]),
            "messages.2.content.0.tool_result.content.0: Input tag 'tool_use' found using 'type' "
            "does not match any of the expected tags: 'text', 'image', 'search_result', "
            "'document', 'tool_reference'",
        ),
        (
            request(
                *LOOP[:2],
                user([{**RESULT, "content": [{"type": "thinking", "thinking": "x"}]}]),
                tools=[ADD],
            ),
            "Input tag 'thinking' found",
        ),
        # tool names
        (
            request(user("a"), tools=[{**ADD, "name": "caldav.create-event"}]),
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        ),
        (
            request(user("a"), tools=[{**ADD, "name": "x" * 129}]),
            "tools.0.custom.name: String should have at most 128 characters",
        ),
        (request(user("a"), tools=[{**ADD, "name": ""}]), "String should match pattern"),
        (
            request(user("a"), tools=[ADD, {**ADD, "description": "Again."}]),
            "tools: Tool names must be unique.",
        ),
        (
            request(user("a"), assistant([{**USE, "name": "a.b"}]), user([RESULT]), tools=[ADD]),
            "messages.1.content.0.tool_use.name: String should match pattern",
        ),
        (
            request(user("a"), tools=[{"name": "add"}]),
            "tools.0.custom.input_schema: Field required",
        ),
        (
            request(user("a"), tools=[{**ADD, "input_schema": {"type": "string"}}]),
            "tools.0.custom.input_schema.type: Input should be 'object'",
        ),
        (
            request(user("a"), tools=[{**ADD, "callable": False}]),
            "tools.0.custom.callable: Extra inputs",
        ),
        # with thinking: no forced tool_choice, top_p in 0.95-1, no prefill
        (
            request(user("a"), tools=[ADD], thinking=ON, tool_choice={"type": "any"}),
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            request(
                user("a"),
                tools=[ADD],
                thinking={"type": "adaptive"},
                tool_choice={"type": "tool", "name": "add"},
            ),
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (request(user("a"), thinking=ON, top_p=0.9), "`top_p` may only be set between 0.95 and 1"),
        (
            request(user("a"), assistant("Sure, here:"), thinking=ON),
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, "
            "but found `text`",
        ),
        # the model's limits
        (
            request(user("a"), model="claude-sonnet-4-5-20250929", max_tokens=64_001),
            "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens "
            "for claude-sonnet-4-5-20250929",
        ),
        (
            request(user("a"), max_tokens=0),
            "max_tokens: Input should be greater than or equal to 1",
        ),
        (
            request(user("x" * 800_004), model="claude-sonnet-4-5"),
            "prompt is too long: 200001 tokens > 200000 maximum",
        ),
        (request(user("a"), assistant("Sure:"), model="claude-sonnet-4-6"), NO_PREFILL),
        # cache_control is {"type": "ephemeral"} with a ttl of 5m or 1h
        (
            request(user([{**text("a"), "cache_control": {"type": "ephemeral", "ttl": "2h"}}])),
            "messages.0.content.0.text.cache_control.ttl: Input should be '5m' or '1h'",
        ),
        (
            request(user([{**text("a"), "cache_control": {"type": "persistent"}}])),
            "cache_control.type: Input should be 'ephemeral'",
        ),
        # unknown top-level fields
        (
            request(user("a"), tool_definitions=[ADD]),
            "tool_definitions: Extra inputs are not permitted",
        ),
        (
            request(user("a"), context_management={}),
            "context_management: Extra inputs are not permitted",
        ),
    ],
)
def test_the_fake_refuses_what_the_api_refuses_about_the_request(body, says):
    problem = validate(body)
    assert problem is not None and says in problem


def test_a_count_has_its_own_fields_and_no_model_limits():
    counted = {"model": "claude-sonnet-4-5", "messages": [user("x" * 800_004)]}
    count_fields = frozenset({"model", "messages", "system", "thinking", "tools", "tool_choice"})
    assert validate(counted, COUNT_RULES, fields=count_fields) is None
    with_max = {**counted, "max_tokens": 5}
    assert "max_tokens: Extra inputs" in validate(with_max, COUNT_RULES, fields=count_fields)
    assert (
        validate({"model": "m", "messages": list(LOOP)}, COUNT_RULES, fields=count_fields)
        == TOOLS_REQUIRED
    )


def post(server: FakeAnthropic, path: str, body: dict, headers: dict) -> tuple[int, dict]:
    host, port = server.base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        connection.request("POST", path, json.dumps(body), {"x-api-key": "k", **headers})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_server_requires_the_anthropic_version_header(fake_anthropic: FakeAnthropic):
    body = request(user("hi"))
    for route in ("/v1/messages", "/v1/messages/count_tokens"):
        sent = body if route == "/v1/messages" else {"model": "m", "messages": [user("hi")]}
        status, answer = post(fake_anthropic, route, sent, {})
        assert status == 400
        assert answer["error"] == {
            "type": "invalid_request_error",
            "message": "anthropic-version: header is required",
        }
    status, _ = post(fake_anthropic, "/v1/messages", body, {"anthropic-version": "2023-06-01"})
    assert status == 200


def test_beta_fields_need_the_beta_header(fake_anthropic: FakeAnthropic):
    body = request(user("hi"), context_management={"edits": []})
    version = {"anthropic-version": "2023-06-01"}
    status, answer = post(fake_anthropic, "/v1/messages", body, version)
    assert (status, answer["error"]["message"]) == (
        400,
        "context_management: Extra inputs are not permitted",
    )
    beta = {**version, "anthropic-beta": "context-management-2025-06-27"}
    assert post(fake_anthropic, "/v1/messages", body, beta)[0] == 200


def test_the_sdk_meets_the_new_rules_as_400s(fake_anthropic: FakeAnthropic):
    client = anthropic.Anthropic(api_key="k", base_url=fake_anthropic.base_url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="must define tools"):
        client.messages.create(model="m", max_tokens=5, messages=list(LOOP))
    with pytest.raises(anthropic.BadRequestError, match="invented: Extra inputs"):
        client.messages.create(
            model="m", max_tokens=5, messages=[user("hi")], extra_body={"invented": 1}
        )
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        client.messages.create(
            model="claude-haiku-4-5", max_tokens=5, messages=[user("y" * 900_000)]
        )
    assert fake_anthropic.requests[-1].usage is None  # refused: nothing was answered


# -- the cache: each model's shortest prefix, and the time to live -----------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def cached(model: str, tokens: int, ttl: str | None = None) -> dict:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    prefix = {"type": "text", "text": "p" * (4 * tokens), "cache_control": mark}
    return request(user([prefix, text("and the question")]), model=model)


@pytest.mark.parametrize(
    ("model", "shortest"),
    [
        ("claude-sonnet-4-5", 1024),
        ("claude-sonnet-4-6", 1024),
        ("claude-opus-4-6", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-3-haiku-20240307", 2048),
    ],
)
def test_each_model_caches_from_its_documented_shortest_prefix(model, shortest):
    with FakeAnthropic() as server:
        # the prefix's tokens include the block's role and type keys, a few over ``tokens``
        below = server.cache.usage(cached(model, shortest - 20))
        assert below["cache_creation_input_tokens"] == 0
        at = server.cache.usage(cached(model, shortest))
        assert at["cache_creation_input_tokens"] >= shortest
        assert server.cache.usage(cached(model, shortest))["cache_read_input_tokens"] >= shortest


def test_an_entry_lives_five_minutes_from_its_last_use():
    clock = Clock()
    with FakeAnthropic(clock=clock) as server:
        body = cached("claude-sonnet-4-5", 2000)
        assert server.cache.usage(body)["cache_creation_input_tokens"] > 0
        clock.now += 299
        assert server.cache.usage(body)["cache_read_input_tokens"] > 0  # read: refreshed
        clock.now += 299
        assert server.cache.usage(body)["cache_read_input_tokens"] > 0
        clock.now += 301
        expired = server.cache.usage(body)
        assert expired["cache_read_input_tokens"] == 0
        assert expired["cache_creation_input_tokens"] > 0  # written again


def test_an_entry_marked_1h_lives_an_hour():
    clock = Clock()
    with FakeAnthropic(clock=clock) as server:
        body = cached("claude-sonnet-4-5", 2000, ttl="1h")
        server.cache.usage(body)
        clock.now += 3599
        assert server.cache.usage(body)["cache_read_input_tokens"] > 0
        clock.now += 3601
        assert server.cache.usage(body)["cache_read_input_tokens"] == 0


def test_a_published_entry_lives_from_when_its_response_began():
    clock = Clock()
    with FakeAnthropic(clock=clock) as server:
        body = cached("claude-sonnet-4-5", 2000)
        pending: list[str] = []
        server.cache.usage(body, pending)
        clock.now += 200
        server.cache.publish(pending)
        clock.now += 250  # 450 s after the request, 250 s after its response began
        assert server.cache.usage(body)["cache_read_input_tokens"] > 0
