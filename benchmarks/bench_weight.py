"""What a chat cell weighs: the saved notebook, the page's websocket bytes, its JS heap.

Issue 35. Each ``%%chat`` cell ends with a turn control (an anywidget). This measures, in
one run, a notebook of N offline-model chat cells (N = 10 and 20):

1. saved: the ``.ipynb`` nbclient writes with ``store_widget_state=True`` (as JupyterLab's
   "save widget state" and ``nbconvert --execute`` do), and nbconvert's HTML of it;
   per cell = (size at 20 - size at 10) / 10. Targets: ≤ 1.5 MB at 20 cells, ≤ 30 KB
   more per cell.
2. in a real JupyterLab in headless Chromium, twice side by side: with this project's
   lab extension, and with it disabled (the page config's ``disabledExtensions``: a front
   end with only anywidget). A fresh page opens the notebook, its heap is read after a
   forced GC, all cells run, and once every control has rendered: the bytes the page
   received on the kernel websocket during the run, and the heap again after a forced
   GC. Per cell: bytes / N and heap growth / N (a page's one-time costs included), and
   what each cell adds, (figure at 20 - figure at 10) / 10, which the targets read:
   ≤ 50 KB per cell with the extension (stretch 10 KB); without it, 3 cells ≤ 600 KB
   (read as what the page without it receives beyond the page with it, the code once,
   plus 3 cells); heap ≤ 0.5 MB more per cell.

Cases alternate their order run by run; each figure is the median of the runs with its
spread (min-max). The machine's load is printed at start and end.

    .venv/bin/python benchmarks/bench_weight.py [--runs 3] [--cells 10 20]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "benchmarks"))
from alternating import alternate  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, Lab, running_lab  # noqa: E402
from lab_notebooks import write_notebook  # noqa: E402

SETUP = "import os\nos.environ.pop('ANTHROPIC_API_KEY', None)\n%load_ext jupyter_tree_chat"
HEAP_JS = """async () => {
  for (let i = 0; i < 4; i++) { window.gc(); await new Promise(r => setTimeout(r, 50)); }
  return performance.memory.usedJSHeapSize;
}"""


def chat_cells(count: int) -> list[str]:
    return [f"%%chat\nQuestion {k}: what is a session tree, and why fork?" for k in range(count)]


def saved_sizes(folder: Path, count: int) -> tuple[int, int]:
    """(the .ipynb with widget state, nbconvert's HTML of it) for ``count`` chat cells."""
    import nbformat
    from nbclient import NotebookClient

    folder.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_code_cell(c) for c in [SETUP, *chat_cells(count)]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", store_widget_state=True,
        resources={"metadata": {"path": str(folder)}},
    )  # fmt: skip
    client.execute(env=env)
    path = folder / "chats.ipynb"
    nbformat.write(notebook, path)
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(path)],
        check=True, capture_output=True,
    )  # fmt: skip
    return path.stat().st_size, path.with_suffix(".html").stat().st_size


def in_page(browser: Any, lab: Lab, count: int, name: str) -> tuple[int, int]:
    """(bytes received on the notebook's kernel websocket while its cells ran, heap growth).

    The page opens with a reset workspace (``?reset``), so no earlier run's notebook is
    restored beside it, and only this notebook's kernel websocket is counted."""
    write_notebook(lab.root / name, [SETUP, *chat_cells(count)])
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(300_000)
    received: dict[str, list[int]] = {}
    counting = [False]

    def watch(socket: Any) -> None:
        frames = received.setdefault(socket.url, [])
        socket.on("framereceived", lambda p: counting[0] and frames.append(len(p)))

    page.on("websocket", watch)
    try:
        page.goto(f"{lab.url}/lab/tree/{name}?reset")
        kernel_id = page.wait_for_function(
            "name => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " const k = w && w.context && w.context.path === name && w.sessionContext"
            " && w.sessionContext.session && w.sessionContext.session.kernel;"
            " return k && k.status === 'idle' && k.id; }",
            arg=name,
            timeout=300_000,
        ).json_value()
        before = int(page.evaluate(HEAP_JS))
        counting[0] = True
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(
            "n => document.querySelectorAll('.jtc-turn .jtc-position[data-side=r]').length === n",
            arg=count,
            timeout=300_000,
        )
        counting[0] = False
        after = int(page.evaluate(HEAP_JS))
        ours = [sum(frames) for url, frames in received.items() if kernel_id in url]
        return sum(ours), after - before
    finally:
        context.close()


@contextmanager
def labs(base: Path) -> Iterator[dict[str, Lab]]:
    with ExitStack() as stack:
        with_ext = stack.enter_context(running_lab(base / "with", log_name="bench-with.log"))
        config = base / "without" / "config" / "labconfig"
        config.mkdir(parents=True)
        disabled = {"disabledExtensions": {"jupyter-tree-chat": True}}
        (config / "page_config.json").write_text(json.dumps(disabled))
        without = stack.enter_context(running_lab(base / "without", log_name="bench-bare.log"))
        yield {"with the extension": with_ext, "without it": without}


