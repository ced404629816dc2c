"""The widget in a real JupyterLab: a ``%%chat`` turn's control and the panel, driven by
clicks and keys as a user would, against the real Anthropic SDK talking to the local
fake Messages API; then the session file on disk. And hostile text that must run nothing.

Screenshots of each state land in test-artifacts/browser/.
"""

from __future__ import annotations

import pytest
from helpers.widget_page import ensure_built
from lab_notebooks import open_and_run_all, records, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_turn_control_and_panel_retry_switch_edit_compare(lab, page, page_log, screenshot, fake):
    fake.reset()
    fake.enqueue("Fourteen: multiplication binds tighter, so 2 + 12 = **14**.", model="claude-a")
    fake.enqueue("The answer is 14, since 3 * 4 = 12 comes first.", model="claude-b")
    fake.enqueue("Twenty: (2 + 3) * 4 = **20**.", model="claude-a")
    write_notebook(
        lab.root / "flow.ipynb",
        [
            "import os\n"
            f"os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
            f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
            "%load_ext jupyter_tree_chat",
            "%%chat\nWhat is 2 + 3 * 4?",
            "%chat panel",
        ],
    )
    cells = open_and_run_all(page, lab, "flow.ipynb").locator(".jp-Cell")
    turn = cells.nth(1).locator(".jtc-turn")
    panel = cells.nth(2).locator(".jtc-panel")
    answer_pos = turn.locator('.jtc-position[data-side="r"]')
    expect(answer_pos).to_have_text("1/1", timeout=60_000)
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(2)
    expect(panel.locator(".jtc-conversation")).to_contain_text("multiplication binds tighter")
    screenshot("1-first-turn")

    # retry from the cell's control: the new answer streams into it; 2/2 everywhere
    turn.get_by_role("button", name="Retry").click()
    expect(answer_pos).to_have_text("2/2")
    expect(turn.locator(".jtc-turn-body")).to_contain_text("3 * 4 = 12 comes first")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(3)
    expect(panel.locator(".jtc-conversation")).to_contain_text("3 * 4 = 12 comes first")
    screenshot("2-after-retry")

    # switch back with the control's arrow: the panel follows without re-running a cell
    turn.get_by_title("previous answer (←)").click()
    expect(answer_pos).to_have_text("1/2")
    expect(turn.locator(".jtc-turn-body")).to_be_hidden()
    expect(panel.locator(".jtc-conversation")).to_contain_text("multiplication binds tighter")
    answer_in_panel = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
    expect(answer_in_panel.locator(".jtc-position")).to_have_text("1/2")
    screenshot("3-switched-back")

    # keyboard: ArrowRight on the answer in the panel moves to the next sibling
    panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant").focus()
    page.keyboard.press("ArrowRight")
    expect(answer_pos).to_have_text("2/2")
    page.keyboard.press("ArrowLeft")
    expect(answer_pos).to_have_text("1/2")

    # inline edit in the panel: Escape cancels, Enter saves a new branch
    question = panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")
    question.get_by_role("button", name="Edit").click()
    box = panel.locator("textarea.jtc-edit-box")
    expect(box).to_have_value("What is 2 + 3 * 4?")
    page.keyboard.press("Escape")
    expect(box).to_have_count(0)
    question.get_by_role("button", name="Edit").click()
    box.fill("What is (2 + 3) * 4?")
    screenshot("4-editing")
    box.press("Enter")
    expect(panel.locator(".jtc-conversation")).to_contain_text("(2 + 3) * 4 = 20")
    expect(turn.locator('.jtc-position[data-side="q"]')).to_have_text("2/2")
    expect(answer_pos).to_have_text("1/1")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(5)
    screenshot("5-edited")

    # compare: go back to the first question by clicking its answer in the tree
    first_answer = panel.locator(".jtc-tree .jtc-row").nth(1)
    first_answer.locator(".jtc-row-main").click()
    expect(turn.locator('.jtc-position[data-side="q"]')).to_have_text("1/2")
    panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant").get_by_role(
        "button", name="Compare 2"
    ).click()
    compare = panel.locator(".jtc-compare")
    expect(compare.locator(".jtc-compare-column")).to_have_count(2)
    compare.locator('[data-act="differences"]').click()
    expect(compare.locator("mark.jtc-diff").first).to_be_visible()
    expect(compare.locator(".jtc-compare-column").nth(0)).to_contain_text("claude-a")
    expect(compare.locator(".jtc-compare-column").nth(1)).to_contain_text("claude-b")
    expect(compare.locator(".jtc-compare-column").nth(1)).to_contain_text(" out · ")
    screenshot("6-compare")

    # a click while the kernel runs other code still lands (ipykernel 7 may even take
    # widget messages during a cell; the "kernel busy" line shows when it does not)
    fake.enqueue("Fourteen again.", model="claude-a")
    kernel = "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
    # the cell runs until the test lets it end (a file appears), so the click comes while
    # it runs however slow the machine; its own iopub messages say when it started and
    # ended (the kernel's status alone may be a widget message's busy)
    release = lab.root / "flow.release"
    code = (
        f"import pathlib, time\nwhile not pathlib.Path({str(release)!r}).exists(): time.sleep(0.05)"
    )
    page.evaluate(
        """code => {
        window.__cell = { busy: false, done: false };
        const future = KERNEL.requestExecute({ code });
        future.onIOPub = (msg) => {
            if (msg.header.msg_type === 'status' && msg.content.execution_state === 'busy')
                window.__cell.busy = true;
        };
        future.done.then(() => { window.__cell.done = true; });
    }""".replace("KERNEL", kernel),
        code,
    )
    page.wait_for_function("() => window.__cell.busy")  # the cell has started
    turn.get_by_role("button", name="Retry").click()
    assert page.evaluate("() => window.__cell.done") is False  # the click came while it ran
    screenshot("7-retry-while-kernel-runs")
    release.touch()
    page.wait_for_function("() => window.__cell.done")
    expect(answer_pos).to_have_text("3/3")
    expect(turn.locator('[data-status="kernel-busy"]')).to_have_count(0)

    # the file on disk holds every branch; the leaf record follows the last action
    lines = records(lab.root / "flow.chat.jsonl")
    nodes = [r for r in lines if "message" in r]
    user, first, second, edited, third, fourth = nodes
    assert user["message"]["content"] == "What is 2 + 3 * 4?"
    assert first["parentId"] == second["parentId"] == fourth["parentId"] == user["id"]
    assert second["meta"]["model"] == "claude-sonnet-4-6"  # as asked; the server's name beside
    assert second["meta"]["served_model"] == "claude-b"
    assert edited["parentId"] is None and edited["meta"]["edited_from"] == user["id"]
    assert edited["message"]["content"] == "What is (2 + 3) * 4?"
    assert third["parentId"] == edited["id"]
    leaves = [r["id"] for r in lines if r.get("type") == "leaf"]
    assert first["id"] in leaves
    assert not page_log.page_errors and not page_log.dialogs


