"""What a chat cell weighs in a real page (issue 35), and that nothing is lost for it.

In JupyterLab and Notebook 7 with this project's extension, the controls use the code
the extension registered: the page never asks its kernel for it and receives no bundle.
In JupyterLab with the extension disabled (the page config's ``disabledExtensions``, as
a front end with only anywidget would be) the first control asks its kernel once and
every control works from that one copy. A notebook saved by the previous version (each
control's state holding the whole old bundle) still opens, and so does one saved by the
version before the session's shared busy state (each control's own ``busy``, a loader of
protocol 1). The frames counted are the kernel websocket's, as Playwright sees them.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, Lab, running_lab
from lab_notebooks import open_and_run_all, write_notebook
from playwright.sync_api import expect
from test_widget_e2e import test_hostile_text_runs_nothing_and_loads_no_remote_image as hostile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fakes.fake_anthropic import FakeAnthropic

pytestmark = pytest.mark.browser

CODE = "total = sum(range(10))\nprint(total)"
ANSWER = f"Here is a way:\n\n```python\n{CODE}\n```\n"
QUESTIONS = ["What is a session tree?", "Why fork?", "How do I retry?"]
ASKED_FOR_CODE = '"a":"code"'


@pytest.fixture(scope="module")
def bare_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab with anywidget but this project's extension disabled."""
    base = tmp_path_factory.mktemp("lab-without-extension")
    labconfig = base / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    disabled = {"disabledExtensions": {"jupyter-tree-chat": True}}
    (labconfig / "page_config.json").write_text(json.dumps(disabled))
    with running_lab(base, log_name="jupyterlab-without-extension.log") as server:
        yield server


class Frames:
    """The kernel websocket's frames, as the page received and sent them."""

    def __init__(self, page: Any) -> None:
        self.received: list[bytes] = []
        self.sent: list[bytes] = []
        page.on("websocket", self._watch)

    def _watch(self, socket: Any) -> None:
        if "/api/kernels/" in socket.url:
            socket.on("framereceived", lambda payload: self.received.append(_bytes(payload)))
            socket.on("framesent", lambda payload: self.sent.append(_bytes(payload)))

    def bytes_received(self) -> int:
        return sum(len(frame) for frame in self.received)

    def sent_with(self, text: str) -> int:
        return sum(text.encode() in frame.replace(b" ", b"") for frame in self.sent)


def _bytes(payload: str | bytes) -> bytes:
    return payload if isinstance(payload, bytes) else payload.encode()


def chat_notebook(lab: Lab, fake: FakeAnthropic, name: str) -> None:
    fake.reset()
    for _ in range(8):
        fake.enqueue(text=ANSWER)
    setup = (
        "import os\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-test'\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}\n"
        "%load_ext jupyter_tree_chat"
    )
    write_notebook(lab.root / name, [setup, *(f"%%chat\n{q}" for q in QUESTIONS)])


def run_three_chat_cells(page: Any, lab: Lab, fake: FakeAnthropic, name: str, app: str) -> Any:
    chat_notebook(lab, fake, name)
    # alone on the page: earlier tests' tabs would bring their kernels' frames along
    cells = open_and_run_all(page, lab, name, app=app, reset=True).locator(".jp-Cell")
    for k in range(1, 4):
        position = cells.nth(k).locator('.jtc-turn .jtc-position[data-side="r"]')
        expect(position).to_have_text("1/1", timeout=120_000)
    return cells


