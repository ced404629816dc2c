"""The panel's find box answers a keystroke from the kernel's text index it holds.

The box focused (or else the first query) fetches the kernel's index (share/find.py's); then
a literal query is answered in the browser by the same rule, so it finds the same
nodes even while the kernel is busy running a cell (panel/heldtexts.ts).
"""

from __future__ import annotations

import pytest
from lab_notebooks import open_and_run_all, write_notebook
from playwright.sync_api import expect

from jupyter_tree_chat.history.store import parse_session

pytestmark = pytest.mark.browser

SETUP = """
get_ipython().run_line_magic("load_ext", "jupyter_tree_chat")
get_ipython().run_line_magic("config", "TreeChat.offline_delay = 0")
"""

KERNEL = "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"


def start_sleeping(page) -> None:
    """Run a 25 s sleep in the kernel and wait until that cell, not any message before it
    (the index's), has the kernel busy; ``still_sleeping`` then says it has not ended."""
    page.evaluate(
        f"""() => {{
        window.__jtcSleep = {{ started: false, ended: false }};
        const future = {KERNEL}.requestExecute({{ code: 'import time; time.sleep(25)' }});
        future.onIOPub = msg => {{
          if (msg.header.msg_type === 'execute_input') window.__jtcSleep.started = true;
        }};
        future.done.then(() => {{ window.__jtcSleep.ended = true; }}, () => {{
          window.__jtcSleep.ended = true;
        }});
      }}"""
    )
    page.wait_for_function("window.__jtcSleep.started")


def still_sleeping(page) -> bool:
    return bool(page.evaluate("window.__jtcSleep.started && !window.__jtcSleep.ended"))


def test_the_panel_finds_from_the_index_it_holds_while_the_kernel_is_busy(lab, page):
    notebook = lab.root / "panel-held.ipynb"
    write_notebook(
        notebook,
        [
            SETUP,
            "%%chat\nWhat is a needle in a haystack?",
            "%%chat\nAnd in a session tree?",
            "%chat edit 1 What is a pin in a haystack",
            "%chat panel",
        ],
    )
    open_and_run_all(page, lab, notebook.name)
    panel = page.locator(".jtc-panel")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(6, timeout=90_000)
    tree = parse_session((lab.root / "panel-held.chat.jsonl").read_bytes()).tree
    box = panel.locator(".jtc-search-input")
    matches = panel.locator(".jtc-tree .jtc-row.jtc-match")
    # the kernel answers the first query; its index was asked for just before, so it is here
    box.fill("haystack")
    by_kernel = sorted(n.id for n in tree if "haystack" in n.text.lower())
    expect(matches).to_have_count(len(by_kernel))
    # the kernel busy for a while: it answers nothing now
    start_sleeping(page)
    box.fill("needle")
    needle = sorted(n.id for n in tree if "needle" in n.text.lower())
    expect(matches).to_have_count(len(needle), timeout=5_000)
    assert sorted(matches.evaluate_all("rows => rows.map(r => r.dataset.id)")) == needle
    box.fill("HAYSTACK")  # case-blind, as the kernel's
    expect(matches).to_have_count(len(by_kernel), timeout=5_000)
    assert sorted(matches.evaluate_all("rows => rows.map(r => r.dataset.id)")) == by_kernel
    assert still_sleeping(page)  # all of it answered in the browser
    page.evaluate(f"{KERNEL}.interrupt()")


def test_the_box_focused_fetches_the_index_so_the_first_query_needs_no_kernel(lab, page):
    """A click into the box asks for the index (the request goes before anything else the
    kernel is then asked), so even the first query is answered in the browser."""
    notebook = lab.root / "panel-focus.ipynb"
    write_notebook(
        notebook,
        [SETUP, "%%chat\nWhat is a needle in a haystack?", "%chat panel"],
    )
    open_and_run_all(page, lab, notebook.name)
    panel = page.locator(".jtc-panel")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(2, timeout=90_000)
    tree = parse_session((lab.root / "panel-focus.chat.jsonl").read_bytes()).tree
    box = panel.locator(".jtc-search-input")

    box.focus()
    start_sleeping(page)
    box.fill("needle")

    matches = panel.locator(".jtc-tree .jtc-row.jtc-match")
    needle = sorted(n.id for n in tree if "needle" in n.text.lower())
    expect(matches).to_have_count(len(needle), timeout=5_000)
    assert sorted(matches.evaluate_all("rows => rows.map(r => r.dataset.id)")) == needle
    assert still_sleeping(page)  # answered in the browser
    page.evaluate(f"{KERNEL}.interrupt()")
