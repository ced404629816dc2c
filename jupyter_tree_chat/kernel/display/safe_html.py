"""Markdown to HTML that is safe by construction, for the cell outputs of ``%%chat``.

Model output is untrusted input, and JupyterLab does not sanitize outputs made in the
current session: it trusts them, and a trusted ``<img onerror=...>`` in a Markdown
output would run. So the magic never hands Markdown to the browser; it renders it here,
where raw HTML is escaped (never passed through), links are limited to safe schemes,
and images become links, so no remote image is fetched without a click.

The folded "Thinking" section above an answer (``ThinkingSection``: a ``<details>``,
which opens with no script) is built here too, for a single reply and for each column
of a fan-out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ...i18n import _, ngettext
from ...measures.diff import code_units, prose_units

_SAFE_SCHEMES = ("http:", "https:", "mailto:")


def _link_is_safe(url: str) -> bool:
    """Relative links and http(s)/mailto only: no ``javascript:``, ``data:``, ``file:``."""
    compact = "".join(url.split()).lower()
    if ":" not in compact.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]:
        return True
    return compact.startswith(_SAFE_SCHEMES)


def _render_image(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:  # markdown-it's render-rule signature
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = "".join(child.content for child in token.children or []) or _("image")
    shown = escape(_("[image: {alt}]").format(alt=alt))
    if not _link_is_safe(src):
        return shown
    return f'<a href="{escape(src)}" rel="noopener noreferrer" target="_blank">{shown}</a>'


def _build() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _link_is_safe  # type: ignore[method-assign]
    md.add_render_rule("image", _render_image)
    return md


_MARKDOWN = _build()


def markdown_to_html(text: str) -> str:
    """Render ``text`` as Markdown; any HTML inside it is shown as text, never run."""
    return _MARKDOWN.render(text)


# -- the compare view's differences: the same safe rendering, with units marked -----------


def comparison_units(text: str) -> list[str]:
    """The units of ``text`` as rendered, in order: words of prose (inline code too) and
    lines of code blocks (``diff.prose_units`` / ``diff.code_units``). Markdown syntax is
    never a unit, so ``**yes**`` and ``yes`` are the same word."""
    found: list[str] = []
    for token in _MARKDOWN.parse(text):
        if token.type in ("fence", "code_block"):
            found += code_units(token.content)
        elif token.type == "inline":
            for child in token.children or []:
                if child.type in ("text", "code_inline"):
                    found += prose_units(child.content)
    return found


def marked_html(text: str, marks: Sequence[bool]) -> str:
    """``markdown_to_html(text)`` with each unit whose mark is true in ``<mark>``; the
    marks are in ``comparison_units`` order."""
    return _MARKED.render(text, {"marks": iter(marks)})


def _mark_words(content: str, marks: Iterator[bool]) -> str:
    pieces = []
    for piece in _SPACES.split(content):
        if not piece or piece.isspace():
            pieces.append(escape(piece))
        else:
            pieces.append(_marked(escape(piece), next(marks, False)))
    return "".join(pieces)


def _marked(html: str, mark: bool) -> str:
    return f"<mark>{html}</mark>" if mark else html


def _render_text(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _mark_words(tokens[idx].content, env["marks"])


def _render_code_inline(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    return f"<code>{_mark_words(tokens[idx].content, env['marks'])}</code>"


def _render_code_block(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:
    token = tokens[idx]
    language = token.info.strip().split(" ")[0] if token.info else ""
    attribute = f' class="language-{escape(language)}"' if language else ""
    lines = []
    for line in token.content.split("\n"):
        shown = escape(line)
        lines.append(_marked(shown, next(env["marks"], False)) if line.strip() else shown)
    return f"<pre><code{attribute}>" + "\n".join(lines) + "</code></pre>\n"


def _build_marked() -> MarkdownIt:
    md = _build()
    md.add_render_rule("text", _render_text)
    md.add_render_rule("code_inline", _render_code_inline)
    md.add_render_rule("fence", _render_code_block)
    md.add_render_rule("code_block", _render_code_block)
    return md


_SPACES = re.compile(r"(\s+)")
_MARKED = _build_marked()


# -- the folded thinking above an answer ------------------------------------------------

THINKING_CLASS = "jtc-thinking"


class ThinkingSection:
    """The folded "Thinking" section above an answer: what arrived, and how it ended."""

    def __init__(self, text: str, state: str = "done", redacted: int = 0) -> None:
        self.text = text
        self.state = state  # "streaming" | "done" | "cut"
        self.redacted = redacted

    def __bool__(self) -> bool:
        return bool(self.text or self.redacted)

    def summary(self) -> str:
        words = {"streaming": _("Thinking…"), "cut": _("Thinking (cut short)")}
        label = words.get(self.state, _("Thinking"))
        if self.redacted:
            label += ngettext(
                " ({count} block encrypted by the API, kept as they came)",
                " ({count} blocks encrypted by the API, kept as they came)",
                self.redacted,
            ).format(count=self.redacted)
        return label

    def html(self) -> str:
        body = markdown_to_html(self.text) if self.text else ""
        return (
            f'<details class="{THINKING_CLASS}"><summary>{escape(self.summary())}</summary>'
            f"{body}</details>"
        )
