"""The tree picture's cost, next to loading the same session and drawing it as text.

Run: ``python benchmarks/bench_picture.py [--sizes 10000,100000]``

For each size and shape (``deep``: one conversation with a fork every 500 nodes;
``bushy``: every node under a random earlier one; ``session``: the realistic mix of
benchmarks/bench_tree_store.py, a 2,000-deep current branch among side branches) it
prints the time to load the file, to draw the text tree (``show``), and to draw the
picture (fold, layout, SVG), as ratios to the load. Then the layout alone, unfolded,
next to d3-hierarchy's ``tree()`` under Node on the same hierarchy (the front end's
library: the Python port should stay within a small factor of it), the two command
lines as whole processes (``export --format svg`` next to ``show``), and the picture in
the panel's real widget bundle in headless Chromium at 10,000 nodes: the click on
"Picture" to its first frame (fold, d3 layout, drawing) next to the list's first
render in the same page, both timed to the same point (the next frame and a task after
it, so that frame's layout and paint count), and a zoom step (wheel to the same point).
A script, not a test: figures depend on the machine; the ratios are the point.

Every group of cases runs ``--runs`` times, the order turning run by run
(``alternating.py``): the Python steps judged on the thread's CPU time (the exact
measure here, which the shared machine's other work does not change), the command lines
on the processes' CPU time (user and system), d3-hierarchy on Node's own
``process.cpuUsage``; each printed as the median with the runs' range. The browser's
times (the page's ``performance.now``) have no exact measure; the load is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from alternating import Timing, alternate, process, ratio_line, timed
from bench_tree_store import build_session
from helpers.widget_comm import recording_comms
from helpers.widget_page import open_widget, panel_traits

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.history.store import parse_session
from jupyter_tree_chat.picture import draw, fold, place
from jupyter_tree_chat.picture.layout import tidy_tree
from jupyter_tree_chat.picture.svg import write_svg
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.textview import draw_tree
from jupyter_tree_chat.widget import TreePanel

ROOT = Path(__file__).resolve().parents[1]
D3 = ROOT / "labextension" / "node_modules" / "d3-hierarchy" / "dist" / "d3-hierarchy.mjs"


def cpu_ms(timings: list[Timing]) -> str:
    """The median CPU time and the runs' range."""
    cpu = [t.cpu * 1000 for t in timings]
    return f"{statistics.median(cpu):.0f} ms ({min(cpu):.0f}-{max(cpu):.0f})"


def write_shape(path: Path, size: int, shape: str, seed: int = 16) -> None:
    rng = random.Random(seed)
    out = bytearray()
    for i in range(size):
        if i == 0:
            parent = None
        elif shape == "deep":
            parent = i - 1 if i % 500 else rng.randrange(i)
        else:
            parent = rng.randrange(i)
        role = "user" if (i % 2 == 0) else "assistant"
        record = {
            "id": f"n{i:07d}",
            "parentId": None if parent is None else f"n{parent:07d}",
            "message": {"role": role, "content": f"message {i}"},
        }
        out += orjson.dumps(record) + b"\n"
    path.write_bytes(out)


def picture_row(path: Path, runs: int) -> dict[str, Any]:
    data = path.read_bytes()
    result = parse_session(data)
    tree = result.tree
    folded = fold(tree, leaf=tree.leaf)
    x = place(folded)
    labels = result.labels
    steps = {
        "load": lambda: parse_session(data),
        "text": lambda: draw_tree(tree, leaf=tree.leaf),
        "fold": lambda: fold(tree, leaf=tree.leaf),
        "layout": lambda: place(folded),
        "svg": lambda: write_svg(folded, x, tree, leaf=tree.leaf, labels=labels, hidden_count=0),
        "draw": lambda: draw(result),
    }
    picture = draw(result)
    found: dict[str, Any] = alternate({name: timed(step) for name, step in steps.items()}, runs)
    return {**found, "shown": picture.shown, "svg_kb": len(picture.svg) / 1024}


def d3_layout(kids: list[list[int]]) -> Timing | None:
    """d3-hierarchy's tree() on the same hierarchy, timed inside Node (no JSON, no start):
    its wall and CPU time."""
    node = shutil.which("node")
    if node is None or not D3.exists():
        return None
    script = f"""
import {{ hierarchy, tree }} from {json.dumps(str(D3))};
import {{ readFileSync }} from "fs";
const kids = JSON.parse(readFileSync(0, "utf8"));
const make = (data, depth, parent) =>
  Object.assign(Object.create(hierarchy.prototype), {{ data, depth, height: 0, parent }});
function build() {{
  const top = make(0, 0, null), stack = [top];
  while (stack.length) {{
    const n = stack.pop();
    if (!kids[n.data].length) continue;
    n.children = kids[n.data].map((d) => make(d, n.depth + 1, n));
    for (const c of n.children) stack.push(c);
  }}
  return top;
}}
const root = build();
const start = process.hrtime.bigint(), cpu = process.cpuUsage();
tree().nodeSize([1, 1])(root);
const used = process.cpuUsage(cpu);
const wall = Number(process.hrtime.bigint() - start) / 1e9;
process.stdout.write(`${{wall}} ${{(used.user + used.system) / 1e6}}`);
"""
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as f:
        f.write(script)
    done = subprocess.run(
        [node, f.name], input=json.dumps(kids), capture_output=True, text=True, check=True
    )
    Path(f.name).unlink()
    wall, cpu = done.stdout.split()
    return Timing(float(wall), float(cpu))


