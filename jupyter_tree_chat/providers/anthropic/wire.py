"""What the Messages API accepts of a stored path: the send-side rules, in one place.

A session file keeps messages as they were written (by this project, or by another tool
and imported); the API is stricter. ``api_messages`` copies a path into what it accepts
and never changes the stored messages:

- only ``role`` and ``content``; ``None``-valued block keys, ``cache_control`` and keys a
  block type does not have are left out; empty text blocks are left out;
- thinking blocks follow ``sends_thinking``, the one rule for them: signed ones go
  back exactly as they came, wherever they are on the path; one without its signature
  (a reply cut short mid-thinking, the offline model's, Claude Code's often, other
  providers' reasoning as imported) is left out: the API refuses it;
- a tool-use id that breaks ``^[a-zA-Z0-9_-]+$`` (pi keeps OpenAI's ``call_..|fc_..``)
  is sent as a stable id made from it, the same in its tool_use and its tool_result;
- a tool_use with no result in the next message gets one saying none was recorded; a
  tool_result answering no tool_use of the message before it is sent as text; results
  for one id are sent as one; tool results come first in their message;
- a message left empty says so in a text block (the API refuses empty content), except
  a final assistant message.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from ...history.tree import THINKING_TYPES

Message = dict[str, Any]
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
NO_RESULT = "(no result was recorded for this tool call)"
EMPTY = "(empty message)"
# The keys each block type has in a request (other keys are refused as "extra inputs").
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "citations"}),
    "image": frozenset({"type", "source"}),
    "document": frozenset({"type", "source", "title", "context", "citations"}),
    "search_result": frozenset({"type", "source", "title", "content", "citations"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
}
SERVER_BLOCK_TYPES = frozenset(
    {
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
    }
)


def api_tool_id(raw: Any) -> str:
    """A tool-use id the API accepts: the id itself, or a stable one made from it."""
    if isinstance(raw, str) and TOOL_USE_ID.fullmatch(raw):
        return raw
    text = str(raw)
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", text).strip("_")[:48]
    return f"{cleaned}_{digest}" if cleaned else f"toolu_{digest}"


def sends_thinking(block: dict[str, Any], role: Any) -> bool:
    """The one rule for a ``thinking`` or ``redacted_thinking`` block on a path sent back.

    Sent exactly as it came when it is in an assistant message and carries its proof
    (``thinking`` its signature, ``redacted_thinking`` its encrypted ``data``), wherever
    it is on the path. The Messages API requires that in an assistant turn that used
    tools while its tool loop goes on (the blocks unchanged, none left out,
    ``redacted_thinking`` included), and allows it for earlier turns (older models drop
    them from the context, newer ones read them if nothing before them changed), so
    sending every path as it was stored keeps both the rule and the prompt cache's
    prefix. A block without its proof cannot be sent at all (the API refuses it): it is
    left out.
    """
    proof = block.get("signature") if block.get("type") == "thinking" else block.get("data")
    return role == "assistant" and isinstance(proof, str) and bool(proof)


def api_messages(messages: Sequence[Message]) -> list[Message]:
    """The path as the API accepts it (see the module docstring); inputs are not changed."""
    sent = [_message(message) for message in messages]
    for index, message in enumerate(sent):
        if message["role"] == "user" and isinstance(message["content"], list):
            before = sent[index - 1] if index else None
            message["content"] = _answer(before, message["content"])
    for index in range(len(sent) - 1):
        uses = _tool_use_ids(sent[index])
        following = sent[index + 1]
        if uses and following["role"] == "user":
            answered = set(_result_ids(following))
            missing = [use for use in uses if use not in answered]
            if missing:
                content = following["content"]
                if isinstance(content, str):
                    content = [{"type": "text", "text": content}]
                kept = [b for b in content if not _is_empty_text(b)]
                following["content"] = [_no_result(use) for use in missing] + kept
    last = len(sent) - 1
    for index, message in enumerate(sent):
        if not message["content"] and not (index == last and message["role"] == "assistant"):
            message["content"] = [{"type": "text", "text": EMPTY}]
    return sent


def _message(message: Message) -> Message:
    role = message.get("role")
    content = message.get("content", "")
    if isinstance(content, list):
        blocks = [_block(block, role) for block in content]
        content = [block for block in blocks if block is not None]
    elif not isinstance(content, str):
        content = ""
    return {"role": role, "content": content}


def _block(block: Any, role: Any) -> dict[str, Any] | None:
    if isinstance(block, str):
        return {"type": "text", "text": block} if block else None
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        if not isinstance(block.get("text"), str) or not block["text"]:
            return None
    elif kind in THINKING_TYPES:
        if not sends_thinking(block, role):
            return None
    elif kind not in BLOCK_KEYS and kind not in SERVER_BLOCK_TYPES:
        return {"type": "text", "text": f"[{kind}]"}  # no such block in the API
    keys = BLOCK_KEYS.get(str(kind))
    sent = {
        key: value
        for key, value in block.items()
        if value is not None and key != "cache_control" and (keys is None or key in keys)
    }
    if kind == "tool_use":
        sent["id"] = api_tool_id(block.get("id"))
        if not isinstance(sent.get("input"), dict):
            sent["input"] = {}
    elif kind == "tool_result":
        sent["tool_use_id"] = api_tool_id(block.get("tool_use_id"))
        inner = sent.get("content")
        if isinstance(inner, list):
            sent["content"] = [b for b in (_block(item, role) for item in inner) if b is not None]
    return sent


def _answer(before: Message | None, content: list[Any]) -> list[Any]:
    """A user message's tool results: those answering ``before``'s tool uses first, one
    per id; any other result becomes text."""
    offered = set(_tool_use_ids(before)) if before is not None else set()
    results: dict[str, dict[str, Any]] = {}
    others: list[Any] = []
    for block in content:
        if block.get("type") != "tool_result":
            others.append(block)
            continue
        use = block["tool_use_id"]
        if use not in offered:
            others.append({"type": "text", "text": f"[tool result for {use}]\n{_text_of(block)}"})
        elif use in results:
            results[use] = _joined(results[use], block)
        else:
            results[use] = block
    return [*results.values(), *others]


def _joined(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    blocks = [*_result_blocks(first), *_result_blocks(second)]
    joined = {**first, "content": blocks}
    if second.get("is_error"):
        joined["is_error"] = True
    return joined


def _result_blocks(result: dict[str, Any]) -> list[Any]:
    inner = result.get("content")
    if isinstance(inner, str):
        return [{"type": "text", "text": inner}] if inner else []
    return list(inner) if isinstance(inner, list) else []


def _text_of(result: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in _result_blocks(result) if b.get("type") == "text")


def _no_result(use: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use, "content": NO_RESULT, "is_error": True}


def _tool_use_ids(message: Message) -> list[str]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [b["id"] for b in content if b.get("type") == "tool_use"]


def _result_ids(message: Message) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]


def _is_empty_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and not block.get("text")
