"""The send-side rules (providers/anthropic/wire.py): what the Messages API is sent of a stored
path.

Unit cases show each rule on a path as an import keeps it; the last test sends such a
path through the real SDK to the fake server, which refuses what the real API refuses.
"""

from __future__ import annotations

import copy
from typing import Any

from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_rules import redacted_data, sign_thinking, validate

from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.anthropic.wire import (
    EMPTY,
    NO_RESULT,
    api_messages,
    api_tool_id,
    sends_thinking,
)
from jupyter_tree_chat.providers.base import Finished, ReplyRequest, ToolSpec
from jupyter_tree_chat.providers.tools.wire import NOT_CALLABLE, request_tools

PI_ID = "call_abc|fc_123"


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "read", "input": {"path": "x"}}


def result(tool_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": text}


LOOKUP = ToolSpec("lookup", "Look a word up.", {"type": "object", "properties": {}})


def sent_with_tools(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The body a request offering ``lookup`` sends: the path's own tools defined beside it."""
    messages, tools = request_tools(messages, [LOOKUP.to_api()])
    return {"model": "m", "max_tokens": 8, "messages": messages, "tools": tools, **extra}


def accepted(messages: list[dict[str, Any]]) -> bool:
    return validate(sent_with_tools(messages)) is None


def test_unsigned_thinking_is_left_out_and_signed_thinking_sent():
    unsigned = {"type": "thinking", "thinking": "hm", "signature": ""}
    signed = {"type": "thinking", "thinking": "ok", "signature": "EuYBCkQYAiJA"}
    sent = api_messages(
        [user("q"), assistant([unsigned, {"type": "text", "text": "a"}]), user("b")]
    )
    assert sent[1] == assistant([{"type": "text", "text": "a"}])
    sent = api_messages([user("q"), assistant([signed, {"type": "text", "text": "a"}]), user("b")])
    assert sent[1]["content"][0] == signed


SIGNED = {"type": "thinking", "thinking": "Let me see.", "signature": "c2ln"}
UNSIGNED = {"type": "thinking", "thinking": "Let me s", "signature": ""}
REDACTED = {"type": "redacted_thinking", "data": "ZW5j"}
TEXT = {"type": "text", "text": "Five."}


def test_signed_thinking_and_redacted_thinking_with_data_are_sent_in_an_assistant_turn():
    assert sends_thinking(SIGNED, "assistant") and sends_thinking(REDACTED, "assistant")
    assert not sends_thinking(UNSIGNED, "assistant")  # a reply cut short mid-thinking
    assert not sends_thinking({"type": "thinking", "thinking": "x"}, "assistant")  # imported
    assert not sends_thinking({"type": "redacted_thinking", "data": ""}, "assistant")
    assert not sends_thinking(SIGNED, "user")  # the API takes thinking from the model only


def test_the_path_keeps_every_signed_thinking_block_as_it_came_and_the_stored_reply_too():
    cut = {"role": "assistant", "content": [UNSIGNED, TEXT], "timestamp": 5}
    earlier = assistant([SIGNED, REDACTED, TEXT])
    sent = api_messages([user("q"), earlier, user("again"), cut, user("more")])
    assert sent[1] == assistant([SIGNED, REDACTED, TEXT])  # earlier turns too, unchanged
    assert sent[3] == assistant([TEXT])
    assert cut["content"] == [UNSIGNED, TEXT]  # the stored reply keeps what arrived
    assert api_messages([{**user("hi"), "timestamp": 1718400000, "extra": 1}]) == [user("hi")]


def test_the_fake_api_takes_a_tool_loop_sent_by_the_rule_and_refuses_it_sent_raw():
    """One path holding both kinds: this project's signed reply, mid tool loop, and an
    imported reply whose thinking has no signature."""
    thought = "Add them."
    ours = assistant(
        [
            {
                "type": "thinking",
                "thinking": thought,
                "signature": sign_thinking("r", 0, 2, thought),
            },
            {"type": "redacted_thinking", "data": redacted_data("r", 1, 2)},
            use("t1"),
        ]
    )
    imported = assistant([UNSIGNED, TEXT])
    path = [user("q"), imported, user("add 2 and 3"), ours, user([result("t1", "5")])]
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048}
    sent = api_messages(path)
    assert sent[3] == ours  # the tool loop's thinking, whole and unchanged
    assert validate(sent_with_tools(sent, **thinking)) is None
    raw = [{"role": m["role"], "content": m["content"]} for m in path]
    problem = validate(sent_with_tools(raw, **thinking))
    assert problem == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_a_refused_tool_use_id_is_mapped_the_same_in_use_and_result_and_stays_stable():
    path = [user("q"), assistant([use(PI_ID)]), user([result(PI_ID)])]
    stored = copy.deepcopy(path)
    sent = api_messages(path)
    mapped = sent[1]["content"][0]["id"]
    assert mapped == sent[2]["content"][0]["tool_use_id"] == api_tool_id(PI_ID)
    assert mapped.startswith("call_abc_fc_123_") and mapped != api_tool_id("call_abc|fc_124")
    assert accepted(sent)
    assert path == stored  # the stored messages are not changed
    assert api_tool_id("toolu_01AbC-x_") == "toolu_01AbC-x_"


def test_a_tool_use_without_its_result_gets_one_saying_none_was_recorded():
    sent = api_messages([user("q"), assistant([use("t1"), use("t2")]), user([result("t2")])])
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": NO_RESULT, "is_error": True},
        result("t2"),
    ]
    continued = api_messages([user("q"), assistant([use("t1")]), user("a new question")])
    assert continued[2]["content"][1] == {"type": "text", "text": "a new question"}
    assert accepted(sent) and accepted(continued)


