"""Reading a Chat Completions stream (providers/openai/stream.py), on chunks as servers send them.

The chunks here are plain dicts shaped as each server's are (docs/chat-completions.md,
"How servers differ"); test_provider_openai.py runs the same reader on the SDK's objects
from the fake server.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_tree_chat.errors import ConnectionFailed, StreamError
from jupyter_tree_chat.providers.base import (
    Began,
    Finished,
    ReplyEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
)
from jupyter_tree_chat.providers.openai.stream import read_choices, read_chunks
from jupyter_tree_chat.providers.openai.wire import WIRE


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict:
    choice = {"index": extra.pop("choice", 0), "delta": delta or {}, "finish_reason": finish}
    return {"id": "c1", "model": extra.pop("model", "gpt-5-mini"), "choices": [choice], **extra}


def usage_chunk(prompt: int = 10, completion: int = 5, cached: int = 0) -> dict:
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return {"id": "c1", "model": "gpt-5-mini", "choices": [], "usage": usage}


def read(chunks: list[dict]) -> list[ReplyEvent]:
    return list(read_chunks(chunks, fallback_model="asked-model"))


def finished(events: list[ReplyEvent]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def call(index: int | None, call_id: str | None = None, name: str | None = None, args: str = ""):
    function: dict[str, Any] = {"arguments": args}
    if name is not None:
        function["name"] = name
    delta: dict[str, Any] = {"function": function}
    if index is not None:
        delta["index"] = index
    if call_id is not None:
        delta.update(id=call_id, type="function")
    return {"tool_calls": [delta]}


def test_text_streams_and_the_reply_finishes_with_usage_and_stop_reason():
    events = read(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk(finish="stop"),
            usage_chunk(2000, 7, cached=1536),
        ]
    )
    assert events[0] == Began("gpt-5-mini")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    done = finished(events)
    assert done.message == {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}
    assert done.stop_reason == "end_turn"
    assert done.usage == {
        "input_tokens": 464,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1536,
    }


def test_without_usage_the_reply_has_none_and_the_meter_estimates():
    assert finished(read([chunk({"content": "Hi"}), chunk(finish="stop")])).usage == {}


def test_usage_on_the_finish_chunk_is_read_too():
    last = {**chunk(finish="stop"), "usage": usage_chunk(30, 4)["usage"]}
    assert finished(read([chunk({"content": "Hi"}), last])).usage["input_tokens"] == 30


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
    ],
)
def test_finish_reasons_become_stop_reasons(reason, stop):
    assert finished(read([chunk({"content": "x"}), chunk(finish=reason)])).stop_reason == stop


def test_argument_fragments_are_joined_by_index():
    events = read(
        [
            chunk(call(0, "call_1", "add", "")),
            chunk(call(1, "call_2", "add", '{"a"')),
            chunk(call(0, args='{"a": 1,')),
            chunk(call(1, args=": 7}")),
            chunk(call(0, args=' "b": 2}')),
            chunk(finish="tool_calls"),
        ]
    )
    uses = [e.block for e in events if isinstance(e, ToolUseReady)]
    assert uses == [
        {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 1, "b": 2}},
        {"type": "tool_use", "id": "call_2", "name": "add", "input": {"a": 7}},
    ]
    assert finished(events).stop_reason == "tool_use"


def test_a_whole_call_in_one_chunk_and_a_name_repeated_in_each_fragment():
    whole = read([chunk(call(0, "call_1", "add", '{"a": 1}')), chunk(finish="tool_calls")])
    assert finished(whole).message["content"][0]["input"] == {"a": 1}
    repeated = read(
        [
            chunk(call(0, "call_1", "add", '{"a"')),
            chunk(call(0, name="add", args=": 1}")),
            chunk(finish="tool_calls"),
        ]
    )
    assert finished(repeated).message["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 1}}
    ]


def test_several_whole_calls_stuck_at_index_zero_stay_apart_by_their_ids():
    events = read(
        [
            chunk(call(0, "call_1", "add", '{"a": 1}')),
            chunk(call(0, "call_2", "mul", '{"a": 2}')),
            chunk(finish="tool_calls"),
        ]
    )
    names = [(b["id"], b["name"], b["input"]) for b in finished(events).message["content"]]
    assert names == [("call_1", "add", {"a": 1}), ("call_2", "mul", {"a": 2})]


def test_a_server_that_says_stop_after_calling_tools_still_asks_for_them():
    events = read([chunk(call(0, "call_1", "add", "{}")), chunk(finish="stop")])
    assert finished(events).stop_reason == "tool_use"


def test_arguments_that_are_not_json_are_a_stream_error():
    with pytest.raises(StreamError, match="add"):
        read([chunk(call(0, "call_1", "add", '{"a": ')), chunk(finish="tool_calls")])


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_text_is_thinking_marked_as_this_wires(field):
    events = read(
        [
            chunk({field: "Two plus "}),
            chunk({field: "three."}),
            chunk({"content": "5"}),
            chunk(finish="stop"),
        ]
    )
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Two plus ", "three."]
    (ready,) = [e for e in events if isinstance(e, ThinkingReady)]
    block = {"type": "thinking", "thinking": "Two plus three.", "signature": "", "wire": WIRE}
    assert ready.block == {**block, "field": field} and ready.index == 0
    assert finished(events).message["content"] == [ready.block, {"type": "text", "text": "5"}]
    assert [e.index for e in events if isinstance(e, TextDelta)] == [1]


def test_reasoning_details_are_joined_and_kept_and_not_counted_twice():
    def detail(text: str) -> dict[str, Any]:
        return {"type": "reasoning.text", "text": text, "index": 0, "format": "unknown"}

    encrypted = {"type": "reasoning.encrypted", "data": "e30=", "index": 1}
    events = read(
        [
            chunk({"reasoning": "Step ", "reasoning_details": [detail("Step ")]}),
            chunk({"reasoning": "one.", "reasoning_details": [detail("one.")]}),
            chunk({"reasoning_details": [encrypted]}),
            chunk({"content": "Done"}),
            chunk(finish="stop"),
        ]
    )  # fmt: skip
    thinking = finished(events).message["content"][0]
    assert thinking["thinking"] == "Step one."
    assert thinking["details"] == [
        {"type": "reasoning.text", "text": "Step one.", "index": 0, "format": "unknown"},
        {"type": "reasoning.encrypted", "data": "e30=", "index": 1},
    ]


def test_a_refusal_is_kept_as_text_and_says_refusal():
    events = read([chunk({"refusal": "I can't help with that."}), chunk(finish="stop")])
    done = finished(events)
    assert done.message["content"] == [{"type": "text", "text": "I can't help with that."}]
    assert done.stop_reason == "refusal"


def test_a_stream_that_ends_before_its_finish_reason_is_a_dropped_connection():
    with pytest.raises(ConnectionFailed):
        read([chunk({"content": "cut"})])


def test_n_choices_interleaved_come_apart_with_the_usage_on_the_first():
    chunks = [
        chunk({"content": "A1"}, choice=0),
        chunk({"content": "B1"}, choice=1),
        chunk({"content": "A2"}, choice=0),
        chunk(finish="stop", choice=1),
        chunk(finish="length", choice=0),
        usage_chunk(100, 20),
    ]
    events = list(read_choices(chunks, fallback_model="m", n=2))
    texts = {0: "", 1: ""}
    for choice, event in events:
        if isinstance(event, TextDelta):
            texts[choice] += event.text
    assert texts == {0: "A1A2", 1: "B1"}
    ends = {choice: event for choice, event in events if isinstance(event, Finished)}
    assert ends[0].stop_reason == "max_tokens" and ends[1].stop_reason == "end_turn"
    assert ends[0].usage["input_tokens"] == 100 and ends[1].usage == {}
