"""What went into a question, and the question's content assembled from its parts.

A ``{name}``, an ``--attach`` file or a ``--with`` node each becomes a ``Converted``:
the text or blocks put in its place, and a ``Sent`` record (name, type, size, what it
became) that the user node keeps in ``meta.context`` and the cell shows in one line::

    sent: df (DataFrame 1,000×12 → 40 rows), fig (PNG 1200×800)

A question that is only text stays a string, as before; one with an image, a document or
a named block becomes a list of content blocks in the order they stood. Beside what was
sent, the node keeps the question as it was typed (``meta.typed``): its words and a chip
per substitution, each chip saying where its text stands in what was sent, so a view can
show ``What does [df · DataFrame 100×2] show?`` and open the table on a click.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..i18n import _
from ..textview import Chip

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
    return _("sent: {items}").format(items=", ".join(shown)) if shown else ""


_Owner = tuple[int, int, int]
"""(chip, start, end): where a chip's text stands in one part of a question"""


@dataclass
class QuestionParts:
    """Collects a question's pieces in order, then gives its content, ``meta.context`` and
    ``meta.typed`` (the question as typed, a chip where each substitution stood)."""

    leading: list[Block] = field(default_factory=list)  # attachments and quoted nodes
    parts: list[str | Block] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    typed: list[str | Chip] = field(default_factory=list)
    #: per part of ``leading`` and ``parts``: (chip, start, end) of that chip's text in it
    _lead_owners: list[_Owner | None] = field(default_factory=list)
    _owners: list[_Owner | None] = field(default_factory=list)
    _typed_differs: bool = False

    def text(self, text: str, typed: str | None = None) -> None:
        """Words of the question; ``typed`` when they were typed otherwise (``{{x}}``)."""
        self.parts.append(text)
        self._owners.append(None)
        written = text if typed is None else typed
        self._typed_differs |= written != text
        self._type(written)

    def value(self, converted: Converted) -> None:
        """A ``{field}`` filled in: its text or blocks where it stood."""
        chip = len(self.typed)
        self.sent.append(converted.sent)
        self.typed.append(chip_of(converted.sent))
        pieces = list(converted.parts)
        for k, piece in enumerate(pieces):
            start, end = 0, len(piece) if isinstance(piece, str) else 0
            if k == 0 and converted.paragraph and isinstance(piece, str):
                before = _paragraph_start(self._text_before())
                start, end = len(before), len(before) + len(piece)
                piece = before + piece + "\n\n"
            self.parts.append(piece)
            self._owners.append((chip, start, end))

    def lead(self, converted: Converted) -> None:
        """A block that goes before the question (a file, another branch's answer)."""
        self.sent.append(converted.sent)
        self.keep(converted.parts, chip_of(converted.sent))

    def keep(self, blocks: Sequence[str | Block], chip: Chip) -> None:
        """Blocks that lead the question as ``chip`` (one kept from an earlier version)."""
        at = sum(1 for piece in self.typed if isinstance(piece, Chip) and not piece.written)
        self.typed.insert(at, chip)  # files and quotes lead, in the order they came
        for k, later in enumerate(self._owners):  # the chips after it move one place on
            if later is not None and later[0] >= at:
                self._owners[k] = (later[0] + 1, later[1], later[2])
        for part in blocks:  # a text ends its paragraph, for views that join them
            owner: _Owner = (at, 0, 0)
            if isinstance(part, str):
                text = part.rstrip("\n")
                part = {"type": "text", "text": text + "\n\n"}
                owner = (at, 0, len(text))
            elif part.get("type") == "text":
                owner = (at, 0, len(str(part.get("text", "")).rstrip("\n")))
            self.leading.append(part)
            self._lead_owners.append(owner)

    def _type(self, text: str) -> None:
        if self.typed and isinstance(self.typed[-1], str):
            self.typed[-1] += text
        elif text:
            self.typed.append(text)

    def _text_before(self) -> str:
        return self.parts[-1] if self.parts and isinstance(self.parts[-1], str) else ""

    def content(self) -> str | list[Block]:
        """A string if the question is only text, else its blocks in order."""
        return self._assemble()[0]

    def context(self) -> list[dict[str, str]]:
        return [item.to_meta() for item in self.sent]

    def typed_meta(self) -> list[str | dict[str, Any]] | None:
        """``meta.typed``: the question as typed, each chip with where its text was sent
        (docs/format.md); None when it reads as it was sent (no field, no ``{{x}}``)."""
        if not self._typed_differs and not any(isinstance(p, Chip) for p in self.typed):
            return None
        spans = self._assemble()[1]
        fields = [k for k, p in enumerate(self.typed) if isinstance(p, Chip) and p.written]
        shown: list[str | dict[str, Any]] = []
        for k, piece in enumerate(self.typed):
            if isinstance(piece, Chip):
                shown.append(replace(piece, sent=spans.get(k)).to_meta())
                continue
            if not fields or k < fields[0]:  # the question's two ends are trimmed when sent
                piece = piece.lstrip()
            if not fields or k > fields[-1]:
                piece = piece.rstrip()
            if piece:
                shown.append(piece)
        return shown

    def meta(self) -> dict[str, Any]:
        """``context`` and ``typed`` for the question's node (only those it has)."""
        meta: dict[str, Any] = {}
        if self.sent:
            meta["context"] = self.context()
        typed = self.typed_meta()
        if typed is not None:
            meta["typed"] = typed
        return meta

    def _assemble(self) -> tuple[str | list[Block], dict[int, tuple[int, int]]]:
        """The content, and where each chip's text stands in its text (code points)."""
        question, question_spans = _merged(self.parts, self._owners)
        lead_spans = [[owner] if owner else [] for owner in self._lead_owners]
        blocks = [*self.leading, *question]
        spans: dict[int, tuple[int, int]] = {}
        at = 0
        for block, owned in zip(blocks, [*lead_spans, *question_spans], strict=True):
            if block.get("type") != "text":
                continue
            for chip, start, end in owned:
                if end > start:
                    spans[chip] = (at + start, at + end)
            at += len(str(block.get("text", "")))
        if not self.leading and all(block["type"] == "text" for block in question):
            return (question[0]["text"] if question else ""), spans
        return blocks, spans


