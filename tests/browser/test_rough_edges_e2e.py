"""Rough edges of issue 38 in a real JupyterLab and Chromium, with the offline model.

- 3: a panel already open greys what a ``--budget`` answer left out, as soon as it lands.
- 9: a cell's control shows one answer at a time: stepping in it shows the chosen answer
  in place of the printed one (hidden meanwhile); a switch elsewhere (the panel, another
  cell) changes only the bar, never adds a copy to a cell.
- 10: after a switch in the panel (← on a message, a click on a row) the keys still work.
- 11: a click on a middle node goes down its newest answers, in the list and the picture.
- 12: the picture view leaves the conversation room for its buttons on one line.
- 14: a language set with ``%chat language`` reaches the controls.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_notebooks import write_notebook
from playwright.sync_api import expect
from test_kernel_language import open_notebook, run_cell

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.browser

LONG = "tell me more about the branches of a session tree " * 8
SETUP = "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'"


@pytest.fixture(autouse=True)
def closed_after(page: Any) -> Iterator[None]:
    """Each test's notebook saved and its tab closed after it: the lab's workspace would
    bring it back for later tests, whose cells it could be taken for."""
    yield
    page.evaluate(
        "async () => { const c = window.jupyterapp.commands;"
        " await c.execute('docmanager:save'); await c.execute('application:close-all'); }"
    )


def notebook_run(page: Any, lab: Any, name: str, cells: list[str], run: int) -> Any:
    """Write notebook ``name`` with ``cells``, open it, run its first ``run`` cells one by
    one; returns the locator of its cells."""
    write_notebook(lab.root / name, cells)
    open_notebook(page, lab, name)
    widget_id = page.evaluate("window.jupyterapp.shell.currentWidget.id")
    for index in range(run):
        run_cell(page, index)
    return page.locator(f"[id='{widget_id}'] .jp-Cell")  # this notebook's, not an earlier tab's


def bodies_shown(cells: Any) -> list[str]:
    """The text each cell's control shows below its bar (empty: none)."""
    return cells.locator(".jtc-turn .jtc-turn-body").evaluate_all(
        "bs => bs.map(b => b.innerText.trim())"
    )


def test_controls_show_one_answer_and_a_panel_switch_adds_nothing(lab, page, page_log, screenshot):
    cells = notebook_run(
        page,
        lab,
        "rough-controls.ipynb",
        [SETUP, "%%chat\nWhat is 1 + 1", "%%chat\nWhat is 2 + 2", "%chat retry", "%chat panel"],
        5,
    )
    second = cells.nth(2)
    panel = cells.nth(4).locator(".jtc-panel")
    expect(panel.locator(".jtc-conversation .jtc-msg")).to_have_count(4, timeout=60_000)
    expect(second.locator(".jtc-turn .jtc-switcher, .jtc-turn .jtc-turn-bar")).not_to_have_count(0)
    # the retry made answer 2/2 current: cell 2's control says so in its bar, adds nothing
    hint = second.locator(".jtc-printed-hint")
    expect(hint).to_contain_text("the cell shows answer 1")
    assert bodies_shown(cells) == ["", "", ""]
    heights = cells.evaluate_all("cs => cs.map(c => c.getBoundingClientRect().height)")

    # a switch in the panel: ← on the last answer goes to 1/2, → back to 2/2
    tree = load_file(lab.root / "rough-controls.chat.jsonl").tree
    answers = [n.id for n in tree.children(tree.get(tree.leaf).parent_id)]
    last = panel.locator(f'.jtc-conversation .jtc-msg[data-id="{answers[1]}"]')
    last.focus()
    page.keyboard.press("ArrowLeft")
    first = panel.locator(f'.jtc-conversation .jtc-msg[data-id="{answers[0]}"]')
    expect(first).to_be_visible(timeout=30_000)
    # 10: the focus stayed on the message at that depth: the next key works
    expect(first).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(last).to_be_visible(timeout=30_000)
    expect(last).to_be_focused()
    # a click on the message's ‹ switches too, and leaves the focus where → works next
    last.locator('.jtc-arrow[data-step="-1"]').click()
    expect(first).to_be_visible(timeout=30_000)
    expect(first).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(last).to_be_visible(timeout=30_000)
    expect(last).to_be_focused()
    expect(hint).to_contain_text("the cell shows answer 1")
    assert bodies_shown(cells) == ["", "", ""]  # no copy expanded in any cell
    after = cells.evaluate_all("cs => cs.map(c => c.getBoundingClientRect().height)")
    assert [round(a - b) for a, b in zip(after[:4], heights[:4], strict=True)] == [0, 0, 0, 0]

    # 9: ‹ in cell 2's control: answer 1 is the printed one: nothing below, nothing hidden
    bar = second.locator(".jtc-turn-bar")
    bar.get_by_role("button", name="‹").click()
    expect(hint).to_have_count(0, timeout=30_000)
    assert bodies_shown(cells) == ["", "", ""]
    # › there: answer 2 is shown in place of the printed one, which is hidden meanwhile
    bar.get_by_role("button", name="›").click()
    body = second.locator(".jtc-turn-body")
    expect(body).to_contain_text("Answer 2/2, shown in place of the one this cell printed")
    printed = second.locator(".jp-OutputArea-child.jtc-folded-by-turn")
    expect(printed.first).to_be_hidden()
    shown_answers = second.locator(".jp-OutputArea-child:visible").filter(has_text="2 + 2 = 4")
    expect(shown_answers).to_have_count(1)  # one answer in the cell, not two
    screenshot("control-in-place")
    # ‹ again: the printed answer is back, the copy gone
    bar.get_by_role("button", name="‹").click()
    expect(printed).to_have_count(0, timeout=30_000)
    assert bodies_shown(cells) == ["", "", ""]
    assert page_log.page_errors == []


