"""One front end (labextension/src/components): the panel in a notebook and the viewer on
the same session's file are built from the same components, in one vocabulary and one
look; only the panel has the actions that change a session. Every string the widget
shows comes through the translation the lab extension hands it (labextension/src/
bridge.ts), and the bridge runs only this extension's own lab commands.

Screenshots of both views land in test-artifacts/browser/ (``*-panel.png``,
``*-viewer.png``), and the viewer's in JupyterLab Light and Dark (``*-light.png``,
``*-dark.png``).
"""

from __future__ import annotations

import pytest
from contrast import CONTRAST_JS, assert_readable, set_theme
from fakes.scripted_provider import ScriptedProvider
from helpers.widget_comm import recording_comms
from helpers.widget_page import answer_text_requests, ensure_built, open_widget, panel_traits
from lab_notebooks import open_and_run_all, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.widget import TreePanel, TurnControl
from jupyter_tree_chat.widget.protocol import text_payload

pytestmark = pytest.mark.browser

VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"

#: the components' parts, as class names: each must be in both views
COMPONENTS = [
    "jtc-root", "jtc-view", "jtc-header", "jtc-title", "jtc-counts", "jtc-main",
    "jtc-tree", "jtc-row", "jtc-row-main", "jtc-toggle-space", "jtc-id", "jtc-role", "jtc-position",
    "jtc-first-line", "jtc-leaf-mark", "jtc-right", "jtc-compare", "jtc-compare-column",
    "jtc-compare-header", "jtc-compare-text", "jtc-diff", "jtc-reference", "jtc-badge",
    "jtc-conversation", "jtc-msg", "jtc-msg-header", "jtc-msg-body", "jtc-switcher",
    "jtc-arrow", "jtc-markdown", "jtc-actions", "jtc-button", "jtc-details",
    "jtc-details-list", "jtc-section-title",
]  # fmt: skip
#: what only one of them may have: the panel's kind, status line and context meter (the
#: window of the session's model is known in the kernel, not in a file), the viewer's kind
ONLY_PANEL = {"jtc-panel", "jtc-status"} | {
    "jtc-meter", "jtc-meter-bar", "jtc-meter-fill", "jtc-meter-text"
} | {"jtc-grade", "jtc-thumbs-button"}  # fmt: skip
# (the panel grades an answer; the viewer shows a grade read-only, and only where one is)
ONLY_VIEWER = {"jtc-readonly"}
#: buttons that change the session
SESSION_ACTIONS = ["edit", "retry", "switch", "label"]

#: what the page shows of each view, read the same way in both
READ_VIEW_JS = """root => {
  const classes = new Set();
  for (const e of [root, ...root.querySelectorAll('*')]) {
    for (const c of e.classList) if (c.startsWith('jtc-')) classes.add(c);
  }
  const text = (e, s) => { const f = e.querySelector(s); return f ? f.textContent : null; };
  const style = s => {
    const e = root.querySelector(s);
    if (!e) return null;
    const c = getComputedStyle(e);
    return [c.fontFamily, c.fontSize, c.color, c.backgroundColor, c.borderRadius,
            c.paddingTop, c.paddingLeft, c.borderTopStyle].join(' | ');
  };
  return {
    classes: [...classes].sort(),
    roles: [...new Set([...root.querySelectorAll('[role]')].map(e => e.getAttribute('role')))]
      .sort(),
    rows: [...root.querySelectorAll('.jtc-tree .jtc-row')].map(r => ({
      id: r.dataset.id, role: text(r, '.jtc-role'), position: text(r, '.jtc-position'),
      level: r.getAttribute('aria-level'), current: !!r.querySelector('.jtc-leaf-mark'),
    })),
    messages: [...root.querySelectorAll('.jtc-conversation .jtc-msg')].map(m => ({
      id: m.dataset.id, role: text(m, '.jtc-role'), position: text(m, '.jtc-position'),
      model: text(m, '.jtc-model'),
    })),
    compared: [...root.querySelectorAll('.jtc-compare-column')].map(c => c.dataset.id),
    details: [...root.querySelectorAll('.jtc-details dt')].map(e => e.textContent),
    acts: [...new Set([...root.querySelectorAll('[data-act]')].map(e => e.dataset.act))].sort(),
    styles: ['.jtc-header', '.jtc-row-main', '.jtc-msg.jtc-role-assistant', '.jtc-msg-header',
             '.jtc-button', '.jtc-compare-column', '.jtc-markdown', '.jtc-details-list dd']
      .map(style),
  };
}"""


