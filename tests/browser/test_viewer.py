"""The `*.chat.jsonl` viewer in a real JupyterLab: what a user sees when opening a session
file (tree, problems, side by side, details), that it follows the file on disk, that it is
the default and in "Open With" and the palette, that hostile text runs nothing, and that
it shows other tools' files (Claude Code, ChatGPT) through "Open With", read by the
server extension, saying which format it read."""

from __future__ import annotations

import json

import pytest
from helpers.import_samples import chatgpt_export
from page_state import wait_until_still
from playwright.sync_api import expect

from jupyter_tree_chat import formats
from jupyter_tree_chat.history.store import parse_session

pytestmark = pytest.mark.browser

#: the viewer in the current main-area tab (hidden tabs keep their DOM)
VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"


def open_viewer(page, lab, name: str):
    page.goto(f"{lab.url}/lab/tree/{name}?reset")  # ?reset: no layout from earlier tests
    view = page.locator(VIEW)
    expect(view).to_be_visible(timeout=60_000)
    return view


def rendered(view) -> None:
    """Wait until every Markdown body has been through the renderer."""
    expect(view.locator(".jtc-markdown").first).to_be_visible()
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)


def test_viewer_shows_tree_problems_and_siblings(lab, page, page_log, screenshot):
    name = lab.put("branches.chat.jsonl")
    expected = parse_session((lab.root / name).read_bytes())
    view = open_viewer(page, lab, name)

    # the tree: every node, in file order under its parent; the current path highlighted
    rows = view.locator(".jtc-tree .jtc-row")
    expect(rows).to_have_count(len(expected.tree))
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.id)") == [
        "u1", "a1", "u2", "a3", "a2", "u1b", "a4"
    ]  # fmt: skip
    on_path = view.locator(".jtc-tree .jtc-row.jtc-on-path")
    assert on_path.evaluate_all("rs => rs.map(r => r.dataset.id)") == ["u1", "a1", "u2", "a3"]
    expect(view.locator('.jtc-row[data-id="a3"]')).to_have_class(
        "jtc-row jtc-role-assistant jtc-on-path jtc-on-selected-path jtc-selected jtc-leaf"
    )
    expect(view.locator('.jtc-row[data-id="a1"] .jtc-position')).to_have_text("1/2")
    expect(view.locator('.jtc-row[data-id="a2"] .jtc-label')).to_have_text("concise")
    expect(view.locator('.jtc-row[data-id="a3"] .jtc-interrupted')).to_be_visible()

    # the problems, worded as the command line's `check` prints them
    problems = view.locator(".jtc-problem")
    expect(problems).to_have_text([str(p) for p in expected.problems])
    assert [str(p) for p in expected.problems] == [
        "line 5: not valid JSON (ignored)",
        "line 9: node 'lost' is an orphan: its parent 'never-written' has not appeared "
        "earlier (not attached)",
        "line 13: torn last line: an incomplete record of 67 bytes (ignored)",
    ]

    # the selected node's path as a conversation (the file's leaf is selected first)
    rendered(view)
    messages = view.locator(".jtc-conversation .jtc-msg")
    assert messages.evaluate_all("ms => ms.map(m => m.dataset.id)") == ["u1", "a1", "u2", "a3"]
    expect(messages.nth(1).locator(".jtc-markdown strong")).to_have_text("every")
    expect(messages.nth(3).locator("pre code")).to_contain_text("└─ a2")

    # details of the interrupted answer
    details = view.locator(".jtc-details")
    expect(details.locator('dd[data-key="model"]')).to_have_text("claude-sonnet-4-6")
    expect(details.locator('dd[data-key="interrupted"]')).to_have_text("yes")
    expect(details.locator('dd[data-key="input tokens"]')).to_have_text("40")
    expect(details.locator('dd[data-key="output tokens"]')).to_have_text("9")
    screenshot("leaf")

    # the two retries side by side, rendered; their word differences marked once asked
    view.locator('.jtc-row[data-id="a2"] .jtc-row-main').click()
    expect(details.locator('dd[data-key="model"]')).to_have_text("claude-haiku-4-5")
    columns = view.locator(".jtc-compare .jtc-compare-column")
    expect(columns).to_have_count(2)
    assert columns.evaluate_all("cs => cs.map(c => c.dataset.id)") == ["a2", "a1"]
    expect(columns.nth(1).locator("strong")).to_have_text("every")  # rendered, not source
    expect(view.locator(".jtc-compare mark.jtc-diff")).to_have_count(0)
    view.locator('.jtc-compare [data-act="differences"]').click()
    expect(columns.nth(0).locator("mark.jtc-diff")).to_have_text(["each", "only"])
    expect(columns.nth(1).locator("mark.jtc-diff")).to_have_text(["every"])
    expect(columns.nth(1).locator("strong mark.jtc-diff")).to_have_text("every")
    expect(columns.nth(1).locator(".jtc-model")).to_have_text("claude-sonnet-4-6")
    assert view.locator(".jtc-conversation .jtc-msg").evaluate_all(
        "ms => ms.map(m => m.dataset.id)"
    ) == ["u1", "a2"]
    screenshot("siblings")

    # a user prompt with two answers shows the answers side by side too
    view.locator('.jtc-row[data-id="u1"] .jtc-row-main').click()
    expect(view.locator(".jtc-compare .jtc-compare-column")).to_have_count(2)

    # collapsing a branch point hides its subtree
    view.locator('.jtc-row[data-id="u1"] .jtc-toggle').click()
    expect(rows).to_have_count(3)
    view.locator('.jtc-row[data-id="u1"] .jtc-toggle').click()
    expect(rows).to_have_count(len(expected.tree))

    assert page_log.dialogs == []
    assert page_log.page_errors == []