def check_the_control_keeps_every_action(page: Any, cell: Any, *, insert: bool) -> None:
    """Retry, switch, compare and edit from one cell's control; its code row's buttons."""
    turn = cell.locator(".jtc-turn")
    bar = turn.locator(".jtc-turn-code .jtc-code-bar")
    expect(bar).to_have_count(1)
    expect(bar.get_by_role("button", name="Copy")).to_have_count(1)
    expect(bar.get_by_role("button", name="Insert below")).to_have_count(1 if insert else 0)
    answer = turn.locator('.jtc-position[data-side="r"]')
    turn.get_by_role("button", name="Retry").click()
    expect(answer).to_have_text("2/2")
    turn.get_by_title("previous answer (←)").click()
    expect(answer).to_have_text("1/2")
    turn.get_by_role("button", name="Compare").click()
    expect(turn.locator(".jtc-compare .jtc-compare-column")).to_have_count(2)
    turn.get_by_role("button", name="Compare").click()
    turn.get_by_role("button", name="Edit").click()
    box = turn.locator("textarea.jtc-edit-box")
    box.fill("Why fork, really?")
    box.press("Enter")
    expect(turn.locator('.jtc-position[data-side="q"]')).to_have_text("2/2")


def test_with_the_extension_a_chat_cell_receives_no_code_and_its_figures_show_once(
    lab, page, page_log, screenshot, fake
):
    frames = Frames(page)
    cells = run_three_chat_cells(page, lab, fake, "weighed.ipynb", "lab/tree")
    received = frames.bytes_received()
    assert frames.sent_with(ASKED_FOR_CODE) == 0  # the extension's copy was used
    assert received <= 3 * 50_000, f"{received:,} bytes received for 3 chat cells"
    assert max(len(f) for f in frames.received) < 50_000  # no bundle in any one frame

    # the footer's figures the control shows are folded while it shows that reply
    footer = cells.nth(2).locator(".jtc-footer")
    expect(footer).to_be_visible()
    expect(footer.locator(".jtc-in-control").first).to_be_hidden()
    node = footer.get_attribute("data-node")
    assert node and footer.inner_text().startswith(node[:7])
    screenshot("1-three-cells")
    check_the_control_keeps_every_action(page, cells.nth(2), insert=True)
    expect(footer.locator(".jtc-in-control").first).to_be_visible()  # it shows another now
    screenshot("2-after-actions")
    assert frames.sent_with(ASKED_FOR_CODE) == 0
    assert page_log.page_errors == []


def test_notebook_7_uses_the_extensions_code_too(lab, page, page_log, fake):
    frames = Frames(page)
    cells = run_three_chat_cells(page, lab, fake, "weighed7.ipynb", "notebooks")
    loading_errors = list(page_log.page_errors)  # Notebook 7's own, while it loads
    assert frames.sent_with(ASKED_FOR_CODE) == 0
    assert frames.bytes_received() <= 3 * 50_000
    check_the_control_keeps_every_action(page, cells.nth(1), insert=True)
    assert page_log.page_errors == loading_errors


def test_without_the_extension_the_code_comes_once_and_every_control_works(
    bare_lab, page, page_log, screenshot, fake
):
    frames = Frames(page)
    page.goto(f"{bare_lab.url}/lab")
    config = page.evaluate("JSON.parse(document.getElementById('jupyter-config-data').text)")
    assert "jupyter-tree-chat" in config["disabledExtensions"]
    cells = run_three_chat_cells(page, bare_lab, fake, "bare.ipynb", "lab/tree")
    assert frames.sent_with(ASKED_FOR_CODE) == 1  # once for the page, not once per cell
    received = frames.bytes_received()
    assert received <= 600_000, f"{received:,} bytes received for 3 chat cells"
    screenshot("1-three-cells")
    check_the_control_keeps_every_action(page, cells.nth(2), insert=False)
    assert frames.sent_with(ASKED_FOR_CODE) == 1
    assert page_log.page_errors == []


def test_without_the_extension_hostile_text_still_runs_nothing(
    bare_lab, page, page_log, screenshot
):
    """The hostile corpus's widget check, on the code the kernel sent."""
    frames = Frames(page)
    hostile(bare_lab, page, page_log, screenshot)
    assert frames.sent_with(ASKED_FOR_CODE) == 1  # it ran on the kernel's copy


