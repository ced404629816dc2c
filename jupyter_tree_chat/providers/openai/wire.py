"""Chat Completions, the second wire: a stored path to its messages, and its stream back.

The session file keeps Messages API blocks whatever wire a reply came from, so one tree
can hold a branch begun on Claude and continued on GPT. This module is the one place
that turns a stored path into what Chat Completions takes and turns what it answers back
into blocks. It is pure (no SDK import, no network): ``provider.py`` makes the call.

Tree → wire (``build_params``, ``chat_messages``), after ``wire.api_messages`` made the
path sendable (tool-use ids the API accepts, an unanswered tool use answered, empty
messages filled, unsigned thinking left out) and ``tools.wire.request_tools`` made its
tools what the request offers (every tool the path used is defined, the ones not
offered marked not callable; with no tool offered the calls and results go as text), as
on the Messages API:

    system prompt        a first ``{"role": "system"}`` message
    text                 ``content``: a string, or text parts for several blocks
    image                ``{"type": "image_url", "image_url": {"url": "data:<type>;base64,..."}}``
                         (an image by URL keeps its URL)
    document (PDF)       ``{"type": "file", "file": {"filename", "file_data": <data URL>}}``
    document (text)      a text part
    tool_use             the assistant's ``tool_calls``: id kept, input as JSON text
    tool_result          one ``{"role": "tool", "tool_call_id"}`` message each, before the
                         rest of their user message; an error result's text after
                         ``Error: ``; an image in a result follows in the user message
    thinking             not sent: Anthropic's signed thinking means nothing here. A
                         block read from this wire goes back in its own field inside a
                         tool loop only where the endpoint takes it (its capability
                         ``send_reasoning``: llama.cpp; OpenAI itself refuses unknown
                         message fields)
    ToolSpec             ``{"type": "function", "function": {"name", "description",
                         "parameters"}}``: the same kernel functions on both wires
    max_tokens           ``max_completion_tokens`` (OpenAI's name; llama.cpp, vLLM and
                         Azure take it too), or ``max_tokens`` where a server wants that
    thinking             ``reasoning_effort``: a budget under 4,096 tokens ``low``, under
                         16,384 ``medium``, else ``high``; ``adaptive`` sends none (the
                         model's default)

Wire → tree, read in one place, as a stream arrives (``stream.ChoiceReader``):

    delta.content        a text block (``TextDelta``)
    reasoning_content,   a thinking block marked as this wire's:
    reasoning, or        ``{"type": "thinking", "thinking", "signature": "",
    reasoning_details    "wire": "openai-chat", "field": <the field it came in>}`` (and
                         ``details``, OpenRouter's structured list, kept as it came).
                         Its signature is empty, so ``wire.sends_thinking`` never sends
                         it to the Messages API as a signed block
    tool_calls           tool_use blocks, their argument fragments joined by ``index``;
                         a whole call in one chunk, a name repeated in every fragment
                         (vLLM) and several calls stuck at index 0 with their own ids
                         (older Ollama) are read right
    refusal              a text block, and stop_reason ``refusal``
    finish_reason        stop_reason: ``stop`` → ``end_turn``, ``length`` →
                         ``max_tokens``, ``tool_calls``/``function_call`` → ``tool_use``
                         (also when a server says ``stop`` after calling tools),
                         ``content_filter`` → ``refusal``
    usage                (asked with ``stream_options: {"include_usage": true}``)
                         ``prompt_tokens`` less the cached ones → ``input_tokens``,
                         ``prompt_tokens_details.cached_tokens`` →
                         ``cache_read_input_tokens``, ``cache_write_tokens`` (OpenRouter)
                         → ``cache_creation_input_tokens``, ``completion_tokens`` →
                         ``output_tokens``; a server that sends none leaves usage empty,
                         and the context meter estimates
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import StreamError
from ...history.tree import THINKING_TYPES, is_real_user_message
from ...i18n import _
from ..anthropic.wire import api_messages
from ..base import (
    ADAPTIVE,
    Message,
    ReplyRequest,
    Thinking,
    ToolSpec,
)
from ..endpoints.capabilities import Supports
from ..tools.wire import request_tools

CHAT_SUPPORTS = Supports(
    count_tokens=False, cache_control=False, adaptive_thinking=False, temperature=(0.0, 2.0), n=True
)
"""What OpenAI's own API takes (a preset says what another server does): everything but
count_tokens (the wire has none) and cache breakpoints (its caching is automatic)."""
WIRE = "openai-chat"
"""How a thinking block read from this wire is marked (its ``wire`` key)."""
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
"""Where servers put reasoning text: llama.cpp, vLLM/Ollama/LM Studio, OpenRouter."""
ERROR_PREFIX = "Error: "
STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
EFFORT_STEPS = ((4096, "low"), (16384, "medium"))


# -- tree → wire ------------------------------------------------------------------------


def build_params(
    request: ReplyRequest,
    supports: Supports = CHAT_SUPPORTS,
    *,
    max_tokens_field: str = "max_completion_tokens",
) -> dict[str, Any]:
    """The keyword arguments for ``chat.completions.create`` (without ``stream``), for an
    endpoint that takes what ``supports`` says.

    Stored messages are copied, never changed (see the module docstring)."""
    offered = [tool.to_api() for tool in request.tools] if supports.tools else []
    sent, tools = request_tools(
        api_messages(request.messages), offered, [tool.to_api() for tool in request.known_tools]
    )
    messages = chat_messages(
        request.messages, request.system, send_reasoning=supports.send_reasoning, sent=sent
    )
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        max_tokens_field: request.max_tokens,
    }
    if tools:
        params["tools"] = chat_tools(tools)
    if request.temperature is not None:
        params["temperature"] = request.temperature
    effort = reasoning_effort(request.thinking)
    if effort is not None:
        params["reasoning_effort"] = effort
    return params


def reasoning_effort(thinking: Thinking) -> str | None:
    """The ``reasoning_effort`` a thinking setting asks for (None: send none)."""
    if thinking is None or thinking == ADAPTIVE or not isinstance(thinking, int):
        return None
    for below, effort in EFFORT_STEPS:
        if thinking < below:
            return effort
    return "high"


def chat_tools(specs: Iterable[ToolSpec | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tool definitions Chat Completions takes, from the same ``ToolSpec``s (or the
    Messages API's definitions of them, as ``tools.wire`` makes them)."""
    chat = []
    for spec in specs:
        tool = spec.to_api() if isinstance(spec, ToolSpec) else spec
        function = {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object"},
        }
        chat.append({"type": "function", "function": function})
    return chat


