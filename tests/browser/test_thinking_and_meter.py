"""Thinking, the context meter and cost, as a user sees them in Chromium.

- In a notebook: a ``%%chat --thinking`` cell folds the thinking above the answer (a
  ``<details>`` that opens on a click), and the panel shows it the same way, with the
  context meter in its header and the reply's cost in its details.
- In the panel (the built widget on a bare page, playing the kernel): thinking streams
  into a folded section above the streaming answer; past 80% the meter says to compact.
- In the viewer: a session file's thinking and redacted thinking, folded, with the text
  rendered as safe Markdown (no script from it runs).

Screenshots land in test-artifacts/browser/.
"""

from __future__ import annotations

import pytest
from helpers.widget_comm import recording_comms
from helpers.widget_page import answer_text_requests, open_widget, panel_traits
from lab_notebooks import open_and_run_all, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.measures.models import Price
from jupyter_tree_chat.measures.usage import dollars, node_cost
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.widget import TreePanel
from jupyter_tree_chat.widget.protocol import text_payload

pytestmark = pytest.mark.browser

PRICE = Price(3, 15, 3.75, 0.30)  # what the notebook's %config sets for the offline model
VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"
#: what a folded section shows: its summary, whether it is open, the text inside
FOLDED_JS = """d => ({summary: d.querySelector('summary').textContent, open: d.open,
  bodyVisible: [...d.querySelectorAll(':scope > :not(summary)')]
    .some(e => e.checkVisibility())})"""


def test_a_thinking_cell_and_the_panel_fold_the_thinking_above_the_answer(
    lab, page, page_log, screenshot
):
    write_notebook(
        lab.root / "thinking.ipynb",
        [
            "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'\n"
            "%config TreeChat.prices = {'offline-teacher': {'input': 3, 'output': 15}}",
            "%%chat --thinking 2048\nWhat is 2 + 3?",
            "%chat panel",
        ],
    )
    cells = open_and_run_all(page, lab, "thinking.ipynb").locator(".jp-Cell")
    cell = cells.nth(1)
    thinking = cell.locator(".jp-OutputArea details.jtc-thinking")
    expect(thinking).to_have_count(1, timeout=60_000)
    assert thinking.evaluate(FOLDED_JS) == {
        "summary": "Thinking",
        "open": False,
        "bodyVisible": False,
    }
    answer = cell.locator(".jp-OutputArea").get_by_text("2 + 3 = 5").first
    assert thinking.evaluate(
        "(d, a) => !!(d.compareDocumentPosition(a) & 4)", answer.element_handle()
    )
    thinking.locator("summary").click()
    expect(thinking).to_contain_text("Thinking (2048 tokens): the path holds 1 message(s).")
    footer = cell.locator(".jp-OutputArea sub")
    expect(footer).to_contain_text("offline-teacher")
    expect(footer).to_contain_text("context <1% of 200k")

    panel = cells.nth(2).locator(".jtc-panel")
    reply = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
    folded = reply.locator("details.jtc-thinking")
    expect(folded).to_have_count(1, timeout=60_000)
    assert folded.evaluate(FOLDED_JS)["open"] is False
    assert reply.locator(".jtc-msg-body > *").first.evaluate(
        "e => e.matches('details.jtc-thinking')"
    )
    folded.locator("summary").click()
    expect(folded.locator(".jtc-markdown")).to_contain_text("the path holds 1 message(s)")
    expect(panel.locator(".jtc-header .jtc-meter")).to_have_text("context <1% of 200k")
    reply.get_by_role("button", name="Info").click()
    stored = load_file(lab.root / "thinking.chat.jsonl").tree
    cost = dollars(node_cost(stored.get(stored.leaf), {"offline-teacher": PRICE}) or 0)
    expect(reply.locator('.jtc-details dd[data-key="cost"]')).to_have_text(cost)
    expect(reply.locator(".jtc-msg-header .jtc-meta")).to_contain_text(cost)
    expect(footer).to_contain_text(f" · {cost} · ")
    expect(reply.locator('.jtc-details dd[data-key="thinking"]')).to_have_text("2048")
    panel.scroll_into_view_if_needed()
    screenshot("notebook")
    assert page_log.page_errors == []


