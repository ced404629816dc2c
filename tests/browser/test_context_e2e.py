"""The notebook as context in a real JupyterLab: an image in a question shows as a
thumbnail, and "Insert below" on an answer's code block (in the turn control and in the
panel) makes a new cell under the cell that asked, holding exactly the code, in
JupyterLab and in Jupyter Notebook 7; "Copy" puts the same text on the clipboard. A
session file with hostile image blocks (an SVG, a ``javascript:`` and a remote URL,
markup in the data) opens in the viewer, loads nothing and shows why each image is not
shown.

The real SDK talks to the local fake Messages API started in the test.
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from helpers.content_blocks import image_block, pdf_block, url_image
from lab_notebooks import open_and_run_all, write_notebook
from PIL import Image
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

FIRST = "import math\nif 1 < 2 and 'a' != \"b\":\n    print(math.pi, '&amp;', '<b>')"
SECOND = "x = {'a': [1, 2]}\n\ttabbed = True"
ANSWER = f"Two ways:\n\n```python\n{FIRST}\n```\n\nor, shorter:\n\n```\n{SECOND}\n```\n"


def chat_notebook(lab, fake, name: str, cells: list[str], setup: str = "") -> None:
    """A notebook whose first cell points the kernel at the fake API (which will answer
    ``ANSWER``) and loads the extension, then ``cells``."""
    fake.reset()
    fake.enqueue(text=ANSWER)
    first = (
        "import os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
        f"{setup}%load_ext jupyter_tree_chat"
    )
    write_notebook(lab.root / name, [first, *cells])


def sources(page) -> list[str]:
    return page.evaluate(
        "window.jupyterapp.shell.currentWidget.content.widgets"
        ".map(cell => cell.model.sharedModel.getSource())"
    )


def test_thumbnails_and_insert_below_from_the_control_and_the_panel(
    lab, page, page_log, screenshot, fake
):
    asking = "%%chat\nWhat is in {img}? Give me code."
    setup = "from PIL import Image\nimg = Image.new('RGB', (160, 90), 'teal')\n"
    chat_notebook(lab, fake, "context.ipynb", [asking, "%chat panel"], setup)
    cells = open_and_run_all(page, lab, "context.ipynb").locator(".jp-Cell")
    turn = cells.nth(1).locator(".jtc-turn")
    bars = turn.locator(".jtc-turn-code .jtc-code-bar")
    expect(bars).to_have_count(2, timeout=60_000)
    expect(bars.nth(0)).to_contain_text("python")
    screenshot("1-turn-code")

    bars.nth(0).get_by_role("button", name="Insert below").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(4)
    assert sources(page)[1:3] == [asking, FIRST]

    panel = page.locator(".jp-Cell:has(.jtc-tree)")  # the cell below keeps moving down
    thumb = panel.locator(".jtc-msg.jtc-role-user img.jtc-thumb")
    expect(thumb).to_have_count(1)
    assert thumb.get_attribute("src").startswith("data:image/png;base64,")
    size = thumb.evaluate("img => img.decode().then(() => [img.naturalWidth, img.naturalHeight])")
    assert size == [160, 90]
    answer_bars = panel.locator(".jtc-msg.jtc-role-assistant .jtc-code-bar")
    expect(answer_bars).to_have_count(2)
    screenshot("2-panel-thumbnail-and-code")

    answer_bars.nth(1).get_by_role("button", name="Insert below").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(5)
    assert sources(page)[1:4] == [asking, SECOND, FIRST]  # below the cell that asked

    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab.url)
    copy = answer_bars.nth(0).get_by_role("button", name="Copy")
    # it says "Copied" for 1.2 s: a watcher notes it, so a poll slowed by load cannot miss it
    copy.evaluate(
        "b => { window.__copied = false; new MutationObserver(() => { window.__copied ||="
        " b.className === 'jtc-button jtc-quiet jtc-done'; }).observe(b, {attributes: true}); }"
    )
    copy.click()
    page.wait_for_function("() => window.__copied")
    assert page.evaluate("navigator.clipboard.readText()") == FIRST
    assert page_log.page_errors == []


def test_insert_below_works_in_jupyter_notebook_7(lab, page, page_log, fake):
    asking = "%%chat\nCode, please."
    chat_notebook(lab, fake, "classic.ipynb", [asking])
    open_and_run_all(page, lab, "classic.ipynb", app="notebooks")
    bars = page.locator(".jp-Cell").nth(1).locator(".jtc-turn-code .jtc-code-bar")
    expect(bars).to_have_count(2, timeout=60_000)
    # Notebook 7 itself raises one error while loading its settings in this test server
    # (in its own notebook_core bundle); none may come from inserting the cell
    loading_errors = list(page_log.page_errors)
    bars.nth(1).get_by_role("button", name="Insert below").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(3)
    assert sources(page) == [sources(page)[0], asking, SECOND]
    assert page_log.page_errors == loading_errors


def png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "orange").save(buffer, format="PNG")
    return buffer.getvalue()


def test_hostile_images_in_a_file_load_nothing_in_the_viewer(lab, page, page_log, screenshot):
    sentinel = "http://image-sentinel.test/pixel.png"
    question = [
        image_block(png(40, 30)),
        image_block(base64.b64encode(b'<svg onload="alert(1)"/>').decode(), "image/svg+xml"),
        url_image("javascript:alert(document.domain)"),
        url_image(sentinel),
        image_block('AAAA" onerror="alert(1)'),
        pdf_block(b"%PDF-1.4", title="results.pdf"),
        {"type": "text", "text": "What are these?"},
    ]
    records = [
        {"type": "session", "version": 1},
        {"id": "q1", "parentId": None, "message": {"role": "user", "content": question}},
        {
            "id": "a1",
            "parentId": "q1",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "An image."}]},
        },
    ]
    (lab.root / "images.chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    page.goto(f"{lab.url}/lab/tree/images.chat.jsonl?reset")
    view = page.locator(".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view")
    expect(view).to_be_visible(timeout=60_000)
    view.locator(".jtc-tree .jtc-row").first.locator(".jtc-row-main").click()
    user = view.locator(".jtc-msg.jtc-role-user")
    expect(user.locator("img.jtc-thumb")).to_have_count(1)
    assert user.locator("img.jtc-thumb").get_attribute("src").startswith("data:image/png;base64,")
    expect(user.locator(".jtc-chip-hidden")).to_have_count(4)
    expect(user.locator(".jtc-chip-hidden").nth(0)).to_have_text(
        "image not shown: image/svg+xml is not shown here"
    )
    expect(user.locator(".jtc-chip-hidden").nth(1)).to_have_text(
        "image not loaded: it is given by URL"
    )
    expect(user.locator(".jtc-chip-hidden").nth(3)).to_have_text(
        "image not shown: its data is damaged"
    )
    expect(user.locator(".jtc-chip-document")).to_have_text("document: results.pdf")
    screenshot("hostile-images")
    sources_seen = page.evaluate(
        "Array.from(document.querySelectorAll('.jtc-viewer img')).map(i => i.getAttribute('src'))"
    )
    assert all(src.startswith("data:image/png;base64,") for src in sources_seen)
    assert not [u for u in page_log.requests if "image-sentinel" in u or u.startswith("javascript")]
    assert page_log.dialogs == [] and page_log.page_errors == []