def chat_messages(
    messages: Sequence[Message],
    system: str | None = None,
    *,
    send_reasoning: bool = False,
    sent: Sequence[Message] | None = None,
) -> list[dict[str, Any]]:
    """A stored path as Chat Completions messages (see the module docstring); ``sent`` is
    the path as the Messages API would take it, if already made (``build_params``)."""
    sent = api_messages(messages) if sent is None else sent
    loop_start = _tool_loop_start(messages) if send_reasoning else len(messages)
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for position, message in enumerate(sent):
        if message["role"] == "assistant":
            in_loop = loop_start <= position < len(messages)
            chat.append(_assistant(message["content"], messages[position] if in_loop else None))
        else:
            chat.extend(_user(message["content"]))
    return chat


def _tool_loop_start(messages: Sequence[Message]) -> int:
    """Where the current tool loop begins: after the last question a person asked."""
    for position in range(len(messages) - 1, -1, -1):
        if is_real_user_message(messages[position]):
            return position + 1
    return 0


def _assistant(content: Any, stored: Message | None) -> dict[str, Any]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    said = [b for b in content if b.get("type") not in ("tool_use", *THINKING_TYPES)]
    texts = [_text_of_block(block) for block in said]
    texts = [text for text in texts if text]
    message: dict[str, Any] = {"role": "assistant", "content": _joined_content(texts)}
    calls = [_tool_call(block) for block in content if block.get("type") == "tool_use"]
    if calls:
        message["tool_calls"] = calls
    if stored is not None:
        message.update(_reasoning_fields(stored))
    return message


def _joined_content(texts: list[str]) -> str | list[dict[str, Any]] | None:
    if not texts:
        return None
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": text} for text in texts]


def _tool_call(block: Mapping[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block.get("name", ""), "arguments": arguments},
    }


def _reasoning_fields(stored: Message) -> dict[str, Any]:
    """This wire's reasoning of a stored reply, in the fields it came in."""
    fields: dict[str, Any] = {}
    content = stored.get("content")
    for block in content if isinstance(content, list) else []:
        if not (isinstance(block, dict) and block.get("wire") == WIRE):
            continue
        field = block.get("field")
        if field == "reasoning_details" and isinstance(block.get("details"), list):
            fields.setdefault("reasoning_details", []).extend(block["details"])
        elif field in REASONING_FIELDS and block.get("thinking"):
            fields[field] = fields.get(field, "") + block["thinking"]
    return fields


