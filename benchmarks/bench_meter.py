"""What do the context meter, the thinking rule and the cost totals add to a turn?

Before each question the session measures the path (``Session.meter``, for the check
against the context window) and after each reply the footer measures it again; building
the request now passes every thinking block through ``wire.sends_thinking``; ``%chat usage``
adds up the whole tree. None of these may cost more than a small share of what a turn
already does on the same path: building the request (``build_kwargs``), the baseline
measured in the same run. For paths of several depths (every reply with usage, every
fourth with a signed thinking block) the cases' order turns run by run
(``alternating.py``); the script prints each case's median CPU time (the thread's,
``time.thread_time``: the exact measure here, which the shared machine's other work does
not change) and the median of the runs' own ratios against the baseline with their
spread. There is no numeric target: the ratios are reported.

    .venv/bin/python benchmarks/bench_meter.py [--runs 15] [--depths 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alternating import Timing, alternate, ratio_line, timed

from jupyter_tree_chat.history.tree import SessionTree, is_thinking
from jupyter_tree_chat.measures.usage import meter, totals
from jupyter_tree_chat.providers.anthropic.provider import build_kwargs
from jupyter_tree_chat.providers.anthropic.wire import sends_thinking
from jupyter_tree_chat.providers.base import ReplyRequest

MODEL = "claude-sonnet-4-6"
THOUGHT = {
    "type": "thinking",
    "thinking": "Let me think this through. " * 8,
    "signature": "c2ln" * 40,
}


def build_tree(depth: int) -> SessionTree:
    tree = SessionTree()
    for n in range(depth):
        if n % 2 == 0:
            tree.append(f"n{n}", {"role": "user", "content": f"Question {n}: " + "word " * 30})
            continue
        content = [{"type": "text", "text": f"Answer {n}: " + "reply " * 60}]
        if n % 8 == 1:
            content.insert(0, dict(THOUGHT))
        usage = {"input_tokens": 20 * n, "output_tokens": 90, "cache_read_input_tokens": 10 * n}
        tree.append(
            f"n{n}",
            {"role": "assistant", "content": content},
            {"model": MODEL, "usage": usage},
        )
    return tree


def measure(depth: int, runs: int) -> dict[str, list[Timing]]:
    """The request-building baseline's and the four figures' timings, for one depth."""
    tree = build_tree(depth + (depth % 2 == 0))  # end with a question: a request to build
    leaf = tree.leaf
    assert leaf is not None
    reply_leaf = tree.get(leaf).parent_id
    assert reply_leaf is not None
    path = tree.active_path(leaf)
    request = ReplyRequest(path, model=MODEL, thinking=2048, max_tokens=8192)
    question = [{"role": "user", "content": "next?"}]
    work: dict[str, Callable[[], object]] = {
        "build_kwargs": lambda: build_kwargs(request),  # the baseline
        "meter": lambda: meter(tree.path_nodes(leaf), model=MODEL, extra=question),
        "footer": lambda: meter(tree.path_nodes(reply_leaf), model=MODEL),
        "thinking rule": lambda: [
            sends_thinking(block, message["role"])
            for message in path
            if isinstance(message["content"], list)
            for block in message["content"]
            if is_thinking(block)
        ],
        "totals": lambda: totals(tree),  # %chat usage
    }
    for call in work.values():  # once each first: what a session has done before a turn
        call()
    return alternate({name: timed(call) for name, call in work.items()}, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--depths", default="1000,10000,100000")
    args = parser.parse_args()
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"{args.runs} runs, the cases' order turning; load average {load}")
    print("CPU time (the thread's; judged) median, and each case / building the request:")
    smaller = "the baseline builds the whole request; the case only reads the path (less work)"
    for depth in (int(d) for d in args.depths.split(",")):
        times = measure(depth, args.runs)
        base = [t.cpu for t in times.pop("build_kwargs")]
        print(f"  depth {depth:,}: build_kwargs {statistics.median(base) * 1000:.2f} ms")
        for name, timings in times.items():
            cpu = [t.cpu for t in timings]
            ratio = ratio_line(cpu, base, None, smaller)
            print(f"    {name:<14} {statistics.median(cpu) * 1000:8.3f} ms  {ratio}")


if __name__ == "__main__":
    main()
