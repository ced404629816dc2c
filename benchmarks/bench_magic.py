"""What does a ``%%chat`` cell cost on top of the bare SDK stream, on a real kernel?

A cell does more than stream: it parses options, applies the cell rule, fsyncs the
question to disk before sending it, renders the reply as Markdown updated in place
(throttled) and adds a footer. This script measures, in one kernel and one run:

1. latency: from the cell's start (IPython's ``pre_run_cell``) to the first request
   byte at the local fake Messages API: the first cell of a fresh kernel, run 3 s after
   ``%load_ext``, with the background warm-up (the SDK imported and the client built
   while the user types) and without it (``TreeChat.warm_up = False``: the cell imports
   and builds them itself), each in fresh kernels, alternated; then later cells;
2. throughput: the whole ``%%chat`` cell streaming a long reply (one token a delta)
   against the baseline, a cell running the SDK's raw event loop over the same reply
   (``messages.create(stream=True)``, each delta's text kept and joined, no output: the
   events the provider reads, and the text the cell needs), the cells' order turning run
   by run (``alternating.py``) so drift hits them alike; cell times are the kernel's own
   (``pre_run_cell`` → ``post_run_cell``).
   For reference, two more cells are timed: the SDK's ``messages.stream(...).text_stream``
   helper (which also builds a snapshot per event), and the floor of the cell's own way
   of reading (the SDK's response lines, each event's JSON decoded by msgspec, no typed
   object per event: providers/anthropic/events.py), so what the cell adds to its own
   reading shows too. Target: at most 1.2× the baseline for a 2,000-token reply.
3. where a cell's time goes: after the timed rounds, more ``%%chat`` cells with the
   parts timed inside the kernel (each wraps the function that does it): the session's
   events handled by the turn controls (messages to the controls), making and showing
   the cell's control (its ``comm_open``), ``os.fsync`` of the session file, the
   Markdown rendered to safe HTML, and the display updates that carry it. Printed per
   cell (median) and as a share of the cell; they run in a kernel of their own, so the
   timing wrappers do not weigh on the ratio above.
4. the messages each cell sends the front end (iopub: outputs, their updates, the turn
   controls' comm messages), counted: each one is work for the kernel and the page. The
   earlier root questions' controls share their place (one update a ``--new`` cell,
   widget/turn.py), so the count no longer grows with the notebook; the first ``--new``
   cell after the latency cells' chain also takes each of that chain's controls off the
   current branch (one update each, once), its round's maximum.

    .venv/bin/python benchmarks/bench_magic.py [--runs 7] [--tokens 2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from alternating import alternate  # noqa: E402
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from helpers.kernel_harness import Kernel  # noqa: E402

TIMING_HOOKS = """
import time as _bench_time
_bench = {"start": 0.0, "cpu": 0.0, "cells": []}
def _bench_pre(*_):
    _bench["start"] = _bench_time.time()
    _bench["cpu"] = _bench_time.thread_time()
def _bench_post(*_):
    cpu = _bench_time.thread_time() - _bench["cpu"]
    _bench["cells"].append((_bench["start"], _bench_time.time(), cpu))
get_ipython().events.register("pre_run_cell", _bench_pre)
get_ipython().events.register("post_run_cell", _bench_post)
"""

BARE_CLIENT = """
import anthropic
_bench_client = anthropic.Anthropic()
"""

BARE_CELL = """
with _bench_client.messages.stream(
    model="claude-sonnet-4-6", max_tokens=4096,
    messages=[{"role": "user", "content": "Write a long answer."}],
) as _s:
    for _t in _s.text_stream:
        pass
"""


RAW_CELL = """
_pieces = [
    _e.delta.text
    for _e in _bench_client.messages.create(
        model="claude-sonnet-4-6", max_tokens=4096, stream=True,
        messages=[{"role": "user", "content": "Write a long answer."}],
    )
    if _e.type == "content_block_delta" and _e.delta.type == "text_delta"
]
_text = "".join(_pieces)
"""

LINES_CELL = """
import msgspec as _bench_msgspec
_decode = _bench_msgspec.json.Decoder().decode
_pieces = []
with _bench_client.messages.with_streaming_response.create(
    model="claude-sonnet-4-6", max_tokens=4096, stream=True,
    messages=[{"role": "user", "content": "Write a long answer."}],
) as _response:
    for _line in _response.iter_lines():
        if _line.startswith("data: "):
            _e = _decode(_line[6:])
            if _e["type"] == "content_block_delta" and _e["delta"]["type"] == "text_delta":
                _pieces.append(_e["delta"]["text"])
