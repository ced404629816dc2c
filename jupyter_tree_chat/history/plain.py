"""A Markdown text as plain words, for the one-line summaries every view shows.

A reply is Markdown (``I was sent **1 message** …``); a tree row, ``%chat tree``, the
panel and an exported page show its first words without the syntax. One function for
all of them, so the kernel's listings and the panel agree (the page's TypeScript reader
does the same, ``labextension/src/components/plain.ts``).
"""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_FENCE = re.compile(r"^[ \t]*(?:```+|~~~+)[^\n]*$", re.M)
_LINE_MARKERS = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)",
    re.M,
)
_RULE = re.compile(r"^[ \t]{0,3}(?:[-*_][ \t]*){3,}$", re.M)
_HEADING_CLOSE = re.compile(r"[ \t]+#+[ \t]*$", re.M)
_IMAGE_OR_LINK = re.compile(r"(?:\[|!\[)([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^>\s]+)>")
_EMPHASIS = (  # (a character the pattern needs, the pattern); a literal first is fast
    ("*", re.compile(r"\*\*(?<![\w*]\*\*)(?=\S)(.+?)(?<=\S)\*\*(?![\w*])", re.S)),
    ("_", re.compile(r"__(?<![\w_]__)(?=\S)(.+?)(?<=\S)__(?![\w_])", re.S)),
    ("*", re.compile(r"\*(?<![\w*]\*)(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", re.S)),
    ("_", re.compile(r"_(?<![\w_]_)(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])", re.S)),
    ("~", re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)),
)
_CUT_OPENER = re.compile(r"(?<![\w*_~])(?:\*\*\*?|__|~~)(?=[^\s*_~])")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>])")


def plain_text(markdown: str) -> str:
    """The words of a Markdown text without its syntax, for one-line summaries.

    Headings, quotes, list markers, rules and code fences lose their markers; emphasis,
    strikethrough and code spans keep only their content; links and images keep their
    text; an escaped character stays, without its backslash. What is not Markdown
    syntax stays as it is (``2 * 3 * 4``, ``snake_case``, a lone ``*``), and so does
    the inside of a code span. Cheap regular expressions, not a parser: a summary of
    10,000 rows is built when a panel opens.
    """
    codes: list[str] = []

    def keep(kept: str) -> str:
        codes.append(kept)
        return f"\0{len(codes) - 1}\0"

    text = markdown.replace("\0", "")
    if "`" in text or "~" in text:
        text = _FENCE.sub("", text)
        text = _CODE_SPAN.sub(lambda m: keep(m.group(2).strip() or m.group(2)), text)
    if "\\" in text:
        text = _ESCAPE.sub(lambda m: keep(m.group(1)), text)
    text = _LINE_MARKERS.sub("", _RULE.sub("", text))
    if "#" in text:
        text = _HEADING_CLOSE.sub("", text)
    if "[" in text:
        text = _IMAGE_OR_LINK.sub(r"\1", text)
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
    for _ in range(2):  # nested emphasis: ***both***, **bold _and italic_**
        before = text
        for mark, pattern in _EMPHASIS:
            if mark in text:
                text = pattern.sub(lambda m: m.group(m.lastindex or 1), text)
        if text == before:
            break
    return re.sub("\0(\\d+)\0", lambda m: codes[int(m.group(1))], text) if codes else text


_MARKUP = re.compile(r"[`~\\#\[<*_\0]|^[ \t]*(?:[>+=-]|\d{1,9}[.)])", re.M)


def might_be_markdown(text: str) -> bool:
    """Whether ``text`` might hold Markdown syntax; a text without any is its own plain text."""
    return _MARKUP.search(text) is not None


def without_cut_openers(text: str) -> str:
    """``text`` without an emphasis's opening mark whose closing one was cut off."""
    return _CUT_OPENER.sub("", text)


def plain_line(text: str) -> str:
    """``text`` as plain words on one line: its Markdown syntax out, whitespace collapsed."""
    return " ".join((plain_text(text) if might_be_markdown(text) else text).split())
