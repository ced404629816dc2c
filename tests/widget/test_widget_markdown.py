"""The panel's Markdown step (labextension/src/sanitize/markdown.ts) shows raw HTML as text,
as the kernel's renderer does (markdown-it ``html=False``,
jupyter_tree_chat/kernel/display/safe_html.py).

Markup the browser's HTML parser swallows (an unclosed ``<noscript>``, ``<!--``,
``<template>``, ``<textarea>``, ``<title>``, ``<style>`` ...) used to reach DOMPurify as
HTML: nothing ran, but the rest of the message vanished. Here ``marked`` is run under Node
(bundled with the project's esbuild, as in test_labextension.py) on those payloads, on
the XSS corpus and on ordinary Markdown: no element ever comes from raw HTML, the text
after it is all there, and Markdown still renders. DOMPurify and the remote-image guard
that follow need a DOM: tests/browser/test_hostile_content.py checks the whole pipeline
in Chromium. Needs `npm ci` in labextension/.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from helpers import DATA
from helpers.node_runner import node_module

from jupyter_tree_chat.kernel.display.safe_html import markdown_to_html

CORPUS = json.loads((DATA / "xss_payloads.json").read_text())

RUNNER = """
import { markdownToHtml } from './bundle.mjs';
import { readFileSync } from 'node:fs';
const texts = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(texts.map(markdownToHtml)));
"""

#: every element Markdown (CommonMark + GFM) can make; raw HTML must add none
MARKDOWN_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code",
    "em", "strong", "del", "a", "img", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
    "input",  # a GFM task list's disabled checkbox (DOMPurify drops it)
}  # fmt: skip

#: tags whose content the HTML parser hides or treats as raw text; each then a sentinel
SWALLOWING = ["<noscript>", "<!--", "<template>", "<textarea>", "<title>", "<style>"]


@pytest.fixture(scope="module")
def to_html(tmp_path_factory):
    """Markdown to HTML with the widget's ``marked`` setup, many texts per Node process."""
    return node_module("src/sanitize/markdown.ts", RUNNER, tmp_path_factory.mktemp("ts-markdown"))


class _Read(HTMLParser):
    """The elements and the visible text of an HTML fragment (as a browser would see
    them: a comment or a raw-text element would hide what follows)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def read(html: str) -> tuple[list[str], str]:
    parser = _Read()
    parser.feed(html)
    parser.close()
    return parser.tags, " ".join("".join(parser.text).split())


def test_raw_html_is_text_block_and_inline(to_html) -> None:
    block, inline, nested = to_html(
        ["<b>x</b>", "a <b>x</b> and <i>y</i> b", "<div>\n*em* <span>s</span>\n</div>"]
    )
    assert block == "<p>&lt;b&gt;x&lt;/b&gt;</p>\n"
    assert inline == "<p>a &lt;b&gt;x&lt;/b&gt; and &lt;i&gt;y&lt;/i&gt; b</p>\n"
    # as with markdown-it html=False: the Markdown inside an HTML "block" still renders
    assert read(nested) == (["p", "em"], "<div> em <span>s</span> </div>")


@pytest.mark.parametrize("opener", SWALLOWING)
def test_text_after_markup_the_parser_swallows_is_kept(to_html, opener: str) -> None:
    """Inline, at the start of a block, and with a blank line before the sentinel."""
    texts = [
        f"{opener} SENTINEL",
        f"before {opener} SENTINEL after",
        f"{opener}\nhidden?\n\nSENTINEL **bold**",
        f"- item {opener}\n- SENTINEL",
        f"> {opener}\n\nSENTINEL",
    ]
    for text, html in zip(texts, to_html(texts), strict=True):
        tags, visible = read(html)
        assert "SENTINEL" in visible, (text, html)
        assert opener in visible, (text, html)  # shown as written
        assert set(tags) <= MARKDOWN_TAGS, (text, html)
        # the same words as the kernel's cell output shows
        assert visible == read(markdown_to_html(text))[1], (text, html)


def test_no_payload_of_the_xss_corpus_becomes_an_element(to_html) -> None:
    """Raw HTML in any of the 61 payloads comes out as text; apart from link and image
    policy (the kernel keeps an unsafe Markdown link as its source text, the widget's
    DOMPurify drops its URL), the visible text is the kernel's, word for word."""
    payloads = CORPUS["payloads"]
    texts = [p["payload"] + "\n\nSENTINEL" for p in payloads]
    for p, text, html in zip(payloads, texts, to_html(texts), strict=True):
        tags, visible = read(html)
        assert set(tags) <= MARKDOWN_TAGS, (p["id"], html)
        assert visible.endswith("SENTINEL"), (p["id"], html)
        if not p["kind"].startswith("md-"):
            # <a>: GFM links a bare http:// URL (the kernel does not); only an href
            assert set(tags) <= {"p", "code", "a"}, (p["id"], html)
            assert visible == read(markdown_to_html(text))[1], (p["id"], html)


def test_markdown_still_renders(to_html) -> None:
    text = (
        "# Title\n\n## Sub\n\n- one\n- two\n\n1. first\n\n> quoted **bold** *em* ~~del~~\n\n"
        "```python\nprint('<b>')\n```\n\n| a | b |\n|---|---|\n| 1 | `<i>` |\n\n"
        "[site](https://example.org/x?a=1&b=2) <https://example.org/auto> "
        "[mail](mailto:a@example.org) ![pic](https://example.org/p.png)\n\n---\nend"
    )
    (html,) = to_html([text])
    tags, visible = read(html)
    assert visible.endswith("end"), visible
    for tag in ("h1", "h2", "ul", "ol", "li", "blockquote", "strong", "em", "del", "pre",
                "code", "table", "th", "td", "a", "img", "hr"):  # fmt: skip
        assert tag in tags, (tag, html)
    assert '<pre><code class="language-python">print(&#39;&lt;b&gt;&#39;)' in html
    assert "<td><code>&lt;i&gt;</code></td>" in html
    assert '<a href="https://example.org/x?a=1&amp;b=2">site</a>' in html
    assert '<a href="https://example.org/auto">https://example.org/auto</a>' in html
    assert '<a href="mailto:a@example.org">mail</a>' in html
    assert '<img src="https://example.org/p.png" alt="pic">' in html  # then neutralised
