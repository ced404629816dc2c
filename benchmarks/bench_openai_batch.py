"""What a 10,000-request batch costs the kernel in memory on OpenAI's Batch API.

``OpenAIBatches`` (providers/openai/batches.py) writes a batch's JSONL to a temporary
file line by line and uploads it from there, and reads the output file line by line,
one result at a time. This measures the peak of Python's allocations (``tracemalloc``)
while it does so, beside the obvious way measured in the same run: the whole JSONL built
in memory and uploaded from there, and the whole output file read (``files.content``)
and parsed into results kept in a list. Each at two sizes (``--sizes``, by default
1,000 and 10,000 requests): a bounded way stays flat as the batch grows, the obvious way
grows with it.

The fake Files and Batch APIs (tests/fakes/fake_openai_batches.py) run in a child
process, so only the client's allocations are traced. The requests (one short question
each, as an experiment's rows make them) are built before anything is measured: the
session holds them anyway; one small batch each way goes first, unmeasured (the SDK's
lazy imports). The two ways alternate their order run by run; each line gives the
median peak over ``--runs`` and the spread. Targets: the streamed peak at the largest
size at most 1.5x its peak at the smallest (bounded), and at most a quarter of the
obvious way's at the largest size. The submit's peak holds the ``custom_id``s checked
unique before anything is sent (``check_ids``, a sorted list of them: 8 bytes a
request): it is printed apart.

    .venv/bin/python benchmarks/bench_openai_batch.py [--runs 3] [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_tree_chat.providers.base import ReplyRequest
from jupyter_tree_chat.providers.batches import BatchItem
from jupyter_tree_chat.providers.openai.batches import OpenAIBatches, check_ids
from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-bench-key"
CHECKS: dict[int, int] = {}
"""The peak of ``check_ids`` alone (the ids checked unique), by batch size."""
CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from fakes.fake_openai import FakeOpenAI
with FakeOpenAI(api_key=sys.argv[2]) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def items(count: int) -> list[BatchItem]:
    return [
        BatchItem(
            f"row-{i:05d}",
            ReplyRequest(
                [{"role": "user", "content": f"Classify row {i}: 'the tea was cold' (a, b, c)"}],
                "gpt-5-mini",
                max_tokens=200,
            ),
        )
        for i in range(count)
    ]


def measured(work: Callable[[], Any]) -> tuple[int, float, Any]:
    """(peak bytes allocated above what was held before, seconds, what ``work`` made)."""
    tracemalloc.reset_peak()
    held = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    made = work()
    seconds = time.perf_counter() - started
    return tracemalloc.get_traced_memory()[1] - held, seconds, made


def until_ended(wire: OpenAIBatches, batch_id: str) -> None:
    while not wire.state(batch_id).ended:
        time.sleep(0.01)


def streamed(wire: OpenAIBatches, batch: list[BatchItem]) -> tuple[int, int]:
    """Our way: submitted from a temporary file, results read one at a time."""
    CHECKS.setdefault(len(batch), measured(lambda: check_ids(batch))[0])
    submit_peak, _seconds, state = measured(lambda: wire.submit(batch))
    until_ended(wire, state.id)

    def read() -> int:
        count = 0
        for result in wire.results(state.id):
            count += result.outcome == "succeeded"
        return count

    read_peak, _seconds, count = measured(read)
    assert count == len(batch), f"{count} of {len(batch)} answered"
    return submit_peak, read_peak


def whole(wire: OpenAIBatches, batch: list[BatchItem]) -> tuple[int, int]:
    """The obvious way: the JSONL built in memory, the output file read whole."""
    client = wire.client

    def submit() -> Any:
        data = b"".join(wire.line(item) for item in batch)
        uploaded = client.files.create(file=("batch.jsonl", io.BytesIO(data)), purpose="batch")
        return client.batches.create(
            input_file_id=uploaded.id, endpoint=wire.url, completion_window="24h"
        )

    submit_peak, _seconds, made = measured(submit)
    until_ended(wire, made.id)
    done = client.batches.retrieve(made.id)

    def read() -> list[Any]:
        text = client.files.content(done.output_file_id).text
        return [wire.result(json.loads(line)) for line in text.splitlines()]

    read_peak, _seconds, results = measured(read)
    assert len(results) == len(batch)
    return submit_peak, read_peak


def spread(values: list[int]) -> str:
    mb = [v / 1e6 for v in sorted(values)]
    return f"{statistics.median(mb):7.2f} MB (runs {mb[0]:.2f}-{mb[-1]:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    options = parser.parse_args()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ROOT / "tests"), KEY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        base_url = child.stdout.readline().strip()
        provider = OpenAIChatProvider(base_url=base_url, api_key=KEY, max_retries=0)
        wire = provider.batch_wire()
        print(f"{time.strftime('%Y-%m-%d %H:%M')} UTC; load {os.getloadavg()[0]:.2f}; "
              f"runs {options.runs}; sizes {options.sizes}")  # fmt: skip
        for way in (streamed, whole):  # the SDK's lazy imports and first buffers, unmeasured
            way(wire, items(10))
        tracemalloc.start()
        peaks: dict[tuple[str, int], list[tuple[int, int]]] = {}
        ways = {"streamed": streamed, "whole": whole}
        for size in options.sizes:
            batch = items(size)
            for run in range(options.runs):
                order = list(ways) if run % 2 == 0 else list(reversed(ways))
                for name in order:
                    peaks.setdefault((name, size), []).append(ways[name](wire, batch))
        tracemalloc.stop()
        report(peaks, options.sizes)
        print(f"load at the end {os.getloadavg()[0]:.2f}")
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(30)


def report(peaks: dict[tuple[str, int], list[tuple[int, int]]], sizes: list[int]) -> None:
    for (name, size), runs in sorted(peaks.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"{name:9s} {size:6d} requests: submit {spread([r[0] for r in runs])}; "
              f"results {spread([r[1] for r in runs])}")  # fmt: skip
    small, large = min(sizes), max(sizes)
    checks = ", ".join(f"{size}: {CHECKS[size] / 1e6:.2f} MB" for size in sorted(sizes))
    print(f"of the streamed submit, the custom_id check alone (the ids sorted): {checks}")
    for part, label in ((0, "submit"), (1, "results")):
        ours_large = statistics.median(r[part] for r in peaks[("streamed", large)])
        ours_small = statistics.median(r[part] for r in peaks[("streamed", small)])
        theirs = statistics.median(r[part] for r in peaks[("whole", large)])
        growth, share = ours_large / ours_small, ours_large / theirs
        bounded = "met" if growth <= 1.5 else "not met"
        smaller = "met" if share <= 0.25 else "not met"
        print(f"{label}: streamed peak at {large} / at {small}: {growth:.2f}x (target <= "
              f"1.50x: {bounded}); streamed / whole at {large}: {share:.2f}x (target <= "
              f"0.25x: {smaller})")  # fmt: skip


if __name__ == "__main__":
    main()
