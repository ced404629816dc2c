"""providers/anthropic/events.py: a streamed reply's server-sent events read without the
SDK's typed objects. The splitting follows the SSE spec; what is read of it follows the
SDK (the same events kept and skipped, the same errors); and over real HTTP, every
recorded stream and scripted reply reads the same as the SDK's own reading of it."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import anthropic
import pytest
from fakes.fake_anthropic import FakeAnthropic

from jupyter_tree_chat.errors import Overloaded, StreamError
from jupyter_tree_chat.providers.anthropic.events import decoded_events, read_events
from jupyter_tree_chat.providers.anthropic.provider import DEFAULT_MODEL, AnthropicProvider
from jupyter_tree_chat.providers.base import (
    Finished,
    ReplyEvent,
    ReplyRequest,
    Service,
    TextDelta,
    ToolSpec,
)
from jupyter_tree_chat.providers.sse import sse_events

SERVICE = Service("lab at http://127.0.0.1:9", "check the key", "check the network")


def lines(text: str) -> list[str]:
    return text.split("\n")


# -- the spec's splitting ---------------------------------------------------------------------


def test_events_end_at_a_blank_line_and_data_lines_are_joined():
    stream = 'event: a\ndata: {"x":\ndata: 1}\n\n: a comment\ndata:no space\n\n'
    assert list(sse_events(lines(stream))) == [("a", '{"x":\n1}'), ("", "no space")]


def test_an_event_without_its_closing_blank_line_is_discarded_at_the_end():
    stream = "event: a\ndata: 1\n\nevent: b\ndata: 2"
    assert list(sse_events(lines(stream))) == [("a", "1")]


def test_a_field_without_data_dispatches_nothing():
    assert list(sse_events(lines("event: ping\n\nid: 7\n\n"))) == []


# -- what is read of it, as the SDK reads it ---------------------------------------------------


def test_pings_and_unknown_events_are_skipped_and_unnamed_ones_go_by_their_type():
    stream = (
        'event: ping\ndata: {"type": "ping"}\n\n'
        'event: something_new\ndata: {"type": "something_new"}\n\n'
        'data: {"type": "message_stop"}\n\n'
        'data: {"type": "ping"}\n\n'
    )
    assert list(decoded_events(lines(stream), SERVICE)) == [{"type": "message_stop"}]


def test_an_overloaded_error_event_is_overloaded_and_another_a_stream_error():
    overloaded = 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'  # noqa: E501
    with pytest.raises(Overloaded, match=r"^lab at .* became overloaded mid-reply: Overloaded"):
        list(decoded_events(lines(overloaded), SERVICE))
    other = 'event: error\ndata: {"type": "error", "error": {"type": "api_error", "message": "boom\\n  now"}}\n\n'  # noqa: E501
    with pytest.raises(
        StreamError, match=r"stream failed mid-reply \(api_error\): boom now: retry"
    ):
        list(decoded_events(lines(other), SERVICE))


def test_data_that_is_not_json_is_a_stream_error():
    broken = 'event: content_block_delta\ndata: {"type": "content_blo\n\n'
    with pytest.raises(StreamError, match="sent a malformed stream event: retry"):
        list(decoded_events(lines(broken), SERVICE))


def test_a_stream_that_stops_before_its_stop_reason_is_a_dropped_connection():
    events = [
        {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}},
    ]
    read: list[ReplyEvent] = []
    with pytest.raises(Exception, match="closed before the reply finished"):
        read.extend(read_events(events, fallback_model="m", service=SERVICE))
    assert [e.text for e in read if isinstance(e, TextDelta)] == ["a"]


# -- the same as the SDK's reading, over real HTTP ---------------------------------------------


class OtherClient:
    """A client of another kind (as Bedrock's or Vertex's): not ``anthropic.Anthropic``,
    so the provider keeps the SDK's typed reading of its stream."""

    def __init__(self, client: anthropic.Anthropic) -> None:
        self._client = client
        self.messages = client.messages
        self.api_key = client.api_key

    def with_options(self, **options: Any) -> OtherClient:
        return OtherClient(self._client.with_options(**options))


def unsigned(events: list[ReplyEvent]) -> str:
    """The events as sorted JSON, each signature and redacted thinking's data (which name
    the fake's request) blanked once seen."""
    shown = json.dumps([[type(e).__name__, dataclasses.asdict(e)] for e in events], sort_keys=True)
    assert shown.count('"signature": ""') == 0  # signed, not blank, before the blanking
    return re.sub(r'"(signature|data)": "[^"]+"', r'"\1": "SIGNED"', shown)


ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {}})


@pytest.mark.parametrize(
    "script",
    [
        {"replay": "basic_response.sse"},
        {"replay": "tool_use_response.sse"},
        {"replay": "refusal_response.sse"},
        {"replay": "thinking_response.sse"},
        {"text": "a tool", "tool_use": [{"id": "toolu_01", "name": "add", "input": {"a": 1}}]},
        {"thinking": "Hmm, let me see.", "redacted": 1, "text": "Done."},
        {"tokens": 300},
    ],
    ids=lambda script: next(iter(script.values())) if "replay" in script else next(iter(script)),
)
def test_every_stream_reads_as_the_sdks_own_reading_of_it(script: dict[str, Any]):
    request = ReplyRequest(
        messages=[{"role": "user", "content": "hello"}],
        model=DEFAULT_MODEL,
        tools=(ADD,),
        thinking=2048 if "thinking" in script else None,
        max_tokens=4096,
    )
    with FakeAnthropic() as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url)
        server.enqueue(**script)
        ours = list(AnthropicProvider(client).stream(request))
        server.enqueue(**script)
        sdks = list(AnthropicProvider(OtherClient(client)).stream(request))
    assert unsigned(ours) == unsigned(sdks)
    assert isinstance(ours[-1], Finished) and ours[-1].message["content"]
