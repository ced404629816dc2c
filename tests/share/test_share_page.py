"""The exported page (share/page.py) as bytes: one file holding its script, its style and
the session's records as data; a CSP that allows only those by hash; nothing a message
says can close the data or run; its size within the session's bytes + 1.5 MB; a branch
alone; another tool's file. What it shows in a browser: tests/browser/test_share_page_e2e.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

import pytest
from helpers import DATA

from jupyter_tree_chat import formats
from jupyter_tree_chat.history.store import parse_session
from jupyter_tree_chat.share.page import (
    OVERHEAD_BUDGET,
    native_problems,
    page_html,
    page_path,
    page_records,
)

CORPUS = json.loads((DATA / "xss_payloads.json").read_text())


class Page(HTMLParser):
    """The page's elements: every tag, the scripts' and styles' text, the CSP."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self._open: tuple[str, dict[str, str | None]] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._open = (tag, dict(attrs))
            self._text = ""

    def handle_data(self, data):
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag):
        if self._open is not None and tag == self._open[0]:
            if tag == "script":
                self.scripts.append((self._open[1], self._text))
            else:
                self.styles.append(self._text)
            self._open = None

    @property
    def csp(self) -> str:
        for tag, attrs in self.tags:
            if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy":
                return attrs["content"] or ""
        return ""


def sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def hostile_records() -> bytes:
    lines = []
    parent = None
    for p in CORPUS["payloads"]:
        uid = f"u{p['id']}"
        lines.append(
            {"id": uid, "parentId": parent, "message": {"role": "user", "content": p["payload"]}}
        )
        aid = f"a{p['id']}"
        text = "Reply: " + p["payload"] + " </script><!-- <script>"
        lines.append(
            {"id": aid, "parentId": uid, "message": {"role": "assistant", "content": text}}
        )
        parent = aid
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in lines)


def test_one_script_one_style_and_the_records_as_data_each_allowed_by_its_hash():
    result = parse_session((DATA / "branches.chat.jsonl").read_bytes())
    page = Page(page_html(result, title="branches.chat.jsonl", problems=native_problems(result)))
    executable = [text for attrs, text in page.scripts if "type" not in attrs]
    data = {attrs["id"]: text for attrs, text in page.scripts if "type" in attrs}
    assert len(executable) == 1 and len(page.styles) == 1
    assert set(data) == {"jtc-page-data", "jtc-records"}
    policy = dict(part.strip().split(" ", 1) for part in page.csp.split(";"))
    assert policy == {
        "default-src": "'none'",
        "script-src": sha(executable[0]),
        "style-src": sha(page.styles[0]),
        "img-src": "data:",
        "base-uri": "'none'",
        "form-action": "'none'",
    }
    # nothing else: no link, no src, no inline handler, no other script
    assert [
        t for t, a in page.tags if t in ("link", "iframe", "img", "object", "embed", "base")
    ] == []
    assert [(t, k) for t, a in page.tags for k in a if k.startswith("on") or k == "src"] == []
    # the records are the session's nodes and marks, as lines the viewer's reader reads
    again = parse_session(data["jtc-records"].encode())
    assert [n.id for n in again.tree] == [n.id for n in result.tree]
    assert again.labels == result.labels and again.tree.leaf == result.tree.leaf
    meta = json.loads(data["jtc-page-data"])
    assert meta["title"] == "branches.chat.jsonl" and meta["leaf"] == result.tree.leaf
    assert [p["message"] for p in meta["problems"]] == [p.message for p in result.problems]


def test_no_message_can_end_the_data_or_open_markup():
    data = hostile_records()
    result = parse_session(data)
    text = page_html(result, title="<script>alert(1)</script>.chat.jsonl")
    body = text.split('<script type="application/x-ndjson" id="jtc-records">', 1)[1]
    records = body.split("</script>", 1)[0]
    assert "<" not in records  # so no </script, <!-- or <script inside it
    assert parse_session(records.encode()).tree.get("a1").message == result.tree.get("a1").message
    page = Page(text)
    assert len([a for a, _ in page.scripts if "type" not in a]) == 1  # the page's own, only
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt;.chat.jsonl</title>" in text
    # the page's own script cannot end its element early either
    script = next(t for a, t in page.scripts if "type" not in a)
    assert not re.search(r"(?i)<(/?script|!--)", script)