def test_a_stray_result_is_sent_as_text_and_results_of_one_id_as_one():
    sent = api_messages([user("q"), assistant("no tools"), user([result("gone", "late")])])
    assert sent[2]["content"] == [{"type": "text", "text": "[tool result for gone]\nlate"}]
    twice = api_messages(
        [user("q"), assistant([use("t1")]), user([result("t1", "a"), result("t1", "b")])]
    )
    assert twice[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
    ]
    assert accepted(sent) and accepted(twice)


def test_results_come_first_and_keys_a_block_does_not_have_are_left_out():
    block = {**result("t1"), "agentId": None, "is_error": None, "cache_control": {"type": "x"}}
    text = {"type": "text", "text": "see", "citations": None, "parsed": 1}
    sent = api_messages([user("q"), assistant([use("t1")]), user([text, block])])
    assert sent[2]["content"] == [result("t1"), {"type": "text", "text": "see"}]
    assert accepted(sent)


def test_empty_or_unknown_content_is_said_in_text_except_a_final_answer():
    sent = api_messages([user(""), assistant([]), user(["a string item"]), assistant([])])
    assert sent[0]["content"] == [{"type": "text", "text": EMPTY}]
    assert sent[1]["content"] == [{"type": "text", "text": EMPTY}]
    assert sent[2]["content"] == [{"type": "text", "text": "a string item"}]
    assert sent[3]["content"] == []  # a final assistant message may be empty
    odd = api_messages([user([{"type": "toolCall", "id": "x"}])])
    assert odd[0]["content"] == [{"type": "text", "text": "[toolCall]"}]
    assert accepted(sent[:3]) and accepted(odd)


def test_an_imported_path_goes_through_the_real_sdk_and_the_fake_api_accepts_it():
    path = [
        user("Read notes.md"),
        assistant(
            [
                {"type": "thinking", "thinking": "Reading it.", "signature": ""},
                {"type": "text", "text": "I'll read it."},
                use(PI_ID),
            ]
        ),
        user([{**result(PI_ID, "remember the milk"), "agentId": None}]),
        assistant([{"type": "text", "text": "It says: remember the milk."}]),
        user("And then?"),
    ]
    with FakeAnthropic() as server:
        server.enqueue("Buy bread.")
        server.enqueue("Buy milk.")
        provider = AnthropicProvider(api_key="sk-test", base_url=server.base_url, max_retries=0)
        asked = ReplyRequest(messages=path, model="claude-sonnet-4-6", tools=(LOOKUP,))
        events = list(provider.stream(asked))
        assert isinstance(events[-1], Finished)
        body = server.last_request.body
        # with no tool offered, the same path goes as text, and is accepted too
        events = list(provider.stream(ReplyRequest(messages=path, model="claude-sonnet-4-6")))
        assert isinstance(events[-1], Finished)
        plain = server.last_request.body
    assert "tools" not in plain
    assert plain["messages"][1]["content"][1] == {
        "type": "text",
        "text": '[tool call: read {"path": "x"}]',
    }
    assert plain["messages"][2]["content"][0]["text"].startswith(
        "[tool result from read]\nremember the milk"
    )
    assert [tool["name"] for tool in body["tools"]] == ["lookup", "read"]
    assert body["tools"][1]["description"].startswith(NOT_CALLABLE)
    assert [m["role"] for m in body["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert body["messages"][1]["content"][1]["id"] == api_tool_id(PI_ID)
