"""What does building a request to a context budget cost, and what does it save in cache?

1. **Building.** On a 10,000-deep path (text exchanges, every eighth with a tool call and
   its result), the request as the provider sends it (``Session.context_request``, then
   ``anthropic.build_kwargs``) with a budget that cuts the path (it keeps the newest
   exchanges, 50,000 tokens), against the same request with no budget (``"off"``: the
   whole path), the baseline measured in the same run, the cases' order turning run by run
   (``alternating.py``), the collector run before each. *Cold* is a fresh
   session's first request (every node counted once); *warm* is the next turn's (the
   sizes remembered, as in a conversation). *Within* is a budget the whole path fits:
   the check that the request stays as it was. Target: each at most 1.2× the baseline,
   judged on the median of the runs' own ratios of CPU time (the thread's: the exact
   measure, which the shared machine's other work does not change), their spread given;
   wall time is reported.
2. **The cache.** A 30-turn session that passes a 3,000-token budget, asked through the
   real SDK against the local fake Messages API and its prompt-cache accounting
   (``tests/fakes/fake_cache.py``): the tokens read from the cache over the session with the
   cut moving in steps (this project), against a cut that slides one exchange a turn
   (the book's newest-first rule as it stands), and against no budget at all.

    .venv/bin/python benchmarks/bench_budget.py [--runs 25] [--depth 10000]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import anthropic  # noqa: E402
from alternating import Stopwatch, Timing, alternate, ratio_line  # noqa: E402
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402

from jupyter_tree_chat.conversation.session import Session  # noqa: E402
from jupyter_tree_chat.conversation.settings import ChatSettings  # noqa: E402
from jupyter_tree_chat.history.tree import Node  # noqa: E402
from jupyter_tree_chat.measures import budget  # noqa: E402
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider, build_kwargs  # noqa: E402
from jupyter_tree_chat.providers.offline.provider import OfflineProvider  # noqa: E402

MODEL = "claude-sonnet-4-6"


def deep_session(depth: int) -> tuple[Session, list[Node]]:
    """A session whose path is ``depth`` nodes, ending with a question to answer."""
    session = Session.in_memory(OfflineProvider())
    tree, parent, n = session.tree, None, 0
    while n < depth - 1:
        k = n // 2
        nodes: list[tuple[str, Any]] = [("user", f"Question {k}: " + "word " * 40)]
        if k % 8 == 7:
            use = {"type": "tool_use", "id": f"toolu_{k}", "name": "add", "input": {"a": k}}
            result = {"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": str(k)}
            nodes += [("assistant", [{"type": "text", "text": "Let me add."}, use])]
            nodes += [("user", [result])]
        nodes += [("assistant", [{"type": "text", "text": f"Answer {k}: " + "reply " * 60}])]
        for role, content in nodes:
            node = Node(f"n{n}", parent, {"role": role, "content": content})
            tree.add(node)
            parent, n = node.id, n + 1
    question = Node(f"n{n}", parent, {"role": "user", "content": "And now?"})
    tree.add(question)
    tree.leaf = question.id
    return session, session.path()


def timed(work: Callable[[], object]) -> Callable[[], Timing]:
    """``work`` timed once, the collector run before it so none lands inside."""

    def run() -> Timing:
        gc.collect()
        started = Stopwatch()
        work()
        return started.stop()

    return run


def building(depth: int, runs: int) -> None:
    session, path = deep_session(depth)
    off = ChatSettings(model=MODEL, context_budget="off")
    cutting = replace(off, context_budget=50_000)
    within = replace(off, context_budget=10_000_000)

    def build(settings: ChatSettings, sizes: budget.Sizes | None = None) -> object:
        if sizes is not None:
            session.sizes = sizes
        return build_kwargs(session.context_request(path, settings))

    def primed() -> budget.Sizes:
        """Sizes as the turn before left them: everything but this question counted."""
        sizes = budget.Sizes()
        session.sizes = sizes
        session.context_request(path[:-2], cutting)
        session.context_request(path[:-2], within)
        return sizes

    warm = primed()
    kept = len(session.context_request(path, cutting).messages)
    cases = {
        "no budget": lambda: build(off),  # the baseline
        "cutting, cold": lambda: build(cutting, budget.Sizes()),
        "cutting, warm": lambda: build(cutting, warm),
        "within, cold": lambda: build(within, budget.Sizes()),
        "within, warm": lambda: build(within, warm),
    }
    times = alternate({name: timed(work) for name, work in cases.items()}, runs)
    baseline = times.pop("no budget")
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"Building a request on a {depth:,}-deep path (the cut keeps {kept:,} messages);")
    print(f"{runs} runs, the cases' order turning, each run's case / the same run's baseline;")
    print(f"load average at the end {load}")
    wall_ms = statistics.median(t.wall for t in baseline) * 1000
    cpu_ms = statistics.median(t.cpu for t in baseline) * 1000
    name = "no budget (the whole path): baseline"
    print(f"  {name:<40} wall {wall_ms:7.2f} ms, CPU {cpu_ms:7.2f} ms")
    for name, timings in times.items():
        lacks = (
            "the cut request is shorter than the whole path: less to build, not faster"
            if name.startswith("cutting")
            else "the same request as the baseline's, so under 1x is noise"
        )
        cpu = ratio_line([t.cpu for t in timings], [t.cpu for t in baseline], 1.2, lacks)
        wall = ratio_line([t.wall for t in timings], [t.wall for t in baseline], None, lacks)
        print(f"  {'budgeted, ' + name:<40} CPU (judged) {cpu}")
        print(f"  {'':<40} wall (reported) {wall}")


def cache_reads(turns: int, tokens: int) -> None:
    results: dict[str, tuple[int, int, int]] = {}
    with FakeAnthropic() as server, tempfile.TemporaryDirectory() as folder:
        client = anthropic.Anthropic(api_key="sk-bench", base_url=server.base_url)
        for name, setting, step in (
            ("steps (this project)", tokens, budget.STEP_SHARE),
            ("a cut sliding one exchange a turn", tokens, 0.0),
            ("no budget (over it from turn 12)", "off", budget.STEP_SHARE),
        ):
            server.reset()
            budget.STEP_SHARE = step
            counter = itertools.count()
            session = Session.open(
                Path(folder) / f"{len(results)}.chat.jsonl",
                AnthropicProvider(client),
                settings=ChatSettings(context_budget=setting),
                new_id=lambda counter=counter: f"id{next(counter):05d}",
            )
            for k in range(turns):
                server.enqueue(f"Answer {k}: " + "reply " * 90)
                session.ask(f"Question {k}: " + "word " * 90)
            usages = [r.usage or {} for r in server.requests if r.path == "/v1/messages"]
            read = sum(u.get("cache_read_input_tokens", 0) for u in usages)
            written = sum(u.get("cache_creation_input_tokens", 0) for u in usages)
            plain = sum(u.get("input_tokens", 0) for u in usages)
            results[name] = (read, written, plain)
        budget.STEP_SHARE = 0.25
    print(f"\nPrompt cache over a {turns}-turn session, budget {tokens:,} tokens (fake API):")
    print(f"  {'':<36}{'cache read':>12}{'cache write':>13}{'uncached':>10}{'read share':>12}")
    for name, (read, written, plain) in results.items():
        share = read / (read + written + plain)
        print(f"  {name:<36}{read:>12,}{written:>13,}{plain:>10,}{share:>12.0%}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--depth", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--budget", type=int, default=3_000)
    args = parser.parse_args()
    building(args.depth, args.runs)
    cache_reads(args.turns, args.budget)


if __name__ == "__main__":
    main()
