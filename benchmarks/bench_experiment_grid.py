"""Does the experiment grid answer a keystroke in time, on 2,000 answers?

A session with one experiment of ``--rows`` rows × 2 versions (one answer each: 2,000
answers by default) is exported as a page and opened in headless Chromium; the page
runs the same front end as the panel and the viewer (components/sessionview.ts), and
opens on the grid (its leaf answers a row). Typed a key at a time, each keystroke timed
from its ``input`` event to the next frame after the view has answered:

- the grid's filter box (components/experiment.ts: the matching lines in view drawn,
  components/rowwindow.ts);
- the find box (components/search.ts: the tree's rows marked);
- the baseline: a keystroke into a box nothing listens to, to its next frame (what any
  keystroke costs the page).

With ``--panel``, the same word is also typed into the panel's find box in a real
JupyterLab with a kernel over the same session (``%chat panel``): the box focused asks
the kernel for its text index (as a user's click into it does) and its first query goes
to the kernel; once the index is there, the keystrokes timed are answered from it in the
panel (panel/heldtexts.ts), as a literal query is.

The word typed alternates between the boxes, ``--runs`` times. Target: under 100 ms a
keystroke for each box. ``--slowdown N`` runs the page's CPU N times slower (Chromium's
own throttling, as its DevTools offer): a loaded machine on demand, where the load of a
shared one comes and goes.

    .venv/bin/python benchmarks/bench_experiment_grid.py [--rows 1000] [--runs 3]
        [--panel] [--slowdown 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_share import CHROMIUM_ARGS, typed  # the find box, timed the same way

WORD = "row 123"
USAGE = {"input_tokens": 30, "output_tokens": 90}

FILTER = """async text => {
  const view = document.querySelector('#jtc-page .jtc-view');
  const box = view.querySelector('.jtc-grid-filter');
  const count = view.querySelector('.jtc-grid-count');
  const times = [];
  for (let k = 1; k <= text.length; k++) {
    box.value = text.slice(0, k);
    const start = performance.now();
    box.dispatchEvent(new Event('input', {bubbles: true}));
    await new Promise(requestAnimationFrame);
    times.push(performance.now() - start);
  }
  const shown = count.textContent;
  box.value = '';
  box.dispatchEvent(new Event('input', {bubbles: true}));
  return {times, count: shown};
}"""

BARE = """async text => {
  const box = document.createElement('input');
  document.body.append(box);
  const times = [];
  for (let k = 1; k <= text.length; k++) {
    box.value = text.slice(0, k);
    const start = performance.now();
    box.dispatchEvent(new Event('input', {bubbles: true}));
    await new Promise(requestAnimationFrame);
    times.push(performance.now() - start);
  }
  box.remove();
  return {times};
}"""


def session_lines(rows: int) -> str:
    lines = [
        {"type": "session", "version": 1, "created": 0},
        {"id": "hello", "parentId": None, "message": {"role": "user", "content": "Hello"}},
        {"id": "hi", "parentId": "hello", "message": {"role": "assistant", "content": "Hi."}},
    ]
    for version in (1, 2):
        template = "Summarise {item}." if version == 1 else "Summarise {item} briefly."
        for index in range(rows):
            item = f"row {index}"
            about = {"id": "exp1", "version": version, "template": template,
                     "row": {"item": item, "n": index}, "index": index}  # fmt: skip
            question = f"q{version}-{index}"
            lines.append({"id": question, "parentId": "hi",
                          "message": {"role": "user", "content": template.format(item=item)},
                          "meta": {"experiment": about}})  # fmt: skip
            lines.append({"id": f"a{version}-{index}", "parentId": question,
                          "message": {"role": "assistant",
                                      "content": f"Version {version} says {item} is fine.\n"
                                      + "More words. " * 40},
                          "meta": {"model": "claude-sonnet-4-6", "usage": USAGE}})  # fmt: skip
    lines.append({"type": "leaf", "id": "a1-0"})
    return "".join(json.dumps(line) + "\n" for line in lines)


HELD = re.compile(rb'"t":\s*"held"')


def _bytes(frame: Any) -> bytes:
    return frame if isinstance(frame, bytes) else str(frame).encode()


def slowed(page: Any, slowdown: float) -> Any:
    """``page``, its CPU ``slowdown`` times slower (1: as it is)."""
    if slowdown != 1:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    return page


def panel_times(
    source: Path, folder: Path, browser: Any, runs: int, slowdown: float
) -> tuple[list[float], str]:
    """``WORD`` typed into the panel's find box, ``runs`` times, in a real JupyterLab;
    the times, and what its count said."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
    from conftest import running_lab
    from lab_notebooks import open_and_run_all, write_notebook

    times: list[float] = []
    count = ""
    with running_lab(folder / "lab", log_name="bench-experiment-lab.log") as lab:
        (lab.root / "grid.chat.jsonl").write_bytes(source.read_bytes())
        write_notebook(
            lab.root / "bench-grid.ipynb",
            [
                "%load_ext jupyter_tree_chat",
                '%config TreeChat.session_file = "grid.chat.jsonl"',
                "%chat panel",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        held: list[bool] = []  # the kernel's text index has reached the page
        page.on(
            "websocket",
            lambda ws: ws.on(
                "framereceived",
                lambda frame: held.append(True) if HELD.search(_bytes(frame)) else None,
            ),
        )
        open_and_run_all(page, lab, "bench-grid.ipynb")
        page.wait_for_selector(".jtc-panel .jtc-tree .jtc-row", timeout=300_000)
        slowed(page, slowdown)
        page.locator(".jtc-panel .jtc-search-input").focus()  # as a user: it asks for the index
        typed(page, ".jtc-panel", "x")  # the first query
        while not held:
            page.wait_for_timeout(50)
        page.wait_for_timeout(500)  # taken in
        for _ in range(runs):
            found = typed(page, ".jtc-panel", WORD)
            times += found["times"]
            count = found["count"]
        page.close()
    return times, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--panel", action="store_true", help="also the panel's find box")
    parser.add_argument("--slowdown", type=float, default=1, help="the page's CPU N× slower")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "grid.chat.jsonl"
        source.write_text(session_lines(args.rows))
        page_file = Path(folder) / "grid.html"
        subprocess.run(
            [sys.executable, "-m", "jupyter_tree_chat.cli", "export", str(source),
             "--format", "html", "-o", str(page_file)],
            check=True,
        )  # fmt: skip
        times: dict[str, list[float]] = {"filter": [], "find": [], "bare": []}
        counts: dict[str, str] = {}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(page_file.as_uri())
            page.wait_for_selector("#jtc-page .jtc-grid-row", timeout=120_000)
            slowed(page, args.slowdown)
            # the lines there are (only those in view are drawn: components/rowwindow.ts)
            grid_rows = page.locator("#jtc-page .jtc-grid-count").text_content()
            for run in range(args.runs):
                order = ["filter", "find", "bare"] if run % 2 == 0 else ["bare", "find", "filter"]
                for box in order:
                    if box == "find":
                        found = typed(page, "#jtc-page .jtc-view", WORD)
                    else:
                        found = page.evaluate(FILTER if box == "filter" else BARE, WORD)
                    times[box] += found["times"]
                    counts[box] = str(found.get("count", ""))
            if args.panel:
                times["panel"], counts["panel"] = panel_times(
                    source, Path(folder), browser, args.runs, args.slowdown
                )
            browser.close()
    load = os.getloadavg()[0]
    answers = 2 * args.rows
    print(
        f"an experiment of {args.rows:,} rows × 2 versions ({answers:,} answers, "
        f"grid: '{grid_rows}'), '{WORD}' typed {args.runs} times; load {load:.2f}"
        + (f"; the page's CPU {args.slowdown:g}× slower" if args.slowdown != 1 else "")
    )
    bare = statistics.median(times["bare"])
    boxes = [("filter", "grid filter"), ("find", "find box")]
    if args.panel:
        boxes.append(("panel", "panel find"))
    for box, label in boxes:
        median, slowest = statistics.median(times[box]), max(times[box])
        verdict = "met" if slowest <= 100 else "not met"
        print(
            f"  {label:11} median {median:6.1f} ms, slowest {slowest:6.1f} ms a keystroke "
            f"({median / bare:.1f}× a bare keystroke, {bare:.1f} ms; '{counts[box]}')  "
            f"[target ≤ 100 ms: {verdict}]"
        )


if __name__ == "__main__":
    main()
