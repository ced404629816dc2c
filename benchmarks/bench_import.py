"""Importing a big Claude Code session, against parsing its lines with orjson alone.

Run: ``python benchmarks/bench_import.py [--mb 100] [--dir DIR] [--runs 5]``

Writes a synthetic Claude Code session of about ``--mb`` megabytes shaped as Claude Code
writes them: every API response as one record per content block (thinking with an empty
signature, text, tool calls) chained under one ``message.id``, tool results as their
own records (parallel ones in two), ``progress`` and ``system`` records in the parent
chain, envelopes with ``cwd``, ``sessionId``, ``usage``..., and 10 branches (rewinds:
new prompts under earlier answers). Then, as whole processes timed from
spawn to exit (interpreter start included in both), ``--runs`` times, their order
turning run by run (``alternating.py``):

- the floor: a Python process that reads the file and parses every line with orjson,
  with the cyclic GC paused (as our readers pause it: the strict floor) and, for
  reference, with the GC as it runs by default;
- the import: ``jupyter-tree-chat import SRC -o OUT``, which reads, converts, writes and
  fsyncs the new session file, then prints its summary line.

A script, not a test: figures depend on the machine (and on what else runs on it); the
ratio is the point. Target: the import within 2× of the floor, judged on the median of
the runs' own ratios of CPU time (user and system: the exact measure, which the shared
machine's other work does not change), their spread given; wall time reported.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alternating import Timing, alternate, ratio_line

ROOT = Path(__file__).resolve().parents[1]
BRANCHES = 10
SESSION = "8c1e5a5e-4b0f-4d7a-9a55-1f0e2d3c4b5a"
WORDS = (
    "the",
    "tree",
    "keeps",
    "every",
    "branch",
    "so",
    "a",
    "retry",
    "or",
    "an",
    "edit",
    "never",
    "loses",
    "an",
    "answer",
)


def prose(rng: random.Random, size: int) -> str:
    words: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(WORDS)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


class Writer:
    """Claude Code records, one a line, with the envelope Claude Code puts on each."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.out = bytearray()
        self.count = 0
        self.clock = 1_750_000_000.0

    def uuid(self) -> str:
        self.count += 1
        return f"{self.rng.getrandbits(32):08x}-0000-4000-8000-{self.count:012x}"

    def record(self, kind: str, parent: str | None, **fields: Any) -> str:
        uuid = self.uuid()
        self.clock += self.rng.random() * 3
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock))
        record = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/someone/projects/jupyter-tree-chat",
            "sessionId": SESSION,
            "version": "2.1.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": f"{stamp}.{self.count % 1000:03d}Z",
            **fields,
        }
        self.out += orjson.dumps(record) + b"\n"
        return uuid

    def user(self, parent: str | None, content: Any, **fields: Any) -> str:
        return self.record("user", parent, message={"role": "user", "content": content}, **fields)

    def assistant(self, parent: str, message_id: str, block: dict[str, Any]) -> str:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 4,
                "cache_creation_input_tokens": 1200,
                "cache_read_input_tokens": 48000,
                "output_tokens": 320,
                "service_tier": "standard",
            },
        }
        return self.record("assistant", parent, message=message, requestId=f"req_{self.count:020d}")

    def turn(self, parent: str | None, tools: int) -> str:
        """A prompt, then answers with tool calls until a text answer: the last node."""
        rng = self.rng
        last = self.user(parent, prose(rng, rng.randint(40, 400)))
        for round_number in range(tools + 1):
            message_id = f"msg_01{self.count:022d}"
            last = self.assistant(
                last,
                message_id,
                {
                    "type": "thinking",
                    "thinking": prose(rng, rng.randint(200, 1500)),
                    "signature": "",
                },
            )
            last = self.assistant(
                last, message_id, {"type": "text", "text": prose(rng, rng.randint(100, 2500))}
            )
            if round_number == tools:
                return self.record("system", last, subtype="turn_duration", durationMs=9000)
            calls = [f"toolu_01{self.count:020d}{n}" for n in range(rng.choice((1, 1, 2)))]
            for call in calls:
                block = {
                    "type": "tool_use",
                    "id": call,
                    "name": "Read",
                    "input": {"file_path": "x.py"},
                }
                last = self.assistant(last, message_id, block)
            last = self.record(
                "progress", last, data={"type": "hook_progress", "hookEvent": "PreToolUse"}
            )
            for call in calls:
                result = [
                    {
                        "type": "tool_result",
                        "tool_use_id": call,
                        "content": prose(rng, rng.randint(500, 9000)),
                    }
                ]
                last = self.user(last, result, toolUseResult={"type": "text"})
        return last


