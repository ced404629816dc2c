"""What an answer saw, in both views: past a context budget, the panel in a notebook and
the ``*.chat.jsonl`` viewer grey the messages its request left out (read from the
answer's ``meta.context``, the same in both), say how many exchanges it saw, and stay
readable in JupyterLab Light and Dark."""

from __future__ import annotations

import pytest
from contrast import CONTRAST_JS, assert_readable, set_theme
from lab_notebooks import open_and_run_all, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.browser

VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"
LONG = "tell me more about the branches of a session tree " * 8


def unseen_of(view) -> list[str]:
    return view.locator(".jtc-conversation .jtc-msg.jtc-unseen").evaluate_all(
        "ms => ms.map(m => m.dataset.id)"
    )


def test_panel_and_viewer_grey_what_the_last_answer_did_not_see(lab, page, page_log, screenshot):
    write_notebook(
        lab.root / "budget.ipynb",
        [
            "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'",
            "from jupyter_tree_chat.kernel.sessions import current_session\n"
            f"for k in range(8):\n    current_session().ask(f'Question {{k}}: {LONG}')",
            "%%chat --budget 1200\nWhat was my first question?",
            "%chat panel",
        ],
    )
    cells = open_and_run_all(page, lab, "budget.ipynb").locator(".jp-Cell")
    tree = load_file(lab.root / "budget.chat.jsonl").tree
    path = tree.path_nodes(tree.leaf)
    context = path[-1].meta["context"]
    first = [node.id for node in path].index(context["from"])
    expected = [node.id for node in path[:first]]
    saw = context["exchanges"] - context["dropped"]
    assert 0 < saw < 9 == context["exchanges"] and expected

    panel = cells.nth(3).locator(".jtc-panel")
    conversation = panel.locator(".jtc-conversation")
    expect(conversation.locator(".jtc-msg")).to_have_count(len(path), timeout=60_000)
    note = f"The last answer saw {saw} of 9 exchanges"
    expect(conversation.locator(".jtc-unseen-note")).to_contain_text(note)
    expect(conversation.locator(".jtc-msg.jtc-unseen")).to_have_count(len(expected))
    assert unseen_of(panel) == expected
    sent = conversation.locator(f'.jtc-msg[data-id="{context["from"]}"]')
    expect(sent).not_to_have_class("jtc-unseen")
    expect(sent.locator(".jtc-unseen-badge")).to_have_count(0)
    unseen = conversation.locator(f'.jtc-msg[data-id="{expected[0]}"]')
    expect(unseen.locator(".jtc-unseen-badge")).to_have_text("not sent")
    panel.scroll_into_view_if_needed()
    screenshot("panel")
    panel_background = unseen.evaluate("e => getComputedStyle(e).backgroundColor")

    page.evaluate(
        "p => window.jupyterapp.commands.execute('jupyter-tree-chat:open', {path: p})",
        "budget.chat.jsonl",
    )
    view = page.locator(VIEW)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(len(tree), timeout=60_000)
    expect(view.locator(".jtc-conversation .jtc-unseen-note")).to_contain_text(note)
    expect(view.locator(".jtc-conversation .jtc-msg.jtc-unseen")).to_have_count(len(expected))
    assert unseen_of(view) == expected
    viewer_unseen = view.locator(f'.jtc-conversation .jtc-msg[data-id="{expected[0]}"]')
    assert viewer_unseen.evaluate("e => getComputedStyle(e).backgroundColor") == panel_background
    # selecting a question above the cut: the path to it has no answer that left anything out
    view.locator(f'.jtc-row[data-id="{expected[0]}"] .jtc-row-main').click()
    expect(view.locator(".jtc-conversation .jtc-msg.jtc-unseen")).to_have_count(0)
    view.locator(f'.jtc-row[data-id="{tree.leaf}"] .jtc-row-main').click()
    expect(view.locator(".jtc-conversation .jtc-msg.jtc-unseen")).to_have_count(len(expected))
    try:
        for theme in ("light", "dark"):
            set_theme(page, theme)
            wait_until_still(page)  # the theme's stylesheet and fonts are in
            screenshot(f"viewer-{theme}")
            greyed = viewer_unseen.evaluate(CONTRAST_JS)  # a message left out, all its text
            assert_readable(greyed, ["span.jtc-role", "span.jtc-unseen-badge", "p"])
            whole = view.locator(".jtc-conversation").evaluate(CONTRAST_JS)
            assert_readable(whole, ["p.jtc-unseen-note"])
    finally:
        set_theme(page, "light")
    assert page_log.page_errors == []
