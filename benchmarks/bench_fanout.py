"""How much longer is a fan-out cell than one answer, when the answers stream at once?

A ``%%chat --n 4`` cell asks for four answers; they stream concurrently (the first
request first, the others once it has begun, so they read the prompt cache it writes).
This script measures, in one kernel, against the local fake Messages API streaming each
answer at ``--rate`` tokens a second, the two cells' order turning run by run
(``alternating.py``), ``--runs`` times:

1. one ``%%chat`` cell answering with ``--tokens`` tokens (the baseline);
2. one ``%%chat --n 4`` cell whose four answers have ``--tokens`` tokens each.

Cell times are the kernel's own (``pre_run_cell`` → ``post_run_cell``). Target: the
fan-out cell at most 1.3× the single one, judged on the median of the runs' ratios of
wall time: the target is about the answers streaming at once, so its exact measure is the
wait, which the server's fixed token rate sets (``--tokens / --rate`` seconds an answer)
and the machine's load barely moves; the kernel's main-thread CPU time is reported (the
answers stream on threads of their own, which it does not count). It also prints the
cache-read tokens each of the four answers reported (the first writes the prefix, the
others should read it).

    .venv/bin/python benchmarks/bench_fanout.py [--runs 5] [--n 4] [--tokens 400] [--rate 100]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from alternating import Timing, alternate, ratio_line  # noqa: E402
from bench_magic import TIMING_HOOKS, last_cell  # noqa: E402  (the kernel's cell times)
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from helpers.kernel_harness import Kernel  # noqa: E402

#: a question long enough (about 2,400 tokens) for the API to cache its prefix
CONTEXT = "Context: " + "lorem ipsum " * 800


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=400)
    parser.add_argument("--rate", type=float, default=100.0, help="tokens a second")
    args = parser.parse_args()
    cells = itertools.count()
    updates: list[int] = []
    cache_reads: list[int] = []

    with FakeAnthropic(tokens_per_second=args.rate) as server, tempfile.TemporaryDirectory() as d:
        env = {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.base_url}
        with Kernel(Path(d), env=env) as kernel:
            kernel.run(TIMING_HOOKS).check()
            server.enqueue(text="ok")
            kernel.chat("warm up", "warm0001").check()  # the SDK import, the client

            def cell(answers: int) -> Timing:
                for _ in range(answers):
                    server.enqueue(tokens=args.tokens)
                n = next(cells)
                fan = f" --n {answers}" if answers > 1 else ""
                run = kernel.chat(
                    f"Answer {answers} times. {n} {CONTEXT}", f"c{n:07d}", f"--new{fan}"
                )
                run.check()
                start, end, cpu = last_cell(kernel)  # before any other cell runs
                if answers > 1:
                    updates.append(run.updates)
                    reads = kernel.run(
                        "import json, jupyter_tree_chat as j\n"
                        "print(json.dumps(j.compare_frame()['cache_read_input_tokens'].tolist()))"
                    ).check()
                    cache_reads[:] = json.loads(reads.stdout)
                return Timing(end - start, cpu)

            times = alternate({"one": lambda: cell(1), "fan-out": lambda: cell(args.n)}, args.runs)

    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    one, fan = times["one"], times["fan-out"]
    print(
        f"{args.tokens}-token answers streamed at {args.rate:g} tokens/s, {args.runs} runs,"
        f" the order turning; load average at the end {load}"
    )
    print(
        f"  one answer cell      wall median {statistics.median(t.wall for t in one) * 1e3:8.1f} ms"
    )
    print(
        f"  --n {args.n} fan-out cell  wall median"
        f" {statistics.median(t.wall for t in fan) * 1e3:8.1f} ms"
        f"   display updates {min(updates)}-{max(updates)}"
    )
    print(f"  each run, wall (ms), one: {', '.join(f'{t.wall * 1e3:.0f}' for t in one)}")
    print(f"  each run, wall (ms), fan-out: {', '.join(f'{t.wall * 1e3:.0f}' for t in fan)}")
    lacks = "the single cell waits for one answer as the fan-out waits for its slowest"
    judged = ratio_line([t.wall for t in fan], [t.wall for t in one], 1.3, lacks)
    print(f"  fan-out / one, wall (judged): {judged}")
    one_cpu = statistics.median(t.cpu for t in one) * 1e3
    fan_cpu = statistics.median(t.cpu for t in fan) * 1e3
    print(
        f"  kernel main-thread CPU (reported), medians: one {one_cpu:.1f} ms, fan-out"
        f" {fan_cpu:.1f} ms (the answers stream on threads of their own, not counted here)"
    )
    print(f"  cache-read tokens of the last fan-out's {args.n} answers: {cache_reads[-args.n :]}")


if __name__ == "__main__":
    main()