_text = "".join(_pieces)
"""


BREAKDOWN = """
import os as _bench_os, time as _bench_t
import jupyter_tree_chat.kernel.display.output as _bench_output
import jupyter_tree_chat.widget.base as _bench_base
import jupyter_tree_chat.widget.turn as _bench_turn
_bench_parts = {}
def _bench_timed(owner, name, label):
    original = getattr(owner, name)
    def timed(*args, **kwargs):
        started = _bench_t.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent = _bench_t.perf_counter() - started
            _bench_parts[label] = _bench_parts.get(label, 0.0) + spent
    setattr(owner, name, timed)
_bench_timed(_bench_base.SessionWidget, "_on_event", "messages to the controls")
if hasattr(_bench_base, "SessionState"):  # the session's one busy state (issue 35)
    _bench_timed(_bench_base.SessionState, "follow", "messages to the controls")
_bench_timed(_bench_turn, "show_turn_control", "the control: made, comm_open, shown")
_bench_timed(_bench_os, "fsync", "fsync of the session file")
_bench_timed(_bench_output, "markdown_to_html", "Markdown to safe HTML")
_bench_timed(_bench_output, "update_display", "display updates (the HTML sent)")
"""


class TimedServer(FakeAnthropic):
    """The fake server, noting when each request's first line arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def start(self) -> TimedServer:
        super().start()
        assert self._httpd is not None
        base = self._httpd.RequestHandlerClass
        arrivals = self.arrivals
        lock = threading.Lock()

        def parse_request(handler: Any) -> bool:
            with lock:
                arrivals.append(time.time())
            return bool(base.parse_request(handler))

        self._httpd.RequestHandlerClass = type("Timed", (base,), {"parse_request": parse_request})
        return self


def first_cell_latency(server: TimedServer, env: dict[str, str], warm_up: bool) -> float:
    """A fresh kernel: ``%load_ext``, 3 s of a user typing, then the first cell."""
    with (
        tempfile.TemporaryDirectory() as folder,
        Kernel(Path(folder), env=env, load_extension=False) as kernel,
    ):
        kernel.run(TIMING_HOOKS).check()
        if not warm_up:
            kernel.run("get_ipython().config.TreeChat.warm_up = False").check()
        kernel.run("%load_ext jupyter_tree_chat").check()
        time.sleep(3)
        server.enqueue(text="ok")
        kernel.chat("ping", "first001").check()
        start, _, _ = last_cell(kernel)
        return server.arrivals[-1] - start