def test_panel_and_viewer_are_built_from_the_same_components(lab, page, page_log, screenshot):
    ensure_built()
    write_notebook(
        lab.root / "same.ipynb",
        [
            "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'",
            "%%chat\nWhat is a session tree?",
            "%chat edit 1 Say briefly what a session tree is",
            "%%chat\nAnd what is a branch?",
            "%chat panel",
        ],
    )
    cells = open_and_run_all(page, lab, "same.ipynb").locator(".jp-Cell")
    panel = cells.nth(4).locator(".jtc-panel")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(6, timeout=60_000)
    expect(panel.locator(".jtc-conversation .jtc-markdown")).to_have_count(4)
    before = panel.evaluate(READ_VIEW_JS)
    # the edited question (2/2) side by side with the first, and its details
    question = panel.locator(".jtc-conversation .jtc-msg.jtc-role-user").first
    question.get_by_role("button", name="Compare 2").click()
    question.get_by_role("button", name="Info").click()
    panel.locator('.jtc-compare [data-act="differences"]').click()
    expect(panel.locator(".jtc-compare mark.jtc-diff").first).to_be_visible()
    expect(question.locator(".jtc-details")).to_be_visible()
    panel.scroll_into_view_if_needed()
    screenshot("panel")
    in_panel = panel.evaluate(READ_VIEW_JS)

    # (in the same page: leaving it would ask whether to drop the unsaved notebook)
    page.evaluate(
        "p => window.jupyterapp.commands.execute('jupyter-tree-chat:open', {path: p})",
        "same.chat.jsonl",
    )
    view = page.locator(VIEW)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(6, timeout=60_000)
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    first_look = view.evaluate(READ_VIEW_JS)
    # selecting the same question in the viewer: its details and its siblings side by side
    view.locator(f'.jtc-row[data-id="{in_panel["compared"][0]}"] .jtc-row-main').click()
    view.locator('.jtc-compare [data-act="differences"]').click()
    expect(view.locator(".jtc-compare mark.jtc-diff").first).to_be_visible()
    expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
    screenshot("viewer")
    in_viewer = view.evaluate(READ_VIEW_JS)

    # the same components: every part is in both, and nothing else differs but the kind
    panel_classes = set(before["classes"]) | set(in_panel["classes"])
    viewer_classes = set(first_look["classes"]) | set(in_viewer["classes"])
    for name in COMPONENTS:
        assert name in panel_classes, ("panel", name)
        assert name in viewer_classes, ("viewer", name)
    assert panel_classes - viewer_classes == ONLY_PANEL
    assert viewer_classes - panel_classes == ONLY_VIEWER
    assert (
        in_panel["roles"] == in_viewer["roles"] == ["img", "search", "toolbar", "tree", "treeitem"]
    )
    # over the same data in the same words: the tree's rows (order, roles, positions,
    # indentation, current leaf) and the current branch as a conversation
    assert first_look["rows"] == before["rows"]
    assert {r["role"] for r in before["rows"]} == {"user", "assistant"}
    assert [r["position"] for r in before["rows"]] == ["1/2", None, "2/2", None, None, None]
    assert first_look["messages"] == before["messages"]
    assert [m["role"] for m in before["messages"]] == ["user", "assistant", "user", "assistant"]
    assert in_viewer["compared"] == in_panel["compared"]
    # the same details, and the viewer also says where in the file and when
    assert [d for d in in_viewer["details"] if d not in ("line", "time")] == in_panel["details"]
    assert "line" in in_viewer["details"] and "time" in in_viewer["details"]
    assert "edited from" in in_panel["details"] and "interrupted" in in_panel["details"]
    # in one look: the same computed styles for the same parts (only the frame around the
    # whole differs: a box in a notebook, a full tab for the viewer)
    panel_styles = [a or b for a, b in zip(before["styles"], in_panel["styles"], strict=True)]
    viewer_styles = [a or b for a, b in zip(first_look["styles"], in_viewer["styles"], strict=True)]
    assert None not in panel_styles
    assert viewer_styles == panel_styles
    # and only the panel changes the session: edit, retry, switch, label
    for act in SESSION_ACTIONS:
        assert act in in_panel["acts"], act
        assert act not in in_viewer["acts"], act
    assert page_log.page_errors == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_viewer_reads_well_in_jupyterlab_light_and_dark(lab, page, page_log, screenshot, theme):
    name = lab.put("branches.chat.jsonl", f"theme-{theme}.chat.jsonl")
    page.goto(f"{lab.url}/lab/tree/{name}?reset")
    view = page.locator(VIEW)
    expect(view.locator(".jtc-tree .jtc-row")).to_have_count(7, timeout=60_000)
    try:
        set_theme(page, theme)
        view.locator('.jtc-row[data-id="a2"] .jtc-row-main').click()  # compare and details
        view.locator('.jtc-compare [data-act="differences"]').click()
        expect(view.locator("mark.jtc-diff").first).to_be_visible()
        expect(view.locator(".jtc-markdown.jtc-pending")).to_have_count(0)
        view.locator('.jtc-row[data-id="u2"]').hover()  # a hovered row, as a user sees it
        wait_until_still(page)  # the theme's stylesheet and fonts are in
        screenshot(theme)
        surface = view.evaluate("e => getComputedStyle(e).backgroundColor")
        assert (surface == "rgb(255, 255, 255)") == (theme == "light"), surface
        needed = ["li.jtc-problem", "span.jtc-first-line", "button.jtc-button", "span.jtc-role"]
        needed += ["span.jtc-interrupted", "span.jtc-leaf-mark", "span.jtc-label", "dd", "mark"]
        assert_readable(view.evaluate(CONTRAST_JS), needed)
    finally:
        set_theme(page, "light")  # the theme is a setting: leave it as the other tests expect
    assert page_log.page_errors == []


