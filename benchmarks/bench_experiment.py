"""What does an experiment cost per row, against bare SDK calls at the same concurrency?

A ``%%chat --over rows --concurrency C`` cell asks one question per row, each a sibling
question in the session tree with its answer stored, the progress bar updated in place
and a grid at the end. This script measures, in one kernel against the local fake
Messages API streaming each answer's ``--tokens`` tokens at ``--rate`` tokens a second:

- **bare**: one cell asking the same ``--rows`` questions with the official SDK
  (``messages.stream``, text read to the end) from a thread pool of ``C`` workers,
  nothing stored: the baseline;
- **experiment**: one ``%%chat --over`` cell over the same rows; the first run makes
  version 1, each later run a new version (``--same-experiment``, edited text), so
  ``--runs 2`` is ``--rows`` rows × 2 versions.

The two alternate their order from run to run. Cell times are the kernel's own
(``pre_run_cell`` → ``post_run_cell``): the wall time, and the CPU time of the kernel
process in the cell (all its threads: ``time.process_time``), which the machine's load
moves far less than the wall time; the ratio is experiment / bare per run, and the
overhead per row is their CPU difference over the rows. It also prints the kernel's
resident memory before the first experiment and after the last (target: growth ≤
200 MB), and how many times each experiment's progress bar was updated in place.

Target: experiment ≤ 1.2× bare (judged on the CPU time; the wall time printed too).

    .venv/bin/python benchmarks/bench_experiment.py [--rows 1000] [--runs 2]
        [--concurrency 8] [--tokens 20] [--rate 400]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from bench_magic import TIMING_HOOKS  # noqa: E402  (the same kernel-side cell timing)
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from helpers.kernel_harness import Kernel  # noqa: E402

SETUP = """
import anthropic, concurrent.futures, time
_bench_client = anthropic.Anthropic(max_retries=0)
rows = [{{"n": i}} for i in range({rows})]
def _bench_ask(i):
    with _bench_client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=4096,
        messages=[{{"role": "user", "content": f"Row {{i}}: say something."}}],
    ) as s:
        for _t in s.text_stream:
            pass
_bench_cpu = []
def _bench_cpu_pre(*_):
    _bench_cpu.append(time.process_time())
def _bench_cpu_post(*_):
    if _bench_cpu:  # (not the cell that registers these)
        _bench_cpu[-1] = time.process_time() - _bench_cpu[-1]
get_ipython().events.register("pre_run_cell", _bench_cpu_pre)
get_ipython().events.register("post_run_cell", _bench_cpu_post)
def _bench_rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024
"""

BARE = """
with concurrent.futures.ThreadPoolExecutor({concurrency}) as _pool:
    list(_pool.map(_bench_ask, range({rows})))
"""


def last_cell(kernel: Kernel) -> tuple[float, float]:
    """The last cell's wall time and the kernel process's CPU time in it (all threads)."""
    # in this cell, _bench_cpu[-1] is this cell's own start: the measured cell's is before it
    said = kernel.run("print(*_bench['cells'][-1], _bench_cpu[-2])").check().stdout.split()
    start, end, _thread, cpu = (float(word) for word in said)
    return end - start, cpu


def rss(kernel: Kernel) -> float:
    return float(kernel.run("print(_bench_rss())").check().stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--rate", type=float, default=400.0, help="tokens a second")
    args = parser.parse_args()

    bare_times: list[float] = []
    experiment_times: list[float] = []
    updates: list[int] = []
    with FakeAnthropic(tokens_per_second=args.rate) as server, tempfile.TemporaryDirectory() as d:
        env = {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.base_url}
        with Kernel(Path(d), env=env) as kernel:
            kernel.run(TIMING_HOOKS).check()
            kernel.run(SETUP.format(rows=args.rows)).check()
            server.enqueue(text="ok")
            kernel.chat("warm up", "warm0001").check()  # the SDK import, the client
            server.enqueue(text="ok")
            kernel.run("_bench_ask(0)").check()
            before = rss(kernel)

            def bare() -> None:
                for _ in range(args.rows):
                    server.enqueue(tokens=args.tokens)
                code = BARE.format(concurrency=args.concurrency, rows=args.rows)
                kernel.run(code, timeout=3600).check()
                bare_times.append(last_cell(kernel))

            def experiment(run: int) -> None:
                for _ in range(args.rows):
                    server.enqueue(tokens=args.tokens)
                where = "--new" if run == 0 else "--same-experiment"
                options = f"--over rows --concurrency {args.concurrency} {where}"
                text = f"Row {{n}}: say something (version {run + 1})."
                cell = kernel.run(f"%%chat {options}\n{text}", None, timeout=3600).check()
                experiment_times.append(last_cell(kernel))
                updates.append(cell.updates)

            for run in range(args.runs):
                if run % 2 == 0:
                    bare()
                    experiment(run)
                else:
                    experiment(run)
                    bare()
            after = rss(kernel)
            load = os.getloadavg()

    walls = [e[0] / b[0] for e, b in zip(experiment_times, bare_times, strict=True)]
    cpus = [e[1] / b[1] for e, b in zip(experiment_times, bare_times, strict=True)]
    per_row = [
        (e[1] - b[1]) / args.rows * 1000 for e, b in zip(experiment_times, bare_times, strict=True)
    ]
    print(
        f"{args.rows} rows × {args.runs} versions, concurrency {args.concurrency}, "
        f"{args.tokens}-token answers at {args.rate:g} tokens/s; load {load[0]:.2f}"
    )
    for run, (b, e) in enumerate(zip(bare_times, experiment_times, strict=True)):
        first = "bare first" if run % 2 == 0 else "experiment first"
        print(
            f"  run {run + 1} ({first}): wall bare {b[0]:6.2f} s  experiment {e[0]:6.2f} s "
            f"({walls[run]:.2f}×)   CPU bare {b[1]:6.2f} s  experiment {e[1]:6.2f} s "
            f"({cpus[run]:.2f}×, {per_row[run]:+.2f} ms/row)   {updates[run]} progress updates"
        )
    for name, ratios in (("CPU", cpus), ("wall", walls)):
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
        median = statistics.median(ratios)
        verdict = "met" if max(ratios) <= 1.2 else "not met"
        print(f"  {name} ratio median {median:.2f}× (spread {spread}; ≤ 1.2× every run: {verdict})")
    growth = after - before
    print(
        f"  kernel memory {before:.0f} MB → {after:.0f} MB: +{growth:.0f} MB "
        f"(target ≤ 200 MB: {'met' if growth <= 200 else 'not met'})"
    )


if __name__ == "__main__":
    main()