def thinking_session() -> Session:
    session = Session.in_memory(OfflineProvider())
    session.prices = {"offline-teacher": PRICE}
    session.ask("What is 2 + 3?", settings=ChatSettings(thinking=2048))
    return session


def test_the_panel_streams_thinking_above_the_answer_and_the_meter_says_compact(
    page, page_log, screenshot
):
    session = thinking_session()
    with recording_comms():
        traits = panel_traits(TreePanel(session))
    open_widget(page, traits)
    answer_text_requests(page, {node.id: text_payload(node) for node in session.tree})
    panel = page.locator(".jtc-panel")
    expect(panel.locator(".jtc-conversation details.jtc-thinking")).to_have_count(1)
    question = session.path()[0].id

    page.evaluate("p => window.jtw.message({t: 's', p})", question)
    page.evaluate("() => window.jtw.message({t: 'k', x: 'Adding **two** '})")
    page.evaluate("() => window.jtw.message({t: 'k', x: 'and three.'})")
    streaming = panel.locator(".jtc-streaming")
    section = streaming.locator("details.jtc-thinking")
    expect(section.locator("summary")).to_have_text("Thinking…")
    section.locator("summary").click()
    expect(section.locator(".jtc-markdown strong")).to_have_text("two")
    expect(section.locator(".jtc-markdown")).to_have_text("Adding two and three.")
    page.evaluate("() => window.jtw.message({t: 'd', x: 'Five.'})")
    expect(section.locator("summary")).to_have_text("Thinking")
    assert streaming.locator(".jtc-msg-body > *").evaluate_all(
        "es => es.map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.'))"
    ) == ["details.jtc-part.jtc-part-thinking.jtc-thinking", "div.jtc-markdown"]
    expect(streaming.locator(".jtc-msg-body > .jtc-markdown")).to_have_text("Five.")

    meter = panel.locator(".jtc-header .jtc-meter")
    expect(meter).not_to_have_class("jtc-meter jtc-meter-full")
    page.evaluate("() => window.jtw.set('context', {tokens: 170000, window: 200000, exact: true})")
    expect(meter).to_have_text("context 85% of 200k: %chat compact makes room")
    expect(meter).to_have_class("jtc-meter jtc-meter-full")
    # that redrew the view: the section opened by a click is still open
    assert section.evaluate("d => d.open") is True
    screenshot("streaming")
    assert page_log.page_errors == []


def test_the_viewer_folds_thinking_and_redacted_thinking_and_runs_nothing_from_them(
    lab, page, page_log, screenshot
):
    name = lab.put("thinking.chat.jsonl")
    page.goto(f"{lab.url}/lab/tree/{name}?reset")
    view = page.locator(VIEW)
    expect(view).to_be_visible(timeout=60_000)
    reply = view.locator('.jtc-conversation .jtc-msg[data-id="a1"]')
    sections = reply.locator(".jtc-msg-body > details.jtc-thinking")
    expect(sections).to_have_count(2)
    assert sections.evaluate_all(
        "ds => ds.map(d => [d.querySelector('summary').textContent, d.open])"
    ) == [
        ["Thinking", False],
        ["Thinking (encrypted by the API)", False],
    ]
    body = reply.locator(".jtc-msg-body > *")
    kinds = body.evaluate_all("es => es.map(e => e.tagName.toLowerCase() + '.' + e.classList[0])")
    assert kinds[:3] == ["details.jtc-part", "details.jtc-part", "div.jtc-markdown"]
    expect(reply.locator(".jtc-msg-body > .jtc-markdown strong")).to_have_text("12,231")
    sections.first.locator("summary").click()
    expect(sections.first.locator("strong")).to_have_text("27")
    wait_until_still(page)  # every image loaded or failed: a kept onerror would have run
    handlers = sections.first.evaluate(
        "d => [...d.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name)"
        ".filter(n => /^on/i.test(n)).concat(e.tagName === 'SCRIPT' ? ['script'] : []))"
    )
    assert handlers == [] and page.evaluate("window.__xss") is None
    expect(reply.locator('.jtc-details dd[data-key="thinking"]')).to_have_text("2048")
    screenshot("viewer")
    assert page_log.page_errors == []