def _user(content: Any) -> list[dict[str, Any]]:
    """A user message: its tool results as ``tool`` messages, then the rest, if any."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    chat: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "tool_result":
            tool_message, images = _tool_message(block)
            chat.append(tool_message)
            if images:
                note = _("(the image returned by tool call {id})").format(id=block["tool_use_id"])
                parts += [{"type": "text", "text": note}, *images]
        else:
            parts.append(_part(block))
    if parts:
        chat.append({"role": "user", "content": parts})
    return chat


def _tool_message(result: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    inner = result.get("content", "")
    images: list[dict[str, Any]] = []
    if isinstance(inner, list):
        texts: list[dict[str, Any]] = []
        for block in inner:
            part = _part(block)
            (texts if part["type"] == "text" else images).append(part)
        body: str | list[dict[str, Any]] = texts
    else:
        body = str(inner)
    if result.get("is_error"):
        body = ERROR_PREFIX + (body if isinstance(body, str) else _parts_text(body))
    message = {"role": "tool", "tool_call_id": result["tool_use_id"], "content": body}
    return message, images


def _part(block: Mapping[str, Any]) -> dict[str, Any]:
    """A content part for a block that is not a tool result."""
    kind = block.get("type")
    source: Mapping[str, Any] = block.get("source") or {}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": _source_url(source)}}
    if kind == "document" and source.get("type") == "base64":
        file = {"filename": block.get("title") or "document.pdf", "file_data": _source_url(source)}
        return {"type": "file", "file": file}
    return {"type": "text", "text": _text_of_block(block)}


def _source_url(source: Mapping[str, Any]) -> str:
    if source.get("type") == "url":
        return str(source.get("url", ""))
    media_type = source.get("media_type", "application/octet-stream")
    return f"data:{media_type};base64,{source.get('data', '')}"


def _text_of_block(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    source = block.get("source")
    if kind == "document" and isinstance(source, dict) and source.get("type") == "text":
        title = block.get("title")
        text = str(source.get("data", ""))
        return f"{title}:\n\n{text}" if title else text
    if kind == "document" and isinstance(source, dict) and source.get("type") == "content":
        inner = source.get("content")
        return "\n".join(_text_of_block(b) for b in inner if isinstance(b, dict)) if inner else ""
    return f"[{kind}]"


def _parts_text(parts: list[dict[str, Any]]) -> str:
    return "\n".join(str(part.get("text", "")) for part in parts)


# -- wire → tree: pieces the stream reader (stream.py) builds with ----------------------


def thinking_block(text: str, field: str, details: list[Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "thinking",
        "thinking": text,
        "signature": "",
        "wire": WIRE,
        "field": field,
    }
    if details:
        block["details"] = details
    return block


def tool_input(raw: Any, name: str) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        raise StreamError(
            _("The tool call {name} arrived with arguments that are not JSON: retry.").format(
                name=name
            )
        ) from None
    return value if isinstance(value, dict) else {"value": value}


# -- usage -------------------------------------------------------------------------------


def tree_usage(usage: Any) -> dict[str, Any]:
    """A Chat Completions ``usage`` as the Messages API counts it (see the module docstring);
    ``{}`` when the server sent none."""
    if usage is None:
        return {}
    prompt = _int(field_of(usage, "prompt_tokens"))
    details = field_of(usage, "prompt_tokens_details")
    cached = _int(field_of(details, "cached_tokens")) if details is not None else 0
    written = _int(field_of(details, "cache_write_tokens")) if details is not None else 0
    return {
        "input_tokens": max(prompt - cached - written, 0),
        "output_tokens": _int(field_of(usage, "completion_tokens")),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
    }


def details_text(details: list[Any]) -> str:
    """The readable text of OpenRouter's ``reasoning_details`` (encrypted ones have none)."""
    texts = []
    for item in details:
        if isinstance(item, Mapping):
            text = item.get("text") or item.get("summary")
            if isinstance(text, str):
                texts.append(text)
    return "".join(texts)


def merge_details(kept: list[Any], pieces: list[Any]) -> None:
    """Streamed ``reasoning_details`` pieces joined into whole entries by their ``index``."""
    for piece in pieces:
        if not isinstance(piece, dict):
            continue
        same = next(
            (d for d in kept if d.get("index") == piece.get("index") and "index" in piece), None
        )
        if same is None:
            kept.append(dict(piece))
            continue
        for key, value in piece.items():
            if key in ("text", "summary", "data") and isinstance(value, str):
                same[key] = str(same.get(key) or "") + value
            elif value is not None:
                same[key] = value


def field_of(value: Any, name: str) -> Any:
    """A field of an SDK object (extra fields included) or of a plain dict."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else value


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