def test_the_bridge_carries_the_translation_and_only_this_extensions_commands(lab, page):
    """What the lab extension puts on the page for the widget bundle (bridge.ts)."""
    name = lab.put("branches.chat.jsonl", "by-bridge.chat.jsonl")
    page.goto(f"{lab.url}/lab?reset")
    page.wait_for_function("() => window[Symbol.for('jupyter-tree-chat:host')]")
    host = page.evaluate(
        """async () => {
          const host = window[Symbol.for('jupyter-tree-chat:host')];
          const refused = await host.execute('docmanager:open', {path: 'x'})
            .then(() => 'ran', e => String(e));
          return {
            version: host.version,
            frozen: Object.isFrozen(host),
            translated: host.trans.__('Retry'),
            plural: host.trans._n('%1 node', '%1 nodes', 3),
            context: host.trans._p('role', 'assistant'),
            ours: host.hasCommand('jupyter-tree-chat:open'),
            theirs: host.hasCommand('docmanager:open'),
            refused,
          };
        }"""
    )
    assert host == {
        "version": 1,
        "frozen": True,
        "translated": "Retry",  # JupyterLab's bundle, here English (no catalog installed)
        "plural": "3 nodes",
        "context": "assistant",
        "ours": True,
        "theirs": False,
        "refused": "Error: jupyter-tree-chat: docmanager:open is not one of this "
        "extension's commands",
    }
    # and it runs this extension's own commands: the viewer opens through it
    page.evaluate(
        "p => window[Symbol.for('jupyter-tree-chat:host')]"
        ".execute('jupyter-tree-chat:open', {path: p})",
        name,
    )
    expect(page.locator(VIEW).locator(".jtc-title")).to_have_text(name)


# -- every string through the translator ---------------------------------------------

#: a bridge whose translation marks what it translated: ⟦...⟧
PSEUDO_HOST = """
const mark = s => '\u27e6' + s + '\u27e7';
const fill = (t, a) => t.replace(/%%|%(\\d+)/g, (m, n) => n === undefined ? '%' : String(a[n - 1]));
window[Symbol.for('jupyter-tree-chat:host')] = Object.freeze({
  version: 1,
  trans: {
    __: (id, ...a) => mark(fill(id, a)),
    _n: (one, many, n, ...a) => mark(fill(n === 1 ? one : many, [n, ...a])),
    _p: (context, id, ...a) => mark(fill(id, a)),
  },
  hasCommand: () => false,
  execute: () => Promise.reject(new Error('no commands here')),
});
"""

#: where a view shows data (ids, first lines, message text, labels, models, values)
DATA = (
    ".jtc-id, .jtc-first-line, .jtc-markdown, .jtc-label, .jtc-model, .jtc-title, "
    ".jtc-compare-text, dd, .jtc-pending, .jtc-edit-box, .jtc-caption, .jtc-tag"
)