def chip_of(sent: Sent) -> Chip:
    """The chip a thing put into a question is shown as: ``df · DataFrame 100×2``."""
    about = " ".join(part for part in (sent.type, sent.size) if part)
    return Chip(sent.name, sent.kind, about)


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
    return _merged(parts, [None] * len(parts))[0]


def _merged(
    parts: Sequence[str | Block], owners: Sequence[_Owner | None]
) -> tuple[list[Block], list[list[_Owner]]]:
    """``merged_blocks``, and per block the (chip, start, end) spans of chips' text in it."""
    blocks: list[Block] = []
    spans: list[list[_Owner]] = []
    pending: list[str] = []
    pending_spans: list[_Owner] = []

    def flush() -> None:
        text = "".join(pending)
        if text.strip():
            blocks.append({"type": "text", "text": text})
            spans.append(list(pending_spans))
        pending.clear()
        pending_spans.clear()

    for part, owner in zip(parts, owners, strict=True):
        if isinstance(part, str):
            if owner is not None:
                base = sum(len(p) for p in pending)
                pending_spans.append((owner[0], base + owner[1], base + owner[2]))
            pending.append(part)
        else:
            flush()
            blocks.append(part)
            spans.append([owner] if owner is not None else [])
    flush()
    if blocks and blocks[0]["type"] == "text":
        text = blocks[0]["text"]
        cut = len(text) - len(text.lstrip())
        blocks[0]["text"] = text[cut:]
        spans[0] = [(c, max(0, s - cut), max(0, e - cut)) for c, s, e in spans[0]]
    if blocks and blocks[-1]["type"] == "text":
        kept = len(blocks[-1]["text"].rstrip())
        blocks[-1]["text"] = blocks[-1]["text"][:kept]
        spans[-1] = [(c, min(s, kept), min(e, kept)) for c, s, e in spans[-1]]
    return blocks, spans