HOSTILE = """Payloads follow.
<script>window.__pwned = 'script'</script>
<img src="x" onerror="window.__pwned = 'img'">
[click me](javascript:window.__pwned='link')
<a href="javascript:window.__pwned='a'" id="rawlink">raw link</a>
<svg onload="window.__pwned = 'svg'"><script>window.__pwned = 'svgscript'</script></svg>
<iframe src="javascript:window.__pwned='iframe'"></iframe>
<details open ontoggle="window.__pwned = 'toggle'"><summary>s</summary>x</details>
<form action="javascript:window.__pwned='form'"><button id="formbutton">go</button></form>

![pixel](http://127.0.0.1:9/pixel.png) and [a safe link](https://example.org/docs)
"""

HOSTILE_CELL = f"""
from jupyter_tree_chat.providers.base import Finished, TextDelta
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.widget import TreePanel, TurnControl
from IPython.display import display

HOSTILE = {HOSTILE!r}

class Hostile:
    name = "hostile"
    default_model = "hostile-1"
    def stream(self, request):
        yield TextDelta(HOSTILE)
        yield Finished({{"role": "assistant", "content": [{{"type": "text", "text": HOSTILE}}]}},
                       "hostile-1", "end_turn", {{"input_tokens": 1, "output_tokens": 1}})

session = Session.in_memory(Hostile())
turn = session.ask(HOSTILE)
control = TurnControl.for_turn(session, turn)
session.retry()
display(control, TreePanel(session))
"""


