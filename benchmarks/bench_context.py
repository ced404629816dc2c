"""What does putting a value into a question cost, against what it replaced?

``{name}`` used to paste ``str(value)``; now it converts by type. This script times, in
one process and one run (best of ``--runs``, interleaved so drift hits both alike):

1. a 1,000 and a 1,000,000 × 12 DataFrame as a Markdown table of 40 rows, against the
   same work done by pandas alone (``pd.concat([df.head(20), df.tail(20)]).to_markdown()``),
   and against ``str(df)`` (pandas' console repr, what was pasted before): the
   head-and-tail cut must keep it cheap whatever the frame's size;
2. a 1200 × 800 px matplotlib figure as an image block, against ``fig.savefig`` to PNG
   (the floor: the figure has to be drawn);
3. a 4000 × 3000 JPEG photo fitted to 1568 px, against Pillow's plain
   ``open → thumbnail → save`` (without the JPEG draft mode this module uses);
4. a 10,000-character question without fields, against one ``re.sub`` over it (what the
   old substitution did).

    .venv/bin/python benchmarks/bench_context.py [--runs 5]
"""

from __future__ import annotations

import argparse
import io
import re
import time
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from IPython.core.interactiveshell import InteractiveShell
from matplotlib.figure import Figure
from PIL import Image

from jupyter_tree_chat.context import Limits, convert_value
from jupyter_tree_chat.context.images import fit_image
from jupyter_tree_chat.kernel.context import QuestionBuilder
from jupyter_tree_chat.kernel.history import CellErrors


def best(runs: int, *work: Callable[[], Any]) -> list[float]:
    """Best wall time of each callable over ``runs`` interleaved rounds."""
    times = [float("inf")] * len(work)
    for _ in range(runs):
        for i, call in enumerate(work):
            start = time.perf_counter()
            call()
            times[i] = min(times[i], time.perf_counter() - start)
    return times


def report(name: str, ours: float, baseline: float, against: str) -> None:
    times = f"{ours * 1000:9.2f} ms  {baseline * 1000:9.2f} ms"
    print(f"{name:<44} {times}  {ours / baseline:5.2f}×  vs {against}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    limits = Limits()
    print(f"{'':<44} {'ours':>12}  {'baseline':>12}  ratio")

    for rows in (1_000, 1_000_000):
        frame = pd.DataFrame(np.random.default_rng(1).random((rows, 12)))
        ours, same, repr_ = best(
            runs,
            lambda frame=frame: convert_value("df", frame, limits),
            lambda frame=frame: pd.concat([frame.head(20), frame.tail(20)]).to_markdown(),
            lambda frame=frame: str(frame),
        )
        report(f"DataFrame {rows:,}×12 → 40-row table", ours, same, "pandas head+tail to_markdown")
        report("  (what was pasted before)", ours, repr_, "str(df)")

    figure = Figure(figsize=(12, 8), dpi=100)
    figure.add_subplot().plot(np.sin(np.linspace(0, 20, 2000)))

    def savefig() -> bytes:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()

    ours, base = best(runs, lambda: convert_value("fig", figure, limits), savefig)
    report("Figure 1200×800 → PNG image block", ours, base, "fig.savefig(png)")

    buffer = io.BytesIO()
    noise = np.random.default_rng(2).integers(0, 255, (3000, 4000, 3), dtype=np.uint8)
    Image.fromarray(noise).save(buffer, format="JPEG", quality=90)
    photo = buffer.getvalue()

    def plain_thumbnail() -> bytes:
        with Image.open(io.BytesIO(photo)) as image:
            image.thumbnail((1568, 1568))
            out = io.BytesIO()
            image.save(out, format="JPEG", quality=85)
            return out.getvalue()

    ours, base = best(runs, lambda: fit_image(photo, "photo.jpg"), plain_thumbnail)
    report("JPEG 4000×3000 → 1568×1176", ours, base, "open/thumbnail/save")

    shell = InteractiveShell.instance()
    builder = QuestionBuilder(shell, CellErrors(shell), lambda: limits)
    text = ('A question with JSON {"a": 1} and code braces {} but no fields. ' * 160)[:10_000]
    field = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
    ours, base = best(
        runs * 20, lambda: builder.question(text), lambda: field.sub(lambda m: m.group(0), text)
    )
    report("10,000-char question, no fields", ours, base, "one re.sub")


if __name__ == "__main__":
    main()
