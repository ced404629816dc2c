"""A branch exported as a notebook, opened in a real JupyterLab beside its session file:
it reads as the conversation (each question a ``%%chat`` cell, the answer rendered below
it, thinking and tool calls folded), and running it continues the session: the setup
cell binds it, and a question edited in its cell and run forks there (JupyterLab sends
the cell's id, which the export gave the question)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from playwright.sync_api import expect
from test_share_page_e2e import sample_session

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.browser

RUN_CELL = """async ([index, source]) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const notebook = panel.content;
  if (source !== null) {
    notebook.widgets[index].model.sharedModel.setSource(source);
  }
  notebook.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
}"""


def test_the_notebook_reads_as_the_conversation_and_an_edited_cell_forks(lab, page, screenshot):
    session_file = lab.root / "nbexport.chat.jsonl"
    session_file.write_bytes(sample_session())
    target = lab.root / "nbexport.branch.ipynb"
    subprocess.run(
        [sys.executable, "-m", "jupyter_tree_chat.cli", "export", str(session_file),
         "--format", "ipynb", "-o", str(target)],
        check=True,
    )  # fmt: skip
    notebook = json.loads(target.read_text())
    assert [c["id"] for c in notebook["cells"]][2:] == ["q1", "q2"]  # asked outside a cell

    page.goto(f"{lab.url}/lab/tree/{target.name}?reset")
    page.wait_for_function(
        "name => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.context && w.context.path === name && w.sessionContext"
        " && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }",
        arg=target.name,
        timeout=180_000,  # a ceiling: a kernel starts slowly on a loaded machine
    )
    cells = page.locator(".jp-Notebook .jp-Cell")
    expect(cells).to_have_count(4)
    expect(cells.nth(0)).to_contain_text("A branch of nbexport.chat.jsonl")
    first = cells.nth(2)
    expect(first.locator(".jp-InputArea")).to_contain_text("%%chat")
    expect(first.locator(".jp-OutputArea-output strong")).to_have_text("session tree")
    thinking = first.locator(".jp-OutputArea-output details")
    expect(thinking.locator("summary")).to_have_text("Thinking")
    assert thinking.evaluate("d => d.open") is False  # folded
    second = cells.nth(3)
    expect(second.locator(".jp-OutputArea-output img")).to_have_count(1)  # the question's image
    expect(second.locator("details summary")).to_have_text(["Tool call: measure", "Tool result"])
    expect(second.locator(".jp-OutputArea-output").last).to_contain_text("a3 · claude-sonnet-4-6")
    screenshot("opened")

    before = load_file(session_file)
    page.evaluate(RUN_CELL, [1, None])  # the setup cell: this session, its branch current
    expect(cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text("On a3 now")
    page.evaluate(RUN_CELL, [3, "%%chat\nWhat is in this picture, in one word?"])
    expect(cells.nth(3).locator(".jp-OutputArea-output").first).to_contain_text(
        "I was sent", timeout=60_000
    )
    after = load_file(session_file)
    new = [n for n in after.tree if n.id not in before.tree]
    question = next(n for n in new if n.role == "user")
    assert question.text == "What is in this picture, in one word?"
    assert question.parent_id == "a1"  # beside q2: a fork there, the old branch kept
    assert (question.meta or {}).get("cell_id") == "q2"
    assert after.tree.leaf == next(n.id for n in new if n.role == "assistant")
    assert "q2" in after.tree and "a3" in after.tree
    screenshot("forked")
