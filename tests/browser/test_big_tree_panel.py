"""A long session in the panel: switching branches moves the marks and redraws only the
rows whose marks moved (the built widget on a bare page, playing the kernel).

The tree list of a session this size is virtual (only the rows in view are in the DOM).
A switch must mark the new branch and unmark the old one, show the new path, and leave
the rows it does not change alone: that is what keeps a switch on a 100,000-node tree
within a frame or two (benchmarks/bench_widget.py times it).
"""

from __future__ import annotations

import pytest
from helpers.widget_comm import recording_comms
from helpers.widget_page import open_widget, panel_traits
from playwright.sync_api import expect

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.history.store import MemoryStore, encode_record
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.widget import TreePanel

pytestmark = pytest.mark.browser

TURNS = 1500  # 3,150 nodes: past the list's 1,000 rows kept whole in the DOM
#: each row in view: its id, whether it is marked, and whether it is the same element
#: as when ``remember`` ran
ROWS_JS = """() => [...document.querySelectorAll('.jtc-tree .jtc-row')].map(r => ({
  id: r.dataset.id, onPath: r.classList.contains('jtc-on-path'),
  leaf: r.classList.contains('jtc-leaf'), kept: r.__remembered === true}))"""
REMEMBER_JS = """() => document.querySelectorAll('.jtc-tree .jtc-row')
  .forEach(r => { r.__remembered = true; })"""


def long_session() -> Session:
    """A long conversation with a second answer every 10 turns; the first answer of each
    such turn is a leaf off the current branch."""
    records: list[bytes] = []
    parent: str | None = None
    for turn in range(TURNS):
        question = f"u{turn:05d}"
        message = {"role": "user", "content": f"Question {turn}"}
        records.append(encode_record({"id": question, "parentId": parent, "message": message}))
        for k in range(2 if turn % 10 == 5 else 1):
            parent = f"a{turn:05d}{k}"
            text = f"Answer {turn}.{k}"
            answer = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            records.append(encode_record({"id": parent, "parentId": question, "message": answer}))
    return Session(MemoryStore(b"".join(records)), OfflineProvider())


def test_a_switch_moves_the_marks_and_keeps_the_rows_it_does_not_change(page, screenshot):
    session = long_session()
    with recording_comms():
        traits = panel_traits(TreePanel(session))
    open_widget(page, traits)
    rows = page.evaluate(ROWS_JS)
    assert 30 < len(rows) < 200, "the list is virtual: only the rows in view are drawn"
    others = {f"a{turn:05d}0" for turn in range(5, TURNS, 10)}  # the answers off the branch
    assert [row["onPath"] for row in rows] == [row["id"] not in others for row in rows]
    page.evaluate(REMEMBER_JS)

    off_branch = "a000050"  # the first turn's other answer, the 12th row
    page.evaluate("leaf => window.jtw.set('leaf', leaf)", off_branch)
    conversation = page.locator(".jtc-panel .jtc-conversation")
    expect(conversation.locator(".jtc-msg")).to_have_count(12)
    expect(conversation.locator(".jtc-msg").last).to_contain_text("Answer 5.0")
    rows = page.evaluate(ROWS_JS)
    place = [row["id"] for row in rows].index(off_branch)
    assert [row["onPath"] for row in rows] == [k <= place for k in range(len(rows))]
    assert [row["id"] for row in rows if row["leaf"]] == [off_branch]
    # the rows above the branch point are marked as before: the same elements
    assert all(row["kept"] for row in rows[:place])
    moved = [row["id"] not in others or row["id"] == off_branch for row in rows[place:]]
    assert [not row["kept"] for row in rows[place:]] == moved  # only the marks that moved
    screenshot("big-tree-switched")

    page.evaluate(REMEMBER_JS)
    last = traits["nodes"][-1][0]
    page.evaluate("leaf => window.jtw.set('leaf', leaf)", last)
    expect(conversation.locator(".jtc-msg").last).to_contain_text(f"Answer {TURNS - 1}.0")
    rows = page.evaluate(ROWS_JS)
    assert [row["onPath"] for row in rows] == [row["id"] not in others for row in rows]
    assert not any(row["leaf"] for row in rows)  # the leaf is far below, out of view
    assert all(row["kept"] for row in rows[:place])
    assert not rows[place]["kept"]


def test_a_hidden_branch_unfolds_while_current_and_folds_away_after_a_switch(page):
    session = long_session()
    with recording_comms():
        traits = panel_traits(TreePanel(session))
    open_widget(page, traits)

    def ids() -> list[dict]:
        return page.evaluate(ROWS_JS)

    hidden = "a000150"  # an answer off the current branch
    page.evaluate("ids => window.jtw.set('hidden', ids)", [hidden])
    assert hidden not in [row["id"] for row in ids()]
    parent_row = page.locator('.jtc-tree .jtc-row[data-id="u00015"]')
    expect(parent_row.locator(".jtc-hidden-kids")).to_have_text("1 hidden")
    show_hidden = page.get_by_role("button", name="Show 1 hidden branch")
    expect(show_hidden).to_have_count(1)

    page.evaluate("leaf => window.jtw.set('leaf', leaf)", hidden)  # the kernel switched
    rows = {row["id"]: row for row in ids()}
    assert rows[hidden]["leaf"] and rows[hidden]["onPath"]
    expect(parent_row.locator(".jtc-hidden-kids")).to_have_count(0)
    expect(show_hidden).to_have_count(0)  # on the current branch: nothing is folded away

    page.evaluate("leaf => window.jtw.set('leaf', leaf)", traits["nodes"][-1][0])
    assert hidden not in [row["id"] for row in ids()]
    expect(parent_row.locator(".jtc-hidden-kids")).to_have_text("1 hidden")
    expect(show_hidden).to_have_count(1)
    page.evaluate("ids => window.jtw.set('hidden', ids)", [])
    assert hidden in [row["id"] for row in ids()]
    expect(parent_row.locator(".jtc-hidden-kids")).to_have_count(0)
