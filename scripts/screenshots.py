"""Remake the README's and the docs' pictures from a real JupyterLab in headless Chromium.

The pictures are made, not drawn, so that they show the product as it is: this starts
JupyterLab and Chromium exactly as the browser suite does (``tests/browser/conftest.py``
and its helpers), runs a small notebook with the offline teaching model (no key, no
network), and writes PNGs under ``docs/images/``. Run it through ``scripts/screenshots.sh``
after anything visible changes, look at the pictures, and commit them.

Each picture is taken of one element (a notebook cell's output, the panel), not of the
whole screen, so that the files stay small.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BROWSER_SUITE = REPO / "tests" / "browser"
sys.path.insert(0, str(BROWSER_SUITE))

from lab_notebooks import open_and_run_all, write_notebook  # noqa: E402  (found above)
from page_state import wait_until_still  # noqa: E402


def _browser_conftest() -> Any:
    """The browser suite's conftest.py, by its path: under pytest the name ``conftest``
    is already taken by tests/conftest.py."""
    spec = importlib.util.spec_from_file_location(
        "jtc_browser_conftest", BROWSER_SUITE / "conftest.py"
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {BROWSER_SUITE / 'conftest.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_suite = _browser_conftest()
ACTION_TIMEOUT_MS = _suite.ACTION_TIMEOUT_MS
CHROMIUM = _suite.CHROMIUM
CHROMIUM_ARGS = _suite.CHROMIUM_ARGS
EXPECT_TIMEOUT_MS = _suite.EXPECT_TIMEOUT_MS
running_lab = _suite.running_lab

IMAGES = REPO / "docs" / "images"
NOTEBOOK = "first-session.ipynb"
#: the README's first session: two turns, the first question edited (a second branch), a
#: fan-out over three temperatures on the new branch, the panel
CELLS = [
    "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'",
    "%%chat\nWhat is a session tree?",
    "%%chat\nAnd what does the model see?",
    "%chat edit 1 What is a branch, in one line",  # no "?" at the end: IPython help
    "%%chat --temperatures 0,0.5,1\nExplain prompt caching in two sentences.",
    "%chat panel",
]
#: the panel's count once every cell has run: 4 + 2 (the edit's branch) + 1 + 3 nodes
NODES = "10 nodes"
#: the most a panel picture shows of the panel's height (its conversation runs on)
PANEL_HEIGHT = 480
#: the total the pictures may weigh: they live in the repository
MAX_TOTAL_BYTES = 400_000
#: tall enough to hold the fan-out's cell and the panel's tree in one picture
VIEWPORT = {"width": 1280, "height": 2000}


def _box(locator: Any) -> dict[str, float]:
    box = locator.bounding_box()
    if box is None:
        raise RuntimeError(f"{locator} is not on the page")
    return box


def _save(page: Any, name: str, top: Any, bottom: float | None = None) -> Path:
    """Photograph the page from ``top``'s upper edge to ``bottom`` (default: its lower
    edge), as wide as ``top``; stored as a 256-colour PNG, which keeps text sharp."""
    from PIL import Image

    top.scroll_into_view_if_needed()
    box = _box(top)
    height = (bottom if bottom is not None else box["y"] + box["height"]) - box["y"]
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / name
    clip = {"x": box["x"], "y": box["y"], "width": box["width"], "height": height}
    page.screenshot(path=str(path), clip=clip, animations="disabled")
    with Image.open(path) as shot:
        small = shot.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)
    print(f"wrote {path.relative_to(REPO)} ({path.stat().st_size // 1024} KB)")
    return path


def take_pictures(page: Any, lab: Any) -> list[Path]:
    """Run the notebook in ``lab`` and photograph what a reader of the docs should see."""
    from playwright.sync_api import expect

    write_notebook(lab.root / NOTEBOOK, CELLS)
    notebook = open_and_run_all(page, lab, NOTEBOOK)
    cells = notebook.locator(".jp-CodeCell")
    fanout, panel_cell = cells.nth(4), cells.nth(5)
    expect(fanout.locator(".jtc-fanout .jtc-answer")).to_have_count(3)
    panel = panel_cell.locator(".jtc-panel")
    expect(panel).to_contain_text(NODES)
    expect(panel.locator(".jtc-tree .jtc-row").first).to_be_visible()
    # the left sidebar takes room the cells can use
    page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
    wait_until_still(page)

    shots = []
    # the README's picture: the fan-out's three columns above the panel's tree
    fanout.evaluate("cell => cell.scrollIntoView({block: 'start'})")  # the earlier cells above
    wait_until_still(page)
    tree = _box(panel.locator(".jtc-tree .jtc-row").last)  # the tree's rows, not its column
    if tree["y"] + tree["height"] > VIEWPORT["height"]:
        raise RuntimeError("the fan-out and the panel's tree do not fit in the window")
    shots.append(_save(page, "fanout-and-panel.png", fanout, tree["y"] + tree["height"] + 12))
    # the docs' pictures: the fan-out alone, the panel as a list and as a picture
    shots.append(_save(page, "fanout-columns.png", fanout.locator(".jp-OutputArea")))
    panel.scroll_into_view_if_needed()
    shots.append(_save(page, "panel-tree.png", panel, _box(panel)["y"] + PANEL_HEIGHT))
    panel.get_by_role("button", name="Picture").click()
    expect(panel.locator(".jtc-picture-svg")).to_be_visible()
    wait_until_still(page)
    shots.append(_save(page, "panel-picture.png", panel, _box(panel)["y"] + PANEL_HEIGHT))
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with (
        tempfile.TemporaryDirectory(prefix="jtc-screenshots-") as base,
        running_lab(Path(base), log_name="screenshots-jupyterlab.log") as lab,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(ACTION_TIMEOUT_MS)
            shots = take_pictures(page, lab)
        finally:
            browser.close()
    total = sum(path.stat().st_size for path in shots)
    if total > MAX_TOTAL_BYTES:
        print(f"the pictures weigh {total // 1024} KB, over {MAX_TOTAL_BYTES // 1024} KB")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