def test_an_open_panel_greys_what_a_budget_answer_left_out(lab, page, page_log):
    cells = notebook_run(
        page,
        lab,
        "rough-budget.ipynb",
        [
            SETUP,
            "from jupyter_tree_chat.kernel.sessions import current_session\n"
            f"for k in range(8):\n    current_session().ask(f'Question {{k}}: {LONG}')",
            "%chat panel",
            "%%chat --budget 1200\nWhat was my first question?",
            "%%chat --budget 1200\nAnd my second?",
        ],
        3,
    )
    conversation = cells.nth(2).locator(".jtc-panel .jtc-conversation")
    expect(conversation.locator(".jtc-msg")).to_have_count(16, timeout=60_000)
    expect(conversation.locator(".jtc-msg.jtc-unseen")).to_have_count(0)
    for index, questions in ((3, 9), (4, 10)):  # the panel is open when each answer lands
        run_cell(page, index)
        expect(conversation.locator(".jtc-msg")).to_have_count(2 * questions, timeout=60_000)
        tree = load_file(lab.root / "rough-budget.chat.jsonl").tree
        path = tree.path_nodes(tree.leaf)
        context = path[-1].meta["context"]
        left_out = [n.id for n in path[: [n.id for n in path].index(context["from"])]]
        assert left_out
        saw = context["exchanges"] - context["dropped"]
        note = f"The last answer saw {saw} of {questions} exchanges"
        expect(conversation.locator(".jtc-unseen-note")).to_contain_text(note)
        expect(conversation.locator(".jtc-msg.jtc-unseen")).to_have_count(len(left_out))
        greyed = conversation.locator(".jtc-msg.jtc-unseen").evaluate_all(
            "ms => ms.map(m => m.dataset.id)"
        )
        assert greyed == left_out
    assert page_log.page_errors == []


