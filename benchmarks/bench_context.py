"""What does putting a value into a question cost, against what it replaced?

``{name}`` used to paste ``str(value)``; now it converts by type. This script times, in
one process, ``--runs`` runs of each case and its baselines, their order turning run by
run (``alternating.py``), and prints the median CPU time (the thread's,
``time.thread_time``: the exact measure, which the shared machine's other work does not
change; wall reported) and the median of the runs' own ratios with their spread. There
are no numeric targets: the ratios are reported.

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
import os
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from IPython.core.interactiveshell import InteractiveShell
from matplotlib.figure import Figure
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alternating import Timing, alternate, ratio_line, timed

from jupyter_tree_chat.context import Limits, convert_value
from jupyter_tree_chat.context.images import fit_image
from jupyter_tree_chat.kernel.context import QuestionBuilder
from jupyter_tree_chat.kernel.history import CellErrors


def compare(
    runs: int, ours: Callable[[], Any], **baselines: Callable[[], Any]
) -> dict[str, list[Timing]]:
    """``ours`` and each baseline, ``runs`` times, their order turning."""
    cases = {"ours": timed(ours)} | {name: timed(call) for name, call in baselines.items()}
    for case in cases.values():  # once each first: imports (tabulate's), caches
        case()
    return alternate(cases, runs)


def report(
    name: str, times: dict[str, list[Timing]], baseline: str, against: str, lacks: str
) -> None:
    ours, base = [t.cpu for t in times["ours"]], [t.cpu for t in times[baseline]]
    medians = f"{statistics.median(ours) * 1000:9.2f} ms  {statistics.median(base) * 1000:9.2f} ms"
    print(f"{name:<40} {medians}  {ratio_line(ours, base, None, lacks)}  vs {against}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    limits = Limits()
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"{runs} runs, the order turning; CPU time (judged) medians; load average {load}")
    print(f"{'':<40} {'ours':>12}  {'baseline':>12}  ratio (runs)")

    for rows in (1_000, 1_000_000):
        frame = pd.DataFrame(np.random.default_rng(1).random((rows, 12)))
        times = compare(
            runs,
            lambda frame=frame: convert_value("df", frame, limits),
            same=lambda frame=frame: pd.concat([frame.head(20), frame.tail(20)]).to_markdown(),
            repr=lambda frame=frame: str(frame),
        )
        report(
            f"DataFrame {rows:,}×12 → 40-row table",
            times,
            "same",
            "pandas head+tail to_markdown",
            "the same work by pandas alone; a run under 1x is noise",
        )
        report(
            "  (what was pasted before)",
            times,
            "repr",
            "str(df)",
            "str(df) lays out a wider console table",
        )

    figure = Figure(figsize=(12, 8), dpi=100)
    figure.add_subplot().plot(np.sin(np.linspace(0, 20, 2000)))

    def savefig() -> bytes:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()

    times = compare(runs, lambda: convert_value("fig", figure, limits), base=savefig)
    report(
        "Figure 1200×800 → PNG image block",
        times,
        "base",
        "fig.savefig(png)",
        "the baseline draws and saves the same figure; a run under 1x is noise",
    )

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

    times = compare(runs, lambda: fit_image(photo, "photo.jpg"), base=plain_thumbnail)
    report(
        "JPEG 4000×3000 → 1568×1176",
        times,
        "base",
        "open/thumbnail/save",
        "the plain thumbnail decodes the JPEG whole; ours decodes it at a reduced size"
        " (Pillow's draft mode)",
    )

    shell = InteractiveShell.instance()
    builder = QuestionBuilder(shell, CellErrors(shell), lambda: limits)
    text = ('A question with JSON {"a": 1} and code braces {} but no fields. ' * 160)[:10_000]
    field = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
    times = compare(
        runs * 20,
        lambda: builder.question(text),
        base=lambda: field.sub(lambda m: m.group(0), text),
    )
    report(
        "10,000-char question, no fields",
        times,
        "base",
        "one re.sub",
        "the same scan; a run under 1x is noise",
    )


if __name__ == "__main__":
    main()