def test_viewer_reloads_when_the_file_changes_on_disk(lab, page):
    name = lab.put("branches.chat.jsonl", "growing.chat.jsonl")
    view = open_viewer(page, lab, name)
    rows = view.locator(".jtc-tree .jtc-row")
    expect(rows).to_have_count(7)
    record = {"id": "a6", "parentId": "a4", "message": {"role": "user", "content": "appended"}}
    with (lab.root / name).open("a", encoding="utf-8") as f:
        f.write("\n" + json.dumps(record) + "\n")  # finishes the torn line, then a node
    expect(rows).to_have_count(8)
    expect(view.locator('.jtc-row[data-id="a6"]')).to_be_visible()
    expected = parse_session((lab.root / name).read_bytes())
    expect(view.locator(".jtc-problem")).to_have_text([str(p) for p in expected.problems])


def test_viewer_is_the_default_and_in_open_with_and_the_palette(lab, page, screenshot):
    name = lab.put("branches.chat.jsonl", "from-browser.chat.jsonl")
    page.goto(f"{lab.url}/lab?reset")
    listing = page.locator(".jp-DirListing-content")
    item = listing.locator(f'.jp-DirListing-item[title^="Name: {name}"]')
    expect(item).to_be_visible(timeout=60_000)

    # "Open With" lists the viewer
    item.click(button="right")
    page.locator('.lm-Menu-item:has-text("Open With")').first.hover()
    expect(page.get_by_role("menuitem", name="Chat Session Viewer")).to_be_visible()
    screenshot("open-with")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")

    # double click opens the viewer (the default for *.chat.jsonl), not JSON or text
    item.dblclick()
    view = page.locator(VIEW)
    expect(view).to_be_visible()
    expect(page.locator(".jp-FileEditor")).to_have_count(0)
    expect(view.locator(".jtc-title")).to_have_text(name)
    page.locator(
        ".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabCloseIcon"
    ).click()
    expect(view).to_have_count(0)

    # the command palette entry (its dialog lists folders and session files only)
    page.keyboard.press("Control+Shift+C")
    palette = page.locator("#modal-command-palette")
    palette.locator("input").fill("Open Chat Session")
    entry = palette.locator('.lm-CommandPalette-item:has-text("Open Chat Session File")')
    expect(entry).to_be_visible()
    entry.click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator(f'.jp-DirListing-item[title^="Name: {name}"]')).to_be_visible()
    screenshot("palette-dialog")
    dialog.locator(f'.jp-DirListing-item[title^="Name: {name}"]').click()
    dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
    expect(view).to_be_visible()

    # the command also takes a path
    other = lab.put("branches.chat.jsonl", "by-command.chat.jsonl")
    page.evaluate(
        "async p => { await window.jupyterapp.commands.execute(OPEN, {path: p}); }".replace(
            "OPEN", "'jupyter-tree-chat:open'"
        ),
        other,
    )
    expect(page.locator(VIEW).locator(".jtc-title")).to_have_text(other)
    expect(page.locator(".jtc-viewer .jtc-view")).to_have_count(2)