#: every text and every title, aria-label and placeholder that is not data: how many, and
#: those that are not marked as translated
UNTRANSLATED_JS = (
    """root => {
  const data = '"""
    + DATA
    + """';
  const found = [];
  let checked = 0;
  for (const e of [root, ...root.querySelectorAll('*')]) {
    const own = Array.from(e.childNodes).filter(n => n.nodeType === 3)
      .map(n => n.textContent.trim()).join(' ').trim();
    if (own && !e.closest(data)) {
      checked++;
      if (!own.includes('\u27e6')) found.push(own);
    }
    for (const name of ['title', 'aria-label', 'placeholder']) {
      const value = e.getAttribute(name);
      if (value && !e.matches('.jtc-id')) {
        checked++;
        if (!value.includes('\u27e6')) found.push(name + '=' + value);
      }
    }
  }
  return {checked, found};
}"""
)


def pseudo_session() -> tuple[Session, str, str]:
    """A question with two answers (the second cut short) and a label; the answers' ids."""
    provider = ScriptedProvider()
    session = Session.in_memory(provider)
    provider.enqueue("A **first** answer about trees.")
    first = session.ask("What is a tree?").replies[0].id
    provider.enqueue("A second answer, cut short here", fail_after=3)
    second = session.retry().replies[0].id
    session.label(first, "best")
    return session, first, second


def test_every_string_the_widget_shows_comes_through_the_translation(page, page_log, screenshot):
    session, first, second = pseudo_session()
    with recording_comms():
        control = TurnControl(session, first)  # as if the cell printed the first answer
        session.switch(second)  # the control follows, and shows the second below
        turn_traits = {n: getattr(control, n) for n in ["uid", "mode", "busy", "error", "turn"]}
        traits = panel_traits(TreePanel(session))
    traits["error"] = "The Anthropic API failed (500): retry later."
    texts = {node.id: text_payload(node) for node in session.tree}

    # without the bridge (this bare page) the widget speaks English: the check sees it
    english = open_everything(page, traits, texts, "")
    assert {"Retry", "Info", "Compare 2", "interrupted"} <= set(english["found"]), english
    # with the lab's translation handed over by the bridge, every word is the bridge's
    translated = open_everything(page, traits, texts, PSEUDO_HOST)
    screenshot("panel")
    assert translated["checked"] > 60 and translated["found"] == [], translated
    assert page.locator('.jtc-panel [data-act="retry"]').first.inner_text() == "\u27e6Retry\u27e7"
    # the tree as a picture: its tooltip, its folds and the node menu speak the same way
    panel = page.locator(".jtc-panel")
    panel.get_by_role("button", name="\u27e6Picture\u27e7").click()
    shape = panel.locator(f'.jtc-pnode[data-id="{first}"] .jtc-shape')
    shape.hover()
    expect(panel.locator(".jtc-picture-tip")).to_be_visible()
    shape.click(button="right")
    expect(panel.locator(".jtc-menu-item")).to_have_text("\u27e6Hide this branch\u27e7")
    drawn = panel.evaluate(UNTRANSLATED_JS)
    assert drawn["checked"] > 60 and drawn["found"] == [], drawn

    # the per-turn control: a switch made elsewhere is said in its bar ("Show 2/2 here"),
    # and a click there shows the current answer in place of the one its cell printed
    open_widget(page, turn_traits, PSEUDO_HOST)
    control_root = page.locator(".jtc-turn")
    expect(control_root.locator('.jtc-position[data-side="r"]')).to_have_text("\u27e62/2\u27e7")
    answer_text_requests(page, texts)
    hint = control_root.locator(".jtc-printed-hint")
    expect(hint).to_be_visible()
    hinted = control_root.evaluate(UNTRANSLATED_JS)
    assert hinted["found"] == [], hinted
    hint.locator('[data-act="show"]').click()
    expect(control_root.locator(".jtc-turn-body .jtc-markdown")).to_be_visible()
    screenshot("turn")
    in_control = control_root.evaluate(UNTRANSLATED_JS)
    assert in_control["checked"] > 10 and in_control["found"] == [], in_control
    assert page_log.page_errors == []


def open_everything(page, traits: dict, texts: dict, host_script: str) -> dict:
    """The panel with all that has words open (compare, details, label, edit, an error);
    what ``UNTRANSLATED_JS`` finds in it."""
    open_widget(page, traits, host_script)
    answer_text_requests(page, texts)
    root = page.locator(".jtc-panel")
    answer = root.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
    expect(answer.locator(".jtc-markdown")).to_have_count(1)
    answer.locator('[data-act="compare"]').click()
    answer.locator('[data-act="details"]').click()
    answer.locator('[data-act="label"]').click()
    root.locator('.jtc-msg.jtc-role-user [data-act="edit"]').click()
    expect(root.locator(".jtc-compare-column")).to_have_count(2)
    expect(root.locator(".jtc-label-box")).to_be_visible()
    return root.evaluate(UNTRANSLATED_JS)
