"""Hostile content runs nothing and sends no request: cell outputs, widget, viewer.

Model output is untrusted input (docs/design.md, Views), and so are a user's pasted messages
and a ``.chat.jsonl`` someone sent you. The corpus (tests/data/xss_payloads.json, 61
payloads: script, event handlers, ``javascript:``/``data:``/``vbscript:`` links, SVG and
SMIL, iframe ``srcdoc``, object/embed, forms, mutation-XSS, CSS loads, meta refresh,
``<base>``, DOM clobbering by id/name) is built so that any payload that works leaves a
trace: ``window.__xss_<id>`` gets set (clobbering makes it an element), or a request
goes to the sentinel host ``xss-sentinel.test``. The tests put the whole corpus in a user
message and a model reply of a real ``%%chat`` cell (the real SDK against the fake
Messages API, started inside the kernel), open the panel widget on that session, and
open a crafted session file in the JupyterLab viewer; then they check, in a real
Chromium, that no ``__xss`` global exists, that Playwright saw no request to the
sentinel host, no dialog, and no active element or script URL in what was rendered.

A fast test without a browser runs the same corpus through the kernel-side renderer
(``safe_html.markdown_to_html``) that produces the cell's HTML.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fakes.scripted_provider import ScriptedProvider
from helpers.widget_comm import recording_comms
from helpers.widget_page import answer_text_requests, ensure_built, open_widget, panel_traits
from lab_notebooks import open_and_run_all, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.kernel.display.safe_html import markdown_to_html
from jupyter_tree_chat.widget import TreePanel
from jupyter_tree_chat.widget.protocol import text_payload

TESTS = Path(__file__).resolve().parents[1]
CORPUS = json.loads((TESTS / "data" / "xss_payloads.json").read_text())
SENTINEL = CORPUS["sentinel_host"]
PAYLOADS = CORPUS["payloads"]
IDS = [p["id"] for p in PAYLOADS]
HOSTILE = "Payloads follow.\n\n" + "\n\n".join(p["payload"] for p in PAYLOADS) + "\n\nThe end."

ACTIVE_TAGS = {
    "script", "iframe", "frame", "object", "embed", "form", "base", "meta", "link", "style",
    "svg", "math", "template", "noscript", "applet", "video", "audio", "source", "input",
    "button", "marquee", "body", "map", "area",
}  # fmt: skip
#: the app's own controls and MathJax's assistive MathML: present in the page by design
#: inert once stripped of handlers and script URLs (checked separately): map/area,
#: media elements; their presence is reported, not failed
DOM_UI_TAGS = {
    "button",
    "input",
    "math",
    "svg",
    "style",
    "template",
    "map",
    "area",
    "video",
    "audio",
    "source",
    "marquee",
}
URL_ATTRS = ("href", "src", "action", "formaction", "xlink:href", "srcdoc", "data", "srcset")

#: JavaScript run in the page: what survived the sanitizers, anywhere under ``root``
INSPECT_TEMPLATE = """(selector) => {
  const roots = Array.from(document.querySelectorAll(selector));
  const all = roots.flatMap(r => [r, ...r.querySelectorAll('*')]);
  const active = %s;
  const urls = %s;
  return {
    elements: all.length,
    tags: all.map(e => e.localName).filter(t => active.includes(t)),
    handlers: all.flatMap(e => Array.from(e.attributes)
      .filter(a => a.name.toLowerCase().startsWith('on')).map(a => e.localName + ' ' + a.name)),
    urls: all.flatMap(e => urls.map(n => [n, e.getAttribute(n) || '']))
      .filter(([n, u]) => /^\\s*(javascript|vbscript|data):/i.test(u)
        && !(n === 'src' && /^\\s*data:image\\//i.test(u))  // an <img> never runs script
        || (n !== 'href' && u.includes('%s'))).map(([n, u]) => n + '=' + u),
    named: all.flatMap(e => ['id', 'name'].map(n => e.getAttribute(n) || ''))
      .filter(v => v.startsWith('__xss') || v === 'jupyterapp'),
    styles: all.map(e => e.getAttribute('style') || '').filter(s => /url\\(/i.test(s)),
  };
}"""  # filled with % below: the JavaScript braces would all need doubling for format()
INSPECT = INSPECT_TEMPLATE % (
    json.dumps(sorted(ACTIVE_TAGS - DOM_UI_TAGS)),
    json.dumps(list(URL_ATTRS)),
    SENTINEL,
)

GLOBALS = "(ids) => ids.filter(n => typeof window['__xss_' + n] !== 'undefined')"


def test_corpus_is_big_and_every_payload_is_observable() -> None:
    """At least 50 payloads; each sets a ``__xss_<id>`` global or hits the sentinel."""
    assert len(PAYLOADS) >= 50
    assert len(set(IDS)) == len(IDS)
    kinds = " ".join(p["kind"] for p in PAYLOADS)
    for family in ("script", "svg", "iframe-srcdoc", "js-link", "data", "clobber", "onerror"):
        assert family in kinds, family
    for p in PAYLOADS:
        text = p["payload"]
        assert (
            f"__xss_{p['id']}" in text
            or f"{SENTINEL}/{p['id']}" in text
            or (
                "vbscript" in text or "data:" in text  # base64: the global is inside
            )
        ), p


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ACTIVE_TAGS:
            self.bad.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.bad.append(f"{tag} {name}")
            loads = name != "href"  # a link to the sentinel is not a request; a src is
            if name in URL_ATTRS and (
                value.startswith(("javascript:", "vbscript:", "data:"))
                or (loads and SENTINEL in value)
            ):
                self.bad.append(f"{tag} {name}={value[:40]}")
            if name in ("id", "name") and (value.startswith("__xss") or value == "jupyterapp"):
                self.bad.append(f"{tag} {name}={value}")
            if name == "style" and "url(" in value:
                self.bad.append(f"{tag} style url()")


@pytest.mark.parametrize("payload", PAYLOADS, ids=[f"{p['id']}-{p['kind']}" for p in PAYLOADS])
def test_kernel_side_renderer_neutralises_each_payload(payload: dict) -> None:
    """The HTML a %%chat cell sends holds no active element, handler or script URL."""
    parser = _Collect()
    parser.feed(markdown_to_html(payload["payload"]))
    assert parser.bad == [], parser.bad


# -- in a real browser --------------------------------------------------------------------


SETUP_CELL = f"""
import os, sys
sys.path.insert(0, {str(TESTS)!r})
from fakes.fake_anthropic import FakeAnthropic
server = FakeAnthropic().start()
HOSTILE = {HOSTILE!r}
for _ in range(3):
    server.enqueue(HOSTILE)
os.environ["ANTHROPIC_API_KEY"] = "sk-test-hostile"
os.environ["ANTHROPIC_BASE_URL"] = server.base_url
get_ipython().run_line_magic("load_ext", "jupyter_tree_chat")
"""


def assert_nothing_ran(page, page_log, selector: str) -> dict:
    """No __xss global, no sentinel request, no dialog, nothing active in ``selector``."""
    wait_until_still(page)  # every load has finished or failed: its handlers had their turn
    assert page.evaluate(GLOBALS, IDS) == [], "a payload ran or clobbered a global"
    sent = [url for url in page_log.requests if SENTINEL in url]
    assert sent == [], f"requests left for the sentinel host: {sent}"
    assert page_log.dialogs == []
    found = page.evaluate(INSPECT, selector)
    assert found["elements"] > 0, f"nothing rendered under {selector}: the test is blind"
    for key in ("tags", "handlers", "urls", "named", "styles"):
        assert found[key] == [], (key, found[key])
    return found


@pytest.mark.browser
def test_hostile_cell_output_and_widget_run_nothing(lab, page, page_log, screenshot):
    """The corpus as the question and as the model's reply of a real %%chat cell, then
    the panel widget over that session: nothing runs, nothing is requested."""
    ensure_built()
    write_notebook(
        lab.root / "hostile-cells.ipynb",
        [SETUP_CELL, "%%chat --raw\n" + HOSTILE, "%chat panel"],
    )
    open_and_run_all(page, lab, "hostile-cells.ipynb")
    outputs = page.locator(".jp-OutputArea-output")
    expect(outputs.filter(has_text="The end.").first).to_be_visible(timeout=90_000)
    panel = page.locator(".jtc-panel")
    expect(panel.locator(".jtc-conversation .jtc-markdown")).to_have_count(2, timeout=60_000)
    # all of it: raw HTML is text in the widget too, so no payload hides what follows
    for message in panel.locator(".jtc-conversation .jtc-markdown").all():
        expect(message).to_contain_text("Payloads follow.")
        expect(message).to_contain_text("The end.")
        assert "The end." in message.inner_text()  # rendered, not only in the DOM
    screenshot("cells")
    cells = assert_nothing_ran(page, page_log, ".jp-OutputArea-output")
    widget = assert_nothing_ran(page, page_log, ".jtc-root")
    assert not page_log.page_errors, page_log.page_errors
    print(
        f"\nSECURITY xss cells+widget: payloads={len(PAYLOADS)} "
        f"elements={cells['elements']}+{widget['elements']} ran=0 requests=0"
    )


#: markup the browser's HTML parser swallows what follows in (a comment, raw-text and
#: template elements); each is followed by a payload and by a sentinel word
SWALLOWING = ["<noscript>", "<!--", "<template>", "<textarea>", "<title>", "<style>"]
RUNS = '<img src=x onerror="window.__xss_3=1">'


@pytest.mark.browser
@pytest.mark.parametrize("opener", SWALLOWING)
def test_widget_shows_the_text_after_markup_that_swallows_it(page, page_log, screenshot, opener):
    """Raw HTML in a message is text in the widget, as in the cell output: after an
    unclosed ``<noscript>``, ``<!--``, ``<template>``, ``<textarea>``, ``<title>`` or
    ``<style>`` (inline in a question, at the start of a block in a reply) the rest of the
    message is visible, Markdown after it still renders, and the markup itself is shown
    as written. Nothing runs. (Before, DOMPurify held but the text was gone, or shown
    raw: each opener failed here.)

    The built widget.js on a bare page with a fake kernel (tests/helpers/widget_page.py): the
    panel's traits and full texts come from a real ``TreePanel`` over a real session."""
    provider = ScriptedProvider()
    session = Session.in_memory(provider)
    provider.enqueue(f"{opener}{RUNS}\nhidden?\n\nREPLYSENTINEL **bold** after")
    session.ask(f"Question {opener}{RUNS} USERSENTINEL")
    with recording_comms():
        traits = panel_traits(TreePanel(session))
    texts = {node.id: text_payload(node) for node in session.tree}
    open_widget(page, traits)
    answer_text_requests(page, texts)  # play the kernel: the full texts the view asked for
    messages = page.locator(".jtc-conversation .jtc-markdown")
    expect(messages).to_have_count(2)
    question, reply = messages.nth(0), messages.nth(1)
    expect(question).to_contain_text("USERSENTINEL")
    expect(reply).to_contain_text("REPLYSENTINEL")
    expect(reply.locator("strong")).to_have_text("bold")
    for message, sentinel in ((question, "USERSENTINEL"), (reply, "REPLYSENTINEL bold after")):
        shown = " ".join(message.inner_text().split())  # rendered, not only in the DOM
        assert sentinel in shown, shown
        assert opener + RUNS in shown, shown  # the markup as written
    screenshot("widget")
    assert_nothing_ran(page, page_log, ".jtc-root")
    assert page.evaluate("typeof window.__xss_3") == "undefined"
    assert not page_log.page_errors, page_log.page_errors


def hostile_session_file() -> bytes:
    """A crafted session: the corpus in user text (every third question kept as typed, the
    payload in its words and its chip), assistant text blocks, ids, labels, model names
    and a tool_use input; plus damaged lines whose problem text quotes it."""
    lines = [{"type": "session", "version": 1, "created": 0}]
    parent = None
    for p in PAYLOADS:
        uid, aid = f"u{p['id']}", p["payload"][:60]  # a payload as a node id
        question = {
            "id": uid,
            "parentId": parent,
            "message": {"role": "user", "content": p["payload"]},
        }
        if p["id"] % 3 == 0:  # kept as typed: the payload in its words, its chip, what it opens
            payload = p["payload"]
            chip = {"field": payload[:30], "kind": "variable", "about": payload[:50]}
            question["meta"] = {
                "typed": [payload[:40], {**chip, "sent": [0, len(payload)]}, payload]
            }
        lines.append(question)
        lines.append(
            {
                "id": aid,
                "parentId": uid,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Reply: " + p["payload"]}],
                },
                "meta": {"model": p["payload"][:80], "interrupted": p["id"] % 2 == 0},
            }
        )
        if p["id"] % 5 == 0:
            lines.append({"type": "label", "id": aid, "label": p["payload"][:80]})
        parent = aid
    data = b"".join(json.dumps(r).encode() + b"\n" for r in lines)
    data += b'{"id": "<img src=x onerror=window.__xss_1=1>", "parentId": "nope"}\n'
    data += b"<script>window.__xss_1=1</script>\n"
    return data


@pytest.mark.browser
def test_hostile_session_file_in_the_viewer_runs_nothing(lab, page, page_log, screenshot):
    """The JupyterLab viewer opens a crafted .chat.jsonl: every payload is shown as
    text or harmless markup, none runs, none loads anything."""
    (lab.root / "corpus.chat.jsonl").write_bytes(hostile_session_file())
    page.goto(f"{lab.url}/lab/tree/corpus.chat.jsonl?reset")
    view = page.locator(".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view")
    expect(view).to_be_visible(timeout=60_000)
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(2 * len(PAYLOADS))
    expect(view.locator(".jtc-conversation")).to_contain_text("Reply:")
    screenshot("viewer")
    found = assert_nothing_ran(page, page_log, ".jtc-viewer")
    chips = view.locator(".jtc-conversation button.jtc-typed-chip")
    expect(chips.first).to_be_visible()
    for k in range(chips.count()):  # open what each typed question's chip stands for
        chips.nth(k).click()
    expect(view.locator(".jtc-chip-body:not([hidden])")).to_have_count(chips.count())
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    assert_nothing_ran(page, page_log, ".jtc-viewer")
    view.get_by_role("button", name="Picture").click()  # the same file, drawn
    nodes = view.locator(".jtc-pnode")
    expect(nodes.first).to_be_visible()
    for k in range(nodes.count()):  # each tooltip: a hostile first line
        nodes.nth(k).locator(".jtc-shape").dispatch_event("pointerover")
    expect(view.locator(".jtc-picture-tip")).to_be_visible()
    screenshot("picture")
    assert_nothing_ran(page, page_log, ".jtc-viewer")
    assert not page_log.page_errors, page_log.page_errors
    print(
        f"\nSECURITY xss viewer: payloads={len(PAYLOADS)} elements={found['elements']} "
        "ran=0 requests=0"
    )


FANOUT_SETUP = SETUP_CELL.replace(
    "for _ in range(3):\n    server.enqueue(HOSTILE)\n",
    'server.enqueue(HOSTILE, when=lambda body: body["model"] == "model-a")\n'
    'server.enqueue("A calm answer. The end.", when=lambda body: body["model"] == "model-b")\n',
)


@pytest.mark.browser
def test_a_hostile_answer_beside_a_calm_one_runs_nothing_streamed_or_compared(
    lab, page, page_log, screenshot
):
    """A fan-out over two models, one answering with the corpus: the columns as they
    streamed, ``%chat compare`` (its differences opened too) and the turn control's
    Compare (differences on) render the corpus as text beside the calm answer, side by
    side, and nothing runs or is requested."""
    ensure_built()
    write_notebook(
        lab.root / "hostile-fanout.ipynb",
        [FANOUT_SETUP, "%%chat --models model-a,model-b\nAnswer, please.", "%chat compare"],
    )
    open_and_run_all(page, lab, "hostile-fanout.ipynb")
    compare = page.locator(".jtc-compare")
    expect(compare).to_be_visible(timeout=90_000)
    columns = page.locator(".jtc-fanout .jtc-answer")
    expect(columns).to_have_count(2)
    expect(columns.nth(0)).to_contain_text("Payloads follow.")
    expect(columns.nth(0)).to_contain_text("The end.")
    expect(columns.nth(1)).to_contain_text("A calm answer.")
    left, right = (columns.nth(i).bounding_box() for i in range(2))
    assert left and right and left["y"] == right["y"] and left["x"] < right["x"]  # side by side
    marks = compare.locator(".jtc-differences mark")
    expect(marks.first).to_be_hidden()  # the differences are off...
    compare.locator(".jtc-differences summary").click()
    expect(marks.first).to_be_visible()  # ...until opened
    expect(compare.locator(".jtc-diff-columns .jtc-answer").nth(1).locator("mark")).to_have_text(
        ["A", "calm", "answer."]
    )
    turn = page.locator(".jtc-turn")
    turn.locator('[data-act="compare"]').click()
    expect(turn.locator(".jtc-compare-column")).to_have_count(2)
    turn.locator('.jtc-compare [data-act="differences"]').click()
    expect(turn.locator(".jtc-compare-column").nth(0)).to_contain_text("Payloads follow.")
    expect(turn.locator(".jtc-compare-column").nth(1).locator("mark.jtc-diff")).to_have_text(
        ["A", "calm", "answer."]
    )
    screenshot("fanout")
    found = assert_nothing_ran(page, page_log, ".jp-OutputArea-output")
    assert_nothing_ran(page, page_log, ".jtc-turn")
    assert not page_log.page_errors, page_log.page_errors
    print(f"\nSECURITY xss fan-out+compare: elements={found['elements']} ran=0 requests=0")


def hostile_fanout_file() -> bytes:
    """A question with two sibling answers, one of them the whole corpus."""
    lines = [
        {"type": "session", "version": 1, "created": 0},
        {"id": "q", "parentId": None, "message": {"role": "user", "content": "Answer, please."}},
        {
            "id": "a1",
            "parentId": "q",
            "message": {"role": "assistant", "content": [{"type": "text", "text": HOSTILE}]},
            "meta": {"model": "model-a", "temperature": 0.0},
        },
        {
            "id": "a2",
            "parentId": "q",
            "message": {"role": "assistant", "content": "A calm answer. The end."},
            "meta": {"model": "model-b", "temperature": 1.0},
        },
    ]
    return b"".join(json.dumps(r).encode() + b"\n" for r in lines)


@pytest.mark.browser
def test_a_hostile_answer_in_the_viewers_compare_runs_nothing(lab, page, page_log, screenshot):
    """The viewer puts a hostile answer beside a calm one, rendered, differences on:
    nothing runs, nothing loads, and the calm answer's own words are the ones marked."""
    (lab.root / "fanout-corpus.chat.jsonl").write_bytes(hostile_fanout_file())
    page.goto(f"{lab.url}/lab/tree/fanout-corpus.chat.jsonl?reset")
    view = page.locator(".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view")
    expect(view).to_be_visible(timeout=60_000)
    view.locator('.jtc-row[data-id="a2"] .jtc-row-main').click()
    columns = view.locator(".jtc-compare .jtc-compare-column")
    expect(columns).to_have_count(2)
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    expect(columns.nth(0).locator(".jtc-temperature")).to_have_text("temperature 1")
    view.locator('.jtc-compare [data-act="differences"]').click()
    expect(columns.nth(0).locator("mark.jtc-diff")).to_have_text(["A", "calm", "answer."])
    expect(columns.nth(1)).to_contain_text("Payloads follow.")
    screenshot("viewer-compare")
    assert_nothing_ran(page, page_log, ".jtc-viewer .jtc-compare")
    assert not page_log.page_errors, page_log.page_errors
