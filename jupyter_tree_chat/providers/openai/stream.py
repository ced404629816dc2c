"""Reading a Chat Completions stream into the project's reply events.

``openai/provider.py`` hands the SDK's chunks here; what each field becomes is the wire's
rule (``openai/wire.py``'s docstring). The reader keeps one ``ChoiceReader`` a choice (a
request asked with ``n`` streams several at once, their chunks interleaved) and yields
``Began`` as the first chunk arrives, ``ThinkingDelta``/``TextDelta`` as pieces come,
``ThinkingReady`` as a thinking block ends, and once the stream has ended (the usage
chunk is the last) each choice's ``ToolUseReady`` blocks and its ``Finished``. Chunks
work as SDK objects or as plain dicts, so the rules are tested without a network.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import ConnectionFailed
from ...i18n import _
from ..base import (
    Began,
    Finished,
    ReplyEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
)
from .wire import (
    REASONING_FIELDS,
    STOP_REASONS,
    details_text,
    field_of,
    merge_details,
    plain,
    thinking_block,
    tool_input,
    tree_usage,
)


def read_chunks(chunks: Iterable[Any], *, fallback_model: str) -> Iterator[ReplyEvent]:
    """The project's reply events for a stream of ``ChatCompletionChunk``s (one choice;
    the same as ``read_choices`` with ``n=1``, without the pairs: this is the hot loop)."""
    reader = ChoiceReader()
    model, usage = fallback_model, None
    for chunk in chunks:
        if model is fallback_model:
            model = field_of(chunk, "model") or fallback_model
            yield Began(model)
        reported = field_of(chunk, "usage")
        if reported is not None:
            usage = reported
        for choice in field_of(chunk, "choices") or ():
            if not field_of(choice, "index"):
                yield from reader.add(choice)
    if reader.finish_reason is None:
        raise ConnectionFailed(_("The connection closed before the reply finished: retry."))
    yield from reader.finish(model, tree_usage(usage))


def read_choices(
    chunks: Iterable[Any], *, fallback_model: str, n: int = 1
) -> Iterator[tuple[int, ReplyEvent]]:
    """Events for each of ``n`` choices, as ``(choice, event)``: one ``Began`` (choice 0)
    as the first chunk arrives, then each choice's deltas as they come, and each
    choice's ``ToolUseReady`` and ``Finished`` once the stream has ended (usage comes
    last). The server reports one usage for the whole request: it goes with choice 0,
    the others' is unknown (empty: the context meter estimates). A stream that closes
    before every choice has its finish_reason raises ``ConnectionFailed``."""
    readers = [ChoiceReader() for _choice in range(n)]
    model, usage, began = fallback_model, None, False
    for chunk in chunks:
        if not began:
            model = field_of(chunk, "model") or model
            began = True
            yield 0, Began(model)
        reported = field_of(chunk, "usage")
        if reported is not None:
            usage = reported
        for choice in field_of(chunk, "choices") or ():
            index = field_of(choice, "index") or 0
            if index < n:
                for event in readers[index].add(choice):
                    yield index, event
    if not all(reader.finish_reason is not None for reader in readers):
        raise ConnectionFailed(_("The connection closed before the reply finished: retry."))
    tree_usage_ = tree_usage(usage)
    for index, reader in enumerate(readers):
        for event in reader.finish(model, tree_usage_ if index == 0 else {}):
            yield index, event


class ChoiceReader:
    """One choice's deltas, gathered into blocks in the order they began."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None  # the text or thinking block growing now
        self.pieces: list[str] = []  # its text so far, joined when it closes
        self.calls: dict[Any, dict[str, Any]] = {}  # a call's key → its block
        self.arguments: dict[int, list[str]] = {}  # a call block's position → its pieces
        self.finish_reason: str | None = None
        self.refused = False

    def add(self, choice: Any) -> list[ReplyEvent]:
        """The events one chunk's choice brings (most often one ``TextDelta``)."""
        events: list[ReplyEvent] = []
        delta = field_of(choice, "delta")
        if delta is not None:
            extra = delta if isinstance(delta, dict) else getattr(delta, "__pydantic_extra__", None)
            if extra:  # reasoning is no field of the SDK's delta: it is an extra one
                self._reasoning(extra, events)
            content = field_of(delta, "content")
            if content:
                self._text(content, events)
            refusal = field_of(delta, "refusal")
            if refusal:
                self.refused = True
                self._text(refusal, events)
            calls = field_of(delta, "tool_calls")
            if calls:
                self._close(events)
                for call in calls:
                    self._call(call)
        reason = field_of(choice, "finish_reason")
        if reason:
            self.finish_reason = reason
        return events

    def finish(self, model: str, usage: dict[str, Any]) -> list[ReplyEvent]:
        events: list[ReplyEvent] = []
        self._close(events)
        for position, pieces in self.arguments.items():
            block = self.blocks[position]
            block["input"] = tool_input("".join(pieces), block["name"])
            events.append(ToolUseReady(block))
        message = {"role": "assistant", "content": self.blocks}
        stop_reason = self.stop_reason()
        events.append(Finished(message=message, model=model, stop_reason=stop_reason, usage=usage))
        return events

    def stop_reason(self) -> str:
        if self.refused:
            return "refusal"
        reason = STOP_REASONS.get(self.finish_reason or "", "end_turn")
        if self.arguments and reason == "end_turn":
            return "tool_use"  # some servers say "stop" after calling tools
        return reason

    def _reasoning(self, fields: dict[str, Any], events: list[ReplyEvent]) -> None:
        details = fields.get("reasoning_details")
        text, field = None, None
        for name in REASONING_FIELDS[:2]:
            value = fields.get(name)
            if value:
                text, field = str(value), name
                break
        if text is None and details:
            text, field = details_text([plain(d) for d in details]), "reasoning_details"
        if not text and not details:
            return
        block = self.open
        if block is None or block["type"] != "thinking":
            self._close(events)
            block = self.open = thinking_block("", field or "reasoning_details")
            self.blocks.append(block)
        if details:
            merge_details(block.setdefault("details", []), [plain(d) for d in details])
        if text:
            self.pieces.append(text)
            events.append(ThinkingDelta(text, len(self.blocks) - 1))

    def _text(self, text: str, events: list[ReplyEvent]) -> None:
        block = self.open
        if block is None or block["type"] != "text":
            self._close(events)
            block = self.open = {"type": "text", "text": ""}
            self.blocks.append(block)
        self.pieces.append(text)
        events.append(TextDelta(text, len(self.blocks) - 1))

    def _close(self, events: list[ReplyEvent]) -> None:
        """End the growing text or thinking block (a thinking block is then ready)."""
        block, self.open = self.open, None
        if block is None:
            return
        block[block["type"]] = "".join(self.pieces)  # "text" or "thinking"
        self.pieces = []
        if block["type"] == "thinking":
            events.append(ThinkingReady(block, self.blocks.index(block)))

    def _call(self, call: Any) -> None:
        key = field_of(call, "index")
        call_id = field_of(call, "id")
        block = self.calls.get(key)
        if key is None or (block is not None and call_id and block["id"] != call_id):
            key = (key, call_id, len(self.calls))  # a call of its own (an index stuck at 0)
            block = None
        function = field_of(call, "function")
        name = field_of(function, "name") if function is not None else None
        arguments = field_of(function, "arguments") if function is not None else None
        if block is None:
            block = {"type": "tool_use", "id": call_id or "", "name": name or "", "input": {}}
            self.calls[key] = block
            self.arguments[len(self.blocks)] = []
            self.blocks.append(block)
        elif not block["name"] and name:
            block["name"] = name  # a repeated name (vLLM sends it in every fragment) is kept once
        if call_id and not block["id"]:
            block["id"] = call_id
        if arguments:
            piece = arguments if isinstance(arguments, str) else json.dumps(plain(arguments))
            self.arguments[self.blocks.index(block)].append(piece)
