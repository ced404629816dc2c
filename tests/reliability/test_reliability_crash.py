"""A kernel killed while appending loses at most the record it was writing.

The promise (docs/design.md, "Reliability promises"): "A killed process loses at most the
record it was writing", and the file always loads. SIGKILL is the honest test: no
``finally``, no ``atexit``, no flush, just the process gone at an arbitrary instruction,
possibly in the middle of a ``write()`` of a 1 MB record.

One session file lives through all the rounds, like a notebook whose kernel is killed
and restarted again and again: each round starts a fresh process that loads the file,
continues the chain from the loaded leaf, and is killed at a random moment. After each
kill the test loads the file and checks, against a counter the worker bumps in shared
memory after every finished append, that

* as many appends as the round waited for were acknowledged before the kill (random
  rounds wait for 0, a few or dozens), so the total tested is asserted, never luck;
* the load never raises, and reports at most one damaged line per kill;
* every acknowledged record of this round and of all earlier rounds is in the tree;
* at most one record more than acknowledged is there (the one in flight);
* the chain is whole: the leaf's path contains every surviving node;
* the killed process holds no lock (the next writer is not blocked).

The numbers (kills, records, torn lines, lost records) are printed for docs/reliability.md.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from helpers.reliability_helpers import kill, lock_is_free, read_ack, wait_for_big_write, worker

from jupyter_tree_chat.history.store import load_file

KILLS = int(os.environ.get("JTC_CRASH_KILLS", "50"))
SEED = int(os.environ.get("JTC_CRASH_SEED", "20240614"))


TARGETED_KILLS = int(os.environ.get("JTC_CRASH_TARGETED_KILLS", "25"))


def kill_rounds(tmp_path: Path, kills: int, *, targeted: bool, label: str) -> dict[str, int]:
    """Run ``kills`` rounds of start-append-SIGKILL-load on one file; assert the promise.

    ``targeted`` waits until the worker is inside the ``write()`` of an 8 MB record (it
    announces each write in shared memory), then kills within half a millisecond, so
    the kill lands inside ``write()`` and leaves a torn line;
    otherwise the moment is random (right away, within 10 ms, or within 150 ms).
    """
    rng = random.Random(SEED + targeted)
    path = tmp_path / f"{label}.chat.jsonl"
    ack = tmp_path / f"{label}.ack"
    survived: set[str] = set()
    keys = ("asked", "acknowledged", "torn", "in_flight_kept", "acknowledged_lost")
    stats = dict.fromkeys(keys, 0)
    for round_number in range(kills):
        ack.write_bytes(b"\0" * 16)
        target = 0
        # targeted rounds write 8 MB records back to back: a write lasts about a millisecond
        pause, big = ("0", "8000000") if targeted else ("0.002", "1000000")
        proc = worker("crash-worker", str(path), str(ack), str(round_number), pause, big, stdout=-1)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n", "the worker did not start"
        if targeted:
            assert wait_for_big_write(ack, 1_000_000), "the worker never wrote a big record"
            spin_until = time.monotonic() + rng.random() * 0.0005
            while time.monotonic() < spin_until:
                pass
        else:  # let a chosen number of appends be acknowledged, then kill at a random moment
            target = rng.choice((0, rng.randrange(1, 10), rng.randrange(10, 80)))
            deadline = time.monotonic() + 60
            while read_ack(ack) < target:
                assert proc.poll() is None, "the worker died before it was killed"
                assert time.monotonic() < deadline, f"round {round_number}: {target} never acked"
                time.sleep(0.0005)
            time.sleep(rng.random() * 0.003)  # inside or between writes, by chance
            stats["asked"] += target
        kill(proc)
        proc.stdout.close()
        acked = read_ack(ack)
        if not targeted:
            assert acked >= target, f"round {round_number}: {acked} acknowledged, {target} seen"
        stats["acknowledged"] += acked

        loaded = load_file(path)  # must never raise
        tree = loaded.tree
        writer = f"w{round_number}"
        mine = {n.id for n in tree if n.id.startswith(writer + "-")}
        lost = [i for i in range(acked) if f"{writer}-{i}" not in mine]
        stats["acknowledged_lost"] += len(lost)
        assert not lost, f"round {round_number}: acknowledged records {lost} are lost"
        extra = mine - {f"{writer}-{i}" for i in range(acked)}
        assert extra <= {f"{writer}-{acked}"}, f"round {round_number}: unexpected {extra}"
        stats["in_flight_kept"] += bool(extra)
        assert survived <= {n.id for n in tree}, "a record from an earlier round vanished"
        survived |= mine

        damaged = [
            p for p in loaded.problems if "not valid JSON" in p.message or "torn" in p.message
        ]
        assert len(damaged) <= stats["torn"] + 1, f"more than one damaged line per kill: {damaged}"
        stats["torn"] = len(damaged)
        others = [p for p in loaded.problems if p not in damaged]
        assert not others, f"unexpected problems after kill {round_number}: {others}"

        if tree.leaf is not None:
            assert len(tree.path_nodes(tree.leaf)) == len(tree), "the chain is broken"
        if path.exists():
            assert lock_is_free(path), "a killed writer still holds the append lock"

    final = load_file(path)
    assert {n.id for n in final.tree} == survived
    stats["on_disk"] = len(survived)
    stats["file_mb"] = round(path.stat().st_size / 1e6) if path.exists() else 0
    print(
        f"\nRELIABILITY crash {label}: kills={kills} "
        + " ".join(f"{k}={v}" for k, v in stats.items())
    )
    path.unlink(missing_ok=True)  # up to ~100 MB: do not leave it for pytest's tmp retention
    return stats


def test_sigkill_at_random_moments_loses_only_the_record_in_flight(tmp_path: Path) -> None:
    """50 SIGKILLs at random moments: nothing acknowledged is ever lost.

    Each round waits until a chosen number of appends (0, a few, or dozens) has been
    acknowledged before it kills, so the rounds really test acknowledged records: the
    total is asserted, not left to chance."""
    stats = kill_rounds(tmp_path, KILLS, targeted=False, label="random")
    assert stats["acknowledged"] >= stats["asked"] >= KILLS * 5, stats


def test_sigkill_inside_a_big_write_leaves_a_torn_line_that_loads(tmp_path: Path) -> None:
    """Kills aimed at the middle of an 8 MB ``write()``: torn lines happen, and are harmless.

    Random kills mostly land between appends; this aims at the hard case so the torn
    tail, the newline the next writer puts before its record, and the loader's report
    are exercised for sure. It also checks the test can see a torn line at all.
    """
    stats = kill_rounds(tmp_path, TARGETED_KILLS, targeted=True, label="targeted")
    assert stats["torn"] >= TARGETED_KILLS // 2, "few kills landed inside a write; bad aim"
