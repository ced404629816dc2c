"""Which tool wrote a file, from its first records (``--format auto``).

JSON Lines are told apart by their records' fields: Claude Code's ``uuid`` and
``sessionId``, pi's header and ``"type":"message"`` entries, this project's header and
``id``/``parentId``/``message`` nodes. A ``session`` header is this project's when it
carries this project's own field, an integer ``created`` (``store.header_record`` always
writes one; pi's header has a ``timestamp`` string instead), whatever else it holds: an
imported session's header keeps what the source's said (a pi session's ``cwd``), and it
must still read as this project's file, not as the tool it came from. A JSON document is a
ChatGPT export when its conversations have a ``mapping``, an Open WebUI export when its
chats have a ``history``.
"""

from __future__ import annotations

from typing import Any

import orjson

NATIVE = "tree-chat"
#: what each format (by the name ``--format`` takes) is called in messages; the readers'
#: ``NAME``s are these (tests/formats/test_formats.py holds them together)
LABELS = {
    "claude-code": "Claude Code",
    "pi": "pi",
    "chatgpt": "ChatGPT",
    "open-webui": "Open WebUI",
    NATIVE: "jupyter-tree-chat",
}
FORMATS = tuple(name for name in LABELS if name != NATIVE)
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
        return NATIVE if _is_own_header(record) else "pi"
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


def _is_own_header(record: dict[str, Any]) -> bool:
    """This project's header (``{"type":"session","version":1,"created":...}``), decided by
    its own ``created`` field, not by the absence of another tool's."""
    return type(record.get("created")) is int


def _document_kind(head: bytes) -> str | None:
    """A JSON document's kind from its first megabyte (it may be cut mid-value)."""
    if b'"mapping"' in head:
        return "chatgpt"
    if b'"history"' in head and (b'"currentId"' in head or b'"messages"' in head):
        return "open-webui"
    return None