def test_picture_and_list_agree_on_a_middle_node_and_keep_buttons_on_one_line(
    lab, page, page_log, screenshot
):
    page.set_viewport_size({"width": 1024, "height": 900})  # a laptop's window
    cells = notebook_run(
        page,
        lab,
        "rough-picture.ipynb",
        [
            SETUP,
            "%%chat\nWhat is 1 + 1",
            "%%chat\nWhat is 2 + 2",
            "%chat retry",
            "%%chat\nWhat is 3 + 3",
            "%chat panel",
        ],
        6,
    )
    panel = cells.nth(5).locator(".jtc-panel")
    expect(panel.locator(".jtc-conversation .jtc-msg")).to_have_count(6, timeout=60_000)
    tree = load_file(lab.root / "rough-picture.chat.jsonl").tree
    path = tree.path_nodes(tree.leaf)
    question_two = path[2]
    older, newer = [n.id for n in tree.children(question_two.id)]
    assert path[3].id == newer
    # go to the older answer (a leaf): exactly there
    panel.locator(f'.jtc-tree .jtc-row[data-id="{older}"] .jtc-row-main').click()
    conversation = panel.locator(".jtc-conversation .jtc-msg")
    expect(conversation).to_have_count(4, timeout=30_000)
    expect(conversation.last).to_have_attribute("data-id", older)
    # 10: the row clicked keeps the focus: ↑ moves it on
    focused = panel.locator(f'.jtc-tree .jtc-row[data-id="{older}"] .jtc-row-main')
    expect(focused).to_be_focused()
    # 11: a middle node off the branch (the newer answer, asked on from): its newest answers
    newest_leaf = tree.deepest_leaf(newer)
    panel.locator(f'.jtc-tree .jtc-row[data-id="{newer}"] .jtc-row-main').click()
    expect(conversation.last).to_have_attribute("data-id", newest_leaf, timeout=30_000)
    title = panel.locator(f'.jtc-tree .jtc-row[data-id="{newer}"] .jtc-row-main')
    assert "down its newest answers" in (title.get_attribute("title") or "")
    panel.locator(f'.jtc-tree .jtc-row[data-id="{older}"] .jtc-row-main').click()
    expect(conversation.last).to_have_attribute("data-id", older, timeout=30_000)
    # the same click in the picture goes to the same leaf
    list_buttons = panel.locator(".jtc-conversation .jtc-actions .jtc-button")
    one_line = max(b["height"] for b in [x.bounding_box() for x in list_buttons.all()] if b)
    panel.get_by_role("button", name="Picture", exact=True).click()
    node = panel.locator(f'.jtc-picture .jtc-pnode[data-id="{newer}"] .jtc-shape')
    expect(node).to_be_visible()
    node.click()
    expect(conversation.last).to_have_attribute("data-id", newest_leaf, timeout=30_000)
    # 12: the conversation keeps room: every button still one line high
    screenshot("picture-mode")
    heights = [b["height"] for b in [x.bounding_box() for x in list_buttons.all()] if b]
    assert heights and max(heights) <= one_line + 1, (heights, one_line)
    right = panel.locator(".jtc-right").bounding_box()
    main = panel.locator(".jtc-main").bounding_box()
    assert right is not None and main is not None
    assert right["width"] >= min(440, main["width"] / 2) - 2, (right, main)  # never squeezed
    assert page_log.page_errors == []


def test_a_language_set_in_the_kernel_reaches_the_controls(lab, page, page_log):
    cells = notebook_run(
        page,
        lab,
        "rough-language.ipynb",
        [SETUP, "%%chat\nWhat is 1 + 1", "%chat language zh_CN", "%%chat\nWhat is 2 + 2",
         "%chat language auto"],
        2,
    )  # fmt: skip
    first = cells.nth(1).locator(".jtc-turn-bar")
    expect(first.get_by_role("button", name="↻ Retry")).to_be_visible(timeout=60_000)
    run_cell(page, 2)  # the control already shown turns Chinese
    expect(first.get_by_role("button", name="↻ 重试")).to_be_visible(timeout=30_000)
    run_cell(page, 3)  # a new one speaks it from the start, under a Chinese footer
    second = cells.nth(3).locator(".jtc-turn-bar")
    expect(second.get_by_role("button", name="↻ 重试")).to_be_visible(timeout=60_000)
    expect(second.get_by_role("button", name="✎ 编辑")).to_be_visible()
    run_cell(page, 4)  # auto: back to JupyterLab's language
    expect(first.get_by_role("button", name="↻ Retry")).to_be_visible(timeout=30_000)
    expect(second.get_by_role("button", name="↻ Retry")).to_be_visible()
    assert page_log.page_errors == []