PICTURE_JS = """async () => {
  // to the same point as the list's first render (tests/helpers/widget_page.py): the next frame
  // and a task after it, so style, layout and paint of that frame are counted
  const frame = async () => { await new Promise(requestAnimationFrame);
                              await new Promise(resolve => setTimeout(resolve, 0)); };
  const button = document.querySelector('.jtc-mode[data-tree-action="picture"]');
  const start = performance.now();
  button.click();
  await frame();
  const drawn = performance.now() - start;
  const svg = document.querySelector('.jtc-picture-svg');
  const box = svg.getBoundingClientRect();
  const zooms = [];
  for (let k = 0; k < 10; k++) {
    const t = performance.now();
    svg.dispatchEvent(new WheelEvent('wheel', {deltaY: k % 2 ? 120 : -120, clientX: box.x + 200,
      clientY: box.y + 200, bubbles: true, cancelable: true}));
    await frame();
    zooms.push(performance.now() - t);
  }
  zooms.sort((a, b) => a - b);
  const shapes = document.querySelectorAll('.jtc-pnode, .jtc-pfold').length;
  return {drawn, zoom: zooms[5], shapes};
}"""


def browser_rows(paths: dict[str, Path], runs: int) -> dict[str, list[dict[str, float]]]:
    """The panel's picture of each session, in headless Chromium, the shapes' pages
    opening in turn, their order turning run by run."""
    from playwright.sync_api import sync_playwright

    with recording_comms():
        traits = {
            shape: panel_traits(TreePanel(Session.open(path, OfflineProvider())))
            for shape, path in paths.items()
        }
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip

        def one(shape: str) -> dict[str, float]:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            listed = open_widget(page, traits[shape])
            found = {"list": listed, **page.evaluate(PICTURE_JS)}
            page.close()
            return found

        found = alternate({shape: lambda shape=shape: one(shape) for shape in paths}, runs)
        browser.close()
    return found


def _median(runs: list[dict[str, float]], key: str) -> str:
    values = [r[key] for r in runs]
    return f"{statistics.median(values):.0f} ms ({min(values):.0f}-{max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = args.runs
    script = Path(sys.executable).with_name("jupyter-tree-chat")
    print(f"{runs} runs of each, the order turning; CPU medians (runs' range)")
    print(f"load average at the start {' '.join(f'{n:.2f}' for n in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            for shape in ("deep", "bushy", "session"):
                path = Path(folder) / f"{shape}{size}.chat.jsonl"
                if shape == "session":
                    build_session(path, size)
                else:
                    write_shape(path, size, shape)
                row = picture_row(path, runs)
                load = [t.cpu for t in row["load"]]
                text = ratio_line([t.cpu for t in row["text"]], load, None, "it draws less")
                picture = ratio_line([t.cpu for t in row["draw"]], load, None, "it draws less")
                print(
                    f"{size} nodes, {shape}: load {cpu_ms(row['load'])}; text {text} the load;"
                    f" picture {picture} the load (fold {cpu_ms(row['fold'])}, layout"
                    f" {cpu_ms(row['layout'])}, svg {cpu_ms(row['svg'])}); {row['shown']} shown,"
                    f" {row['svg_kb']:.0f} KB"
                )
            # the two command lines as whole processes, at this size (named in the output)
            last = Path(folder) / f"session{size}.chat.jsonl"
            commands = {
                "show": [str(script), "show", str(last)],
                "svg": [str(script), "export", str(last), "--format", "svg", "-o", f"{last}.svg"],
            }
            found = alternate(
                {k: lambda argv=argv: process(argv) for k, argv in commands.items()}, runs
            )
            lacks = "show draws a line of text for every node; the picture folds long branches"
            ratio = ratio_line(
                [t.cpu for t in found["svg"]], [t.cpu for t in found["show"]], None, lacks
            )
            print(
                f"  whole processes, {size} nodes (session), CPU: show {cpu_ms(found['show'])},"
                f" export --format svg {cpu_ms(found['svg'])}: {ratio} show"
            )
        paths = {}
        for shape in ("deep", "bushy", "session"):
            path = Path(folder) / f"{shape}10000.chat.jsonl"
            if shape == "session":
                build_session(path, 10_000)
            else:
                write_shape(path, 10_000, shape)
            paths[shape] = path
        for shape, pages in browser_rows(paths, runs).items():
            print(
                f"panel in Chromium, 10000 nodes ({shape}), median (runs): list first render "
                f"{_median(pages, 'list')}, picture first frame {_median(pages, 'drawn')},"
                f" zoom step {_median(pages, 'zoom')}, {pages[-1]['shapes']:.0f} shapes drawn"
            )
        rng = random.Random(3)
        for size in sizes:
            kids: list[list[int]] = [[] for _ in range(size)]
            for i in range(1, size):
                kids[rng.randrange(i)].append(i)
            if d3_layout(kids) is None:
                print(f"layout alone, {size} nodes: no Node to run d3-hierarchy")
                continue
            layouts = alternate(
                {
                    "ours": timed(lambda kids=kids: tidy_tree(kids, 0)),
                    "d3": lambda kids=kids: d3_layout(kids) or Timing(0.0, 0.0),
                },
                runs,
            )
            ours, d3 = [t.cpu for t in layouts["ours"]], [t.cpu for t in layouts["d3"]]
            lacks = "the same layout; d3 runs once a process, before Node's JIT has warmed to it"
            print(
                f"layout alone, {size} random nodes unfolded, CPU: ours {cpu_ms(layouts['ours'])},"
                f" d3-hierarchy {cpu_ms(layouts['d3'])}: {ratio_line(ours, d3, None, lacks)}"
            )
    print(f"load average at the end {' '.join(f'{n:.2f}' for n in os.getloadavg())}")


if __name__ == "__main__":
    main()
