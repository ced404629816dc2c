"""Reading a streamed reply: the server-sent events of ``/v1/messages``, decoded here.

The SDK would make a typed object of every event (a pydantic model built and checked
per token): half the CPU a 2,000-token reply costs the kernel. So the provider takes the
response's lines from the SDK (its request, headers, auth and status errors unchanged)
and this module reads them: ``providers/sse.py`` splits them as the SSE spec says, msgspec
decodes each ``data`` as JSON, and ``read_events`` turns the event dicts into the
project's reply events (``Began``, ``ThinkingDelta``, ``ThinkingReady``, ``TextDelta``,
``ToolUseReady``, ``Finished``). The events read are the SDK's: the six message and
content-block events; ``ping`` and any other name are skipped; ``error`` raises (an
``overloaded_error`` as ``Overloaded``, which is asked again before any text, as a 529
is; any other as ``StreamError``), and so does a ``data`` that is not JSON.

The reply is complete once ``message_delta`` has brought the stop_reason: only
``message_stop`` follows it, and a stream whose last event lacks its closing blank line
(as in some recordings) loses that event, as the spec says: pending data at the end of
the stream is discarded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from ...errors import ConnectionFailed, Overloaded, ProviderError, StreamError
from ...history.tree import is_thinking
from ...i18n import _
from ..base import (
    Began,
    Finished,
    ReplyEvent,
    Service,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
)
from ..sse import sse_events

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
"""The events the SDK reads of a message's stream; it skips every other (``ping``)."""

_decode = msgspec.json.Decoder().decode


def decoded_events(lines: Iterable[str], service: Service) -> Iterator[dict[str, Any]]:
    """The JSON of each message event in the stream's lines; ``error`` raises."""
    for name, data in sse_events(lines):
        if name and name not in MESSAGE_EVENTS and name != "error":
            continue  # ping, and whatever a newer API adds: as the SDK does
        try:
            event = _decode(data)
        except msgspec.DecodeError:
            raise StreamError(
                _("{who} sent a malformed stream event: retry.").format(who=service.subject)
            ) from None
        kind = event.get("type") if isinstance(event, dict) else None
        if name == "error" or kind == "error":
            raise stream_event_error(event, service)
        if name or kind in MESSAGE_EVENTS:
            yield event


def stream_event_error(body: Any, service: Service) -> ProviderError:
    """The project error for an ``error`` event inside the stream (a 200 already sent)."""
    error = body.get("error") if isinstance(body, dict) else None
    kind = str(error.get("type") or "error") if isinstance(error, dict) else "error"
    message = error.get("message") if isinstance(error, dict) else None
    detail = ": " + " ".join(str(message).split())[:300] if message else ""
    who = service.subject
    if kind == "overloaded_error":
        return Overloaded(
            _("{who} became overloaded mid-reply{detail}: retry in a minute.").format(
                who=who, detail=detail
            )
        )
    return StreamError(
        _("{who} stream failed mid-reply ({kind}){detail}: retry.").format(
            who=who, kind=kind, detail=detail
        )
    )


def read_events(
    events: Iterable[dict[str, Any]], *, fallback_model: str, service: Service
) -> Iterator[ReplyEvent]:
    """Turn a stream's decoded events into the project's reply events."""
    model, stop_reason, finished = fallback_model, None, False
    usage = dict.fromkeys(USAGE_FIELDS, 0)
    blocks: dict[int, dict[str, Any]] = {}
    pieces: dict[int, list[str]] = {}
    for event in events:
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            delta_kind = delta["type"]
            if delta_kind == "text_delta":
                text = delta["text"]
                index = event["index"]
                pieces[index].append(text)
                yield TextDelta(text, index)
            elif delta_kind == "input_json_delta":
                pieces[event["index"]].append(delta["partial_json"])
            elif delta_kind == "thinking_delta":
                pieces[event["index"]].append(delta["thinking"])
                yield ThinkingDelta(delta["thinking"], event["index"])
            elif delta_kind == "signature_delta":
                blocks[event["index"]]["signature"] = delta["signature"]
        elif kind == "content_block_start":
            blocks[event["index"]] = _start_block(event["content_block"])
            pieces[event["index"]] = []
        elif kind == "content_block_stop":
            block = _finish_block(blocks[event["index"]], pieces.pop(event["index"]))
            blocks[event["index"]] = block
            if block["type"] == "tool_use":
                yield ToolUseReady(block)
            elif is_thinking(block):
                yield ThinkingReady(block, event["index"])
        elif kind == "message_start":
            message = event["message"]
            model = message.get("model") or model
            _merge_usage(usage, message.get("usage"))
            yield Began(model)
        elif kind == "message_delta":
            stop_reason = (event.get("delta") or {}).get("stop_reason")
            finished = finished or stop_reason is not None
            _merge_usage(usage, event.get("usage"))
        elif kind == "message_stop":
            finished = True
    if not finished:
        raise ConnectionFailed(
            _("The connection to {who} closed before the reply finished: retry.").format(
                who=service.label
            )
        )
    content = [blocks[index] for index in sorted(blocks)]
    message = {"role": "assistant", "content": content}
    yield Finished(message=message, model=model, stop_reason=stop_reason, usage=usage)


def _start_block(content_block: dict[str, Any]) -> dict[str, Any]:
    kind = content_block["type"]
    if kind == "text":
        return {"type": "text", "text": ""}
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": content_block["id"],
            "name": content_block["name"],
            "input": {},
        }
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {key: value for key, value in content_block.items() if value is not None}


def _finish_block(block: dict[str, Any], pieces: list[str]) -> dict[str, Any]:
    kind = block["type"]
    if kind == "text":
        block["text"] = "".join(pieces)
    elif kind == "thinking":
        block["thinking"] = "".join(pieces)
    elif kind == "tool_use" and pieces:
        raw = "".join(pieces)
        try:
            block["input"] = json.loads(raw) if raw else {}
        except ValueError:
            raise StreamError(
                _("The tool call {name} arrived with input that is not JSON: retry.").format(
                    name=repr(block["name"])
                )
            ) from None
    return block


def _merge_usage(usage: dict[str, int], reported: Any) -> None:
    if not isinstance(reported, dict):
        return
    for key in USAGE_FIELDS:
        value = reported.get(key)
        if value is not None:
            usage[key] = value
