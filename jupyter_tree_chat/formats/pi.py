"""pi coding agent sessions (badlogic/pi-mono, ``packages/coding-agent/docs/session.md``).

A header (``{"type":"session","version":3,...}``), then entries linked by ``id`` /
``parentId`` (8 hex characters). Messages carry pi's own shapes, turned here into the
Messages API's: ``toolCall`` blocks become ``tool_use``, ``toolResult`` messages become
user ``tool_result`` messages, images become base64 image blocks, and
``bashExecution``, ``custom`` and summary messages become user text as pi sends them
(``convertToLlm``). ``compaction`` and ``branch_summary`` entries become user nodes
holding pi's summary text; ``label`` entries become labels (the last per target wins,
an absent label clears); the other entries (model and thinking-level changes, session
info, extension state) are bridged over. Version 1 files have no ids: entries are
chained in order, as pi's own migration does, with ids from the header's id and the
line. The current leaf is the last entry in the file, as pi loads it.
"""

from __future__ import annotations

from typing import Any

from ..i18n import _
from .builder import TreeBuilder
from .common import Entry, Source, iso_seconds, seconds, text_block
from .lines import json_lines

NAME = "pi"
COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}
_USAGE = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cacheRead": "cache_read_input_tokens",
    "cacheWrite": "cache_creation_input_tokens",
}


def read(sources: list[Source], builder: TreeBuilder) -> None:
    for source in sources:
        _read_file(source, builder, builder.header)


def _read_file(source: Source, builder: TreeBuilder, header: dict[str, Any]) -> None:
    name = source.name

    def report(line: int | None, message: str) -> None:
        builder.report({"file": name, "line": line}, message)

    version = 1
    chain_prefix = name
    previous: str | None = None  # v1: the entry before, which the next one hangs under
    by_index: list[str | None] = []  # v1: entry ids by position, header at 0
    last: str | None = None
    seen_line, on_line = 0, 0  # v1 ids come from the line; glued records share one
    for number, record in json_lines(source.data, report):
        on_line = on_line + 1 if number == seen_line else 0
        seen_line = number
        if type(record) is not dict:
            report(number, _("JSON but not a record (ignored)"))
            continue
        kind = record.get("type")
        where = {"file": name, "line": number}
        if kind == "session":
            found_version = record.get("version")
            version = found_version if type(found_version) is int else 1
            if type(record.get("id")) is str:
                chain_prefix = record["id"][:8]
            header.setdefault("sessions", []).append(record.get("id"))
            if type(record.get("cwd")) is str:
                header["cwd"] = record["cwd"]
            by_index.append(None)
            continue
        if version < 2:
            entry_id = f"{chain_prefix}-{number}" + (f".{on_line}" if on_line else "")
            parent = previous
        else:
            found_id, found_parent = record.get("id"), record.get("parentId")
            if type(found_id) is not str or not found_id:
                report(number, _("a {kind} entry without an id (skipped)").format(kind=kind))
                continue
            entry_id = found_id
            parent = found_parent if type(found_parent) is str else None
        by_index.append(entry_id)
        entry = _entry(record, kind, entry_id, parent, where, builder, report, by_index)
        if builder.add(entry):
            previous = last = entry_id
    if last is not None:
        builder.prefer_leaf(last)


def _entry(
    record: dict[str, Any],
    kind: Any,
    entry_id: str,
    parent: str | None,
    where: dict[str, Any],
    builder: TreeBuilder,
    report: Any,
    by_index: list[str | None],
) -> Entry:
    stamp = iso_seconds(record.get("timestamp"))
    if kind == "message":
        message = record.get("message")
        if type(message) is not dict:
            report(
                where["line"],
                _("message entry {id} has no message object (bridged over)").format(
                    id=repr(entry_id)
                ),
            )
            return Entry(entry_id, parent, None, where)
        return _message(message, entry_id, parent, where, stamp, report)
    if kind == "compaction":
        meta = {"pi": "compaction", "tokens_before": record.get("tokensBefore")}
        kept = record.get("firstKeptEntryId")
        index = record.get("firstKeptEntryIndex")
        if kept is None and type(index) is int and 0 <= index < len(by_index):
            kept = by_index[index]
        meta["first_kept"] = kept
        text = COMPACTION_PREFIX + _text(record.get("summary")) + COMPACTION_SUFFIX
        return Entry(entry_id, parent, "user", where, [text_block(text)], meta, timestamp=stamp)
    if kind == "branch_summary":
        meta = {"pi": "branch_summary", "from": record.get("fromId")}
        text = BRANCH_PREFIX + _text(record.get("summary")) + BRANCH_SUFFIX
        return Entry(entry_id, parent, "user", where, [text_block(text)], meta, timestamp=stamp)
    if kind == "custom_message":
        meta = {"pi": "custom_message", "custom_type": record.get("customType")}
        return Entry(entry_id, parent, "user", where, _user_content(record.get("content")), meta)
    if kind == "label":
        target = record.get("targetId")
        if type(target) is str:
            label = record.get("label")
            builder.label(target, label if type(label) is str else None, where)
        else:
            report(where["line"], _("label entry without a targetId (ignored)"))
    elif kind == "session_info" and type(record.get("name")) is str:
        builder.header["title"] = record["name"]
    builder.counts["non-message records"] += 1
    return Entry(entry_id, parent, None, where)


