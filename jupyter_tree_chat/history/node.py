"""One stored message (``Node``), its body left as the file's bytes until first read.

A session of a million nodes must load at about the speed of parsing its lines, and a
view that shows twenty of them should not pay for decoding the rest. So the loader
decodes each line straight into a ``Node``, a msgspec Struct (not tracked by the cyclic
GC, so a million of them cost no collection time): the id, the parent, the role and the
timestamp are decoded; a list of content blocks stays as raw JSON views into the line
(``msgspec.Raw``), and so does ``meta``. ``node.message`` and ``node.meta`` decode them
the first time they are read and keep the result in their place, so nothing is held
twice. Nodes made in Python (``Node(id, parent_id, message, meta)``) hold dicts from
the start and behave the same.

Raw JSON is decoded with orjson, as the loader's fallback reads whole lines; a number
orjson cannot hold (``1e999``) is read by the standard library as infinity, as the
TypeScript reader's ``JSON.parse`` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
import orjson
from msgspec import UNSET, Raw

Message = dict[str, Any]
"""An Anthropic-shaped message: ``{"role": ..., "content": str | [blocks], ...}``."""


def decode_json(raw: bytes | Raw) -> Any:
    """A JSON value the loader has already checked, as Python objects."""
    data = memoryview(raw)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # 1e999: valid JSON, too large for orjson
        return json.loads(bytes(data))


_ABSENT: Any = UNSET


class RawBody(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    """A message as the loader reads it: role and timestamp decoded, block lists raw.

    Only what this project and the chapter write: a role, a content (a string or a
    list of blocks) and maybe a timestamp. Any other message (another key, no role, a
    number for content) makes the loader read that line whole, the slower way, and
    report what is odd about it.
    """

    role: Literal["user", "assistant"]
    content: str | tuple[Raw, ...]
    timestamp: Any = _ABSENT

    def decode(self) -> Message:
        content = self.content
        message: Message = {
            "role": self.role,
            "content": [decode_json(b) for b in content] if type(content) is tuple else content,
        }
        if self.timestamp is not UNSET:
            message["timestamp"] = self.timestamp
        return message


if TYPE_CHECKING:  # what callers see; the branch below is what the decoder reads
    _Id = str
    _MessageField = Message
    _MetaField = dict[str, Any] | None
    _Line = int | None
    _Kids = list[str] | None
else:
    _Id = Annotated[str, msgspec.Meta(min_length=1)]
    _MessageField = RawBody
    _MetaField = Raw  # checked to be an object (or null) by the loader
    _Line = None  # a file's own "line" or "kids" key fails decoding: the line is read
    _Kids = None  # whole, by the slower path, and such keys never reach the tree


class Node(
    msgspec.Struct,
    gc=False,
    rename={"parent_id": "parentId", "_message": "message", "_meta": "meta", "_type": "type"},
):
    """One stored message: who it is, who its parent is, what was said, and metadata.

    ``meta`` holds what is never sent to the model (model name, usage, cell id, ...).
    ``line`` is the 1-based line of the session file it was loaded from (None if made
    here); ``kids`` are the ids of its children, kept by the one tree that holds it.
    """

    id: _Id
    parent_id: str | None
    _message: _MessageField
    _meta: _MetaField = None
    line: _Line = None
    kids: _Kids = None
    _type: None = None  # a typed record (leaf, label, header) is read by the slow path

    @property
    def message(self) -> Message:
        message: Any = self._message  # a dict, or a RawBody until first read
        if type(message) is not dict:
            message = message.decode()
            self._message = message
        return message

    @message.setter
    def message(self, value: Message) -> None:
        self._message = value

    @property
    def meta(self) -> dict[str, Any] | None:
        meta = self._meta
        if type(meta) is Raw:
            decoded = decode_json(meta)
            meta = decoded if type(decoded) is dict else None
            self._meta = meta
        return meta

    @meta.setter
    def meta(self, value: dict[str, Any] | None) -> None:
        self._meta = value

    @property
    def role(self) -> str:
        """The message's role, read without decoding the message body."""
        message: Any = self._message
        if type(message) is dict:
            return str(message.get("role", ""))
        return message.role

    @property
    def text(self) -> str:
        return message_text(self.message)

    def held_content(self) -> Any:
        """The message's content as the node holds it, decoding nothing: a string, a tuple
        of raw JSON blocks (``msgspec.Raw``) until the message is first read, or the
        decoded value. For a reader that needs a few fields of every block of a whole
        session (share/find.py) without decoding, and keeping, every message."""
        message: Any = self._message
        return message.get("content") if type(message) is dict else message.content

    def to_record(self) -> dict[str, Any]:
        """The node as one line of the session file (the chapter's shape, plus meta)."""
        record: dict[str, Any] = {
            "id": self.id,
            "parentId": self.parent_id,
            "message": self.message,
        }
        if self.meta:
            record["meta"] = self.meta
        return record

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and self.to_record() == other.to_record()

    __hash__ = None  # type: ignore[assignment]  # mutable content, compared by value

    def __repr__(self) -> str:
        return f"Node({self.id!r}, parent={self.parent_id!r}, role={self.role!r})"


def message_text(message: Mapping[str, Any]) -> str:
    """The plain text of a message: a string content, or its text blocks joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "".join(p for p in parts if isinstance(p, str))
    return ""
