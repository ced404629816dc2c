"""Rough edges of issue 38 seen in an exported page, opened from disk in a real Chromium.

- 4: the page's tree list shows a reply's first line as plain words, as the panel and
  ``%chat tree`` do (``I was sent 1 message``, never ``**1 message**``).
- 13: when find lands on a question with a sibling question, the heading over them says
  "2 questions side by side", not "answers".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect
from test_share_page_e2e import export, open_page

pytestmark = pytest.mark.browser


def two_questions_session() -> bytes:
    """Two versions of one question (an edit), each answered in Markdown."""
    usage = {"input_tokens": 20, "output_tokens": 8}
    rows = [
        ("q1", None, "user", "Which **tree** is it, the needle one?"),
        ("a1", "q1", "assistant", "I was sent **1 message** on the active path: user."),
        ("q1b", None, "user", "Which tree is it, the other needle one?"),
        ("a1b", "q1b", "assistant", "## A heading\n\nwith `code` and _emphasis_ after it"),
        ("q2", "a1b", "user", "我收到了 **7 条消息** 吗？"),
        ("a2", "q2", "assistant", "我在 active path 上收到了 **7 条消息**：user。"),
    ]
    lines: list[dict] = [{"type": "session", "version": 1, "created": 0}]
    for node_id, parent, role, text in rows:
        record = {"id": node_id, "parentId": parent, "message": {"role": role, "content": text}}
        if role == "assistant":
            record["meta"] = {"model": "offline-teacher", "usage": usage}
        lines.append(record)
    lines.append({"type": "leaf", "id": "a2"})
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in lines)


def exported_page(tmp_path: Path) -> Path:
    source = tmp_path / "s.chat.jsonl"
    source.write_bytes(two_questions_session())
    return export(source, tmp_path / "s.html")


def test_the_pages_tree_list_shows_plain_words_not_markdown(page, page_log, tmp_path):
    view = open_page(page, exported_page(tmp_path))
    rows = view.locator(".jtc-tree .jtc-row")
    expect(rows).to_have_count(6)
    shown = {row.get_attribute("data-id"): " ".join(row.inner_text().split()) for row in rows.all()}
    assert "I was sent 1 message on the active path: user." in shown["a1"]
    assert "A heading" in shown["a1b"] and "#" not in shown["a1b"]
    assert "7 条消息" in shown["a2"]
    assert "Which tree is it, the needle one?" in shown["q1"]
    assert not any("**" in text for text in shown.values()), shown
    assert page_log.page_errors == []


def test_find_on_two_sibling_questions_heads_them_as_questions(page, page_log, tmp_path):
    view = open_page(page, exported_page(tmp_path))
    box = view.locator(".jtc-search-input")
    box.fill("needle")
    expect(view.locator(".jtc-tree .jtc-row.jtc-match")).to_have_count(2)
    box.press("Enter")
    expect(view.locator(".jtc-compare .jtc-compare-column")).to_have_count(2)
    heading = view.locator(".jtc-compare .jtc-section-title")
    expect(heading).to_have_text("2 questions side by side")
    assert page_log.page_errors == []