def _message(
    message: dict[str, Any],
    entry_id: str,
    parent: str | None,
    where: dict[str, Any],
    stamp: int | None,
    report: Any,
) -> Entry:
    role = message.get("role")
    stamp = seconds(message.get("timestamp")) or stamp

    def node(role: str, content: Any, meta: dict[str, Any] | None = None) -> Entry:
        return Entry(entry_id, parent, role, where, content, meta, timestamp=stamp)

    if role == "user":
        return node("user", _user_content(message.get("content")))
    if role == "assistant":
        return node("assistant", *_assistant(message))
    if role == "toolResult":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": str(message.get("toolCallId", "")),
            "content": _blocks(message.get("content")),
        }
        if message.get("isError") is True:
            result["is_error"] = True
        return node("user", [result], {"pi": "toolResult", "tool_name": message.get("toolName")})
    if role == "bashExecution":
        meta: dict[str, Any] = {"pi": "bashExecution"}
        if message.get("excludeFromContext") is True:
            meta["exclude_from_context"] = True
        return node("user", [text_block(_bash_text(message))], meta)
    if role in ("custom", "hookMessage"):
        custom = {"pi": "custom", "custom_type": message.get("customType")}
        return node("user", _user_content(message.get("content")), custom)
    if role in ("branchSummary", "compactionSummary"):
        prefix, suffix = (
            (BRANCH_PREFIX, BRANCH_SUFFIX)
            if role == "branchSummary"
            else (COMPACTION_PREFIX, COMPACTION_SUFFIX)
        )
        return node(
            "user", [text_block(prefix + _text(message.get("summary")) + suffix)], {"pi": role}
        )
    why = _("message {id} has role {role}, which pi does not write (bridged over)").format(
        id=repr(entry_id), role=repr(role)
    )
    report(where["line"], why)
    return Entry(entry_id, parent, None, where)


def _assistant(message: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    anthropic = message.get("api") == "anthropic-messages" or message.get("provider") == "anthropic"
    content: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "toolCall":
            arguments = block.get("arguments")
            content.append(
                {
                    "type": "tool_use",
                    "id": str(block.get("id", "")),
                    "name": str(block.get("name", "")),
                    "input": arguments if type(arguments) is dict else {},
                }
            )
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            signed = anthropic and type(signature) is str
            if signed and block.get("redacted") is True:
                content.append({"type": "redacted_thinking", "data": signature})
            else:  # another provider's reasoning: kept, never sent as thinking
                text = _text(block.get("thinking"))
                content.append(
                    {"type": "thinking", "thinking": text, "signature": signature if signed else ""}
                )
        else:
            content.append(_block(block))
    meta: dict[str, Any] = {"provider": message.get("provider"), "model": message.get("model")}
    usage = message.get("usage")
    if type(usage) is dict:
        meta["usage"] = {
            ours: usage[theirs] for theirs, ours in _USAGE.items() if type(usage.get(theirs)) is int
        }
    reason = message.get("stopReason")
    meta["stop_reason"] = _STOP_REASONS.get(reason, reason) if type(reason) is str else None
    if reason in ("error", "aborted"):
        meta["interrupted"] = True
        meta["error"] = message.get("errorMessage") or reason
    return content, {k: v for k, v in meta.items() if v is not None}


def _user_content(content: Any) -> Any:
    return content if type(content) is str else _blocks(content)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if type(content) is str:
        return [text_block(content)] if content else []
    return [_block(b) for b in content or [] if type(b) is dict] if type(content) is list else []


def _block(block: dict[str, Any]) -> dict[str, Any]:
    """pi's image block as the API's; any other block as written."""
    if block.get("type") == "image" and "data" in block and "source" not in block:
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": block.get("mimeType"),
                "data": block.get("data"),
            },
        }
    return block


def _bash_text(message: dict[str, Any]) -> str:
    """What pi sends for a command the user ran (``bashExecutionToText``)."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif type(code) is int and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _text(value: Any) -> str:
    return value if type(value) is str else ""