def test_the_page_stays_within_the_session_bytes_and_a_megabyte_and_a_half():
    data = hostile_records() * 1  # every payload: '<' costs six bytes each in the page
    result = parse_session(data)
    size = len(page_html(result, title="x").encode())
    assert size <= len(data) + OVERHEAD_BUDGET
    big = b"".join(
        json.dumps({"id": f"n{i}", "parentId": f"n{i - 1}" if i else None,
                    "message": {"role": "user" if i % 2 == 0 else "assistant",
                                "content": f"message {i} " + "words " * 40}}).encode() + b"\n"
        for i in range(10_000)
    )  # fmt: skip
    size = len(page_html(parse_session(big), title="big").encode())
    assert len(big) < size <= len(big) + OVERHEAD_BUDGET


def test_a_page_in_chinese_says_so_and_carries_the_front_ends_catalog():
    from jupyter_tree_chat.i18n import language, set_language

    result = parse_session((DATA / "branches.chat.jsonl").read_bytes())
    english = Page(page_html(result, title="t"))
    was = language()
    set_language("zh_CN")
    try:
        text = page_html(result, title="t")
    finally:
        set_language(was)
    chinese = Page(text)
    assert dict(english.tags[0][1]) == {"lang": "en"} and dict(chinese.tags[0][1]) == {
        "lang": "zh-CN"
    }
    meta = json.loads(chinese.scripts[0][1])
    assert meta["catalog"]["Picture"] == ["图"] and meta["catalog"][""]["language"] == "zh-CN"
    assert "会话" in meta["note"]  # the kernel's words and the page's own, one language
    assert "catalog" not in json.loads(english.scripts[0][1])
    assert len(text.encode()) <= len((DATA / "branches.chat.jsonl").read_bytes()) + OVERHEAD_BUDGET


def test_a_branch_alone_leaves_the_other_branches_out():
    result = parse_session((DATA / "branches.chat.jsonl").read_bytes())
    text = page_html(result, title="t", branch="a2")
    records = Page(text).scripts[1][1]
    shown = parse_session(records.encode())
    assert [n.id for n in shown.tree] == ["u1", "a2"]
    assert shown.tree.leaf == "a2" and shown.labels == {"a2": "concise"}
    assert json.loads(Page(text).scripts[0][1])["branch"] == "a2"


def test_nodes_keep_their_lines_in_the_file():
    data = (DATA / "branches.chat.jsonl").read_bytes()
    result = parse_session(data)
    again = parse_session(page_records(result))
    assert {n.id: n.line for n in again.tree} == {n.id: n.line for n in result.tree}


def test_another_tools_file_exports_through_its_reader():
    from helpers.import_samples import claude_code_session, jsonl

    source = jsonl(claude_code_session())
    imported = formats.read([formats.Source("claude.jsonl", source)], "auto")
    text = page_html(formats.load(imported), title="claude.jsonl", source_format="Claude Code")
    meta = json.loads(Page(text).scripts[0][1])
    assert meta["title"] == "claude.jsonl (read as a Claude Code session)"
    shown = parse_session(Page(text).scripts[1][1].encode())
    assert len(shown.tree) == imported.nodes > 0


@pytest.mark.parametrize(
    ("source", "page"),
    [
        ("/a/analysis.chat.jsonl", "/a/analysis.chat.html"),
        ("/a/analysis.talk.chat.jsonl", "/a/analysis.talk.chat.html"),
        ("claude.jsonl", "claude.html"),
        ("conversations.json", "conversations.html"),
    ],
)
def test_a_page_goes_beside_its_session(source: str, page: str):
    assert str(page_path(source)) == page