def test_hostile_file_runs_no_script_and_loads_no_remote_image(lab, page, page_log, screenshot):
    name = lab.put("hostile.chat.jsonl")
    expected = parse_session((lab.root / name).read_bytes())
    view = open_viewer(page, lab, name)
    rows = view.locator(".jtc-tree .jtc-row")
    expect(rows).to_have_count(len(expected.tree))
    rendered(view)
    # every payload reaches the page: the conversation holds all of them, as do the tree
    # (ids, first lines), the details (model), the labels and the problem list
    path = [n.id for n in expected.tree.path_nodes(expected.tree.leaf)]
    expect(view.locator(".jtc-conversation .jtc-msg")).to_have_count(len(path))
    expect(view.locator(".jtc-problem")).to_have_text([str(p) for p in expected.problems])
    expect(view.locator('.jtc-row[data-id="a0"] .jtc-label')).to_have_text(
        "<script>window.__xss=1</script>"
    )
    # open the tool_use parts and the sibling compare, then the node with a markup id
    for summary in view.locator(".jtc-part summary").all():
        summary.click()
    view.locator('.jtc-row[data-id="a0"] .jtc-row-main').click()
    expect(view.locator(".jtc-compare .jtc-compare-column")).to_have_count(2)
    rendered(view)
    markup_id = view.locator('.jtc-row[data-id^="<img"]')
    assert markup_id.get_attribute("data-id") == '<img src=x onerror="window.__xss=1">'
    markup_id.locator(".jtc-row-main").click()
    expect(view.locator(".jtc-conversation .jtc-msg")).to_have_count(len(path) + 1)
    rendered(view)
    wait_until_still(page)  # every load finished or failed: onerror/onload had their turn
    screenshot("rendered")

    assert page.evaluate("() => window.__xss") is None, "a payload ran"
    assert page.evaluate("() => window.parent.__xss") is None
    assert page_log.dialogs == [], "a payload opened a dialog"
    assert not [u for u in page_log.requests if "remote.invalid" in u], "a remote image loaded"
    assert page_log.page_errors == []
    # what is left is inert: no scripts, handlers or javascript: URLs in the viewer's DOM
    leftovers = view.evaluate(
        """v => {
          const bad = [];
          for (const e of v.querySelectorAll('*')) {
            const tags = ['SCRIPT', 'STYLE', 'IFRAME', 'OBJECT', 'EMBED', 'FORM', 'META', 'BASE',
                          'LINK'];
            if (tags.includes(e.tagName)) bad.push(e.tagName);
            if (e.tagName === 'BUTTON' && e.closest('.jtc-msg-body')) bad.push(e.tagName);
            for (const a of e.attributes) {
              if (/^on/i.test(a.name)) bad.push(a.name);
              const url = /^\\s*(javascript|data):/i.test(a.value);
              if (url && a.name !== 'data-jtc-blocked-src') bad.push(a.value);
            }
          }
          return bad;
        }"""
    )
    assert leftovers == []
    # and the remote images are kept as placeholders naming their URL
    blocked = view.locator("[data-jtc-blocked-src]")
    assert "http://remote.invalid/pixel.png" in blocked.evaluate_all(
        "es => es.map(e => e.dataset.jtcBlockedSrc)"
    )


def test_a_claude_code_file_opens_with_the_viewer_read_by_the_server(lab, page, screenshot):
    name = lab.put("import/claude-code-edge-cases.jsonl")
    before = (lab.root / name).read_bytes()
    expected = formats.read([formats.open_source(lab.root / name)])
    page.goto(f"{lab.url}/lab?reset")
    item = page.locator(f'.jp-DirListing-content .jp-DirListing-item[title^="Name: {name}"]')
    expect(item).to_be_visible(timeout=60_000)
    item.click(button="right")
    page.locator('.lm-Menu-item:has-text("Open With")').first.hover()
    page.get_by_role("menuitem", name="Chat Session Viewer").click()

    view = page.locator(VIEW)
    expect(view).to_be_visible()
    expect(view.locator(".jtc-title")).to_have_text(f"{name} (read as a Claude Code session)")
    expect(page.locator(".jtc-document:not(.lm-mod-hidden) .jtc-viewer")).to_have_attribute(
        "data-jtc-format", "claude-code"
    )
    # the nodes are the source's uuids, in the tree the command line shows
    rows = view.locator(".jtc-tree .jtc-row")
    expect(rows).to_have_count(expected.nodes)
    ids = [r["id"] for r in expected.records if "type" not in r]
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.id)") == ids
    # the source's problems, by line, as `jupyter tree-chat check` words them
    problems = view.locator(".jtc-problem")
    expect(problems).to_have_text([f"line {p.line}: {p.message}" for p in expected.problems])
    assert problems.first.text_content().startswith("line 10: user record 'edge_010'")
    rendered(view)
    screenshot("claude-code")
    assert (lab.root / name).read_bytes() == before  # read, never written


def test_a_chatgpt_export_shows_its_conversations_and_problems_by_key(lab, page):
    export = chatgpt_export()
    export[0]["mapping"]["g-a2"]["message"] = "not an object"
    (lab.root / "conversations.json").write_text(json.dumps(export))
    page.goto(f"{lab.url}/lab?reset")
    item = page.locator(
        '.jp-DirListing-content .jp-DirListing-item[title^="Name: conversations.json"]'
    )
    expect(item).to_be_visible(timeout=60_000)
    item.click(button="right")
    page.locator('.lm-Menu-item:has-text("Open With")').first.hover()
    page.get_by_role("menuitem", name="Chat Session Viewer").click()
    view = page.locator(VIEW)
    expect(view.locator(".jtc-title")).to_have_text(
        "conversations.json (read as a ChatGPT session)"
    )
    expect(view.locator('.jtc-row[data-id="g-u1"] .jtc-label')).to_have_text("Parabola")
    expect(view.locator(".jtc-problem")).to_have_text(
        ["conversation 'conv-aaaa-1111' node 'g-a2': message is not an object (bridged over)"]
    )