@pytest.fixture(scope="module")
def saving_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab that restores widget state saved in a notebook (``saveState``)."""
    base = tmp_path_factory.mktemp("lab-saving-state")
    settings = {"@jupyter-widgets/jupyterlab-manager/plugin": {"saveState": True}}
    with running_lab(base, settings, log_name="jupyterlab-saving-state.log") as server:
        yield server


def open_saved(lab: Lab, page: Any, name: str, saved: bytes) -> Any:
    """Open a notebook saved with widget state; its first chat cell, once its control shows."""
    (lab.root / name).write_bytes(saved)
    page.goto(f"{lab.url}/lab/tree/{name}?reset")  # alone: no earlier test's tab and cells
    cell = page.locator(".jp-Cell").nth(1)
    # a notebook from elsewhere is untrusted (the control's place shows its text/plain)
    # until the user trusts it, as the one who saved it does (this machine may already)
    area = cell.locator(".jp-OutputArea")
    page.wait_for_function(
        "a => a.querySelector('.jtc-turn') || a.textContent.includes('TurnControl object')",
        arg=area.element_handle(),
    )
    if area.locator(".jtc-turn").count() == 0:
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:trust'); }")
        page.locator(".jp-Dialog").get_by_role("button", name="Trust").click()
        expect(page.locator(".jp-Dialog")).to_have_count(0)
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        page.reload()
    return cell


def run_again_and_retry(page: Any, cell: Any, saved_in: str) -> None:
    """Run every cell: ``cell``'s control is a new one, and its Retry works."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    turn = cell.locator(".jtc-turn")
    expect(cell.locator(".jp-OutputArea")).not_to_contain_text(saved_in)  # it ran here
    expect(turn.locator('.jtc-position[data-side="r"]')).to_have_text("1/1")
    turn.get_by_role("button", name="Retry").click()
    expect(turn.locator('.jtc-position[data-side="r"]')).to_have_text("2/2")


def test_a_notebook_saved_by_the_previous_version_opens_and_runs_again(
    saving_lab, page, page_log, screenshot
):
    saved = gzip.decompress((DATA / "widget_state_round4.ipynb.gz").read_bytes())
    state = json.loads(saved)["metadata"]["widgets"]
    [old_esm] = [
        m["state"]["_esm"]
        for m in state["application/vnd.jupyter.widget-state+json"]["state"].values()
        if "_esm" in m["state"]
    ]
    assert len(old_esm) > 300_000  # the whole old bundle, in the control's saved state
    cell = open_saved(saving_lab, page, "old.ipynb", saved)
    expect(cell.locator('.jtc-turn .jtc-position[data-side="r"]')).to_have_text("1/1")
    expect(cell.locator(".jp-OutputArea")).to_contain_text("What is a session tree?")
    screenshot("1-opened")
    assert page_log.page_errors == []
    run_again_and_retry(page, cell, "/tmp/weight/oldrun")
    screenshot("2-run-again")
    assert page_log.page_errors == []


