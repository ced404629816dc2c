"""Markdown to HTML that is safe by construction, for the cell outputs of ``%%chat``.

Model output is untrusted input, and JupyterLab does not sanitize outputs made in the
current session: it trusts them, and a trusted ``<img onerror=...>`` in a Markdown
output would run. So the magic never hands Markdown to the browser; it renders it here,
where raw HTML is escaped (never passed through), links are limited to safe schemes,
and images become links, so no remote image is fetched without a click.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

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
    alt = escape("".join(child.content for child in token.children or []) or "image")
    if not _link_is_safe(src):
        return f"[image: {alt}]"
    return f'<a href="{escape(src)}" rel="noopener noreferrer" target="_blank">[image: {alt}]</a>'


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
