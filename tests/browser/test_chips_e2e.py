"""A question reads as it was typed, in a real JupyterLab with a real kernel: after
``What does {df} show?`` on a 100-row DataFrame, the panel's tree row, the picture's
tooltip and ``%chat tree`` show the chip ``df · DataFrame 100×2`` and not the table; the
conversation folds the table to that chip and a click opens it; editing the question in
the panel after ``df`` changed sends the new table (the fake Messages API's recorded
request shows it) and says so. In the viewer, an older session file without the typed
text still shows its question as it was sent, beside one that keeps it.

The real SDK talks to the local fake Messages API started in the test.
"""

from __future__ import annotations

import json
import re
import time

import pandas
import pytest
from fakes.fake_anthropic import FakeAnthropic
from lab_notebooks import open_and_run_all, write_notebook
from playwright.sync_api import expect

from jupyter_tree_chat.context import Limits, QuestionParts, convert_value

pytestmark = pytest.mark.browser

TABLE_ROW = re.compile(r"\|\s*\d+\s*\|\s*\d+\s*\|\s*\d+\s*\|")  # a row of the sent table


def wait_for(condition, timeout: float = 60.0) -> None:
    """Poll ``condition`` (state in another process: the fake server's requests)."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


def last_question(fake: FakeAnthropic) -> str:
    content = fake.requests[-1].body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def test_the_panel_and_tree_show_the_chip_open_the_table_and_edit_as_typed(
    lab, page, page_log, screenshot, fake
):
    fake.reset()
    setup = (
        "import os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
        "import pandas as pd\n"
        "df = pd.DataFrame({'x': range(100), 'y': range(100, 200)})\n"
        "%load_ext jupyter_tree_chat"
    )
    cells = [
        setup,
        "%%chat\nWhat does {df} show?",
        "%chat tree",
        "%chat panel",
        "df = pd.DataFrame({'x': range(7), 'y': range(7)})",
    ]
    write_notebook(lab.root / "chips.ipynb", cells)
    notebook = open_and_run_all(page, lab, "chips.ipynb").locator(".jp-Cell")
    wait_for(lambda: len(fake.requests) == 1)
    assert len(TABLE_ROW.findall(last_question(fake))) == 40  # the model got the table

    tree_output = notebook.nth(2).locator(".jp-OutputArea-output")
    expect(tree_output).to_contain_text("What does [df · DataFrame 100×2] show?", timeout=60_000)
    assert not TABLE_ROW.search(tree_output.inner_text())

    panel = notebook.nth(3).locator(".jtc-panel")
    row = panel.locator(".jtc-tree .jtc-row.jtc-role-user")
    expect(row).to_have_count(1, timeout=60_000)
    expect(row.locator(".jtc-typed-chip")).to_have_text("df · DataFrame 100×2")
    expect(row.locator(".jtc-first-line")).to_have_text("What does df · DataFrame 100×2 show?")
    assert "|" not in row.inner_text()

    question = panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")
    chip = question.get_by_role("button", name="df · DataFrame 100×2")
    expect(chip).to_have_attribute("aria-expanded", "false")
    expect(question.locator(".jtc-typed")).to_have_text("What does df · DataFrame 100×2 show?")
    expect(question.locator("table")).to_have_count(0)  # folded: only the chip
    screenshot("1-folded")
    chip.click()
    expect(chip).to_have_attribute("aria-expanded", "true")
    table = question.locator(".jtc-chip-body table")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(40)
    expect(table.locator("tbody tr").last).to_contain_text("199")
    expect(question.locator(".jtc-chip-body")).to_contain_text("100 rows × 2 columns, 40 shown")
    screenshot("2-opened")
    chip.click()
    expect(question.locator(".jtc-chip-body")).to_be_hidden()

    panel.get_by_role("button", name="Picture").click()
    user_node = panel.locator(".jtc-pnode.jtc-role-user .jtc-shape")
    user_node.hover()
    tip = panel.locator(".jtc-picture-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("What does [df · DataFrame 100×2] show?")
    assert not TABLE_ROW.search(tip.inner_text())
    screenshot("3-picture-tooltip")
    panel.get_by_role("button", name="List").click()

    # the edit starts from what was typed; saving fills {df} in again from the new df
    question.get_by_role("button", name="Edit").click()
    box = panel.locator("textarea.jtc-edit-box")
    expect(box).to_have_value("What does {df} show?")
    box.fill("What does {df} say?")
    screenshot("4-editing-as-typed")
    box.press("Enter")
    wait_for(lambda: len(fake.requests) == 2)
    sent = last_question(fake)
    assert sent.startswith("What does \n\n|") and sent.endswith("7 rows × 2 columns\n\n say?")
    assert [line.split("|")[1].strip() for line in sent.splitlines() if TABLE_ROW.match(line)] == [
        str(n) for n in range(7)
    ]
    status = panel.locator(".jtc-status")
    expect(status).to_contain_text(
        "Filled in again from the kernel's values now: {df} (DataFrame 7×2)."
    )
    expect(panel.locator(".jtc-tree .jtc-row.jtc-role-user")).to_have_count(2)
    edited = panel.locator(".jtc-tree .jtc-row.jtc-role-user").nth(1)
    expect(edited.locator(".jtc-typed-chip")).to_have_text("df · DataFrame 7×2")

    # "edit what was sent": the sent text, sent as written
    panel.locator(".jtc-conversation .jtc-msg.jtc-role-user").get_by_role(
        "button", name="Edit"
    ).click()
    expect(box).to_have_value("What does {df} say?")
    panel.get_by_label("edit what was sent").check()
    expect(box).to_have_value(re.compile(r"^What does \n\n\|"))
    box.fill("Sent as {written}")
    box.press("Enter")
    wait_for(lambda: len(fake.requests) == 3)
    assert last_question(fake) == "Sent as {written}"
    screenshot("5-edited")
    assert page_log.page_errors == []


def test_the_viewer_shows_an_older_question_as_sent_and_a_typed_one_with_its_chip(
    lab, page, page_log, screenshot
):
    parts = QuestionParts()
    parts.text("Compare ")
    frame = pandas.DataFrame({"x": range(3), "y": range(3)})
    parts.value(convert_value("frame", frame, Limits()))
    parts.text(" please")
    older = "An old question | a | b |"
    records = [
        {"type": "session", "version": 1},
        {"id": "q1", "parentId": None, "message": {"role": "user", "content": older}},
        {"id": "a1", "parentId": "q1", "message": {"role": "assistant", "content": "Old."}},
        {
            "id": "q2",
            "parentId": "a1",
            "message": {"role": "user", "content": parts.content()},
            "meta": parts.meta(),
        },
        {"id": "a2", "parentId": "q2", "message": {"role": "assistant", "content": "New."}},
    ]
    (lab.root / "typed.chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    page.goto(f"{lab.url}/lab/tree/typed.chat.jsonl?reset")
    view = page.locator(".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view")
    expect(view).to_be_visible(timeout=60_000)
    rows = view.locator(".jtc-tree .jtc-row.jtc-role-user")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator(".jtc-first-line")).to_have_text(older)  # as today
    expect(rows.nth(0).locator(".jtc-typed-chip")).to_have_count(0)
    expect(rows.nth(1).locator(".jtc-typed-chip")).to_have_text("frame · DataFrame 3×2")

    questions = view.locator(".jtc-conversation .jtc-msg.jtc-role-user")
    expect(questions.nth(0)).to_contain_text(older)
    chip = questions.nth(1).get_by_role("button", name="frame · DataFrame 3×2")
    expect(questions.nth(1).locator("table")).to_have_count(0)
    chip.click()
    expect(questions.nth(1).locator(".jtc-chip-body table tbody tr")).to_have_count(3)
    screenshot("viewer-typed-and-older")
    assert page_log.page_errors == []
