"""How much longer is a fan-out cell than one answer, when the answers stream at once?

A ``%%chat --n 4`` cell asks for four answers; they stream concurrently (the first
request first, the others once it has begun, so they read the prompt cache it writes).
This script measures, in one kernel and one run, against the local fake Messages API
streaming each answer at ``--rate`` tokens a second:

1. one ``%%chat`` cell answering with ``--tokens`` tokens (the baseline);
2. one ``%%chat --n 4`` cell whose four answers have ``--tokens`` tokens each.

Cell times are the kernel's own (``pre_run_cell`` → ``post_run_cell``). Target: the
fan-out cell at most 1.3× the single one. It also prints the cache-read tokens each of
the four answers reported (the first writes the prefix, the others should read it).

    .venv/bin/python benchmarks/bench_fanout.py [--n 4] [--tokens 400] [--rate 100]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from bench_magic import TIMING_HOOKS  # noqa: E402  (the same kernel-side cell timing)
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from helpers.kernel_harness import Kernel  # noqa: E402

#: a question long enough (about 2,400 tokens) for the API to cache its prefix
CONTEXT = "Context: " + "lorem ipsum " * 800


def last_cell(kernel: Kernel) -> float:
    start, end, _cpu = kernel.run("print(*_bench['cells'][-1])").check().stdout.split()
    return float(end) - float(start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=400)
    parser.add_argument("--rate", type=float, default=100.0, help="tokens a second")
    args = parser.parse_args()

    with FakeAnthropic(tokens_per_second=args.rate) as server, tempfile.TemporaryDirectory() as d:
        env = {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.base_url}
        with Kernel(Path(d), env=env) as kernel:
            kernel.run(TIMING_HOOKS).check()
            server.enqueue(text="ok")
            kernel.chat("warm up", "warm0001").check()  # the SDK import, the client

            server.enqueue(tokens=args.tokens)
            kernel.chat(f"Answer once. {CONTEXT}", "one00001", "--new").check()
            single = last_cell(kernel)

            for _ in range(args.n):
                server.enqueue(tokens=args.tokens)
            run = kernel.chat(
                f"Answer {args.n} times. {CONTEXT}", "fan00001", f"--new --n {args.n}"
            )
            run.check()
            fanned = last_cell(kernel)
            reads = kernel.run(
                "import json, jupyter_tree_chat as j\n"
                "print(json.dumps(j.compare_frame()['cache_read_input_tokens'].tolist()))"
            ).check()
            cache_reads = json.loads(reads.stdout)

    ratio = fanned / single
    print(f"{args.tokens}-token answers streamed at {args.rate:g} tokens/s, one run:")
    print(f"  one answer cell            {single * 1000:8.1f} ms")
    print(
        f"  --n {args.n} fan-out cell        {fanned * 1000:8.1f} ms   "
        f"{run.updates} display updates"
    )
    print(
        f"  ratio                      {ratio:8.2f}×   (target ≤ 1.3×: "
        f"{'met' if ratio <= 1.3 else 'NOT met'})"
    )
    print(f"  cache-read tokens of the {args.n} answers: {cache_reads}")


if __name__ == "__main__":
    main()
