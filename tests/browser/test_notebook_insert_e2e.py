"""The notebook server's ``insert`` in a real JupyterLab with the lab extension: the
model (the fake Messages API, through the real SDK) proposes cells and they appear below
the asking cell, unrun.

In a fresh kernel no view has yet told the kernel the page has the lab's Insert below,
so the first turn's proposals come through IPython's next input (one cell); once a turn
control has rendered, the next turn's go through the control's Insert below (one cell
each, in the order proposed).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from lab_notebooks import open_and_run_all, write_notebook
from playwright.sync_api import expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

pytestmark = pytest.mark.browser


def sources(page) -> list[str]:
    return page.evaluate(
        "window.jupyterapp.shell.currentWidget.content.widgets.map(c => c.model.sharedModel"
        ".getSource())"
    )


def wait_for(condition, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.1)


def test_insert_puts_the_proposed_cells_below_the_asking_cell(
    lab, page, page_log, screenshot, fake
):
    fake.reset()
    first = [
        {"name": "notebook__insert", "input": {"code": "total = 1 + 1"}},
        {"name": "notebook__insert", "input": {"code": "print(total)"}},
    ]
    fake.enqueue("Let me propose cells.", tool_use=first)
    fake.enqueue("Two lines, in one cell below.")
    second = [
        {"name": "notebook__insert", "input": {"code": "import math"}},
        {"name": "notebook__insert", "input": {"code": "math.sqrt(total)"}},
    ]
    fake.enqueue("More cells.", tool_use=second)
    fake.enqueue("Two cells below.")
    setup = (
        "import os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
        "%load_ext jupyter_tree_chat"
    )
    asking = "%%chat --tools notebook:insert\nPropose code."
    check = (
        "from jupyter_tree_chat.widget.turn import _controls_by_cell\n"
        "print('waiting:', [c.inserts for c in _controls_by_cell.values()])"
    )
    write_notebook(lab.root / "insert.ipynb", [setup, asking, check])
    notebook = open_and_run_all(page, lab, "insert.ipynb")
    cells = notebook.locator(".jp-Cell")

    # a fresh kernel: IPython's next input, one cell with both proposals, under cell 1
    expect(cells.nth(1).locator(".jtc-turn")).to_be_visible(timeout=60_000)
    wait_for(lambda: len(sources(page)) == 4)
    assert sources(page) == [
        setup,
        asking,
        "total = 1 + 1\n\nprint(total)",
        check,
    ]
    assert (
        page.evaluate(
            "window.jupyterapp.shell.currentWidget.content.widgets[2].model.executionCount"
        )
        is None
    )  # proposed, not run
    screenshot("1-next-input")

    # the control rendered and told the kernel the lab can insert: now one cell each
    page.evaluate(
        "async () => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " nb.activeCellIndex = 1;"
        " await window.jupyterapp.commands.execute('notebook:run-cell'); }"
    )
    wait_for(lambda: len(fake.requests) == 4)
    wait_for(lambda: len(sources(page)) == 6)
    assert sources(page)[:4] == [setup, asking, "import math", "math.sqrt(total)"]
    assert sources(page)[4:] == ["total = 1 + 1\n\nprint(total)", check]
    screenshot("2-insert-below")
    # once inserted, the control's state no longer holds them (a reopened notebook's
    # saved widget state would not insert them again)
    page.evaluate(
        "async () => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " nb.activeCellIndex = 5;"
        " await window.jupyterapp.commands.execute('notebook:run-cell'); }"
    )
    expect(cells.nth(5).locator(".jp-OutputArea-output")).to_have_text(
        "waiting: [{}]", timeout=30_000
    )


def test_a_hostile_value_described_runs_nothing_and_the_panel_names_the_tool(
    lab, page, page_log, screenshot, fake
):
    """The hostile corpus as a variable's value: the model describes it, the panel shows
    the call as ``notebook:describe`` and the result (its head) as text; nothing runs,
    nothing is requested, in the cell or the panel."""
    from test_hostile_content import HOSTILE, assert_nothing_ran

    fake.reset()
    fake.enqueue(tool_use={"name": "notebook__describe", "input": {"name": "page_text"}})
    fake.enqueue("It is a page of HTML.")
    setup = (
        "import os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
        f"page_text = {HOSTILE!r}\n"
        "%load_ext jupyter_tree_chat"
    )
    asking = "%%chat --tools notebook:describe\nWhat is in page_text?"
    write_notebook(lab.root / "hostile-value.ipynb", [setup, asking, "%chat panel"])
    open_and_run_all(page, lab, "hostile-value.ipynb")
    panel = page.locator(".jtc-panel")
    conversation = panel.locator(".jtc-conversation")
    expect(conversation).to_contain_text("tool call: notebook:describe", timeout=60_000)
    expect(conversation).to_contain_text("tool result: Payloads follow.\n<script>window.__xss_1")
    expect(conversation).to_contain_text("It is a page of HTML.")
    screenshot("hostile-value")
    assert_nothing_ran(page, page_log, ".jtc-root")
    assert_nothing_ran(page, page_log, ".jp-OutputArea-output")
    assert not page_log.page_errors, page_log.page_errors