def test_controls_saved_with_a_busy_of_their_own_open_with_the_extensions_code(
    saving_lab, page, page_log, screenshot
):
    """Protocol 1 (before the session's shared busy state): each control's saved state
    has its own ``busy`` and a loader of protocol 1, which the extension still serves."""
    saved = gzip.decompress((DATA / "widget_state_round5.ipynb.gz").read_bytes())
    state = json.loads(saved)["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]
    controls = [m["state"] for m in state["state"].values() if m["state"].get("mode") == "turn"]
    assert len(controls) == 2
    assert all("busy" in c and "session_state" not in c for c in controls)
    assert all("const PROTOCOL = 1;" in c["_esm"] for c in controls)
    frames = Frames(page)
    cell = open_saved(saving_lab, page, "saved5.ipynb", saved)
    cells = page.locator(".jp-Cell")
    for k in (1, 2):
        turn = cells.nth(k).locator(".jtc-turn")
        expect(turn.locator('.jtc-position[data-side="r"]')).to_have_text("1/1")
        expect(turn.get_by_role("button", name="Retry")).to_be_enabled()
    expect(cell.locator(".jp-OutputArea")).to_contain_text("What is a session tree?")
    assert frames.sent_with(ASKED_FOR_CODE) == 0  # the extension's code, not the kernel's
    screenshot("1-opened")
    run_again_and_retry(page, cell, "/tmp/cellspeed-gen")
    screenshot("2-run-again")
    assert page_log.page_errors == []


def save_and_stop(page: Any, notebook: Path) -> dict[str, Any]:
    """Save the notebook with its widget state, stop its kernel: the saved models."""
    page.evaluate(
        "async () => { const c = window.jupyterapp.commands;"
        " await c.execute('docmanager:save'); await c.execute('kernelmenu:shutdown'); }"
    )
    saved = json.loads(notebook.read_text())
    return dict(saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"])


def test_controls_saved_by_this_version_open_from_their_saved_state(
    saving_lab, page, page_log, screenshot
):
    """Saved with the session's one busy state (the controls have no ``busy`` of their
    own): reopened with a fresh kernel, each control opens from the saved models."""
    write_notebook(
        saving_lab.root / "saved-now.ipynb",
        ["%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'"]
        + [f"%%chat\n{q}" for q in QUESTIONS[:2]],
    )
    cells = open_and_run_all(page, saving_lab, "saved-now.ipynb", reset=True).locator(".jp-Cell")
    for k in (1, 2):
        expect(cells.nth(k).locator('.jtc-turn .jtc-position[data-side="r"]')).to_have_text("1/1")
    models = save_and_stop(page, saving_lab.root / "saved-now.ipynb")
    [shared] = [m for m in models.values() if m["model_name"] == "WidgetModel"]
    assert shared["state"]["busy"] is False
    assert all("busy" not in m["state"] for m in models.values() if m["state"].get("mode"))
    page.reload()
    cells = page.locator(".jp-Cell")
    for k in (1, 2):
        turn = cells.nth(k).locator(".jtc-turn")
        expect(turn.locator('.jtc-position[data-side="r"]')).to_have_text("1/1")
        expect(turn.get_by_role("button", name="Retry")).to_be_enabled()
    screenshot("reopened")
    assert page_log.page_errors == []


def test_controls_sharing_a_place_follow_it_together_live_and_reopened(
    saving_lab, page, page_log, screenshot
):
    """``--new`` cells' controls are all at the roots' place: they show the question the
    path takes there from the session's shared state, so a switch in one moves them all,
    and a notebook saved with them reopens showing it."""
    asked = ["%%chat\nWhat is a session tree?", "%%chat --new\nWhy fork?",
             "%%chat --new\nHow do I retry?"]  # fmt: skip
    write_notebook(
        saving_lab.root / "places.ipynb",
        ["%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'", *asked],
    )
    cells = open_and_run_all(page, saving_lab, "places.ipynb", reset=True).locator(".jp-Cell")
    questions = [cells.nth(k).locator('.jtc-turn .jtc-position[data-side="q"]') for k in (1, 2, 3)]
    for position in questions:
        expect(position).to_have_text("3/3", timeout=120_000)
    cells.nth(1).locator(".jtc-turn").get_by_title("previous question (←)").click()
    for position in questions:  # one switch, every control at the place follows
        expect(position).to_have_text("2/3")
    models = save_and_stop(page, saving_lab.root / "places.ipynb")
    [shared] = [m for m in models.values() if m["model_name"] == "WidgetModel"]
    assert list(shared["state"]["places"]) == [""]  # the roots' place, said once
    controls = [m["state"] for m in models.values() if m["state"].get("mode") == "turn"]
    assert len(controls) == 3 and all(c["turn"].keys() == {"place", "shown"} for c in controls)
    page.reload()
    cells = page.locator(".jp-Cell")
    for k in (1, 2, 3):
        turn = cells.nth(k).locator(".jtc-turn")
        expect(turn.locator('.jtc-position[data-side="q"]')).to_have_text("2/3")
        expect(turn.locator('.jtc-position[data-side="r"]')).to_have_text("1/1")
    screenshot("reopened")
    assert page_log.page_errors == []
