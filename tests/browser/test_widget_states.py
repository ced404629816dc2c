"""The widget's states in a real JupyterLab: a click while a ``%%chat`` cell streams (the
session is busy), a request that fails, and both of JupyterLab's themes.

ipykernel 7 handles widget messages while a cell runs, on another thread, so a panel
click during a streaming cell reaches the ``Session`` and meets ``SessionBusy``: the
widget must say so plainly and write nothing. Retry / Edit are disabled meanwhile; the
click that still gets through is one that left before the view heard of the reply.

Screenshots land in test-artifacts/browser/ (the themes as ``*-light.png`` and
``*-dark.png``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from contrast import CONTRAST_JS, assert_readable, set_theme
from helpers.widget_page import ensure_built
from lab_notebooks import open_and_run_all, records, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"

BUSY = "Busy: a reply is being written in this session"
SLOW_QUESTION = "Tell me, slowly and at length, " + "about the branches of a tree " * 12


def nodes(path: Path) -> list[dict]:
    return [r for r in records(path) if "message" in r]


def test_a_click_while_a_cell_streams_says_busy_and_writes_nothing(lab, page, page_log, screenshot):
    ensure_built()
    write_notebook(
        lab.root / "busy.ipynb",
        [
            "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'",
            "%%chat\nWhat is a tree?",
            "%chat panel",
            "%config TreeChat.offline_delay = 0.5",  # about 30 s of streaming
            f"%%chat\n{SLOW_QUESTION}",
        ],
    )
    cells = open_and_run_all(page, lab, "busy.ipynb", wait=False).locator(".jp-Cell")
    turn = cells.nth(1).locator(".jtc-turn")
    panel = cells.nth(2).locator(".jtc-panel")
    replying = panel.locator('[data-status="replying"]')
    expect(replying).to_be_visible(timeout=60_000)
    file = lab.root / "busy.chat.jsonl"
    assert len(nodes(file)) == 3  # Q1, A1, and the slow cell's question; its reply streams

    # while it streams: Retry / Edit are disabled in the earlier cell's control and the panel
    expect(turn.get_by_role("button", name="Retry")).to_be_disabled()
    expect(turn.get_by_role("button", name="Edit")).to_be_disabled()
    for button in panel.locator('.jtc-conversation [data-act="retry"]').all():
        expect(button).to_be_disabled()
    for button in panel.locator('.jtc-conversation [data-act="edit"]').all():
        expect(button).to_be_disabled()
    screenshot("1-streaming")

    # a click that left before the view knew a reply was being written (the button still
    # enabled): the kernel refuses it and the control says why
    retry = turn.get_by_role("button", name="Retry")
    retry.evaluate("button => { button.disabled = false; }")
    # dispatch_event, not click(): while the page streams, Playwright's click() returns
    # only when the stream ends (the page itself answers within a frame meanwhile)
    retry.dispatch_event("click")
    busy = turn.locator('[data-status="session-busy"]')
    # (the answer is seen to take from a second up to the rest of the stream to show here;
    # the kernel refuses at once: nothing is written, and the refusal is what is shown)
    expect(busy).to_contain_text(BUSY, timeout=60_000)
    expect(busy).to_contain_text("wait for it to finish, then try again")
    screenshot("2-busy-message")
    assert len(nodes(file)) == 3  # the refused click wrote nothing

    # the cell finishes: the busy message goes; the refused retry left no node behind
    expect(panel.locator(".jtc-streaming")).to_have_count(0, timeout=90_000)
    expect(busy).to_have_count(0)
    q1, a1, q2, a2 = nodes(file)
    assert a2["parentId"] == q2["id"] and q2["parentId"] == a1["id"]

    # and now the same Retry works: a second answer beside the first (quickly, this time)
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
        ".requestExecute({code: 'from jupyter_tree_chat.kernel.sessions import current_session;"
        " current_session().provider.default.delay = 0'}).done"
    )
    expect(retry).to_be_enabled()
    retry.click()
    answer_pos = turn.locator('.jtc-position[data-side="r"]')
    expect(answer_pos).to_have_text("2/2", timeout=60_000)
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(5)
    screenshot("3-retry-after")
    after = nodes(file)
    assert len(after) == 5 and after[-1]["parentId"] == q1["id"]
    assert not page_log.page_errors and not page_log.dialogs


def test_a_failed_request_is_one_clear_line_in_the_widget(lab, page, page_log, screenshot, fake):
    fake.reset()
    fake.enqueue("A first answer.", model="claude-a")
    fake.enqueue_error(500, times=5, retry_after_ms=1)  # every attempt (5) fails too
    write_notebook(
        lab.root / "fails.ipynb",
        [
            "import os\n"
            "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
            f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
            "%load_ext jupyter_tree_chat",
            "%%chat\nHello?",
            "%chat panel",
        ],
    )
    cells = open_and_run_all(page, lab, "fails.ipynb").locator(".jp-Cell")
    panel = cells.nth(2).locator(".jtc-panel")
    answer = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
    expect(answer).to_contain_text("A first answer.", timeout=60_000)
    answer.get_by_role("button", name="Retry", exact=True).click()
    error = panel.locator('.jtc-status [data-status="error"]')
    expect(error).to_contain_text("The Anthropic API failed (500)")
    expect(error).to_contain_text("retry later")
    # the action has ended (the status line is drawn anew on each change, so the line
    # is read in one go once nothing is left to change it)
    expect(panel.locator('.jtc-status [data-status="working"]')).to_have_count(0)
    shown = error.evaluate(
        "e => ({text: e.innerText, height: e.getBoundingClientRect().height,"
        " line: parseFloat(getComputedStyle(e).lineHeight) || 16})"
    )
    text = shown["text"]
    assert "\n" not in text.strip() and len(text) < 200, text
    assert "Traceback" not in text and "sk-test" not in text
    assert shown["height"] < 2.5 * shown["line"]  # one line at this width
    screenshot("failed")
    # nothing was stored for the failed reply; the next try works and clears the line
    assert len(nodes(lab.root / "fails.chat.jsonl")) == 2
    # the failed retry left the question as the current branch's end: Retry is there
    fake.enqueue("A second answer.", model="claude-a")
    question = panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")
    question.get_by_role("button", name="Retry", exact=True).click()
    expect(panel.locator(".jtc-conversation")).to_contain_text("A second answer.")
    expect(error).to_have_count(0)
    assert not page_log.page_errors and not page_log.dialogs


# -- themes --------------------------------------------------------------------------

MARKDOWN = """Here is **the answer**, with `inline code` and a [link](https://example.org).

- a list item with *emphasis*
- another item

> a quoted line

```python
print("a code block")
```
"""

THEME_CELL = f"""
from jupyter_tree_chat.providers.base import Finished, TextDelta
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.widget import TreePanel, TurnControl
from IPython.display import display

TEXTS = [{MARKDOWN!r}, "Here is the answer, said differently.", "And a third one."]

class Markdown:
    name = "markdown"
    default_model = "markdown-1"
    def stream(self, request):
        text = TEXTS.pop(0)
        yield TextDelta(text)
        yield Finished({{"role": "assistant", "content": [{{"type": "text", "text": text}}]}},
                       "markdown-1", "end_turn", {{"input_tokens": 12, "output_tokens": 34}})

session = Session.in_memory(Markdown())
turn = session.ask("What does **a tree** look like?")
second = session.retry()
session.retry()
control = TurnControl.for_turn(session, second)  # as if a cell printed the second answer
session.switch(turn.replies[0].id)  # the control follows, and shows the first below
session.label(turn.replies[0].id, "best")
panel = TreePanel(session)
panel.error = "The Anthropic API failed (500): retry later."
display(control, panel)
"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_widget_reads_well_in_jupyterlab_light_and_dark(lab, page, page_log, screenshot, theme):
    ensure_built()
    write_notebook(lab.root / f"theme-{theme}.ipynb", [THEME_CELL])
    area = open_and_run_all(page, lab, f"theme-{theme}.ipynb")
    set_theme(page, theme)
    panel = area.locator(".jtc-panel")
    turn = area.locator(".jtc-turn")
    expect(panel.locator(".jtc-conversation pre")).to_contain_text("a code block", timeout=60_000)
    # the switch made elsewhere is said in the control's bar; "Show 1/3 here" renders it
    turn.locator('.jtc-printed-hint [data-act="show"]').click()
    expect(turn.locator(".jtc-turn-body")).to_contain_text("a code block")
    conversation = panel.locator(".jtc-conversation")
    answer = conversation.locator(".jtc-msg.jtc-role-assistant")
    answer.get_by_role("button", name="Info").click()
    answer.get_by_role("button", name="Compare 3").click()
    expect(panel.locator("mark.jtc-diff")).to_have_count(0)  # off until switched on
    panel.locator('.jtc-compare [data-act="differences"]').click()
    expect(panel.locator("mark.jtc-diff").first).to_be_visible()
    panel.locator(".jtc-tree .jtc-row").nth(2).hover()  # a hovered row, as a user sees it
    wait_until_still(page)  # the theme's stylesheet and fonts are in
    screenshot(theme)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    area.locator(".jp-Cell").first.locator(".jp-OutputArea").screenshot(
        path=str(ARTIFACTS / f"widget-theme-{theme}.png")
    )
    surface = panel.evaluate("e => getComputedStyle(e).backgroundColor")
    assert (surface == "rgb(255, 255, 255)") == (theme == "light"), surface  # theme applied

    found = []
    for widget in (turn, panel):
        found += widget.evaluate(CONTRAST_JS)
    # what the test set out to measure is there: conversation text, tree rows, buttons
    needed = ["p", "span.jtc-first-line", "button.jtc-button", "span.jtc-role", "code"]
    assert_readable(found, needed)
    assert not page_log.page_errors
