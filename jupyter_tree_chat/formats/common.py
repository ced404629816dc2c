"""The vocabulary readers and the builder share: a source, an entry, a problem, small helpers.

Kept apart so each reader imports only what it needs and none imports another.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from ..i18n import _

ROLES = ("user", "assistant")
_decode = msgspec.json.decode


@dataclass(frozen=True)
class Source:
    """A source file's name (as reports show it) and its bytes, read once, never written."""

    name: str
    data: bytes

    @classmethod
    def of(cls, path: str | os.PathLike[str], data: bytes) -> Source:
        return cls(Path(path).name, data)


@dataclass(frozen=True)
class SourceProblem:
    """Something wrong in a source file: where (a line, or a key in a JSON export), what."""

    file: str
    message: str
    line: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        if self.line is not None:
            where = _("{file} line {line}: {problem}")
            return where.format(file=self.file, line=self.line, problem=self.message)
        if self.key is not None:
            where = _("{file}, {key}: {problem}")
            return where.format(file=self.file, key=self.key, problem=self.message)

        return f"{self.file}: {self.message}"


@dataclass(eq=False, slots=True)
class Entry:
    """One record of a source, as a reader hands it over.

    ``source`` is where it came from (``file`` and ``line``, or ``file`` and ``key``
    plus what the format needs); it becomes ``meta.source`` and locates problems.
    """

    id: str
    parent: str | None
    role: str | None  # "user" | "assistant" | None: not a message, bridged over
    source: dict[str, Any]
    content: Any = ""
    meta: dict[str, Any] | None = None
    group: str | None = None  # records of one API message share it
    stamp: Any = None  # siblings with one stamp and one message are replays
    timestamp: int | None = None
    damaged: bool = False  # read from a record missing a part: a later good copy wins


class RawBlocks:
    """The content blocks of one message, kept as the source's JSON (``msgspec.Raw``).

    A big Claude Code session is mostly content that the import copies unchanged: kept
    raw, it is neither turned into Python objects nor encoded again. The records of one
    API message are joined here as parts, written as one JSON array.
    """

    __slots__ = ("parts",)

    def __init__(self, *parts: msgspec.Raw) -> None:
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return type(other) is RawBlocks and self.parts == other.parts

    __hash__ = None  # type: ignore[assignment]

    def raw(self) -> list[msgspec.Raw]:
        """The blocks as one list to encode: each part's elements, raw, no copy made."""
        pieces: list[msgspec.Raw] = []
        for part in self.parts:
            inner = memoryview(part)[1:-1]  # a raw value has no whitespace around it
            if len(inner) > 8 or bytes(inner).strip():
                pieces.append(msgspec.Raw(inner))
        return pieces

    def decoded(self) -> list[Any]:
        found: list[Any] = []
        for part in self.parts:
            found.extend(_decode(part))
        return found


def is_raw_list(content: Any) -> bool:
    """Raw JSON content that is an array (a list of blocks)."""
    if type(content) is RawBlocks:
        return True
    return type(content) is msgspec.Raw and memoryview(content)[:1] == b"["


def as_python(content: Any) -> Any:
    """Content as Python values (raw JSON decoded; anything else as it is)."""
    if type(content) is msgspec.Raw:
        return _decode(content)
    if type(content) is RawBlocks:
        return content.decoded()
    return content


def blocks_of(content: Any) -> list[Any]:
    """Content as a new list of blocks: a string is one text block ("" is none)."""
    content = as_python(content)
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return list(content)
    return []


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a source's field of the wrong kind)."""
    return value if type(value) is dict else {}


def number(value: Any) -> float:
    """``value`` if it is a number (not a boolean), else 0."""
    return value if type(value) in (int, float) else 0


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def iso_seconds(value: Any) -> int | None:
    """Seconds since the epoch of an ISO 8601 time ("2025-07-01T10:00:00.000Z"), or None."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def seconds(value: Any) -> int | None:
    """Whole seconds of a number of seconds (or of milliseconds, when it is that large)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value / 1000 if value > 100_000_000_000 else value)


def walk_mapping(mapping: dict[str, Any], parent_key: str, children_key: str) -> list[str]:
    """Keys of a map of linked messages, parents first; unreachable ones (cycles) last.

    The parent link decides where a message hangs; the children list only orders
    siblings (ChatGPT's ``parent``/``children``, Open WebUI's ``parentId``/``childrenIds``).
    """
    by_parent: dict[str | None, list[str]] = {}
    for key, item in mapping.items():
        if type(item) is dict:
            parent = item.get(parent_key)
            known = type(parent) is str and parent in mapping
            by_parent.setdefault(parent if known else None, []).append(key)
    order: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(by_parent.get(None, [])))
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        order.append(key)
        mine = by_parent.get(key, [])
        listed = mapping[key].get(children_key)
        first = [c for c in listed if type(c) is str and c in mine] if type(listed) is list else []
        stack.extend(reversed(list(dict.fromkeys(first + mine))))
    order.extend(k for k, v in mapping.items() if k not in seen and type(v) is dict)
    return order
