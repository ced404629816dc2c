"""ChatGPT data exports: ``conversations.json``, a JSON array of conversations.

Each conversation keeps its whole tree in ``mapping`` (node id → ``{id, parent,
children, message}``) and its current leaf in ``current_node``. Node ids are the
tree's ids; each conversation gives its roots, labelled with its title. Roles:
``user`` and ``assistant`` are messages; an assistant message sent to a tool
(``recipient`` not ``"all"``) is a ``tool_use`` and the ``tool`` message answering it a
``tool_result``; ``system`` messages (and the custom instructions ChatGPT keeps as
``user_editable_context``) become the conversation's system prompt, in
``meta.system`` of its roots, which a continued conversation sends. Reasoning
(``thoughts``, ``reasoning_recap``) is kept as unsigned thinking, never sent as such;
parts that are not text (images, audio, ...) are kept as a named placeholder such as
``[image_asset_pointer file-service://...]``.
"""

from __future__ import annotations

from typing import Any

from ..i18n import _
from .builder import TreeBuilder
from .common import Entry, Source, number, obj, seconds, text_block, walk_mapping
from .exports import current, finish_conversation, read_exports

NAME = "chatgpt"
_SYSTEM_CONTENT = ("user_editable_context", "model_editable_context")
_TEXT_FIELDS = ("text", "result", "content", "summary")


def read(sources: list[Source], builder: TreeBuilder, *, conversation: str | None = None) -> None:
    def one(item: Any, index: int, file: str) -> tuple[str | None, float] | None:
        if type(item) is not dict or type(item.get("mapping")) is not dict:
            where = {"file": file, "key": f"conversation {index}"}
            builder.report(where, _("not a conversation (no mapping; ignored)"))
            return None
        conv_id = str(item.get("conversation_id") or item.get("id") or index)
        if conversation is not None and not _matches(conversation, conv_id, item):
            builder.counts["conversations not chosen"] += 1
            return None
        builder.counts["conversations"] += 1
        return _conversation(item, conv_id, file, builder), number(item.get("update_time"))

    read_exports(sources, builder, one)


def _matches(wanted: str, conv_id: str, item: dict[str, Any]) -> bool:
    return conv_id == wanted or conv_id.startswith(wanted) or item.get("title") == wanted


def _conversation(
    item: dict[str, Any], conv_id: str, file: str, builder: TreeBuilder
) -> str | None:
    mapping: dict[str, Any] = item["mapping"]
    system: list[str] = []
    roots: list[str] = []
    tool_calls: set[str] = set()  # assistant nodes that called a tool (their id is the call's)
    for node_id in walk_mapping(mapping, "parent", "children"):
        node = mapping[node_id]
        where = {
            "file": file,
            "conversation": conv_id,
            "key": f"conversation {conv_id!r} node {node_id!r}",
        }
        parent = node.get("parent") if type(node.get("parent")) is str else None
        message = node.get("message")
        entry = _entry(node_id, parent, message, where, system, tool_calls, builder)
        if not builder.add(entry):
            continue
        if entry.role is not None and builder.message_above(parent) is None:
            roots.append(node_id)
    where = {"file": file, "key": f"conversation {conv_id!r}"}
    finish_conversation(builder, roots, system, item.get("title"), where)
    return current(item.get("current_node"))


def _entry(
    node_id: str,
    parent: str | None,
    message: Any,
    where: dict[str, Any],
    system: list[str],
    tool_calls: set[str],
    builder: TreeBuilder,
) -> Entry:
    if type(message) is not dict:
        if message is not None:
            builder.report(where, _("message is not an object (bridged over)"))
        return Entry(node_id, parent, None, where)
    author = obj(message.get("author"))
    role = author.get("role")
    content = obj(message.get("content"))
    kind = content.get("content_type")
    if role == "system" or kind in _SYSTEM_CONTENT:
        text = _system_text(content)
        if text:
            system.append(text)
        builder.counts["system messages (in meta.system)"] += 1
        return Entry(node_id, parent, None, where)
    blocks = _blocks(content)
    meta: dict[str, Any] = {}
    metadata = obj(message.get("metadata"))
    if type(metadata.get("model_slug")) is str:
        meta["model"] = metadata["model_slug"]
    status = message.get("status")
    if status not in (None, "finished_successfully"):
        meta["status"] = status
        if status == "in_progress":
            meta["interrupted"] = True
    stamp = seconds(message.get("create_time"))
    if role == "assistant":
        recipient = message.get("recipient")
        if type(recipient) is str and recipient != "all":
            tool_calls.add(node_id)
            text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            key = "code" if kind == "code" else "text"
            blocks = [{"type": "tool_use", "id": node_id, "name": recipient, "input": {key: text}}]
        return Entry(node_id, parent, "assistant", where, blocks, meta or None, timestamp=stamp)
    if role == "tool":
        name = author.get("name") or "tool"
        meta["chatgpt_role"] = "tool"
        call = builder.message_above(parent)
        if call in tool_calls:
            result = {"type": "tool_result", "tool_use_id": call, "content": blocks}
            return Entry(node_id, parent, "user", where, [result], meta, timestamp=stamp)
        return Entry(
            node_id,
            parent,
            "user",
            where,
            [text_block(f"[{name} output]"), *blocks],
            meta,
            timestamp=stamp,
        )
    if role != "user":
        builder.report(
            where,
            _("author role {role} is not user, assistant, system or tool (kept as user)").format(
                role=repr(role)
            ),
        )
    return Entry(node_id, parent, "user", where, blocks, meta or None, timestamp=stamp)


def _blocks(content: dict[str, Any]) -> list[dict[str, Any]]:
    kind = content.get("content_type")
    if kind == "thoughts":
        found = []
        for thought in content.get("thoughts") or []:
            if type(thought) is dict:
                text = "\n\n".join(
                    str(thought[k]) for k in ("summary", "content") if thought.get(k)
                )
                found.append({"type": "thinking", "thinking": text, "signature": ""})
        return found
    if kind == "reasoning_recap":
        return [{"type": "thinking", "thinking": str(content.get("content", "")), "signature": ""}]
    parts = content.get("parts")
    if type(parts) is list:
        return [b for b in (_part(p) for p in parts) if b is not None]
    for key in _TEXT_FIELDS:
        if type(content.get(key)) is str and content[key]:
            return [text_block(content[key])]
    return [text_block(f"[{kind}]")] if kind else []


def _part(part: Any) -> dict[str, Any] | None:
    if type(part) is str:
        return text_block(part) if part else None
    if type(part) is not dict:
        return None
    if type(part.get("text")) is str and part["text"]:
        return text_block(part["text"])
    kind = part.get("content_type", "part")
    pointer = part.get("asset_pointer")
    return text_block(f"[{kind} {pointer}]" if type(pointer) is str else f"[{kind}]")


def _system_text(content: dict[str, Any]) -> str:
    pieces = []
    for key in ("user_profile", "user_instructions", "model_set_context"):
        if type(content.get(key)) is str and content[key].strip():
            pieces.append(content[key].strip())
    for block in _blocks(content):
        if (
            block.get("type") == "text"
            and block["text"].strip()
            and not block["text"].startswith("[")
        ):
            pieces.append(block["text"].strip())
    return "\n\n".join(pieces)
