"""The code blocks of an answer, so one can go back into the notebook as a new cell.

A Markdown parser (markdown-it, the one the kernel renders replies with) finds them, so a
fence inside a list item, a longer fence around backticks or an indented block counts
exactly as a reader sees it, and the code comes back exactly as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark")


@dataclass(frozen=True)
class CodeBlock:
    """One code block: its text (without the fences) and its info string (``python``)."""

    code: str
    language: str = ""


def code_blocks(markdown: str) -> list[CodeBlock]:
    """Every fenced or indented code block of ``markdown``, in order."""
    blocks = []
    for token in _PARSER.parse(markdown):
        if token.type in ("fence", "code_block"):
            language = token.info.strip().split(" ")[0] if token.type == "fence" else ""
            blocks.append(CodeBlock(token.content, language))
    return blocks
