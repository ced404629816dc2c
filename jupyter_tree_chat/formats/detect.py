"""Which tool wrote a file, from its first records (``--format auto``).

JSON Lines are told apart by their records' fields: Claude Code's ``uuid`` and
``sessionId``, pi's header (``cwd``, no ``created``) and ``"type":"message"``
entries, this project's ``id``/``parentId``/``message`` nodes. A JSON document is a
ChatGPT export when its conversations have a ``mapping``, an Open WebUI export when its
chats have a ``history``.
"""

from __future__ import annotations

from typing import Any

import orjson

NATIVE = "tree-chat"
SCAN_BYTES = 1 << 20  # detect() reads no further: callers may pass just this head
_SCAN_LINES = 50
_CLAUDE_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "attachment",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "last-prompt",
    "ai-title",
    "custom-title",
    "permission-mode",
}
_PI_TYPES = {
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "session_info",
    "custom",
    "custom_message",
}


def detect(data: bytes) -> str | None:
    """ "claude-code", "pi", "chatgpt", "open-webui", "tree-chat" (this project's), or None."""
    head = data[:SCAN_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        return None
    lines = head.split(b"\n", _SCAN_LINES)[:_SCAN_LINES]
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            if line is lines[0] and head[:1] in (b"[", b"{"):
                return _document_kind(head)
            continue
        found = _record_kind(record)
        if found is not None:
            return found
    return None


def _record_kind(record: Any) -> str | None:
    if type(record) is list:
        return _record_kind(record[0]) if record else None
    if type(record) is not dict:
        return None
    if "mapping" in record:
        return "chatgpt"
    if type(record.get("history")) is dict or type(record.get("chat")) is dict:
        return "open-webui"
    kind = record.get("type")
    if kind == "session":
        return NATIVE if "created" in record and "cwd" not in record else "pi"
    if "uuid" in record or "parentUuid" in record or "sessionId" in record:
        return "claude-code"
    if kind == "label":
        return "pi" if "targetId" in record else NATIVE
    if kind in _PI_TYPES:
        return "pi"
    if kind in _CLAUDE_TYPES:
        return "claude-code"
    if kind == "leaf" or ("id" in record and "parentId" in record and "message" in record):
        return NATIVE
    return None


def _document_kind(head: bytes) -> str | None:
    """A JSON document's kind from its first megabyte (it may be cut mid-value)."""
    if b'"mapping"' in head:
        return "chatgpt"
    if b'"history"' in head and (b'"currentId"' in head or b'"messages"' in head):
        return "open-webui"
    return None
