"""Two kernels appending to one session file never interleave or break a line.

Two notebooks may share a session (or one notebook runs in two kernels). The promise:
"lock + one write per record", so the file stays one whole record a line. The test
runs two real processes that each append 10,000 chained records of 100 bytes to 1 MB
(mostly small, one in a hundred large, about 100 MB each) through ``FileStore``, started
together, and then judges every line with a checker that does not use the project's
loader: each line must be JSON, carry exactly its own deterministic bytes, appear once,
and each writer's records must be in its own order; all 20,000 must be present.

A checker that never fails proves nothing, so the negative control runs the same
writers *without* the lock and with each record written in pieces (what a naive
``print``/buffered writer does), and asserts that the checker does find broken lines.

Two real kernels on one notebook's session ask, retry and switch in turn: each reads
the other's records before it acts, sees every node, and keeps its own current leaf.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers.kernel_harness import Kernel
from helpers.reliability_helpers import check_writers_file, record_sizes, worker

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import Node, SessionTree

COUNT = int(os.environ.get("JTC_CONCURRENCY_COUNT", "10000"))


def run_writers(tmp_path: Path, mode: str, count: int) -> tuple[Path, float]:
    """Start two append workers in ``mode``, release them at once, wait for both."""
    path = tmp_path / f"{mode}.chat.jsonl"
    go = tmp_path / f"{mode}.go"
    procs = [
        worker("append-worker", str(path), name, str(count), str(seed), str(go), mode)
        for seed, name in enumerate(("kernelA", "kernelB"), 1)
    ]
    ready = [Path(f"{go}.{name}.ready") for name in ("kernelA", "kernelB")]
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready):  # both interpreters are up and polling
        assert all(proc.poll() is None for proc in procs), f"a {mode} writer exited early"
        assert time.monotonic() < deadline, "the writers never started"
        time.sleep(0.01)
    started = time.monotonic()
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=600) == 0, f"a {mode} writer failed"
    return path, time.monotonic() - started


def test_two_processes_10000_records_each_never_interleave(tmp_path: Path) -> None:
    """20,000 records, 100 B-1 MB, from two processes: every line whole, none lost."""
    path, seconds = run_writers(tmp_path, "locked", COUNT)
    data = path.read_bytes()
    check = check_writers_file(data, {"kernelA": COUNT, "kernelB": COUNT})
    assert check.broken_lines == []
    assert check.wrong_payload == []
    assert check.duplicated == []
    assert check.out_of_order == []
    assert check.missing == []
    assert check.records == 2 * COUNT
    assert data.count(b'"type":"session"') == 1, "exactly one header, written by the first"

    # and the project's own loader agrees: two chains, no problems
    loaded = load_file(path)
    assert loaded.problems == []
    assert len(loaded.tree) == 2 * COUNT
    assert len(loaded.tree.roots()) == 2
    sizes = record_sizes(COUNT, 1)
    assert max(sizes) == 1_000_000 and min(sizes) == 100
    writers = [line[7:14] for line in data.split(b"\n") if line.startswith(b'{"id":"kernel')]
    interleavings = sum(1 for i in range(1, len(writers)) if writers[i] != writers[i - 1])
    assert interleavings > 0, "the writers did not overlap, so the test proved nothing"
    print(
        f"\nRELIABILITY concurrency: writers=2 records={check.records} "
        f"mb={len(data) / 1e6:.0f} seconds={seconds:.1f} broken=0 lost=0 "
        f"writer_switches={interleavings}"
    )
    path.unlink()


def test_negative_control_without_the_lock_the_checker_finds_damage(tmp_path: Path) -> None:
    """Same writers, no lock, records written in 4 pieces: lines DO break.

    This is the proof that the test above could fail. A few thousand records suffice
    for unlocked pieces to interleave on two cores.
    """
    count = min(COUNT, 3000)
    path, _ = run_writers(tmp_path, "unlocked", count)
    data = path.read_bytes()
    check = check_writers_file(data, {"kernelA": count, "kernelB": count})
    print(
        f"\nRELIABILITY concurrency negative control: records_intact={check.records} "
        f"of {2 * count}, broken_lines={len(check.broken_lines)}, "
        f"wrong_payload={len(check.wrong_payload)}, missing={len(check.missing)}"
    )
    assert check.faults > 0, "without the lock the checker saw no damage: it cannot detect any"
    assert check.broken_lines, "expected interleaved (broken) lines without the lock"
    # the loader still loads the damaged file, reporting instead of raising
    loaded = load_file(path)
    assert loaded.problems
    path.unlink()


# -- two real kernels on one session --------------------------------------------------------


def _user_with_cell(tree: SessionTree, cell_id: str) -> Node:
    return next(n for n in tree if n.meta and n.meta.get("cell_id") == cell_id)


def _kernel_view(kernel: Kernel) -> tuple[int, str]:
    shown = kernel.run(
        "from jupyter_tree_chat.kernel.sessions import current_session\n"
        "s = current_session()\nprint(len(s.tree), s.leaf)"
    ).check()
    count, leaf = shown.stdout.split()
    return int(count), leaf


@pytest.mark.kernel
def test_two_kernels_share_a_session_and_each_keeps_its_own_leaf(tmp_path: Path) -> None:
    with Kernel(tmp_path) as first, Kernel(tmp_path) as second:
        first.chat("What is a leaf?", "a0000001").check()
        second.chat("And a branch?", "b0000001").check()  # loads the file: under first's answer
        first.chat("Why keep old branches?", "a0000002").check()  # reads second's turn first
        second.run("%chat retry").check()  # a second answer beside its first
        tree = load_file(first.session_file()).tree
        branch = _user_with_cell(tree, "b0000001")
        first.run(f"%chat switch {branch.id}").check()  # a leaf record in the shared file
        second.chat("Go on", "b0000002").check()  # under its own leaf, not where first went

        loaded = load_file(first.session_file())
        tree = loaded.tree
        assert loaded.problems == []  # every line whole: nothing interleaved
        assert len(tree) == 9  # 3 questions and answers, a retry, one more turn: none lost
        own_answer = tree.children(_user_with_cell(tree, "a0000001").id)[0]
        assert _user_with_cell(tree, "a0000002").parent_id == own_answer.id
        retried = tree.children(branch.id)
        assert len(retried) == 2  # the retry, beside the first answer
        assert _user_with_cell(tree, "b0000002").parent_id == retried[1].id
        for kernel in (first, second):
            count, _ = _kernel_view(kernel)
            assert count == 9  # each sees every node, its own and the other's
        assert _kernel_view(first)[1] == retried[1].id  # where it switched
        assert _kernel_view(second)[1] == tree.children(_user_with_cell(tree, "b0000002").id)[0].id
