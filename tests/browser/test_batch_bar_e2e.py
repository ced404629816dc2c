"""A ``--batch`` cell in a real JupyterLab: its bar keeps moving after the cell has
ended, updated from the kernel's watching thread as the batch's cell's own output
(kernel/display/batch_view.py), while other cells run."""

from __future__ import annotations

import time

import pytest
from lab_notebooks import open_and_run_all, records, write_notebook
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_bar_of_a_batch_cell_moves_after_the_cell_has_ended(lab, page, page_log, fake):
    fake.reset()
    fake.batches.hold = True
    setup = (
        "import os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
        "rows = [{'city': c} for c in ['Paris', 'Oslo', 'Lima']]\n"
        "%load_ext jupyter_tree_chat\n"
        "%config TreeChat.batch_poll = 0.2"
    )
    cells = [setup, "%%chat --over rows --batch\nWhat is {city} known for?", "1 + 1"]
    write_notebook(lab.root / "batchbar.ipynb", cells)
    notebook = open_and_run_all(page, lab, "batchbar.ipynb", reset=True).locator(".jp-Cell")
    bar = notebook.nth(1).locator(".jtc-batch-progress")
    expect(bar).to_contain_text("0 of 3 ended", timeout=60_000)
    expect(notebook.nth(2).locator(".jp-OutputArea-output")).to_contain_text("2")  # it ended

    fake.batches.finish()  # the batch ends after its cell did
    expect(bar).to_contain_text("3 succeeded", timeout=60_000)
    expect(bar).to_contain_text("done")
    expect(bar.locator("progress")).to_have_attribute("value", "3")
    deadline = time.monotonic() + 30
    path = lab.root / "batchbar.chat.jsonl"
    while sum(1 for r in records(path) if "batch" in (r.get("meta") or {})) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert notebook.nth(2).locator(".jtc-batch-progress").count() == 0  # not in a later cell
