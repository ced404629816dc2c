"""What do the context meter, the thinking rule and the cost totals add to a turn?

Before each question the session measures the path (``Session.meter``, for the check
against the context window) and after each reply the footer measures it again; building
the request now passes every thinking block through ``wire.sends_thinking``; ``%chat usage``
adds up the whole tree. None of these may cost more than a small share of what a turn
already does on the same path: building the request (``build_kwargs``), the baseline
measured in the same run. For paths of several depths (every reply with usage, every
fourth with a signed thinking block) the script prints the medians and the ratios.

    .venv/bin/python benchmarks/bench_meter.py [--runs 15] [--depths 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

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


def median_seconds(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(depth: int, runs: int) -> tuple[float, list[float]]:
    """The request-building baseline and the four figures, for one depth."""
    tree = build_tree(depth + (depth % 2 == 0))  # end with a question: a request to build
    leaf = tree.leaf
    assert leaf is not None
    reply_leaf = tree.get(leaf).parent_id
    assert reply_leaf is not None
    path = tree.active_path(leaf)
    request = ReplyRequest(path, model=MODEL, thinking=2048, max_tokens=8192)
    question = [{"role": "user", "content": "next?"}]
    work: list[Callable[[], object]] = [
        lambda: meter(tree.path_nodes(leaf), model=MODEL, extra=question),  # before asking
        lambda: meter(tree.path_nodes(reply_leaf), model=MODEL),  # the footer's
        lambda: [
            sends_thinking(block, message["role"])
            for message in path
            if isinstance(message["content"], list)
            for block in message["content"]
            if is_thinking(block)
        ],
        lambda: totals(tree),  # %chat usage
    ]
    baseline = median_seconds(lambda: build_kwargs(request), runs)
    return baseline, [median_seconds(item, runs) for item in work]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--depths", default="1000,10000,100000")
    args = parser.parse_args()
    print(f"median of {args.runs} runs; ratios against building the request on the same path")
    columns = ("meter", "footer", "thinking rule", "totals")
    print(f"{'depth':>8} {'build_kwargs':>13}" + "".join(f"{name:>15}" for name in columns))
    for depth in (int(d) for d in args.depths.split(",")):
        baseline, figures = measure(depth, args.runs)
        ratios = "".join(f"{figure / baseline:>14.2f}x" for figure in figures)
        print(f"{depth:>8} {baseline * 1000:>10.2f} ms{ratios}")


if __name__ == "__main__":
    main()
