"""The kernel's catalog as tests read it: which of its messages a text shows, in which language.

The kernel's texts are ``_("...")`` with ``{fields}`` filled after translation, so a
message can be found in what a cell printed by a pattern: its words as written, each
field any run of characters on one line. A test that ran the same cells in English and
in Chinese finds the English messages a cell showed, then checks that the Chinese cell
shows each one's translation and no English sentence of the catalog is left.
"""

from __future__ import annotations

import gettext
import re
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polib

from jupyter_tree_chat.i18n import DOMAIN, LOCALE_DIR

CHINESE = "zh_CN"
PO_FILE = LOCALE_DIR / CHINESE / "LC_MESSAGES" / f"{DOMAIN}.po"
HAN = re.compile(r"[\u3400-\u9fff]")
#: two words of English in a row: what makes a message a sentence a reader would notice
SENTENCE = re.compile(r"[A-Za-z][a-z]+[ ,;:'’]+[A-Za-z][a-z]*")


@dataclass(frozen=True)
class Message:
    english: tuple[str, ...]  # the msgid (and its plural)
    chinese: tuple[str, ...]  # the translation(s)

    @property
    def is_sentence(self) -> bool:
        return any(SENTENCE.search(literal_text(text)) for text in self.english)

    @property
    def unchanged(self) -> bool:
        return set(self.english) == set(self.chinese)


def literal_text(message: str) -> str:
    """A message's words without its ``{fields}``."""
    try:
        return " ".join(part for part, *_ in string.Formatter().parse(message))
    except ValueError:
        return message


def pattern(message: str, field: str = r"[^\n]+?") -> re.Pattern[str]:
    """Where ``message`` shows in a text: its words as written, each field filled (by
    ``field``: any run of characters on one line, unless told otherwise)."""
    pieces: list[str] = []
    for literal, name, _spec, _conversion in string.Formatter().parse(message):
        pieces.append(re.escape(literal))
        if name is not None:
            pieces.append(field)
    body = "".join(pieces)
    starts = r"\b" if re.match(r"\w", message) else ""
    ends = r"\b" if re.search(r"\w$", message) else ""
    return re.compile(starts + body + ends)


@cache
def messages(path: Path = PO_FILE) -> tuple[Message, ...]:
    """Every translated message of the kernel's zh_CN catalog with English words in it."""
    found = []
    for entry in polib.pofile(str(path)):
        if entry.obsolete or not entry.translated():
            continue
        english = (entry.msgid, entry.msgid_plural) if entry.msgid_plural else (entry.msgid,)
        chinese = (
            tuple(entry.msgstr_plural[k] for k in sorted(entry.msgstr_plural))
            if entry.msgid_plural
            else (entry.msgstr,)
        )
        if re.search(r"[A-Za-z]{2}", literal_text(entry.msgid)):
            found.append(Message(english, chinese))
    return tuple(found)


FOOTER_PARTS = re.compile(r" · ")
COLUMNS = re.compile(r" · | {2,}")  # also the columns of `%chat tree`, two or more spaces apart


def segments(text: str, splitter: re.Pattern[str] = FOOTER_PARTS) -> list[str]:
    """A text's lines and a footer's parts between `` · `` (or, with ``COLUMNS``, a table's
    columns too, as `%chat tree` sets ``[2 replies]`` and ``← current``): where a short
    message stands."""
    parts = (part.strip() for line in text.splitlines() for part in splitter.split(line))
    return [part for part in parts if part]


def _spans(message: Message, candidates: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    """Where one of ``candidates`` shows in ``text``: a sentence anywhere, a short message
    (``{count} in``) only as a whole line or footer part (see ``_field``)."""
    if message.is_sentence:
        return [m.span() for c in candidates for m in pattern(c).finditer(text)]
    field = _field(message.english[0])  # the English decides, for its translations too
    spans = set()
    for splitter in (FOOTER_PARTS, COLUMNS):
        offset = 0
        for part in segments(text, splitter):
            start = text.index(part, offset)
            offset = start + len(part)
            if any(pattern(c, field).fullmatch(part) for c in candidates):
                spans.add((start, offset))
    return sorted(spans)


def _field(message: str) -> str:
    """What a field of a short message may hold: anything on the line when the message
    has two words of its own (``→ leaf {leaf} (depth {depth})``), else one word, so that
    ``check {variables}`` is not found in every line that starts with "check"."""
    own = re.findall(r"[A-Za-z]{2,}", literal_text(message))
    return r"[^\n]+?" if len(own) >= 2 else r"\S+"


def shown(text: str, *, sentences_only: bool = False) -> list[Message]:
    """The catalog's messages whose English ``text`` shows; where two match the same
    words (``No match for {query!r}.`` and ``{count} match for {query!r}.``), the one
    with more words of its own."""
    found = {
        message: _spans(message, message.english, text)
        for message in messages()
        if (message.is_sentence or not sentences_only) and not message.unchanged
    }
    found = {message: spans for message, spans in found.items() if spans}

    def covered(message: Message, span: tuple[int, int]) -> bool:
        own = len(literal_text(message.english[0]))
        return any(
            len(literal_text(other.english[0])) > own and a <= span[0] and span[1] <= b
            for other, spans in found.items()
            for a, b in spans
            if other is not message
        )

    return [
        message
        for message, spans in found.items()
        if not all(covered(message, span) for span in spans)
    ]


def english_left(text: str) -> list[str]:
    """The English sentences of the catalog still in ``text`` (a Chinese cell's output)."""
    return [message.english[0] for message in shown(text, sentences_only=True)]


def translation_missing(english_text: str, chinese_text: str) -> list[str]:
    """The messages the English cell showed whose translation the Chinese one lacks."""
    return [
        message.english[0]
        for message in shown(english_text)
        if not _spans(message, message.chinese, chinese_text)
    ]


def chinese(msgid: str) -> str:
    """``msgid`` in the shipped zh_CN catalog (the compiled .mo the kernel reads)."""
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[CHINESE]).gettext(msgid)
