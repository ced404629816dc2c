"""The rules by which the real Messages API refuses a request (HTTP 400), for the fake.

A test that passes against the fake should pass against the real API, so the fake refuses
what the real one refuses, with the real message where it is known. ``validate(body)``
returns the first broken rule as the API words it, or None. Each rule is a small function
over the parsed body; add new ones to ``RULES``.

The rules (from the API reference and the errors it returns):
- ``model``, ``max_tokens`` and a non-empty ``messages`` are required;
- a message has only ``role`` and ``content``; roles are ``user`` or ``assistant``;
- the first message is a user message and roles alternate (this project never relies on
  the API's merging of consecutive turns, so the fake holds it to alternation);
- every message has non-empty content, except an optional final assistant message;
- every ``tool_use`` block is answered by a ``tool_result`` with its id in the very next
  message, and every ``tool_result`` answers a ``tool_use`` of the message before it;
  tool results come first in their message's content;
- tool-use ids match ``^[a-zA-Z0-9_-]+$``; tool definitions' names match
  ``^[a-zA-Z0-9_-]{1,128}$`` (an MCP tool's ``server:tool`` does not) and are unique;
- content blocks are objects of a known type with only that type's keys (the API says
  "Extra inputs are not permitted": a thinking block has no ``cache_control``); text
  blocks are not empty ("text content blocks must be non-empty") and hold more than
  whitespace ("text content blocks must contain non-whitespace text"), in the messages
  and in ``system`` alike;
- ``tool_use`` ids are unique in the request ("messages.N.content.M: `tool_use` ids must
  be unique");
- a ``tool_result``'s content is a string or text, image, search_result, document and
  tool_reference blocks (the SDK's ``ToolResultBlockParam.Content``), nothing else;
- at most 4 blocks carry ``cache_control``, never an empty text block; ``cache_control``
  is ``{"type": "ephemeral"}`` with an optional ``ttl`` of ``"5m"`` or ``"1h"`` (the SDK's
  ``CacheControlEphemeralParam``);
- ``thinking`` is ``enabled`` (with ``budget_tokens`` at least 1024 and below
  ``max_tokens``), ``adaptive`` or ``disabled``; with thinking on, ``temperature`` may only
  be 1 and ``top_k`` is unset;
- thinking blocks are in assistant messages only; every ``thinking`` block carries the
  signature the server gave it for exactly that text, every ``redacted_thinking`` block
  its ``data`` (``sign_thinking``: a signature names its reply and its place among that
  reply's thinking blocks, so the check needs no memory of past replies);
- in a tool loop (the last message holds tool results) with ``enabled`` thinking, the
  assistant message before it starts with a thinking block; with any thinking, that
  message's thinking blocks come back complete, in order, none left out;
- an image block's base64 source is a PNG, JPEG, GIF or WebP, says so in ``media_type``
  (the bytes are checked, not the name), is valid base64, at most 5 MB as base64 text,
  and at most 8000 px a side (2000 px when a request has more than 20 images);
- a document block's base64 source is ``application/pdf`` holding a PDF; a text source
  is ``text/plain``.
- since API version 2026-10-21 (``anthropic-version``), ``temperature``, ``top_p`` and
  ``top_k`` are refused, even at their defaults; 2023-06-01 still takes them (this rule
  reads a header, so ``validate`` takes the version beside the body).

The rules about the request as a whole (its fields, ``tools``, ``tool_choice``, what
thinking forbids, the model's limits) are in ``fake_request_rules.py``; the
``anthropic-version`` header ("anthropic-version: header is required") is checked by the
server, which sees the headers.

``count_tokens`` bodies (``POST /v1/messages/count_tokens``) follow ``COUNT_RULES``: the
same, but with no ``max_tokens`` and no model limits, and the count's own fields.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fakes import fake_request_rules as request_rules

MAX_CACHE_BREAKPOINTS = 4
MIN_THINKING_BUDGET = 1024
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
MANY_IMAGES, MANY_IMAGES_SIDE = 20, 2000
_PIL_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
THINKING_TYPES = ("thinking", "redacted_thinking")
_SIGNING_KEY = b"the fake Messages API signs its thinking"
DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
CACHE_TTLS = ("5m", "1h")
TOOL_RESULT_TYPES = ("text", "image", "search_result", "document", "tool_reference")

Rule = Callable[[dict[str, Any]], "str | None"]


LEGACY_API_VERSION = "2023-06-01"
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")


def validate(
    body: Any,
    rules: Sequence[Rule] | None = None,
    api_version: str | None = None,
    *,
    fields: frozenset[str] | None = None,
) -> str | None:
    """The first reason the real API would refuse this body with a 400, or None.

    ``fields`` are the top-level fields the endpoint takes (default: a message's)."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    allowed = request_rules.MESSAGE_FIELDS if fields is None else fields
    problem = request_rules.unknown_fields(body, allowed)
    if problem:
        return problem
    for rule in RULES if rules is None else rules:
        problem = rule(body)
        if problem:
            return problem
    return sampling_parameters(body, api_version)


def sampling_parameters(body: dict[str, Any], api_version: str | None) -> str | None:
    """API version 2026-10-21 removed the sampling parameters (a 400 even at defaults)."""
    if api_version == LEGACY_API_VERSION:
        return None
    for key in SAMPLING_PARAMETERS:
        if key in body:
            return f"{key}: Extra inputs are not permitted"
    return None


def required_fields(body: dict[str, Any]) -> str | None:
    return _required(body, ("model", "max_tokens", "messages"))


def count_required_fields(body: dict[str, Any]) -> str | None:
    return _required(body, ("model", "messages"))


def _required(body: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if key not in body:
            return f"{key}: Field required"
    if not isinstance(body["messages"], list) or not body["messages"]:
        return "messages: at least one message is required"
    return None


def message_shape(body: dict[str, Any]) -> str | None:
    for n, message in enumerate(body["messages"]):
        if not isinstance(message, dict):
            return f"messages.{n}: Input should be a valid dictionary"
        extra = sorted(set(message) - {"role", "content"})
        if extra:
            return f"messages.{n}.{extra[0]}: Extra inputs are not permitted"
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{n}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if not isinstance(content, (str, list)):
            return f"messages.{n}.content: Input should be a valid string or list"
    return None


def role_order(body: dict[str, Any]) -> str | None:
    messages = body["messages"]
    if messages[0]["role"] != "user":
        return 'messages: first message must use the "user" role'
    for n in range(1, len(messages)):
        if messages[n]["role"] == messages[n - 1]["role"]:
            return (
                f'messages.{n}: roles must alternate between "user" and "assistant", '
                f'but found multiple "{messages[n]["role"]}" roles in a row'
            )
    return None


def non_empty_content(body: dict[str, Any]) -> str | None:
    messages = body["messages"]
    for n, message in enumerate(messages):
        final_assistant = n == len(messages) - 1 and message["role"] == "assistant"
        if not message["content"] and not final_assistant:
            return (
                f"messages.{n}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
    return None


def tool_pairs(body: dict[str, Any]) -> str | None:
    messages = body["messages"]
    for n, message in enumerate(messages):
        uses = [block["id"] for block in blocks_of(message, "tool_use")]
        for use_id in uses:
            if not isinstance(use_id, str) or not TOOL_USE_ID.match(use_id):
                return (
                    f"messages.{n}.content: tool_use.id: String should match pattern "
                    "'^[a-zA-Z0-9_-]+$'"
                )
        answered = (
            [block.get("tool_use_id") for block in blocks_of(messages[n + 1], "tool_result")]
            if n + 1 < len(messages)
            else None
        )
        if uses and answered is not None:
            missing = [use_id for use_id in uses if use_id not in answered]
            if missing:
                return (
                    f"messages.{n}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
        results = [block.get("tool_use_id") for block in blocks_of(message, "tool_result")]
        offered = [block["id"] for block in blocks_of(messages[n - 1], "tool_use")] if n > 0 else []
        unexpected = [result for result in results if result not in offered]
        if unexpected:
            return (
                f"messages.{n}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{', '.join(map(str, unexpected))}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
        content = message["content"] if isinstance(message["content"], list) else []
        kinds = [block.get("type") for block in content if isinstance(block, dict)]
        first_other = next((i for i, kind in enumerate(kinds) if kind != "tool_result"), None)
        if first_other is not None and "tool_result" in kinds[first_other:]:
            return (
                f"messages.{n}: `tool_result` blocks must come first in the content, "
                "before any other block"
            )
    return None


BLOCK_KEYS = {
    "text": {"type", "text", "citations", "cache_control"},
    "search_result": {"type", "source", "title", "content", "citations", "cache_control"},
    "tool_reference": {"type", "tool_name", "cache_control"},
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "title", "context", "citations", "cache_control"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
    "tool_use": {"type", "id", "name", "input", "cache_control"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
}


def block_shapes(body: dict[str, Any]) -> str | None:
    for n, message in enumerate(body["messages"]):
        content = message["content"]
        if not isinstance(content, list):
            continue
        for m, block in enumerate(content):
            where = f"messages.{n}.content.{m}"
            problem = _block_problem(block, where)
            if problem is None and block.get("type") == "tool_result":
                inner = block.get("content")
                for k, item in enumerate(inner if isinstance(inner, list) else []):
                    inside = f"{where}.tool_result.content.{k}"
                    problem = problem or _result_item_problem(item, inside)
            if problem:
                return problem
    return None


def _block_problem(block: Any, where: str) -> str | None:
    if not isinstance(block, dict):
        return f"{where}: Input should be a valid dictionary or object to extract fields from"
    kind = block.get("type")
    if kind not in BLOCK_KEYS:
        expected = ", ".join(f"'{k}'" for k in BLOCK_KEYS)
        return (
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {expected}"
        )
    extra = sorted(set(block) - BLOCK_KEYS[kind])
    if extra:
        return f"{where}.{kind}.{extra[0]}: Extra inputs are not permitted"
    if kind == "text":
        problem = text_problem(block.get("text"), "messages")
        if problem:
            return problem
    if kind == "tool_use" and not isinstance(block.get("input"), dict):
        return f"{where}.tool_use.input: Input should be a valid dictionary"
    if "cache_control" in block:
        return cache_control_problem(block["cache_control"], f"{where}.{kind}.cache_control")
    return None


def _result_item_problem(item: Any, where: str) -> str | None:
    kind = item.get("type") if isinstance(item, dict) else None
    if kind not in TOOL_RESULT_TYPES:
        expected = ", ".join(f"'{k}'" for k in TOOL_RESULT_TYPES)
        return (
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {expected}"
        )
    return _block_problem(item, where)


def text_problem(text: Any, where: str) -> str | None:
    """An empty or whitespace-only text block's refusal (``where``: messages or system)."""
    if not text:
        return f"{where}: text content blocks must be non-empty"
    if isinstance(text, str) and not text.strip():
        return f"{where}: text content blocks must contain non-whitespace text"
    return None


def cache_control_problem(mark: Any, where: str) -> str | None:
    if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
        return f"{where}.type: Input should be 'ephemeral'"
    extra = sorted(set(mark) - {"type", "ttl"})
    if extra:
        return f"{where}.{extra[0]}: Extra inputs are not permitted"
    if "ttl" in mark and mark["ttl"] not in CACHE_TTLS:
        return f"{where}.ttl: Input should be '5m' or '1h'"
    return None


def system_text(body: dict[str, Any]) -> str | None:
    system = body.get("system")
    if system is None:
        return None
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
    if not isinstance(blocks, list):
        return "system: Input should be a valid string or list"
    for k, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"system.{k}.type: Input should be 'text'"
        problem = text_problem(block.get("text"), "system")
        if problem:
            return problem
        if "cache_control" in block:
            problem = cache_control_problem(block["cache_control"], f"system.{k}.cache_control")
            if problem:
                return problem
    return None


def unique_tool_use_ids(body: dict[str, Any]) -> str | None:
    seen: set[Any] = set()
    for n, message in enumerate(body["messages"]):
        content = message.get("content")
        for m, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            if block.get("id") in seen:
                return f"messages.{n}.content.{m}: `tool_use` ids must be unique"
            seen.add(block.get("id"))
    return None


def cache_breakpoints(body: dict[str, Any]) -> str | None:
    marked = [block for block, has_mark in marked_blocks(body) if has_mark]
    if len(marked) > MAX_CACHE_BREAKPOINTS:
        return (
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
            f"provided. Found {len(marked)}."
        )
    if any(block.get("type") == "text" and not block.get("text") for block in marked):
        return "cache_control cannot be set for empty text blocks"
    return None


# -- thinking ------------------------------------------------------------------------------


def thinking_mode(body: dict[str, Any]) -> str | None:
    """``"enabled"``, ``"adaptive"``, or None (no thinking, or ``disabled``)."""
    config = body.get("thinking")
    if isinstance(config, dict) and config.get("type") in ("enabled", "adaptive"):
        return str(config["type"])
    return None


def thinking_config(body: dict[str, Any]) -> str | None:
    config = body.get("thinking")
    if config is None:
        return None
    if not isinstance(config, dict) or config.get("type") not in (
        "enabled",
        "adaptive",
        "disabled",
    ):
        return "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'"
    if config["type"] != "enabled":
        return None
    budget = config.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        return "thinking.enabled.budget_tokens: Field required"
    if budget < MIN_THINKING_BUDGET:
        return (
            "thinking.enabled.budget_tokens: Input should be greater than or equal to "
            f"{MIN_THINKING_BUDGET}"
        )
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= budget:
        return (
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            f"documentation at {DOCS}#max-tokens-and-context-window-size"
        )
    return None


def sampling_with_thinking(body: dict[str, Any]) -> str | None:
    if thinking_mode(body) is None:
        return None
    if body.get("temperature", 1) != 1:
        return (
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. "
            f"Please consult our documentation at {DOCS}#feature-compatibility"
        )
    if body.get("top_k") is not None:
        return "`top_k` must be unset when thinking is enabled"
    return None


def sign_thinking(reply_id: str, position: int, count: int, thinking: str) -> str:
    """The signature of thinking block ``position`` of ``count`` in reply ``reply_id``."""
    fields = {
        "r": reply_id,
        "i": position,
        "n": count,
        "m": _mac(reply_id, position, count, thinking),
    }
    return base64.b64encode(json.dumps(fields).encode()).decode()


def redacted_data(reply_id: str, position: int, count: int) -> str:
    """The encrypted ``data`` of a ``redacted_thinking`` block (signed like a signature)."""
    return sign_thinking(reply_id, position, count, "\0redacted")


def read_signature(signature: Any) -> dict[str, Any] | None:
    """The fields a valid-looking signature holds, or None."""
    if not isinstance(signature, str) or not signature:
        return None
    try:
        fields = json.loads(base64.b64decode(signature.encode(), validate=True))
    except ValueError:
        return None
    if not isinstance(fields, dict) or set(fields) != {"r", "i", "n", "m"}:
        return None
    return fields


def _mac(reply_id: str, position: int, count: int, thinking: str) -> str:
    message = json.dumps([reply_id, position, count, thinking]).encode()
    return hmac.new(_SIGNING_KEY, message, hashlib.sha256).hexdigest()[:32]


def _signed_by_us(block: dict[str, Any]) -> dict[str, Any] | None:
    """The signature fields of a thinking block if its signature (or data) is valid."""
    redacted = block.get("type") == "redacted_thinking"
    fields = read_signature(block.get("data") if redacted else block.get("signature"))
    if fields is None:
        return None
    thinking = "\0redacted" if redacted else block.get("thinking")
    if not isinstance(thinking, str):
        return None
    expected = _mac(str(fields["r"]), fields["i"], fields["n"], thinking)
    return fields if hmac.compare_digest(str(fields["m"]), expected) else None


def thinking_signatures(body: dict[str, Any]) -> str | None:
    for n, message in enumerate(body["messages"]):
        content = message.get("content")
        for k, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") not in THINKING_TYPES:
                continue
            if message.get("role") != "assistant":
                return (
                    f"messages.{n}.content.{k}: thinking blocks are only allowed in "
                    "assistant messages"
                )
            if _signed_by_us(block) is None:
                field = "data" if block["type"] == "redacted_thinking" else "signature"
                return f"messages.{n}.content.{k}: Invalid `{field}` in `{block['type']}` block"
    return None


def final_assistant_needs_thinking(n: int, found: Any) -> str:
    """The API's refusal of a final assistant message (a tool turn's, or a prefill) that
    does not start with a thinking block while ``enabled`` thinking is on."""
    return (
        f"messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{found}`. When `thinking` is enabled, a final `assistant` message must "
        "start with a thinking block (preceeding the lastmost set of `tool_use` and "
        "`tool_result` blocks). We recommend you include thinking blocks from previous turns. "
        "To avoid this requirement, disable `thinking`. Please consult our documentation "
        f"at {DOCS}"
    )


def thinking_in_tool_loop(body: dict[str, Any]) -> str | None:
    mode = thinking_mode(body)
    messages = body["messages"]
    if mode is None or len(messages) < 2 or not blocks_of(messages[-1], "tool_result"):
        return None
    n = len(messages) - 2
    turn = messages[n]
    content = turn.get("content") if isinstance(turn.get("content"), list) else []
    first = content[0] if content and isinstance(content[0], dict) else {}
    if mode == "enabled" and first.get("type") not in THINKING_TYPES:
        return final_assistant_needs_thinking(n, first.get("type"))
    signed = [
        _signed_by_us(block)
        for block in content
        if isinstance(block, dict) and block.get("type") in THINKING_TYPES
    ]
    if not signed:
        return None
    places = [(fields["r"], fields["i"], fields["n"]) for fields in signed if fields]
    if not places:
        return None
    reply, _, count = places[0]
    if places != [(reply, i, count) for i in range(count)]:
        return (
            f"messages.{n}: the thinking and redacted_thinking blocks of an assistant turn that "
            "used tools must be passed back exactly as they were received, none left out"
        )
    return None


def image_blocks(body: dict[str, Any]) -> str | None:
    images = list(media_blocks(body, "image"))
    side_limit = MANY_IMAGES_SIDE if len(images) > MANY_IMAGES else MAX_IMAGE_SIDE
    for where, block in images:
        source = block.get("source")
        kind = source.get("type") if isinstance(source, dict) else None
        if kind in ("url", "file"):
            continue  # the real API fetches these; the fake never does
        if kind != "base64" or not isinstance(source, dict):
            return (
                f"{where}.image.source: Input tag {kind!r} found using 'type' does not match "
                "any of the expected tags: 'base64', 'url', 'file'"
            )
        if source.get("media_type") not in IMAGE_MEDIA_TYPES:
            return (
                f"{where}.image.source.base64.media_type: Input should be 'image/jpeg', "
                "'image/png', 'image/gif' or 'image/webp'"
            )
        data = source.get("data")
        raw = decoded(data)
        if raw is None:
            return f"{where}.image.source.base64.data: invalid base64 data"
        if len(data) > MAX_IMAGE_BASE64:
            return (
                f"{where}.image.source.base64: image exceeds 5 MB maximum: "
                f"{len(data)} bytes > {MAX_IMAGE_BASE64} bytes"
            )
        found = image_kind(raw)
        if found is None or found[0] != source["media_type"]:
            return (
                f"{where}.image.source.base64.data: Image does not match the provided media "
                f"type {source['media_type']}"
            )
        if max(found[1]) > side_limit:
            many = " for many-image requests" if side_limit == MANY_IMAGES_SIDE else ""
            return (
                f"{where}.image.source.base64.data: At least one of the image dimensions "
                f"exceed max allowed size{many}: {side_limit} pixels"
            )
    return None


def document_blocks(body: dict[str, Any]) -> str | None:
    for where, block in media_blocks(body, "document"):
        source = block.get("source")
        kind = source.get("type") if isinstance(source, dict) else None
        if kind == "text" and isinstance(source, dict):
            if source.get("media_type") != "text/plain":
                return f"{where}.document.source.text.media_type: Input should be 'text/plain'"
            continue
        if kind != "base64" or not isinstance(source, dict):
            if kind in ("url", "file", "content"):
                continue
            return (
                f"{where}.document.source: Input tag {kind!r} found using 'type' does not "
                "match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'"
            )
        if source.get("media_type") != "application/pdf":
            return f"{where}.document.source.base64.media_type: Input should be 'application/pdf'"
        raw = decoded(source.get("data"))
        if raw is None or not raw.startswith(b"%PDF-"):
            return f"{where}.pdf.source.base64.data: The PDF specified was not valid."
    return None


_SHARED_RULES: list[Rule] = [
    message_shape,
    role_order,
    non_empty_content,
    tool_pairs,
    unique_tool_use_ids,
    block_shapes,
    system_text,
    cache_breakpoints,
    request_rules.tools_defined,
    request_rules.tool_definitions,
    request_rules.tool_use_names,
    thinking_config,
    sampling_with_thinking,
    request_rules.tool_choice,
    request_rules.top_p_with_thinking,
    thinking_signatures,
    thinking_in_tool_loop,
    request_rules.prefill_with_thinking,
    image_blocks,
    document_blocks,
]
RULES: list[Rule] = [required_fields, *_SHARED_RULES, request_rules.model_limits]
COUNT_RULES: list[Rule] = [count_required_fields, *_SHARED_RULES]


def blocks_of(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The content blocks of ``kind`` in a message (none when its content is a string)."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == kind]


def marked_blocks(body: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    """Every block that may carry ``cache_control`` and whether it does."""
    system = body.get("system")
    blocks = [*body.get("tools", []), *(system if isinstance(system, list) else [])]
    for message in body.get("messages", []):
        if isinstance(message.get("content"), list):
            blocks.extend(message["content"])
    for block in blocks:
        yield block, isinstance(block, dict) and "cache_control" in block


def media_blocks(body: dict[str, Any], kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every block of ``kind`` with the path the API's messages name it by
    (``messages.0.content.2``, or inside a tool result ``...tool_result.content.0``)."""
    for n, message in enumerate(body.get("messages", [])):
        content = message.get("content")
        for m, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            where = f"messages.{n}.content.{m}"
            if block.get("type") == kind:
                yield where, block
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for i, item in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(item, dict) and item.get("type") == kind:
                    yield f"{where}.tool_result.content.{i}", item


def decoded(data: Any) -> bytes | None:
    """Strict base64 (what the API accepts), or None."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_kind(raw: bytes) -> tuple[str, tuple[int, int]] | None:
    """The media type the bytes really are and their size, read by Pillow, or None."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as image:
            media_type = _PIL_FORMATS.get(str(image.format))
            return (media_type, image.size) if media_type else None
    except (UnidentifiedImageError, OSError, ValueError):
        return None
