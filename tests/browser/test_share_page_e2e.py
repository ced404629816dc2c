"""The exported page in a real Chromium, opened from disk (``file://``), and the search
box in the page, the viewer and the panel.

- The page shows what the viewer shows on the same file: the same rows with the same
  marks, the same conversation, thinking folded, images as thumbnails, hidden branches
  folded (and listed when asked), siblings side by side, the same picture.
- The hostile corpus exported and opened runs nothing and loads nothing: the only
  request is the page itself; the Content-Security-Policy is there and the browser
  holds to it (an injected script, style, handler and remote image are all refused).
- Find: typing marks the matches in the list and the picture, Enter and Shift+Enter go
  from one to the next showing its path, Escape clears; matches in tool results and
  thinking count; CJK text; hidden branches counted, then searched once shown. The
  same in the viewer (its Export HTML writes the page through the server) and in the
  panel (the kernel finds; Enter switches the branch; its Export HTML writes the page
  beside the notebook).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lab_notebooks import open_and_run_all, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect
from test_hostile_content import GLOBALS, IDS, SENTINEL, assert_nothing_ran, hostile_session_file

from jupyter_tree_chat.history.store import parse_session

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"
PNG = (  # 4 × 4 red pixels
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAFElEQVR4nGM8ISfHAANMDEgANwcANHYBDK9q"
    "ubUAAAAASUVORK5CYII="
)


def sample_session() -> bytes:
    """Branches, a retry with a label, a question with an image, thinking, a tool round,
    CJK text and a hidden branch: every kind of thing a page must show."""
    usage = {"input_tokens": 20, "output_tokens": 8}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    tool_use = {"type": "tool_use", "id": "tu1", "name": "measure", "input": {"what": "picture"}}
    tool_result = {"type": "tool_result", "tool_use_id": "tu1", "content": "1 pixel wide, needle"}
    rows = [
        ("q1", None, "user", "What is a session tree? 会话树是什么？"),
        ("a1", "q1", "assistant", [
            {"type": "thinking", "thinking": "They want the idea in one line.", "signature": "s"},
            {"type": "text", "text": "A **session tree** keeps every branch; one path is sent."},
        ]),
        ("a1b", "q1", "assistant", "It is a tree of messages."),
        ("q2", "a1", "user", [{"type": "text", "text": "What is in this picture?"}, image]),
        ("a2", "q2", "assistant", [{"type": "text", "text": "Let me measure it."}, tool_use]),
        ("t2", "a2", "user", [tool_result]),
        ("a3", "t2", "assistant", "One pixel, then.\n\n```python\nprint('tree')\n```"),
        ("q3", "a1", "user", "Another way to ask, with a needle"),
        ("a4", "q3", "assistant", "A hidden answer."),
    ]  # fmt: skip
    lines = [{"type": "session", "version": 1, "created": 0}]
    for node_id, parent, role, content in rows:
        record = {"id": node_id, "parentId": parent, "message": {"role": role, "content": content}}
        if role == "assistant":
            record["meta"] = {"model": "claude-sonnet-4-6", "usage": usage}
        lines.append(record)
    lines += [
        {"type": "label", "id": "a1b", "label": "short"},
        {"type": "hidden", "id": "q3", "hidden": True},
        {"type": "leaf", "id": "a3"},
    ]
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in lines)


def export(source: Path, target: Path, *options: str, env: dict[str, str] | None = None) -> Path:
    subprocess.run(
        [sys.executable, "-m", "jupyter_tree_chat.cli", "export", str(source), "--format", "html",
         "-o", str(target), *options],
        check=True, env=None if env is None else {**os.environ, **env},
    )  # fmt: skip
    return target


def open_page(page, path: Path):
    page.goto(path.as_uri())
    view = page.locator("#jtc-page .jtc-view")
    expect(view).to_be_visible()
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    return view


def open_viewer(page, lab, name: str):
    page.goto(f"{lab.url}/lab/tree/{name}?reset")
    view = page.locator(VIEW)
    expect(view.locator(".jtc-tree .jtc-row").first).to_be_visible(timeout=60_000)
    expect(view.locator(".jtc-markdown").first).to_be_visible()
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    return view


#: what a person sees of a view, read from the DOM: comparable between two hosts
SEEN = """v => {
  const text = e => (e.innerText || '').replace(/\\s+/g, ' ').trim();
  return {
    header: text(v.querySelector('.jtc-header')),
    rows: [...v.querySelectorAll('.jtc-tree .jtc-row')]
      .map(r => [r.dataset.id, r.className, text(r)]),
    messages: [...v.querySelectorAll('.jtc-conversation .jtc-msg')]
      .map(m => [m.dataset.id, text(m)]),
    thinking: [...v.querySelectorAll('.jtc-conversation details.jtc-thinking')].map(d => d.open),
    thumbs: [...v.querySelectorAll('.jtc-conversation img.jtc-thumb')]
      .map(i => [i.src.slice(0, 22), i.naturalWidth]),
    compare: [...v.querySelectorAll('.jtc-compare .jtc-compare-column')].map(c => c.dataset.id),
    bar: text(v.querySelector('.jtc-tree-bar')).replace(' Export HTML', ''),
    picture: [...v.querySelectorAll('.jtc-pnode')].map(n => n.getAttribute('class')),
  };
}"""


def seen(view) -> dict:
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    return view.evaluate(SEEN)


def test_the_page_shows_what_the_viewer_shows(lab, page, page_log, tmp_path, screenshot):
    (lab.root / "share.chat.jsonl").write_bytes(sample_session())
    target = export(lab.root / "share.chat.jsonl", tmp_path / "share.html")
    steps = []
    for host in ("viewer", "page"):
        view = (
            open_viewer(page, lab, "share.chat.jsonl")
            if host == "viewer"
            else open_page(page, target)
        )
        states = [seen(view)]
        view.locator('.jtc-row[data-id="a1b"] .jtc-row-main').click()  # a retry: side by side
        expect(view.locator(".jtc-compare .jtc-compare-column")).to_have_count(2)
        states.append(seen(view))
        view.get_by_role("button", name="Show 1 hidden branch").click()
        expect(view.locator('.jtc-row[data-id="q3"]')).to_be_visible()
        states.append(seen(view))
        view.get_by_role("button", name="Picture", exact=True).click()
        expect(view.locator(".jtc-pnode").first).to_be_visible()
        states.append(seen(view))
        screenshot(host)
        steps.append(states)
    viewer, exported = steps
    first = exported[0]
    assert [r[0] for r in first["rows"]] == ["q1", "a1", "q2", "a2", "t2", "a3", "a1b"]  # q3 folded
    assert [m[0] for m in first["messages"]] == ["q1", "a1", "q2", "a2", "t2", "a3"]
    assert first["thinking"] == [False]  # folded
    assert first["thumbs"] == [
        ["data:image/png;base64,", 4]
    ]  # the thumbnail loaded (CSP allows it)
    assert "会话树是什么" in first["messages"][0][1]
    assert first["messages"][4][1] == "tool result t2 Info tool result"  # folded, like thinking
    assert exported[1]["compare"] == ["a1b", "a1"]
    for step, (ours, theirs) in enumerate(zip(exported, viewer, strict=True)):
        assert ours == theirs, f"step {step}"
    assert page_log.page_errors == []


def test_the_hostile_corpus_exported_runs_nothing_and_loads_nothing(
    page, page_log, tmp_path, screenshot
):
    source = tmp_path / "corpus.chat.jsonl"
    source.write_bytes(hostile_session_file())
    target = export(source, tmp_path / "corpus.html")
    view = open_page(page, target)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(2 * len(IDS))
    expect(view.locator(".jtc-conversation")).to_contain_text("Reply:")
    assert_nothing_ran(page, page_log, "#jtc-page")
    view.get_by_role("button", name="Picture", exact=True).click()
    nodes = view.locator(".jtc-pnode")
    expect(nodes.first).to_be_visible()
    for k in range(nodes.count()):
        nodes.nth(k).locator(".jtc-shape").dispatch_event("pointerover")
    view.get_by_role("button", name="List", exact=True).click()
    view.locator(".jtc-search-input").fill("<img src=x onerror")  # find hostile text too
    expect(view.locator(".jtc-row.jtc-match").first).to_be_visible()
    view.locator(".jtc-search-input").press("Enter")
    expect(view.locator(".jtc-search-count")).to_contain_text("1 of")
    screenshot("corpus")
    found = assert_nothing_ran(page, page_log, "#jtc-page")
    assert page_log.requests == [target.as_uri()]  # the page itself, and nothing else
    assert page.evaluate(GLOBALS, IDS) == []
    assert page_log.page_errors == []
    print(f"\nSECURITY xss page: elements={found['elements']} ran=0 requests=1 (itself)")

    # remote images in Markdown: placeholders, no request (the file's header is given the
    # `created` a header of this project's has, or the reader takes the file for pi's)
    data = (REPO / "tests" / "data" / "hostile.chat.jsonl").read_bytes()
    header, rest = data.split(b"\n", 1)
    (tmp_path / "hostile.chat.jsonl").write_bytes(header[:-1] + b',"created":0}\n' + rest)
    hostile = tmp_path / "hostile.html"
    page_log.requests.clear()
    view = open_page(page, export(tmp_path / "hostile.chat.jsonl", hostile))
    expect(view.locator("[data-jtc-blocked-src]").first).to_be_attached()
    assert page_log.requests == [hostile.as_uri()]


def test_the_csp_is_there_and_the_browser_holds_to_it(page, page_log, tmp_path):
    source = tmp_path / "s.chat.jsonl"
    source.write_bytes(sample_session())
    open_page(page, export(source, tmp_path / "s.html"))
    refused: list[tuple[str, str | None]] = []
    page.on("requestfailed", lambda request: refused.append((request.url, request.failure)))
    policy = page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert policy.startswith("default-src 'none'; script-src 'sha256-")
    page.evaluate(
        """sentinel => {
          window.__violations = [];
          document.addEventListener('securitypolicyviolation',
            e => window.__violations.push(e.effectiveDirective));
          const script = document.createElement('script');
          script.textContent = 'window.__cspRan = "script"';
          document.body.append(script);
          const style = document.createElement('style');
          style.textContent = 'body { background: rgb(255, 0, 0) }';
          document.head.append(style);
          const handler = document.createElement('div');
          handler.setAttribute('onclick', 'window.__cspRan = "handler"');
          document.body.append(handler);
          handler.click();
          const img = document.createElement('img');
          img.src = 'http://' + sentinel + '/csp.png';
          document.body.append(img);
        }""",
        SENTINEL,
    )
    page.wait_for_function("() => window.__violations.length >= 4")
    directives = sorted(page.evaluate("() => window.__violations"))
    assert directives == ["img-src", "script-src-attr", "script-src-elem", "style-src-elem"]
    assert page.evaluate("() => window.__cspRan") is None
    assert (
        page.evaluate("() => getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    )
    # Chromium names the image it was asked for, and refuses it before any network: "csp"
    page.wait_for_function("() => document.querySelector('img[src*=csp]').complete")
    assert [u for u in page_log.requests if SENTINEL in u] == [f"http://{SENTINEL}/csp.png"]
    assert refused == [(f"http://{SENTINEL}/csp.png", "csp")]


def check_search(page, view, *, shows_path: bool) -> None:
    """The search box over the sample session, wherever it is."""
    box = view.locator(".jtc-search-input")
    count = view.locator(".jtc-search-count")
    matches = view.locator(".jtc-tree .jtc-row.jtc-match")
    box.fill("needle")  # a tool result; and a question in the hidden branch
    expect(matches).to_have_count(1)
    expect(view.locator('.jtc-row.jtc-match[data-id="t2"]')).to_be_visible()
    expect(count).to_have_text("1 match")
    hidden = view.locator(".jtc-search-hidden")
    expect(hidden).to_have_text("+1 in a hidden branch")
    box.press("Enter")
    expect(count).to_have_text("1 of 1")
    expect(view.locator('.jtc-row.jtc-match-current[data-id="t2"]')).to_be_visible()
    if shows_path:
        expect(view.locator(".jtc-conversation .jtc-msg").last).to_have_attribute("data-id", "t2")
    hidden.click()  # the hidden branch shows, and is searched
    expect(matches).to_have_count(2)
    expect(hidden).to_be_hidden()
    box.press("Enter")
    expect(view.locator('.jtc-row.jtc-match-current[data-id="q3"]')).to_be_visible()
    expect(count).to_have_text("2 of 2")
    if shows_path:
        expect(view.locator(".jtc-conversation .jtc-msg").last).to_have_attribute("data-id", "q3")
    box.press("Shift+Enter")
    expect(count).to_have_text("1 of 2")
    box.fill("会话树")  # CJK
    expect(matches).to_have_count(1)
    expect(view.locator('.jtc-row.jtc-match[data-id="q1"]')).to_be_visible()
    box.fill("idea in one line")  # the model's thinking
    expect(view.locator('.jtc-row.jtc-match[data-id="a1"]')).to_be_visible()
    box.fill("TREE")  # case ignored ...
    expect(matches).to_have_count(4)  # q1, a1, a1b and a3's code
    view.locator('[data-search="case"]').click()  # ... unless asked
    expect(count).to_have_text("no match")
    view.locator('[data-search="case"]').click()
    view.locator('[data-search="regex"]').click()
    box.fill("pixel(,| wide)")
    expect(matches).to_have_count(2)  # t2 and a3
    box.fill("pixel(")
    expect(count).to_have_text("not a regular expression")
    view.locator('[data-search="regex"]').click()
    box.fill("tree")
    expect(matches).to_have_count(4)
    view.get_by_role("button", name="Picture", exact=True).click()  # the picture marks them too
    expect(view.locator(".jtc-pnode.jtc-match").first).to_be_visible()
    view.get_by_role("button", name="List", exact=True).click()
    box.press("Escape")
    expect(box).to_have_value("")
    expect(matches).to_have_count(0)
    expect(count).to_have_text("")


def test_find_in_the_page(page, page_log, tmp_path, screenshot):
    source = tmp_path / "s.chat.jsonl"
    source.write_bytes(sample_session())
    view = open_page(page, export(source, tmp_path / "s.html"))
    check_search(page, view, shows_path=True)
    screenshot("page-search")
    assert page_log.page_errors == []


def test_find_in_the_viewer_and_its_export_html(lab, page, page_log, tmp_path, screenshot):
    (lab.root / "viewer-find.chat.jsonl").write_bytes(sample_session())
    before = (lab.root / "viewer-find.chat.jsonl").read_bytes()
    view = open_viewer(page, lab, "viewer-find.chat.jsonl")
    check_search(page, view, shows_path=True)
    view.get_by_role("button", name="Export HTML").click()
    expect(page.locator(".jtc-viewer[data-jtc-exported]")).to_have_attribute(
        "data-jtc-exported", "viewer-find.chat.html"
    )
    expect(page.locator(".Toastify")).to_contain_text("Wrote viewer-find.chat.html")
    screenshot("viewer-exported")
    written = lab.root / "viewer-find.chat.html"
    assert (lab.root / "viewer-find.chat.jsonl").read_bytes() == before
    # a page of its own, so a request JupyterLab's page still makes as it goes (saving
    # its workspace) is not counted as the exported page's
    exported = page.context.new_page()
    requests: list[str] = []
    exported.on("request", lambda r: requests.append(r.url))
    view = open_page(exported, written)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(7)
    wait_until_still(exported)  # whatever it would load, it has tried
    assert requests == [written.as_uri()]
    exported.close()


PANEL_SETUP = """
get_ipython().run_line_magic("load_ext", "jupyter_tree_chat")
get_ipython().run_line_magic("config", "TreeChat.offline_delay = 0")
"""


def test_find_in_the_panel_asks_the_kernel_and_enter_switches_the_branch(lab, page, screenshot):
    notebook = lab.root / "panel-find.ipynb"
    write_notebook(
        notebook,
        [
            PANEL_SETUP,
            "%%chat\nWhat is a needle in a haystack?",
            "%%chat\nAnd in a session tree?",
            "%chat edit 1 What is a pin in a haystack",  # (a line ending in ? is IPython's help)
            "%chat panel",
        ],
    )
    open_and_run_all(page, lab, notebook.name)
    panel = page.locator(".jtc-panel")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(6, timeout=90_000)
    tree = parse_session((lab.root / "panel-find.chat.jsonl").read_bytes()).tree
    needle = next(n.id for n in tree if n.text == "What is a needle in a haystack?")
    box = panel.locator(".jtc-search-input")
    box.fill("needle")  # the kernel finds the question and its offline answer (which quotes it)
    matches = panel.locator(".jtc-tree .jtc-row.jtc-match")
    expect(matches).to_have_count(2)
    expect(panel.locator(f'.jtc-row.jtc-match[data-id="{needle}"]')).to_be_visible()
    expect(panel.locator(f'.jtc-row.jtc-leaf[data-id="{needle}"]')).to_have_count(0)
    box.press("Enter")  # off the current branch: the panel switches to it
    expect(panel.locator(".jtc-conversation .jtc-msg").first).to_have_attribute("data-id", needle)
    expect(panel.locator(".jtc-search-count")).to_have_text("1 of 2")
    screenshot("panel-search")
    box.press("Escape")
    expect(matches).to_have_count(0)
    panel.get_by_role("button", name="Export HTML").click()
    expect(panel.locator(".jtc-status-note")).to_contain_text("panel-find.chat.html")
    written = lab.root / "panel-find.chat.html"
    view = open_page(page.context.new_page(), written)  # (an http page may not open file://)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(6)
    assert "needle" in view.locator(".jtc-conversation").inner_text()


def test_a_page_exported_in_chinese_speaks_chinese_throughout(page, page_log, tmp_path):
    source = tmp_path / "s.chat.jsonl"
    source.write_bytes(sample_session())
    chinese = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}
    view = open_page(page, export(source, tmp_path / "s.html", env=chinese))
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    expect(page.locator(".jtc-page-note")).to_contain_text("会话")  # the kernel's words
    expect(view.get_by_role("button", name="Picture", exact=True)).to_have_count(0)
    view.get_by_role("button", name="显示 1 个隐藏的分支").click()  # a plural, too
    view.get_by_role("button", name="图", exact=True).click()  # the front end's words
    expect(view.locator(".jtc-pnode").first).to_be_visible()
    view.get_by_role("button", name="列表", exact=True).click()
    expect(view.locator(".jtc-tree .jtc-row").first).to_be_visible()
    english = open_page(page.context.new_page(), export(source, tmp_path / "en.html"))
    assert english.page.locator("html").get_attribute("lang") == "en"
    expect(english.get_by_role("button", name="Picture", exact=True)).to_be_visible()
    assert page_log.requests == [(tmp_path / "s.html").as_uri()]  # the catalog is inside
    assert page_log.page_errors == []


def test_an_image_is_a_thumbnail_and_base64_is_kept_whole(page, tmp_path):
    """The PNG in the sample decodes in the page (its bytes came through the data block)."""
    source = tmp_path / "s.chat.jsonl"
    source.write_bytes(sample_session())
    view = open_page(page, export(source, tmp_path / "s.html"))
    thumb = view.locator("img.jtc-thumb")
    expect(thumb).to_have_count(1)
    src = thumb.get_attribute("src")
    assert base64.b64decode(src.split(",", 1)[1]) == base64.b64decode(PNG)