def last_cell(kernel: Kernel) -> tuple[float, float, float]:
    """The last cell's start and end (wall clock), and the CPU time the kernel's main
    thread spent in it (less noisy on a shared machine than the wall time, which counts
    waiting for a core too)."""
    out = kernel.run("print(*_bench['cells'][-1])").check().stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--first-cells", type=int, default=3, help="fresh kernels per case")
    args = parser.parse_args()

    with TimedServer() as server, tempfile.TemporaryDirectory() as folder:
        env = {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.base_url}
        first_cells: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.first_cells):
            for warm_up in (True, False):
                first_cells[warm_up].append(first_cell_latency(server, env, warm_up))
        with Kernel(Path(folder), env=env) as kernel:
            kernel.run(TIMING_HOOKS).check()

            latencies: list[float] = []
            for n in range(args.runs + 1):  # n == 0 is the cold cell
                server.enqueue(text="ok")
                kernel.chat(f"ping {n}", f"lat{n:05d}").check()
                start, _, _ = last_cell(kernel)
                latencies.append(server.arrivals[-1] - start)

            kernel.run(BARE_CLIENT).check()
            server.enqueue(tokens=args.tokens)
            kernel.run(BARE_CELL).check()  # warm the bare path too

            chat_times: list[float] = []
            bare_times: list[float] = []
            raw_times: list[float] = []
            chat_cpu: list[float] = []
            raw_cpu: list[float] = []
            lines_cpu: list[float] = []
            updates: list[int] = []
            chat_messages: list[int] = []
            raw_messages: list[int] = []

            def chat_cell() -> None:
                n = len(chat_times)
                server.enqueue(tokens=args.tokens)
                run = kernel.chat(f"Write a long answer ({n}).", f"thr{n:05d}", "--new").check()
                updates.append(run.updates)
                chat_messages.append(len(run.messages))
                start, end, cpu = last_cell(kernel)
                chat_times.append(end - start)
                chat_cpu.append(cpu)

            def bare_cell() -> None:
                server.enqueue(tokens=args.tokens)
                kernel.run(BARE_CELL).check()
                start, end, _ = last_cell(kernel)
                bare_times.append(end - start)

            def raw_cell() -> None:
                server.enqueue(tokens=args.tokens)
                raw_messages.append(len(kernel.run(RAW_CELL).check().messages))
                start, end, cpu = last_cell(kernel)
                raw_times.append(end - start)
                raw_cpu.append(cpu)

            def lines_cell() -> None:
                server.enqueue(tokens=args.tokens)
                kernel.run(LINES_CELL).check()
                lines_cpu.append(last_cell(kernel)[2])

            # the cells' order turning run by run; the lists above keep each run's figures
            cells = {"chat": chat_cell, "bare": bare_cell, "raw": raw_cell, "lines": lines_cell}
            alternate(cells, args.runs)

        # a kernel of its own, timed from its first control on
        (Path(folder) / "parts").mkdir()
        with Kernel(Path(folder) / "parts", env=env) as kernel:
            kernel.run(TIMING_HOOKS + BREAKDOWN).check()
            parts: dict[str, list[float]] = {}
            part_cells: list[float] = []
            for n in range(args.runs + 1):  # n == 0 warms up
                kernel.run("_bench_parts.clear()").check()
                server.enqueue(tokens=args.tokens)
                kernel.chat(f"Write a long answer ({n}).", f"prt{n:05d}", "--new").check()
                start, end, _ = last_cell(kernel)
                spent = kernel.run("import json; print(json.dumps(_bench_parts))").check()
                if n == 0:
                    continue
                part_cells.append(end - start)
                for label, seconds in json.loads(spent.stdout).items():
                    parts.setdefault(label, []).append(seconds)

    cold, warm = latencies[0], statistics.median(latencies[1:])
    chat, raw = statistics.median(chat_times), statistics.median(raw_times)
    ratio = chat / raw
    with_warm_up = statistics.median(first_cells[True])
    print(f"cell start → first request byte (median of {args.first_cells} fresh kernels each):")
    print(
        f"  first cell, 3 s after %load_ext, warm-up     {with_warm_up * 1000:7.1f} ms"
        f"   (target ≤ 50 ms: {'met' if with_warm_up <= 0.05 else 'NOT met'})"
    )
    print(
        f"  first cell, 3 s after %load_ext, no warm-up  "
        f"{statistics.median(first_cells[False]) * 1000:7.1f} ms"
    )
    print(
        f"  first cell right after %load_ext             {cold * 1000:7.1f} ms, "
        f"later cells {warm * 1000:.1f} ms (median of {args.runs}; "
        f"range {min(latencies[1:]) * 1000:.1f}–{max(latencies[1:]) * 1000:.1f} ms)"
    )
    print(f"{args.tokens}-token reply, median of {args.runs}:")
    print(
        f"  baseline: raw SDK events cell  {raw * 1000:8.1f} ms   "
        "(messages.create(stream=True), the text kept)"
    )
    print(
        f"  %%chat cell (streamed)         {chat * 1000:8.1f} ms   "
        f"{statistics.median(updates):.0f} display updates"
    )
    print(
        f"  (reference: messages.stream)   {statistics.median(bare_times) * 1000:8.1f} ms   "
        "(the SDK's helper, a snapshot per event)"
    )
    print(
        f"  ratio %%chat / baseline        {ratio:8.2f}×   (wall, reported; per round "
        f"{min(c / r for c, r in zip(chat_times, raw_times, strict=True)):.2f}–"
        f"{max(c / r for c, r in zip(chat_times, raw_times, strict=True)):.2f}×)"
    )
    cpu_chat, cpu_raw = statistics.median(chat_cpu), statistics.median(raw_cpu)
    print(
        f"  kernel CPU (main thread)       {cpu_chat * 1000:8.1f} ms vs {cpu_raw * 1000:.1f} ms"
        f" = {cpu_chat / cpu_raw:.2f}×   (the exact measure; target ≤ 1.2×: "
        f"{'met' if cpu_chat / cpu_raw <= 1.2 else 'NOT met'})"
    )
    cpu_lines = statistics.median(lines_cpu)
    print(
        f"  (reference: lines + msgspec)   {cpu_lines * 1000:8.1f} ms CPU   (the cell's way of "
        f"reading, bare: the cell is {cpu_chat / cpu_lines:.2f}× it)"
    )
    print(
        f"  messages to the front end      {statistics.median(chat_messages):8.0f} per cell vs "
        f"{statistics.median(raw_messages):.0f}   (counted; per round "
        f"{min(chat_messages)}–{max(chat_messages)}; the last round: {chat_messages[-1]})"
    )
    cell = statistics.median(part_cells)
    print(f"where a %%chat cell's time goes (median of {args.runs} cells of {cell * 1000:.1f} ms):")
    for label, seconds in sorted(parts.items(), key=lambda item: -statistics.median(item[1])):
        spent = statistics.median(seconds)
        print(f"  {label:38s} {spent * 1000:7.2f} ms  {spent / cell:6.1%}")


if __name__ == "__main__":
    main()
