"""Cases timed in turn, their order turning run by run, and ratios said with their spread.

A case timed always right after another pays for what that one left behind (its garbage
collected, its caches cold or warm), so ``alternate`` turns the order each run, and
reverses it every other round. Each case is timed by a ``Stopwatch``: wall time, and the
calling thread's CPU time (``time.thread_time``), which the shared machine's other work
and the local fake server's own thread do not change; the CPU time judges.
``timed`` makes a case of a callable, ``process`` times a whole process (its CPU time
the children's user and system time). ``ratio_line`` gives the median of the runs' own
ratios (each run's case against the same run's baseline), their spread and the verdict;
a ratio under 1x against a baseline that does less is noise, not speed, and the line
says what the baseline does not do.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")  # what a case's run gives: a Timing, or a browser page's own timings


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # the calling thread's


class Stopwatch:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def stop(self) -> Timing:
        return Timing(time.perf_counter() - self.wall, time.thread_time() - self.cpu)


def timed(work: Callable[[], object]) -> Callable[[], Timing]:
    """A case timing one call of ``work``."""

    def run() -> Timing:
        started = Stopwatch()
        work()
        return started.stop()

    return run


def process(argv: list[str], cwd: Path | None = None) -> Timing:
    """One whole process, its output dropped: wall time, and CPU time (user and system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timing(wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def alternate(cases: Mapping[str, Callable[[], T]], runs: int) -> dict[str, list[T]]:
    """Each case's timings, ``runs`` times, the order turning each run."""
    names = list(cases)
    times: dict[str, list[T]] = {name: [] for name in names}
    for run in range(runs):
        turn = run % len(names)
        order = names[turn:] + names[:turn]
        if (run // len(names)) % 2:
            order.reverse()
        for name in order:
            times[name].append(cases[name]())
    return times


def ratio_line(
    ours: list[float], baseline: list[float], target: float | None, under_one: str
) -> str:
    """``1.04x (runs 0.97-1.12x; target <= 1.10x: met)``, and ``under_one`` (what the
    baseline does and does not do) when the median is under 1x."""
    ratios = sorted(o / b for o, b in zip(ours, baseline, strict=True))
    median = statistics.median(ratios)
    line = f"{median:.2f}x (runs {ratios[0]:.2f}-{ratios[-1]:.2f}x"
    if target is not None:
        line += f"; target <= {target:.2f}x: {'met' if median <= target else 'not met'}"
    line += ")"
    if median < 1:
        line += f"; under 1x: {under_one}"
    return line
