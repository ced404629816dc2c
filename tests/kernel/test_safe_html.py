"""Cell outputs: model Markdown becomes HTML in which nothing can run or load by itself."""

from __future__ import annotations

import re

import pytest

from jupyter_tree_chat.kernel.display.safe_html import markdown_to_html

PAYLOADS = [
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "<svg onload=alert(1)><circle r=1 /></svg>",
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](java\tscript:alert(1))",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![pixel](https://tracker.example/p.gif)",
    '<a href="javascript:alert(1)">x</a>',
    '<form id="__proto__"><input name="attributes"></form>',
    "<style>body{display:none}</style>",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_markup_that_runs_or_loads_survives(payload):
    html = markdown_to_html(f"Here you go:\n\n{payload}\n")
    assert not re.search(r"<(script|svg|iframe|img|form|input|style)\b", html, re.I)
    assert not re.search(r"<[^>]*\son\w+\s*=", html, re.I)  # no live event handler
    assert not re.search(r'href="\s*(javascript|data|vbscript):', html, re.I)


def test_raw_html_is_shown_as_text():
    assert markdown_to_html("<b>bold?</b>") == "<p>&lt;b&gt;bold?&lt;/b&gt;</p>\n"


def test_markdown_still_renders():
    html = markdown_to_html("# Title\n\n**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<code>code</code>" in html and "<table>" in html


def test_safe_links_are_kept_and_images_become_links():
    html = markdown_to_html("[docs](https://example.org/a) ![chart](https://example.org/c.png)")
    assert '<a href="https://example.org/a">docs</a>' in html
    assert '<a href="https://example.org/c.png" rel="noopener noreferrer" target="_blank">' in html
    assert "[image: chart]" in html and "<img" not in html
