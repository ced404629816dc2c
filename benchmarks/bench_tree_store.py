"""Tree and store speed, side by side with a literal port of the chapter's algorithms.

Run: ``python benchmarks/bench_tree_store.py [--sizes 100000,1000000] [--appends 10000]
[--runs 5] [--path-json-only]``

Builds synthetic branching sessions in one run (a 2,000-deep current conversation
spread through the file, forks and side branches around it), then prints, for each
size:

1. Whole processes, their order turning each round, the best of each and its peak resident memory:
   ``jupyter-tree-chat path FILE --leaf L --json``, ``show`` and ``check`` against two
   floors, both plain Python reading the file line by line with orjson: the *per-line
   parse* (each line parsed and dropped: the least any reader of every line pays) and
   *keep everything* (every parsed line kept in a list: what holding the file as
   objects costs). Ratios are against the per-line parse; memory against the file.
2. In one process: loading next to the chapter's algorithms (a linear ``store.find``
   per step, a ``filter`` per branch listing), and the in-process floors.

3. ``path --json`` on files of two shapes, the target (at most 1.3x the per-line parse):
   the project's own (a header record, then this project's records with ``meta``, forks
   and side branches, a leaf record) and the chapter's (no header, records
   ``{"id", "parentId", "message": {"role", "content", "timestamp"}}`` only, ``size /
   2,000`` roots each a 2,000-deep chain, the chains' records interleaved as concurrent
   conversations write them). Each run is one whole process of each, their order turning
   run by run; the median of the runs' ratios of CPU time (user and system) is judged,
   the runs' spread said, wall time reported.

A script, not a test: figures depend on the machine (say its load with them); the ratios
are the point.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from alternating import Timing, alternate, ratio_line

from jupyter_tree_chat.history.store import FileStore, header_record, load_file

REPO = Path(__file__).resolve().parents[1]

DEEP = 2_000


# -- synthetic sessions --------------------------------------------------------------------


def build_session(path: Path, size: int, seed: int = 11) -> tuple[str, str]:
    """Write ``size`` nodes; returns (the 2,000-deep leaf, a node with several branches)."""
    rng = random.Random(seed)
    ids = [f"{rng.getrandbits(64):016x}" for _ in range(size)]
    roles: list[int] = []  # 0 user, 1 assistant
    parents: list[int] = []
    main_tip = -1
    main_depth = 0
    tips: list[int] = []
    main_every = max(1, size // DEEP)
    out = bytearray()
    for i in range(size):
        if i % main_every == 0 and main_depth < DEEP:
            parent = main_tip
            main_tip = i
            main_depth += 1
        elif tips and rng.random() < 0.97:
            k = rng.randrange(len(tips))
            parent = tips[k]
            tips[k] = i
        else:  # a fork: a new branch under any earlier node
            parent = rng.randrange(i) if i else -1
            tips.append(i)
            if len(tips) > 64:
                tips.pop(0)
        role = 0 if parent < 0 else 1 - roles[parent]
        roles.append(role)
        parents.append(parent)
        out += orjson.dumps(_record(ids[i], ids[parent] if parent >= 0 else None, role, i)) + b"\n"
    out += orjson.dumps({"type": "leaf", "id": ids[main_tip]}) + b"\n"
    path.write_bytes(out)
    counts: dict[int, int] = {}
    for p in parents:
        counts[p] = counts.get(p, 0) + 1
    busiest = max((c, p) for p, c in counts.items() if p >= 0)[1]
    return ids[main_tip], ids[busiest]


def build_chapter_session(path: Path, size: int, seed: int = 13) -> str:
    """The chapter's shape: ``size // 2,000`` roots, each a 2,000-deep chain, no header,
    records holding only ``id``, ``parentId`` and ``message``; the chains' records
    interleaved (each round adds one node to every chain). Returns a deepest leaf of the
    middle chain."""
    rng = random.Random(seed)
    roots = max(1, size // DEEP)
    ids = [[f"{rng.getrandbits(64):016x}" for _ in range(DEEP)] for _ in range(roots)]
    with open(path, "wb") as out:
        for depth in range(DEEP):
            block = bytearray()
            for chain in range(roots):
                parent = ids[chain][depth - 1] if depth else None
                record = _record(ids[chain][depth], parent, depth % 2, depth)
                record.pop("meta", None)
                block += orjson.dumps(record) + b"\n"
            out.write(block)
    return ids[roots // 2][-1]


def build_project_session(path: Path, size: int) -> str:
    """The project's own shape: ``build_session``'s tree after the header a session file
    written by this project starts with. Returns the 2,000-deep leaf."""
    body = path.with_suffix(".body")
    leaf, _busy = build_session(body, size)
    with open(path, "wb") as out:
        out.write(orjson.dumps(header_record()) + b"\n")
        out.write(body.read_bytes())
    body.unlink()
    return leaf


def _record(node_id: str, parent: str | None, role: int, i: int) -> dict[str, Any]:
    if role == 0:
        message = {"role": "user", "content": f"Question {i}: how would you do it another way?"}
        return {
            "id": node_id,
            "parentId": parent,
            "message": {**message, "timestamp": 1718400000 + i},
        }
    text = f"Answer {i}. " + "Here is one way to think about it, step by step. " * 3
    return {
        "id": node_id,
        "parentId": parent,
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "timestamp": i,
        },
        "meta": {"model": "claude-sonnet-4-5", "usage": {"input_tokens": 900, "output_tokens": 60}},
    }


# -- the chapter's algorithms, ported literally ---------------------------------------------


def chapter_load(path: Path) -> list[dict[str, Any]]:
    """Read every line, JSON.parse it: the chapter's "restore" step."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def chapter_active_path(
    leaf_id: str, store: list[dict[str, Any]], steps: int | None = None
) -> list:
    path: list[Any] = []
    current: str | None = leaf_id
    while current is not None and (steps is None or len(path) < steps):
        node = next((n for n in store if n.get("id") == current), None)  # store.find
        if node is None:
            break
        path.insert(0, node["message"])  # path.unshift
        current = node["parentId"]
    return path


