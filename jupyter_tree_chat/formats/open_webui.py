"""Open WebUI chat exports (Settings → Chats → Export, or one chat's JSON download).

A JSON array of chats. Each is ``{id, title, chat: {history: {messages, currentId},
...}, updated_at, ...}`` (older exports hold the ``chat`` object itself).
``history.messages`` maps a message id to ``{id, parentId, childrenIds, role,
content, model, timestamp, ...}``; ``currentId`` is the current leaf. Several models
answering one question are sibling answers. Message ids are the tree's ids, each chat
gives its roots (labelled with its title), ``system`` messages (and the chat's
``params.system``) become ``meta.system`` of its roots, and an answer's ``error``
is kept in ``meta.error``.
"""

from __future__ import annotations

from typing import Any

from ..i18n import _
from .builder import TreeBuilder
from .common import Entry, Source, number, obj, seconds, walk_mapping
from .exports import current, finish_conversation, read_exports

NAME = "open-webui"


def read(sources: list[Source], builder: TreeBuilder, *, conversation: str | None = None) -> None:
    def one(value: Any, index: int, file: str) -> tuple[str | None, float] | None:
        item = obj(value)
        chat = obj(item.get("chat")) or item
        history = obj(chat.get("history"))
        if type(history.get("messages")) is not dict:
            builder.report(
                {"file": file, "key": f"chat {index}"},
                _("not a chat (no history.messages; ignored)"),
            )
            return None
        chat_id = str(item.get("id") or chat.get("id") or index)
        title = item.get("title") or chat.get("title")
        if conversation is not None and not (
            chat_id.startswith(conversation) or title == conversation
        ):
            builder.counts["chats not chosen"] += 1
            return None
        builder.counts["chats"] += 1
        return _chat(chat, history, chat_id, title, file, builder), number(item.get("updated_at"))

    read_exports(sources, builder, one)


def _chat(
    chat: dict[str, Any],
    history: dict[str, Any],
    chat_id: str,
    title: Any,
    file: str,
    builder: TreeBuilder,
) -> str | None:
    messages: dict[str, Any] = history["messages"]
    params = obj(chat.get("params"))
    system = [params["system"]] if type(params.get("system")) is str and params["system"] else []
    roots: list[str] = []
    for message_id in walk_mapping(messages, "parentId", "childrenIds"):
        message = messages[message_id]
        where = {"file": file, "chat": chat_id, "key": f"chat {chat_id!r} message {message_id!r}"}
        parent = message.get("parentId") if type(message.get("parentId")) is str else None
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            if type(content) is str and content:
                system.append(content)
            builder.add(Entry(message_id, parent, None, where))
            continue
        if role not in ("user", "assistant"):
            why = _("role {role} is not user, assistant or system (kept as user)")
            builder.report(where, why.format(role=repr(role)))
            role = "user"
        if type(content) is not str and type(content) is not list:
            builder.report(where, _("message has no content (imported as empty)"))
            content = ""
        meta: dict[str, Any] = {}
        for key in ("model", "modelName"):
            if type(message.get(key)) is str:
                meta["model" if key == "model" else "model_name"] = message[key]
        if message.get("error"):
            meta["error"] = message["error"]
        if message.get("done") is False:
            meta["interrupted"] = True
        entry = Entry(
            message_id,
            parent,
            role,
            where,
            content,
            meta or None,
            timestamp=seconds(message.get("timestamp")),
        )
        if builder.add(entry) and builder.message_above(parent) is None:
            roots.append(message_id)
    finish_conversation(builder, roots, system, title, {"file": file, "key": f"chat {chat_id!r}"})
    return current(history.get("currentId"))
