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
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

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


def best(action: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


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


def picture_row(path: Path) -> dict[str, float]:
    data = path.read_bytes()
    load = best(lambda: parse_session(data))
    result = parse_session(data)
    tree = result.tree
    text = best(lambda: draw_tree(tree, leaf=tree.leaf))
    folding = best(lambda: fold(tree, leaf=tree.leaf))
    folded = fold(tree, leaf=tree.leaf)
    layout = best(lambda: place(folded))
    x = place(folded)
    labels = result.labels
    svg = best(lambda: write_svg(folded, x, tree, leaf=tree.leaf, labels=labels, hidden_count=0))
    whole = best(lambda: draw(result))
    picture = draw(result)
    return {
        "load": load,
        "text": text,
        "fold": folding,
        "layout": layout,
        "svg": svg,
        "draw": whole,
        "shown": picture.shown,
        "svg_kb": len(picture.svg) / 1024,
    }


def d3_layout_seconds(kids: list[list[int]]) -> float | None:
    """d3-hierarchy's tree() on the same hierarchy, timed inside Node (no JSON, no start)."""
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
let bestTime = Infinity;
for (let r = 0; r < 3; r++) {{
  const root = build();
  const start = process.hrtime.bigint();
  tree().nodeSize([1, 1])(root);
  bestTime = Math.min(bestTime, Number(process.hrtime.bigint() - start) / 1e9);
}}
process.stdout.write(String(bestTime));
"""
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as f:
        f.write(script)
    done = subprocess.run(
        [node, f.name], input=json.dumps(kids), capture_output=True, text=True, check=True
    )
    Path(f.name).unlink()
    return float(done.stdout)


def process_seconds(argv: list[str]) -> float:
    return best(lambda: subprocess.run(argv, capture_output=True, check=True), repeat=3)


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


def browser_rows(path: Path) -> list[dict[str, float]]:
    """The panel's picture of the session in ``path``, in headless Chromium (3 runs)."""
    from playwright.sync_api import sync_playwright

    with recording_comms():
        traits = panel_traits(TreePanel(Session.open(path, OfflineProvider())))
    runs = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        for _ in range(3):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            listed = open_widget(page, traits)
            runs.append({"list": listed, **page.evaluate(PICTURE_JS)})
            page.close()
        browser.close()
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    script = Path(sys.executable).with_name("jupyter-tree-chat")
    with tempfile.TemporaryDirectory() as folder:
        print("size     shape    load    text/load  picture/load  (fold layout svg)  shown  svg")
        for size in sizes:
            for shape in ("deep", "bushy", "session"):
                path = Path(folder) / f"{shape}{size}.chat.jsonl"
                if shape == "session":
                    build_session(path, size)
                else:
                    write_shape(path, size, shape)
                row = picture_row(path)
                load = row["load"]
                svg = row["svg"]
                print(
                    f"{size:<8} {shape:<8} {load * 1000:6.0f}ms  {row['text'] / load:8.2f}x"
                    f"  {row['draw'] / load:10.2f}x   ({row['fold'] * 1000:.0f} "
                    f"{row['layout'] * 1000:.0f} {svg * 1000:.0f} ms)  {row['shown']:5.0f}"
                    f"  {row['svg_kb']:.0f} KB"
                )
            # the two command lines as whole processes, at this size (named in the output)
            last = Path(folder) / f"session{size}.chat.jsonl"
            show = process_seconds([str(script), "show", str(last)])
            export = process_seconds(
                [str(script), "export", str(last), "--format", "svg", "-o", f"{last}.svg"]
            )
            print(
                f"  whole processes, {size} nodes (session): show {show:.2f}s, export "
                f"--format svg {export:.2f}s ({export / show:.2f}x show)"
            )
        for shape in ("deep", "bushy", "session"):
            path = Path(folder) / f"{shape}10000.chat.jsonl"
            if shape == "session":
                build_session(path, 10_000)
            else:
                write_shape(path, 10_000, shape)
            runs = browser_rows(path)
            best_run = min(runs, key=lambda r: r["drawn"])
            print(
                f"panel in Chromium, 10000 nodes ({shape}): list first render "
                f"{best_run['list']:.0f} ms, picture first frame {best_run['drawn']:.0f} ms "
                f"({best_run['drawn'] / best_run['list']:.2f}x the list), zoom step "
                f"{best_run['zoom']:.1f} ms, {best_run['shapes']} shapes drawn"
            )
        rng = random.Random(3)
        for size in sizes:
            kids: list[list[int]] = [[] for _ in range(size)]
            for i in range(1, size):
                kids[rng.randrange(i)].append(i)
            ours = best(lambda kids=kids: tidy_tree(kids, 0))
            theirs = d3_layout_seconds(kids)
            against = (
                f"d3-hierarchy {theirs * 1000:.0f} ms, ours {ours / theirs:.1f}x"
                if theirs
                else "no Node to run d3-hierarchy"
            )
            print(f"layout alone, {size} random nodes unfolded: {ours * 1000:.0f} ms ({against})")


if __name__ == "__main__":
    main()