def write_session(path: Path, megabytes: int, seed: int = 14) -> int:
    """About ``megabytes`` MB of one session with ``BRANCHES`` branches; returns its records."""
    rng = random.Random(seed)
    writer = Writer(rng)
    target = megabytes * 1_000_000
    tips: list[str] = []
    forks = {int(target * (k + 1) / (BRANCHES + 1)) for k in range(BRANCHES - 1)}
    last: str | None = None
    answers: list[str] = []
    while len(writer.out) < target:
        size = len(writer.out)
        if forks and size >= min(forks):
            forks.discard(min(forks))
            tips.append(last or "")
            last = rng.choice(answers[len(answers) // 2 :])  # a rewind: a new prompt there
        last = writer.turn(last, rng.randint(0, 4))
        answers.append(last)
    writer.out += orjson.dumps({"type": "last-prompt", "lastPrompt": "x", "leafUuid": last}) + b"\n"
    path.write_bytes(writer.out)
    return writer.count


FLOOR = """
import gc, sys, orjson
if sys.argv[2] == "paused":
    gc.disable()
data = open(sys.argv[1], "rb").read()
loads = orjson.loads
records = [loads(line) for line in data.split(b"\\n") if line]
print(len(records))
"""


def timed(command: list[str], out: list[str] | None = None) -> Timing:
    """Wall-clock and CPU seconds (user + system) of one whole process; its stdout
    appended to ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out is not None:
        out.append(done.stdout.strip())
    return Timing(wall, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the session (MB)")
    parser.add_argument("--dir", help="where to write the files (default: a temp folder)")
    parser.add_argument("--runs", type=int, default=5, help="runs, the order turning")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, orjson {orjson.__version__}, {os.cpu_count()} CPUs")
    script = Path(sys.executable).with_name("jupyter-tree-chat")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        source = Path(tmp) / f"{SESSION}.jsonl"
        records = write_session(source, args.mb)
        size = source.stat().st_size / 1e6
        print(f"session: {size:.0f} MB, {records:,} records, {BRANCHES} branches")
        target = Path(tmp) / "out.chat.jsonl"
        summaries: list[str] = []

        def imported() -> Timing:
            target.unlink(missing_ok=True)
            return timed([str(script), "import", str(source), "-o", str(target)], summaries)

        times = alternate(
            {
                "default": lambda: timed([sys.executable, "-c", FLOOR, str(source), "default"]),
                "floor": lambda: timed([sys.executable, "-c", FLOOR, str(source), "paused"]),
                "import": imported,
            },
            args.runs,
        )
        load = " ".join(f"{n:.2f}" for n in os.getloadavg())
        print(f"{args.runs} runs, the order turning; load average at the end {load}")
        floor, default, took = times["floor"], times["default"], times["import"]
        lacks = "the floor does not convert, write nor fsync anything: noise, not speed"
        for what, pick in (("CPU, user + system (judged)", _cpu), ("wall clock (reported)", _wall)):
            target_x = 2.0 if what.startswith("CPU") else None
            print(f"{what}, medians:")
            print(
                f"  orjson alone, whole process, GC as by default: {_median(pick(default)):6.2f} s"
            )
            print(
                "  orjson alone, whole process, GC paused:        "
                f"{_median(pick(floor)):6.2f} s  (the floor)"
            )
            print(f"  jupyter-tree-chat import, whole process:       {_median(pick(took)):6.2f} s")
            print(f"  import / the floor: {ratio_line(pick(took), pick(floor), target_x, lacks)}")
            print(
                f"  import / the default loop: {ratio_line(pick(took), pick(default), None, lacks)}"
            )
        print(
            f"wrote {target.stat().st_size / 1e6:.0f} MB: {summaries[-1].split(': ', 1)[1][:200]}"
        )


def _cpu(timings: list[Timing]) -> list[float]:
    return [t.cpu for t in timings]


def _wall(timings: list[Timing]) -> list[float]:
    return [t.wall for t in timings]


def _median(values: list[float]) -> float:
    return statistics.median(values)


if __name__ == "__main__":
    main()
