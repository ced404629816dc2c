"""What went into a question, and the question's content assembled from its parts.

A ``{name}``, an ``--attach`` file or a ``--with`` node each becomes a ``Converted``:
the text or blocks put in its place, and a ``Sent`` record (name, type, size, what it
became) that the user node keeps in ``meta.context`` and the cell shows in one line::

    sent: df (DataFrame 1,000×12 → 40 rows), fig (PNG 1200×800)

A question that is only text stays a string, as before; one with an image, a document or
a named block becomes a list of content blocks in the order they stood.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]


@dataclass(frozen=True)
class Limits:
    """How much of a value goes into a question (``TreeChat.max_rows`` and friends)."""

    max_rows: int = 40
    max_columns: int = 20
    max_chars: int = 20_000


@dataclass(frozen=True)
class Sent:
    """One thing put into a question: ``df (DataFrame 1,000×12 → 40 rows)``."""

    name: str
    type: str
    size: str = ""
    became: str = ""
    kind: str = "variable"  # "variable" | "cell" | "attachment" | "node"

    def summary(self) -> str:
        head = " ".join(part for part in (self.type, self.size) if part)
        return f"{head} → {self.became}" if self.became else head

    def to_meta(self) -> dict[str, str]:
        meta = {"name": self.name, "kind": self.kind, "type": self.type}
        if self.size:
            meta["size"] = self.size
        if self.became:
            meta["became"] = self.became
        return meta


@dataclass(frozen=True)
class Converted:
    """A value's place in the question: inline text, a text paragraph, or blocks."""

    parts: tuple[str | Block, ...]
    sent: Sent
    paragraph: bool = False  # a table or code: set apart by blank lines


def cut(text: str, limit: int) -> tuple[str, str]:
    """``text`` within ``limit`` characters, and a note saying how much was left out."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], f"\n… [cut: {len(text) - limit:,} of {len(text):,} characters not sent]"


def sent_line(items: Iterable[Mapping[str, Any]]) -> str:
    """``sent: df (DataFrame 1,000×12 → 40 rows), fig (PNG 1200×800)`` from meta.context."""
    shown = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        sent = Sent(
            str(item.get("name", "?")),
            str(item.get("type", "")),
            str(item.get("size", "")),
            str(item.get("became", "")),
        )
        shown.append(f"{sent.name} ({sent.summary()})")
    return "sent: " + ", ".join(shown) if shown else ""


@dataclass
class QuestionParts:
    """Collects a question's pieces in order, then gives its content and ``meta.context``."""

    leading: list[Block] = field(default_factory=list)  # attachments and quoted nodes
    parts: list[str | Block] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)

    def text(self, text: str) -> None:
        self.parts.append(text)

    def value(self, converted: Converted) -> None:
        self.sent.append(converted.sent)
        pieces = list(converted.parts)
        if converted.paragraph and pieces and isinstance(pieces[0], str):
            pieces[0] = _paragraph_start(self._text_before()) + pieces[0] + "\n\n"
        self.parts.extend(pieces)

    def lead(self, converted: Converted) -> None:
        """A block that goes before the question (a file, another branch's answer)."""
        self.sent.append(converted.sent)
        for part in converted.parts:  # a text ends its paragraph, for views that join them
            if isinstance(part, str):
                part = {"type": "text", "text": part.rstrip("\n") + "\n\n"}
            self.leading.append(part)

    def _text_before(self) -> str:
        return self.parts[-1] if self.parts and isinstance(self.parts[-1], str) else ""

    def content(self) -> str | list[Block]:
        """A string if the question is only text, else its blocks in order."""
        question = merged_blocks(self.parts)
        if not self.leading and all(block["type"] == "text" for block in question):
            return question[0]["text"] if question else ""
        return [*self.leading, *question]

    def context(self) -> list[dict[str, str]]:
        return [item.to_meta() for item in self.sent]


def with_text(message: Mapping[str, Any], text: str) -> str | list[Block]:
    """A question's content with new words and the same images and documents.

    Editing a question in the panel changes its text; the figure it carried stays (first,
    as files do), so the edit is asked about the same picture.
    """
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    kept = [b for b in blocks if isinstance(b, dict) and b.get("type") in ("image", "document")]
    return [*kept, {"type": "text", "text": text}] if kept else text


def _paragraph_start(before: str) -> str:
    if not before or before.endswith("\n\n"):
        return ""
    return "\n" if before.endswith("\n") else "\n\n"


def merged_blocks(parts: Sequence[str | Block]) -> list[Block]:
    """Adjacent strings joined into one text block; blank text (the API refuses it) dropped.

    The space around an image is kept, so the text still reads as written when a view
    joins the text blocks; only the question's two ends are trimmed.
    """
    blocks: list[Block] = []
    pending: list[str] = []

    def flush() -> None:
        text = "".join(pending)
        pending.clear()
        if text.strip():
            blocks.append({"type": "text", "text": text})

    for part in parts:
        if isinstance(part, str):
            pending.append(part)
        else:
            flush()
            blocks.append(part)
    flush()
    if blocks and blocks[0]["type"] == "text":
        blocks[0]["text"] = blocks[0]["text"].lstrip()
    if blocks and blocks[-1]["type"] == "text":
        blocks[-1]["text"] = blocks[-1]["text"].rstrip()
    return blocks
