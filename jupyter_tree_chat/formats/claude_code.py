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
from collections.abc import Iterator
from typing import Any

import msgspec

from ..i18n import _
from .builder import TreeBuilder
from .common import ROLES, Entry, RawBlocks, Source, iso_seconds
from .lines import recover, split_lines

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


class _Message(msgspec.Struct, gc=False):
    """The parts of an API message the import looks at; its content stays raw JSON."""

    role: Any = None
    id: Any = None
    model: Any = None
    stop_reason: Any = None
    usage: Any = None
    content: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _Record(msgspec.Struct, gc=False):
    """The fields of a Claude Code record the import reads (the rest is skipped unread)."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None  # Claude Code's field names
    isSidechain: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isApiErrorMessage: Any = None
    agentId: Any = None
    sessionId: Any = None
    timestamp: Any = None
    subtype: Any = None
    logicalParentUuid: Any = None
    leafUuid: Any = None
    summary: Any = None
    aiTitle: Any = None
    customTitle: Any = None
    message: _Message | msgspec.UnsetType = msgspec.UNSET


class _LooseRecord(_Record, gc=False):
    """A record whose ``message`` is not an object (damage): read, then reported."""

    message: Any = msgspec.UNSET


_record_of = msgspec.json.Decoder(_Record).decode
_loose_record_of = msgspec.json.Decoder(_LooseRecord).decode
_message_of = msgspec.json.Decoder(_Message).decode
_Raw = msgspec.Raw


def _records(data: bytes, report: Any) -> Iterator[tuple[int, _Record | None]]:
    """``(line, record)`` for each line; ``None`` for JSON that is not a record.

    Each line is decoded straight into ``_Record`` (content kept raw); a line msgspec
    refuses goes through the tolerant reader (lone surrogates, glued records, damage).
    """
    lines, last = split_lines(data, report)
    decode_error = msgspec.DecodeError
    for number, line in enumerate(lines, 1):
        try:
            record: _Record = _record_of(line)
        except decode_error:
            try:
                record = _loose_record_of(line)
            except decode_error:
                for value in recover(line, number, number == last, report):
                    is_record = type(value) is dict
                    yield number, msgspec.convert(value, _LooseRecord) if is_record else None
                continue
        if not line.isascii():  # raw values are not checked for UTF-8 by the decoder
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                report(number, _("not valid UTF-8 (ignored)"))
                continue
        yield number, record


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
    held: Entry | None = None  # the assistant message being read, one record per block
    tail = ""  # the uuid of its last record
    group: Any = None  # its message.id
    parts: list[msgspec.Raw] = []  # its blocks, raw
    merged: list[dict[str, Any]] | None = None  # the records joined into it (meta.merged)
    held_meta: dict[str, Any] = {}
    alias = builder.alias
    joined = 0

    def report(line: int | None, message: str) -> None:
        builder.report({"file": name, "line": line}, message)

    for number, record in _records(source.data, report):
        if record is None:
            report(number, _("JSON but not a record (ignored)"))
            continue
        kind = record.type
        uuid = record.uuid
        if kind == "user" or kind == "assistant":
            if record.isSidechain is True and not sidechains:
                counts["sidechain records"] += 1
                continue
            message = record.message if type(record.message) is _Message else _message(record)
            if (
                held is not None
                and record.parentUuid == tail
                and message is not None
                and message.id == group
                and type(message.content) is _Raw
                and memoryview(message.content)[:1] == b"["
                and not builder.has(uuid)
            ):  # the next block of the message just read: joined here, the common case
                parts.append(message.content)
                if merged is None:
                    merged = held_meta.setdefault("merged", [])
                merged.append({"id": uuid, "file": name, "line": number})
                joined += 1
                if message.usage is not None:  # the last record's are the final ones
                    held_meta["usage"] = message.usage
                if message.stop_reason is not None:
                    held_meta["stop_reason"] = message.stop_reason
                alias(uuid, held.id)
                tail = uuid
                continue
            entry = _message_entry(record, message, kind, uuid, name, number, report)
            if entry is None:
                continue
            session = record.sessionId
            if type(session) is str:
                sessions[session] = None
            if entry.parent in boundaries and entry.role is not None:
                entry.meta = {**(entry.meta or {}), "compacted_from": boundaries[entry.parent]}
            held, tail = None, ""
            content = entry.content
            if (
                add(entry)
                and entry.group is not None
                and type(content) is _Raw
                and memoryview(content)[:1] == b"["
            ):  # an assistant message later records may add blocks to
                held, tail, group = entry, entry.id, entry.group
                blocks = RawBlocks(content)
                entry.content, parts = blocks, blocks.parts
                held_meta = entry.meta if entry.meta is not None else {}
                entry.meta = held_meta
                merged = None
            continue
        if type(uuid) is str and uuid:
            if record.isSidechain is True and not sidechains:
                continue
            add(Entry(uuid, _parent(record), None, {"file": name, "line": number}))
            counts["non-message records"] += 1
            logical = record.logicalParentUuid
            if record.subtype == "compact_boundary" and type(logical) is str:
                boundaries[uuid] = logical
            continue
        counts["non-message records"] += 1
        leaf = record.leafUuid
        if (kind == "last-prompt" or kind == "summary") and type(leaf) is str:
            builder.prefer_leaf(leaf)
        if kind in TITLE_TYPES:
            title = record.summary or record.aiTitle or record.customTitle
            if isinstance(title, str) and title:
                titles.append(title)
    counts["split assistant records"] += joined


def _message(record: _Record) -> _Message | None:
    """The record's API message, or None when it has none (or not an object)."""
    message = record.message
    if type(message) is _Message:
        return message
    if type(message) is dict:  # read by the tolerant reader: its content as raw JSON too
        try:
            return _message_of(msgspec.json.encode(message))
        except (msgspec.DecodeError, msgspec.EncodeError):
            return None
    return None


def _parent(record: _Record) -> str | None:
    parent = record.parentUuid
    return parent if type(parent) is str and parent else None


def _message_entry(
    record: _Record,
    message: _Message | None,
    kind: str,
    uuid: Any,
    name: str,
    number: int,
    report: Any,
) -> Entry | None:
    where = {"file": name, "line": number}
    if type(uuid) is not str or not uuid:
        report(number, _("a {kind} record without a uuid (skipped)").format(kind=kind))
        return None
    if message is None:
        why = _("{kind} record {uuid} has no message object (bridged over)")
        report(number, why.format(kind=kind, uuid=repr(uuid)))
        return Entry(uuid, _parent(record), None, where, damaged=True)
    role = message.role
    if role not in ROLES:
        role = kind
    content: Any = message.content
    start = memoryview(content)[:1] if type(content) is _Raw else b""
    damaged = start != b"[" and start != b'"'
    if damaged:
        why = _("{kind} record {uuid} has no content (imported as empty)")
        report(number, why.format(kind=kind, uuid=repr(uuid)))
        content = ""
    meta: dict[str, Any] = {}
    group = None
    if kind == "assistant":
        group = message.id if type(message.id) is str else None
        for key in _ASSISTANT_META:
            value = getattr(message, key)
            if value is not None:
                meta[key] = value
        if record.isApiErrorMessage:
            meta["error"] = "api_error"
    if record.isSidechain is True:
        meta["sidechain"] = record.agentId or True
    if record.isMeta is True:
        meta["cli_meta"] = True  # the CLI's own bookkeeping, not a typed prompt
    if record.isCompactSummary is True:
        meta["compact_summary"] = True
    stamp = record.timestamp
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
