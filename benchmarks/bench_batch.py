"""How fast does a 10,000-request batch go out, and its results come into the tree?

In one kernel against the local fake Messages API's Message Batches (tests/fakes/
fake_batches.py; the same rules as the real API), each run:

- **submit**: a ``%%chat --over rows --batch`` cell over ``--rows`` rows: the questions
  filled in, written in one append with one fsync, the requests built as a stream's and
  sent as one batch; its time is the kernel's own (``pre_run_cell`` → ``post_run_cell``).
  Baseline: the same number of requests sent with the bare SDK
  (``messages.batches.create``) from the same kernel, nothing built or stored.
  Target: ≤ 5 s.
- **results**: the batch ended (the fake's ``finish``), the kernel's poller woken; the
  time until every answer is written (results streamed, ``CHUNK`` a append with one
  fsync each), read by the kernel itself. Baseline: the bare SDK reading the same
  results to the end (``messages.batches.results``), nothing stored. Target: ≤ 10 s.
- **live**: while the results are written, trivial cells are run one after another: the
  slowest one's round trip says whether the kernel (and with it the panel) stays live;
  and how many times the batch cell's bar was updated after the cell had ended.
- **memory**: the kernel's resident memory before the first run and after the last.

The bare and batch cases alternate their order from run to run.

    .venv/bin/python benchmarks/bench_batch.py [--rows 10000] [--runs 3]
    .venv/bin/python benchmarks/bench_batch.py --quick      # 200 rows, 1 run (.ci/run)
    .venv/bin/python benchmarks/bench_batch.py --wire openai  # OpenAI's Batch API instead

With ``--wire openai`` the same runs go through OpenAI's Batch API (the fake Files and
Batch APIs of tests/fakes/fake_openai_batches.py, the cell's model ``openai:gpt-5-mini``):
the bare SDK's submit uploads the same requests' JSONL built in memory and makes the
batch (``files.create``, ``batches.create``); its results read the output file to the
end (``files.content``, streamed), nothing stored.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from bench_magic import TIMING_HOOKS  # noqa: E402  (the same kernel-side cell timing)
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from fakes.fake_openai import FakeOpenAI  # noqa: E402
from helpers.kernel_harness import Kernel  # noqa: E402

HELPERS = """
def _bench_rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024
_bench_woken = [0.0]
def _bench_wake():
    _bench_woken[0] = time.monotonic()
    poller(current_session()).wake()
def _bench_left():
    plans = current_session().batches.plans.values()
    return sum(p.total - p.applied for p in plans), time.monotonic() - _bench_woken[0]
"""
"""What both wires' setups end with (no braces: it is not formatted)."""

SETUP = """
import anthropic, time
from jupyter_tree_chat.kernel.sessions import current_session
from jupyter_tree_chat.conversation.many.batch_poll import poller
_bench_client = anthropic.Anthropic(max_retries=0)
rows = [{{"n": i}} for i in range({rows})]
_bench_requests = [
    {{"custom_id": f"r{{i}}", "params": {{"model": "claude-sonnet-4-6", "max_tokens": 4096,
      "messages": [{{"role": "user", "content": f"Row {{i}}: say something."}}]}}}}
    for i in range({rows})
]
"""

BARE_SUBMIT = "_bench_batch = _bench_client.messages.batches.create(requests=_bench_requests)"
BARE_RESULTS = """
_bench_t = time.monotonic()
_bench_n = sum(1 for _r in _bench_client.messages.batches.results(_bench_batch.id))
print(time.monotonic() - _bench_t, _bench_n)
"""

OPENAI_SETUP = """
import io, json, openai, time
from jupyter_tree_chat.kernel.sessions import current_session
from jupyter_tree_chat.conversation.many.batch_poll import poller
_bench_client = openai.OpenAI(max_retries=0)
rows = [{{"n": i}} for i in range({rows})]
_bench_lines = b"".join(
    json.dumps({{"custom_id": f"r{{i}}", "method": "POST", "url": "/v1/chat/completions",
      "body": {{"model": "gpt-5-mini", "max_completion_tokens": 4096,
      "messages": [{{"role": "user", "content": f"Row {{i}}: say something."}}]}}}}).encode()
    + b"\\n" for i in range({rows})
)
"""
OPENAI_BARE_SUBMIT = """
_bench_file = _bench_client.files.create(
    file=("b.jsonl", io.BytesIO(_bench_lines)), purpose="batch"
)
_bench_batch = _bench_client.batches.create(
    input_file_id=_bench_file.id, endpoint="/v1/chat/completions", completion_window="24h"
)
"""
OPENAI_BARE_RESULTS = """
_bench_t = time.monotonic()
_bench_done = _bench_client.batches.retrieve(_bench_batch.id)
with _bench_client.files.with_streaming_response.content(_bench_done.output_file_id) as _r:
    _bench_n = sum(1 for _line in _r.iter_lines() if _line)
print(time.monotonic() - _bench_t, _bench_n)
"""