def sampled_finds(store: list[dict[str, Any]], path_ids: list[str], every: int) -> float:
    """The chapter's ``store.find`` for every ``every``-th node of the path (the finds
    cost more the later a node is in the file, so an even sample across the path, not its
    first steps), the time summed and multiplied by ``every``."""
    total = 0.0
    for node_id in path_ids[::every]:
        start = time.perf_counter()
        found = next((n for n in store if n.get("id") == node_id), None)
        total += time.perf_counter() - start
        assert found is not None
    return total * every


def chapter_branches(node_id: str, store: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for n in store if n.get("parentId") == node_id]  # store.filter


# -- measuring ------------------------------------------------------------------------------


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        del result
    return min(times)


def per_line_floor(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb") as handle:
        for line in handle:
            loads(line)


def floor(path: Path, pause_gc: bool) -> float:
    def parse() -> list[Any]:
        loads = orjson.loads
        data = path.read_bytes()
        return [loads(line) for line in data.split(b"\n") if line]

    if not pause_gc:
        return best(parse, 1)
    gc.disable()
    try:
        return best(parse, 1)
    finally:
        gc.enable()


PER_LINE = 'import orjson,sys\nfor l in open(sys.argv[1],"rb"): orjson.loads(l)'
KEEP_ALL = 'import orjson,sys\nkept = [orjson.loads(l) for l in open(sys.argv[1],"rb")]'


RUNNER = """
import json, os, subprocess, sys, time
commands, rounds = json.load(sys.stdin)
best = {name: float("inf") for name in commands}
peak = {name: 0.0 for name in commands}
names = list(commands)
for round_number in range(rounds):
    turn = round_number % len(names)
    for name in names[turn:] + names[:turn]:  # no command always follows the same one
        command = commands[name]
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        best[name] = min(best[name], time.perf_counter() - start)
        peak[name] = max(peak[name], usage.ru_maxrss / 1024)
json.dump({name: [best[name], peak[name]] for name in commands}, sys.stdout)
"""


def whole_processes(path: Path, leaf: str, rounds: int) -> dict[str, tuple[float, float]]:
    """name → (best seconds, peak RSS in MiB) of each command, run in turn ``rounds`` times.

    A small process of its own starts them: a child's peak RSS counts the memory of the
    process it was forked from, and this one holds the file it built.
    """
    cli = [sys.executable, "-m", "jupyter_tree_chat.cli"]
    commands = {
        "per-line parse (floor)": [sys.executable, "-c", PER_LINE, str(path)],
        "keep everything (GC on)": [sys.executable, "-c", KEEP_ALL, str(path)],
        "path --json": [*cli, "path", str(path), "--leaf", leaf, "--json"],
        "check": [*cli, "check", str(path)],
        "show": [*cli, "show", str(path)],
    }
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps([commands, rounds]),
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return {name: (seconds, rss) for name, (seconds, rss) in json.loads(done.stdout).items()}


def print_whole_processes(path: Path, leaf: str, rounds: int) -> None:
    size_mb = path.stat().st_size / 2**20
    figures = whole_processes(path, leaf, rounds)
    floor_time = figures["per-line parse (floor)"][0]
    print(f"  whole processes, best of {rounds}, their order turning; file {size_mb:.0f} MiB")
    for name, (seconds, rss) in figures.items():
        print(
            f"    {name:<26} {fmt(seconds)}  {seconds / floor_time:5.2f}x the per-line parse"
            f"   peak RSS {rss:6.0f} MiB = {rss / size_mb:4.2f}x the file"
        )


PATH_TARGET = 1.3


def path_json_shapes(folder: Path, size: int, runs: int) -> None:
    """``path --json`` against the per-line parse on both shapes, ``runs`` whole-process
    runs each, their order turning; each run's ratio of CPU time (user and system: what
    the shared machine's other work does not change) judged by its median, wall time
    reported."""
    cli = [sys.executable, "-m", "jupyter_tree_chat.cli"]
    shapes = (("project's own", build_project_session), ("chapter's", build_chapter_session))
    for shape, build in shapes:
        path = folder / f"{shape.split()[0].strip(chr(39) + 's')}-{size}.chat.jsonl"
        leaf = build(path, size)
        commands = {
            "floor": [sys.executable, "-c", PER_LINE, str(path)],
            "path": [*cli, "path", str(path), "--leaf", leaf, "--json"],
        }
        took = alternate(
            {
                name: lambda command=command: _one_process(command)
                for name, command in commands.items()
            },
            runs,
        )
        path_cpu, floor_cpu = [t.cpu for t in took["path"]], [t.cpu for t in took["floor"]]
        lacks = (
            "the per-line parse builds every record's dicts and strings, the command decodes"
            " only each record's id and parentId and builds the path's nodes alone"
        )
        print(
            f"  path --json, {shape} shape, {size:,} nodes, {path.stat().st_size / 2**20:.0f} MiB,"
            f" {runs} runs, the order turning: CPU (judged) "
            f"{ratio_line(path_cpu, floor_cpu, PATH_TARGET, lacks)} the per-line parse"
        )
        wall = ratio_line(
            [t.wall for t in took["path"]], [t.wall for t in took["floor"]], None, lacks
        )
        print(f"    wall (reported): {wall}")
        path.unlink()


def _one_process(command: list[str]) -> Timing:
    """Wall seconds and CPU seconds (user and system) of one whole process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=REPO)
    _pid, status, usage = os.wait4(child.pid, 0)
    assert status == 0, command
    return Timing(time.perf_counter() - started, usage.ru_utime + usage.ru_stime)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:8.1f} ms"
    return f"{seconds:8.2f} s "


def row(what: str, ours: float, chapter: float | None, note: str = "") -> None:
    theirs = fmt(chapter) if chapter is not None else " " * 11
    ratio = " " * 11
    if chapter is not None and ours > 0:
        ratio = f"{chapter / ours:10.0f}x" if chapter / ours >= 10 else f"{chapter / ours:10.2f}x"
    print(f"  {what:<38} {fmt(ours)}   {theirs}  {ratio}  {note}")


def bench_size(folder: Path, size: int) -> None:
    path = folder / f"s{size}.chat.jsonl"
    t0 = time.perf_counter()
    deep_leaf, busy = build_session(path, size)
    print(
        f"\n{size:,} nodes, {path.stat().st_size / 1e6:.0f} MB "
        f"(built in {time.perf_counter() - t0:.1f} s)"
    )
    print_whole_processes(path, deep_leaf, 3 if size > 200_000 else 5)
    print(f"  in one process:\n  {'':<38} {'ours':>11}   {'chapter':>11}  {'speed-up':>11}")

    # the machine may be busy: their order turning, keep the best of each
    rounds = 5 if size <= 200_000 else 3
    found = alternate(
        {
            "ours": lambda: best(lambda: load_file(path), 1),
            "keep": lambda: floor(path, pause_gc=True),
            "line": lambda: best(lambda: per_line_floor(path), 1),
        },
        rounds,
    )
    ours_load, floor_keep, floor_line = (min(found[k]) for k in ("ours", "keep", "line"))
    chapter_time = best(lambda: chapter_load(path), 1)
    row("load", ours_load, chapter_time)
    print(f"  {'floor: orjson.loads per line':<38} {fmt(floor_line)}")
    print(f"  {'floor: ... keeping every line (GC off)':<38} {fmt(floor_keep)}")
    print(
        f"  {'load / floor':<38} {ours_load / floor_line:8.2f} x    "
        f"(against keeping everything: {ours_load / floor_keep:.2f} x)"
    )

    bench_operations(path, size, deep_leaf, busy)
    gc.collect()

    path.unlink()


def bench_operations(path: Path, size: int, deep_leaf: str, busy: str) -> None:
    result = load_file(path)
    tree = result.tree
    assert tree.leaf == deep_leaf and tree.depth(deep_leaf) == DEEP, tree.depth(deep_leaf)
    store = chapter_load(path)
    ours_path = best(lambda: tree.active_path(deep_leaf), 200)
    if size <= 200_000:
        chapter_path = best(lambda: chapter_active_path(deep_leaf, store), 1)
        note = "(chapter: measured, all 2,000 finds)"
    else:  # all 2,000 finds would take minutes: time every 40th, evenly spaced, times 40
        chapter_path = sampled_finds(store, [n.id for n in tree.path_nodes(deep_leaf)], 40)
        note = "(chapter: EXTRAPOLATED, every 40th of the 2,000 finds timed, x40)"
    row(f"active path, {DEEP:,} deep", ours_path, chapter_path, note)
    ours_branches = best(lambda: tree.branches(busy), 1000)
    chapter_b = best(lambda: chapter_branches(busy, store), 3)
    row(f"branches of a node ({len(tree.branches(busy))})", ours_branches, chapter_b)
    ours_deepest = best(lambda: tree.deepest_leaf(tree.roots()[0].id), 20)
    row("deepest leaf from the root", ours_deepest, None)


def bench_appends(folder: Path, count: int) -> None:
    print(f"\n{count:,} appends, one record each, in {folder} ({filesystem(folder)})")
    records = [_record(f"{i:016x}", f"{i - 1:016x}" if i else None, i % 2, i) for i in range(count)]

    def ours(how: str) -> float:
        """``each``: every append durable (fsync each); ``turn``: as a session writes a
        turn (the question durable, the answer not, then ``sync``: 2 fsyncs a turn of two
        records); ``none``: no fsync at all."""
        path = folder / f"ours-{how}.chat.jsonl"
        store = FileStore(path)
        store.load()
        start = time.perf_counter()
        for i, record in enumerate(records):
            question = i % 2 == 0
            store.append([record], durable=how == "each" or (how == "turn" and question))
            if how == "turn" and not question:
                store.sync()
        elapsed = time.perf_counter() - start
        assert len(load_file(path).tree) == count
        path.unlink()
        return elapsed

    def plain(fsync: bool) -> float:
        """The baselines doing the same writes: open the file, append the line, fsync it
        or not, close (no lock, no checks): chapter 09's ``fs.appendFileSync`` is the
        one without fsync."""
        path = folder / f"plain-{fsync}.jsonl"
        start = time.perf_counter()
        for record in records:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
                if fsync:
                    handle.flush()
                    os.fsync(handle.fileno())
        elapsed = time.perf_counter() - start
        path.unlink()
        return elapsed

    # the disk is shared and noisy: their order turning, keep the best of each
    runs = alternate(
        {
            "fsync": lambda: plain(True),
            "each": lambda: ours("each"),
            "turn": lambda: ours("turn"),
            "plain": lambda: plain(False),
            "none": lambda: ours("none"),
        },
        3,
    )
    floor_fsync, floor_plain = min(runs["fsync"]), min(runs["plain"])
    each, turn, none = min(runs["each"]), min(runs["turn"]), min(runs["none"])
    print(
        f"  best of 3, the order turning; per append   {'ours':>11}   {'baseline':>11}"
        f"  {'ours/base':>10}"
    )
    for what, mine, base, against in [
        ("locked + fsync each append", each, floor_fsync, "append + fsync each, no lock"),
        ("locked, fsync per turn (2 of 2 recs)", turn, floor_fsync, "append + fsync each"),
        ("locked, no fsync", none, floor_plain, "append, no fsync (the chapter)"),
    ]:
        print(f"  {what:<38} {fmt(mine / count)}   {fmt(base / count)}  {mine / base:9.2f}x"
              f"  baseline: {against}")  # fmt: skip


def filesystem(folder: Path) -> str:
    """The file system ``folder`` is on (from /proc/mounts), so a reader knows fsync is real."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "file system unknown"
    resolved = str(folder.resolve())
    best_match = max(
        (m for m in mounts if len(m) > 2 and resolved.startswith(m[1])), key=lambda m: len(m[1])
    )
    return f"{best_match[2]} at {best_match[1]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--appends", type=int, default=10_000)
    parser.add_argument("--dir", help="where to write the files (default: a temp folder)")
    parser.add_argument("--runs", type=int, default=5, help="runs of path --json per shape")
    parser.add_argument(
        "--path-json-only", action="store_true", help="only path --json on both shapes"
    )
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, orjson {orjson.__version__}, {os.cpu_count()} CPUs")
    print(f"load average at the start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            if not args.path_json_only:
                bench_size(folder, size)
            path_json_shapes(folder, size, args.runs)
        if not args.path_json_only:
            bench_appends(folder, args.appends)
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