def test_hostile_text_runs_nothing_and_loads_no_remote_image(lab, page, page_log, screenshot):
    ensure_built()
    write_notebook(lab.root / "xss.ipynb", [HOSTILE_CELL])
    area = open_and_run_all(page, lab, "xss.ipynb")
    panel = area.locator(".jtc-panel")
    conversation = panel.locator(".jtc-conversation")
    expect(conversation.locator(".jtc-markdown")).to_have_count(2, timeout=60_000)
    expect(conversation).to_contain_text("Payloads follow.")
    turn = area.locator(".jtc-turn")
    # the retry made elsewhere is said in the control's bar; "Show 2/2 here" renders it
    turn.locator('.jtc-printed-hint [data-act="show"]').click()
    expect(turn.locator(".jtc-turn-body .jtc-markdown")).to_contain_text("Payloads follow.")
    # click what could be clicked, open the compare view (rendered) and its differences
    for link in (
        conversation.get_by_text("click me").all() + conversation.get_by_text("raw link").all()
    ):
        link.click(modifiers=["Alt"])  # Alt: never navigate away, only run handlers
    answer = conversation.locator(".jtc-msg.jtc-role-assistant")
    answer.get_by_role("button", name="Compare 2").click()
    expect(panel.locator(".jtc-compare-column")).to_have_count(2)
    panel.locator('.jtc-compare [data-act="differences"]').click()
    expect(panel.locator(".jtc-compare-column").nth(1)).to_contain_text("Payloads follow.")
    panel.get_by_role("button", name="Picture").click()  # the same text, drawn
    panel.locator(".jtc-pnode.jtc-role-assistant .jtc-shape").first.hover()
    expect(panel.locator(".jtc-picture-tip")).to_contain_text("Payloads follow.")
    wait_until_still(page)  # every load finished or failed: onerror/onload had their turn
    screenshot("hostile")

    assert page.evaluate("window.__pwned") is None
    assert not page_log.dialogs
    # what the sanitizer left: no active elements, no handlers, no script URLs
    found = page.evaluate(
        """() => {
          const all = Array.from(document.querySelectorAll('.jtc-root *'));
          // the tree picture is the panel's own SVG of shapes and text nodes, nothing else
          const picture = Array.from(document.querySelectorAll('.jtc-picture-svg *'));
          const own = new Set(['g', 'path', 'circle', 'rect', 'text']);
          return {
            strange: picture.map(e => e.localName).filter(t => !own.has(t)),
            tags: all.filter(e => !e.matches('svg.jtc-picture-svg')).map(e => e.localName)
              .filter(t => ['script', 'iframe', 'svg', 'form', 'object', 'embed'].includes(t)),
            handlers: all.flatMap(e => Array.from(e.attributes)
              .filter(a => a.name.startsWith('on')).map(a => e.localName + ' ' + a.name)),
            urls: all.flatMap(e => ['href', 'src', 'action', 'xlink:href']
              .map(n => e.getAttribute(n) || '')).filter(u => /^\\s*javascript:/i.test(u)),
            links: all.filter(e => e.localName === 'a').map(e => e.getAttribute('href')),
          };
        }"""
    )
    assert found["tags"] == [] and found["handlers"] == [] and found["urls"] == [], found
    assert found["strange"] == [], found
    # raw HTML is text (as in the cell output); the Markdown links are still links: the
    # javascript: one without its URL, the https one as written (one per message, in the
    # conversation and in each compare column)
    assert found["links"].count(None) >= 2 and "javascript" not in str(found["links"]), found
    safe = panel.locator("a[href='https://example.org/docs']")
    expect(safe).to_have_count(4)
    expect(safe.first).to_have_attribute("target", "_blank")
    expect(conversation.locator(".jtc-markdown").first).to_contain_text(
        '<a href="javascript:window.__pwned=\'a\'" id="rawlink">raw link</a>'
    )
    assert conversation.locator("#rawlink").count() == 0
    assert not [url for url in page_log.requests if "pixel.png" in url]
    blocked = area.locator(".jtc-root img.jtc-blocked")
    expect(blocked.first).to_have_attribute("data-jtc-blocked-src", "http://127.0.0.1:9/pixel.png")