class AnthropicCase:
    """Message Batches on the fake Messages API, through Anthropic's own API."""

    setup, bare_submit, bare_results = SETUP, BARE_SUBMIT, BARE_RESULTS

    def __init__(self) -> None:
        self.server = FakeAnthropic()
        self.cells: list[str] = []

    def env(self) -> dict[str, str]:
        return {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": self.server.base_url}

    def hold(self) -> None:
        self.server.batches.hold = True

    def finish(self) -> None:
        self.server.batches.finish()


class OpenAICase:
    """OpenAI's Batch API on the fake Files and Batch APIs, through the ``openai``
    endpoint pointed at them (the cell's model ``openai:gpt-5-mini``)."""

    setup, bare_submit, bare_results = OPENAI_SETUP, OPENAI_BARE_SUBMIT, OPENAI_BARE_RESULTS

    def __init__(self) -> None:
        self.server = FakeOpenAI(api_key="sk-bench")

    @property
    def cells(self) -> list[str]:
        endpoints = {"openai": {"base_url": self.server.base_url}}
        return [
            f"%config TreeChat.endpoints = {endpoints!r}",
            "%config TreeChat.model = 'openai:gpt-5-mini'",
        ]

    def env(self) -> dict[str, str]:
        return {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": self.server.base_url}

    def hold(self) -> None:
        self.server.batches.auto = False

    def finish(self) -> None:
        self.server.batches.finish()


CASES = {"anthropic": AnthropicCase, "openai": OpenAICase}


def last_cell(kernel: Kernel) -> float:
    """The last cell's wall time, as the kernel measured it."""
    start, end, _cpu = (
        float(w) for w in kernel.run("print(*_bench['cells'][-1])").check().stdout.split()
    )
    return end - start


def trip(kernel: Kernel, code: str, bar_cell: str, seen: list[int]) -> str:
    """Run ``code``, return what it printed; count the bar's updates sent meanwhile (as
    updates of the batch cell's own output, after that cell ended) in ``seen``."""
    msg_id = kernel.send(code)
    printed = []
    while True:
        msg = kernel.kc.get_iopub_msg(timeout=60)
        parent = msg["parent_header"].get("msg_id")
        if parent == bar_cell and msg["msg_type"] == "update_display_data":
            seen[0] += 1
        elif parent == msg_id and msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif parent == msg_id and msg["content"].get("execution_state") == "idle":
            return "".join(printed)


def rss(kernel: Kernel) -> float:
    return float(kernel.run("print(_bench_rss())").check().stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200 rows, 1 run (for .ci/run)")
    parser.add_argument("--wire", choices=sorted(CASES), default="anthropic")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.runs = 200, 1

    bare_submit: list[float] = []
    bare_results: list[float] = []
    submit: list[float] = []
    results: list[float] = []
    slowest_cell: list[float] = []
    updates: list[int] = []
    case = CASES[args.wire]()
    with (
        case.server,
        tempfile.TemporaryDirectory() as folder,
        Kernel(Path(folder), env=case.env()) as kernel,
    ):
        kernel.run(TIMING_HOOKS).check()
        for cell in case.cells:
            kernel.run(cell).check()
        kernel.run(case.setup.format(rows=args.rows) + HELPERS, timeout=600).check()
        kernel.run("%config TreeChat.batch_poll = 60").check()  # woken by the bench only
        kernel.chat("warm up", "warm0001").check()  # the SDK, the client, the session
        before = rss(kernel)

        def bare() -> None:
            case.hold()
            kernel.run(case.bare_submit, timeout=600).check()
            bare_submit.append(last_cell(kernel))
            case.finish()
            said = kernel.run(case.bare_results, timeout=600).check().stdout.split()
            assert int(said[1]) == args.rows, said
            bare_results.append(float(said[0]))

        def batch(run: int) -> None:
            case.hold()
            text = f"Row {{n}}: say something (version {run + 1})."
            cell = f"batch{run:03d}"  # each run a new experiment under the same leaf
            msg_id = kernel.send(f"%%chat --over rows --batch\n{text}", cell)
            kernel.collect(msg_id, timeout=600).check()
            submit.append(last_cell(kernel))
            case.finish()
            kernel.run("_bench_wake()").check()
            trips: list[float] = []
            seen = [0]
            while True:
                started = time.monotonic()
                said = trip(kernel, "print(_bench_left())", msg_id, seen)
                trips.append(time.monotonic() - started)
                left, took = eval(said)
                if left == 0:
                    break
            results.append(took)
            slowest_cell.append(max(trips))
            deadline = time.monotonic() + 30
            while seen[0] == 0 and time.monotonic() < deadline:  # the last bar update
                trip(kernel, "pass", msg_id, seen)
            updates.append(seen[0])

        for run in range(args.runs):
            if run % 2 == 0:
                bare()
                batch(run)
            else:
                batch(run)
                bare()
        after = rss(kernel)
        load = os.getloadavg()

    print(f"{args.wire}: {args.rows:,} requests a batch × {args.runs} runs; load {load[0]:.2f}")
    for run in range(args.runs):
        first = "bare first" if run % 2 == 0 else "batch first"
        sub, res = submit[run], results[run]
        print(
            f"  run {run + 1} ({first}): submit {sub:5.2f} s (bare SDK {bare_submit[run]:5.2f} s,"
            f" {sub / bare_submit[run]:.1f}×)   results {res:5.2f} s (bare SDK "
            f"{bare_results[run]:5.2f} s, {res / bare_results[run]:.1f}×)   slowest cell "
            f"meanwhile {slowest_cell[run] * 1000:.0f} ms   {updates[run]} bar updates"
        )
    for name, values, target in (("submit", submit, 5.0), ("results", results, 10.0)):
        verdict = "met" if max(values) <= target else "not met"
        print(
            f"  {name}: median {statistics.median(values):.2f} s "
            f"(spread {min(values):.2f}–{max(values):.2f} s; ≤ {target:g} s every run: {verdict})"
        )
    print(f"  kernel memory {before:.0f} MB → {after:.0f} MB: +{after - before:.0f} MB")


if __name__ == "__main__":
    main()
