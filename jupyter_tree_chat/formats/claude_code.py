"""Claude Code sessions: ``~/.claude/projects/<project>/<session>.jsonl`` and its agents.

One JSON record a line, linked by ``uuid``/``parentUuid``. Only ``user`` and
``assistant`` records are messages; ``system``, ``attachment``, ``progress`` and the
other records with a ``uuid`` sit in the parent chain and are bridged over; records
without one (``summary``, ``last-prompt``, ``file-history-snapshot``, ...) are not in
the chain. One API response is written as several assistant records, one content block
each, sharing ``message.id``: that id is the entry's group, joined by the builder.

Several files of one session go into one tree: a resumed session repeats earlier
records (same ``uuid``, taken once), subagent runs live in ``agent-*.jsonl`` files (or
inline, ``isSidechain``) and become roots of their own marked ``meta.sidechain``. The
current leaf is the newest ``last-prompt`` or ``summary`` ``leafUuid`` in the tree,
else the last message of the main conversation. ``/compact`` starts a new root (its
boundary record has no parent) whose ``meta.compacted_from`` names the node it
continues, as this project's own compaction does.
"""

from __future__ import annotations

import re
from typing import Any

from .builder import TreeBuilder
from .common import ROLES, Entry, Source, iso_seconds
from .lines import json_lines

NAME = "claude-code"
_FIRST_STAMP = re.compile(rb'"timestamp"\s*:\s*"([^"]+)"')
TITLE_TYPES = ("summary", "ai-title", "custom-title")
_ASSISTANT_META = ("model", "usage", "stop_reason")


def file_order(source: Source) -> tuple[bool, bytes, str]:
    """Main session files first, oldest first (by their first timestamp), then agents."""
    found = _FIRST_STAMP.search(source.data, 0, 65536)
    is_agent = source.name.startswith("agent-")
    return is_agent, found.group(1) if found else b"", source.name


def read(sources: list[Source], builder: TreeBuilder, *, sidechains: bool = True) -> None:
    """Feed every record of ``sources`` to ``builder``, main files first, oldest first."""
    sessions: dict[str, None] = {}
    titles: list[str] = []
    for source in sorted(sources, key=file_order):
        _read_file(source, builder, sidechains, sessions, titles)
    builder.header["sessions"] = list(sessions)
    if titles:
        builder.header["title"] = titles[-1]


def _read_file(
    source: Source,
    builder: TreeBuilder,
    sidechains: bool,
    sessions: dict[str, None],
    titles: list[str],
) -> None:
    name = source.name
    add = builder.add
    counts = builder.counts
    boundaries: dict[str, str] = {}  # a /compact boundary's uuid → the leaf it continues

    def report(line: int | None, message: str) -> None:
        builder.report({"file": name, "line": line}, message)

    for number, record in json_lines(source.data, report):
        if type(record) is not dict:
            report(number, "JSON but not a record (ignored)")
            continue
        kind = record.get("type")
        uuid = record.get("uuid")
        if kind == "user" or kind == "assistant":
            if record.get("isSidechain") is True and not sidechains:
                counts["sidechain records"] += 1
                continue
            entry = _message_entry(record, kind, uuid, name, number, report)
            if entry is not None:
                if entry.parent in boundaries and entry.role is not None:
                    entry.meta = {**(entry.meta or {}), "compacted_from": boundaries[entry.parent]}
                add(entry)
                session = record.get("sessionId")
                if type(session) is str:
                    sessions[session] = None
            continue
        if type(uuid) is str and uuid:
            if record.get("isSidechain") is True and not sidechains:
                continue
            add(Entry(uuid, _parent(record), None, {"file": name, "line": number}))
            counts["non-message records"] += 1
            logical = record.get("logicalParentUuid")
            if record.get("subtype") == "compact_boundary" and type(logical) is str:
                boundaries[uuid] = logical
            continue
        counts["non-message records"] += 1
        leaf = record.get("leafUuid")
        if (kind == "last-prompt" or kind == "summary") and type(leaf) is str:
            builder.prefer_leaf(leaf)
        if kind in TITLE_TYPES:
            title = record.get("summary") or record.get("aiTitle") or record.get("customTitle")
            if isinstance(title, str) and title:
                titles.append(title)


def _parent(record: dict[str, Any]) -> str | None:
    parent = record.get("parentUuid")
    return parent if type(parent) is str and parent else None


def _message_entry(
    record: dict[str, Any], kind: str, uuid: Any, name: str, number: int, report: Any
) -> Entry | None:
    where = {"file": name, "line": number}
    if type(uuid) is not str or not uuid:
        report(number, f"a {kind} record without a uuid (skipped)")
        return None
    message = record.get("message")
    if type(message) is not dict:
        report(number, f"{kind} record {uuid!r} has no message object (bridged over)")
        return Entry(uuid, _parent(record), None, where, damaged=True)
    role = message.get("role")
    if role not in ROLES:
        role = kind
    content = message.get("content")
    damaged = type(content) is not str and type(content) is not list
    if damaged:
        report(number, f"{kind} record {uuid!r} has no content (imported as empty)")
        content = ""
    meta: dict[str, Any] = {}
    group = None
    if kind == "assistant":
        group = message.get("id") if type(message.get("id")) is str else None
        for key in _ASSISTANT_META:
            value = message.get(key)
            if value is not None:
                meta[key] = value
        if record.get("isApiErrorMessage"):
            meta["error"] = "api_error"
    if record.get("isSidechain") is True:
        meta["sidechain"] = record.get("agentId") or True
    if record.get("isMeta") is True:
        meta["cli_meta"] = True  # the CLI's own bookkeeping, not a typed prompt
    if record.get("isCompactSummary") is True:
        meta["compact_summary"] = True
    stamp = record.get("timestamp")
    return Entry(
        uuid,
        _parent(record),
        role,
        where,
        content,
        meta or None,
        group,
        stamp,
        iso_seconds(stamp),
        damaged,
    )