def test_the_panel_fans_out_into_its_compare_view_and_continues_from_the_chosen_answer(
    lab, page, page_log, screenshot, fake
):
    """Retry ×3 on an answer streams three answers side by side in the panel's compare
    view; once stored they are rendered, their differences a toggle, and "Use this" makes
    the chosen one current. "Ask other models…" asks the configured models."""
    fake.reset()
    fake.tokens_per_second = 10  # a delta (16 characters) every 0.1 s: about 3 s an answer
    fake.enqueue("A first answer about **trees**.")
    for word in ("oaks", "elms", "yews"):
        fake.enqueue(
            f"Another answer about **{word}**, " + "streamed slowly enough to be seen. " * 9
        )
    fake.enqueue("Answer from model-x.", when=lambda body: body["model"] == "model-x")
    fake.enqueue("Answer from model-y.", when=lambda body: body["model"] == "model-y")
    write_notebook(
        lab.root / "fanout.ipynb",
        [
            "import os\n"
            "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
            f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
            "%load_ext jupyter_tree_chat\n"
            "%config TreeChat.compare_models = ['model-x', 'model-y']",
            "%%chat\nTell me about trees.",
            "%chat panel",
        ],
    )
    try:
        cells = open_and_run_all(page, lab, "fanout.ipynb").locator(".jp-Cell")
        panel = cells.nth(2).locator(".jtc-panel")
        expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(2, timeout=60_000)
        answer = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
        # the three answers stop after their first words (two deltas, sent on by the
        # kernel) until they are seen streaming side by side: on a busy machine the page
        # may show them later than they would have ended
        fake.flowing.clear()
        answer.get_by_role("button", name="Retry ×3").click()

        live = panel.locator(".jtc-compare.jtc-live .jtc-compare-column")
        expect(live).to_have_count(3)
        for k in range(3):
            expect(live.nth(k)).to_contain_text("Another answer")  # each streams
        screenshot("1-streaming")
        fake.flowing.set()
        columns = panel.locator(".jtc-compare:not(.jtc-live) .jtc-compare-column")
        expect(columns).to_have_count(4)
        expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(5)
        expect(columns.nth(0).locator(".jtc-position")).to_have_text("2/4")  # the first new one
        expect(columns.nth(1).locator("strong")).to_have_text("trees")  # rendered Markdown
        expect(panel.locator(".jtc-compare mark.jtc-diff")).to_have_count(0)
        panel.locator('.jtc-compare [data-act="differences"]').click()
        expect(columns.nth(1).locator("mark.jtc-diff")).to_have_text(["A", "first", "trees", "."])
        screenshot("2-differences")

        chosen = columns.nth(2).get_attribute("data-id")
        columns.nth(2).get_by_role("button", name="Use this").click()
        expect(panel.locator(".jtc-compare .jtc-compare-column").nth(0)).to_have_attribute(
            "data-id", chosen or ""
        )
        leaf = [r for r in records(lab.root / "fanout.chat.jsonl") if r.get("type") == "leaf"]
        assert leaf[-1]["id"] == chosen

        answer = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
        answer.get_by_role("button", name="Ask other models…").click()
        form = panel.locator(".jtc-ask")
        form.get_by_label("model-x").check()
        form.get_by_label("model-y").check()
        form.get_by_role("button", name="Ask").click()
        columns = panel.locator(".jtc-compare:not(.jtc-live) .jtc-compare-column")
        expect(columns).to_have_count(6)
        expect(columns.nth(0)).to_contain_text("Answer from model-x.")
        expect(columns.nth(0).locator(".jtc-model")).to_have_text("model-x")
        screenshot("3-other-models")
        assert not page_log.page_errors, page_log.page_errors
    finally:
        fake.flowing.set()
        fake.tokens_per_second = None