def spread(values: list[float], unit: float, digits: int = 1) -> str:
    scaled = [v / unit for v in values]
    return (
        f"{statistics.median(scaled):.{digits}f} "
        f"({min(scaled):.{digits}f}-{max(scaled):.{digits}f})"
    )


def kb(size: float) -> str:
    return f"{size / 1e3:8.1f} KB"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cells", type=int, nargs="+", default=[10, 20])
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}, {os.cpu_count()} cores")
    small, big = min(args.cells), max(args.cells)

    print("\n1. saved with widget state (nbclient store_widget_state=True), offline model")
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {n: saved_sizes(Path(tmp) / str(n), n) for n in args.cells}
    for n, (ipynb, html) in sizes.items():
        print(f"   {n:3d} chat cells: .ipynb {kb(ipynb)}   nbconvert HTML {kb(html)}")
    per_cell = (sizes[big][0] - sizes[small][0]) / (big - small)
    print(f"   per chat cell: {kb(per_cell)} more  (target ≤ 30 KB: {verdict(per_cell <= 30e3)})")
    print(f"   {big} cells in all: {sizes[big][0] / 1e6:.2f} MB  (target ≤ 1.5 MB: "
          f"{verdict(sizes[big][0] <= 1.5e6)})")  # fmt: skip

    from playwright.sync_api import sync_playwright

    flags = [*CHROMIUM_ARGS, "--enable-precise-memory-info", "--js-flags=--expose-gc"]
    with tempfile.TemporaryDirectory() as tmp, labs(Path(tmp)) as servers, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        pages = itertools.count()

        def measure(case: str, n: int) -> tuple[int, int]:
            measured = in_page(browser, servers[case], n, f"page{next(pages)}-{n}.ipynb")
            print(f"   {case:20s} {n:3d} cells: "
                  f"{kb(measured[0])} received, heap +{measured[1] / 1e6:6.2f} MB",
                  flush=True)  # fmt: skip
            return measured

        pairs = [(case, n) for case in servers for n in args.cells]
        found = alternate({f"{c} {n}": lambda c=c, n=n: measure(c, n) for c, n in pairs}, args.runs)
        results = {(c, n): found[f"{c} {n}"] for c, n in pairs}
        browser.close()

    print(f"\n2. in JupyterLab + Chromium, {args.runs} runs, median (min-max)")
    print("   per chat cell: averaged over the N cells (a page's one-time costs included),")
    print(
        f"   and more per cell from {small} to {big} cells (each run's pair; the targets' measure)"
    )
    head = f"{'KB received/cell':>20s} {'heap MB/cell':>20s}"
    print(f"   {'case':20s} {'cells':>7s} {head}")
    marginal: dict[str, tuple[list[float], list[float]]] = {}
    for case in servers:
        for n in args.cells:
            got = results[(case, n)]
            print(f"   {case:20s} {n:7d} {spread([b / n for b, _ in got], 1e3):>20s} "
                  f"{spread([h / n for _, h in got], 1e6, 2):>20s}")  # fmt: skip
        pairs = list(zip(results[(case, small)], results[(case, big)], strict=True))
        more_bytes = [(b2 - b1) / (big - small) for (b1, _), (b2, _) in pairs]
        more_heap = [(h2 - h1) / (big - small) for (_, h1), (_, h2) in pairs]
        marginal[case] = (more_bytes, more_heap)
        print(f"   {case:20s} {f'{small}→{big}':>7s} {spread(more_bytes, 1e3):>20s} "
              f"{spread(more_heap, 1e6, 2):>20s}")  # fmt: skip
    more_bytes, _ = marginal["with the extension"]
    worst = max(more_bytes)
    print(f"\n   websocket per chat cell with the extension: worst {kb(worst)} "
          f"(target ≤ 50 KB: {verdict(worst <= 50e3)}; "
          f"stretch ≤ 10 KB: {verdict(worst <= 10e3)})")  # fmt: skip
    per_cell = statistics.median(marginal["with the extension"][0])
    once = statistics.median(
        (b_bare - b_ext) for (b_bare, _), (b_ext, _) in
        zip(results[("without it", small)], results[("with the extension", small)], strict=True)
    )  # fmt: skip
    three = once + 3 * per_cell
    print(f"   without it: the code once {kb(once)}, so 3 chat cells ≈ {kb(three)} "
          f"(target ≤ 600 KB: {verdict(three <= 600e3)})")  # fmt: skip
    heaps = [h for _, more_heap in marginal.values() for h in more_heap]
    print(f"   heap more per chat cell, worst of all: {max(heaps) / 1e6:.2f} MB "
          f"(target ≤ 0.5 MB: {verdict(max(heaps) <= 0.5e6)})")  # fmt: skip
    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"\nload average at end: {os.getloadavg()}; {now}")


if __name__ == "__main__":
    main()
