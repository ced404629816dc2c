"""Tools for the reliability and security tests: worker processes, checkers, disk faults.

Why a separate module: the crash and concurrency tests need *real* processes (a thread
cannot be SIGKILLed, and two threads share one file table and the GIL), so the code a
worker runs must be importable by a fresh interpreter. Run a worker with::

    python tests/helpers/reliability_helpers.py crash-worker PATH ACK SEED
    python tests/helpers/reliability_helpers.py append-worker \
        PATH WRITER COUNT SEED GO locked|unlocked

The disk-fault helpers (``small_tmpfs``, ``readonly_dir``) say honestly what they
simulate: a real tmpfs that fills up gives a real ENOSPC, a real read-only mount a real
EROFS. They need mount privileges (CI runs as root in a container that allows it); when
those are missing they fall back to the nearest honest substitute and report which one
was used, so a test can record it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import mmap
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve()


def python_env() -> dict[str, str]:
    """The environment for a worker: this interpreter's, with the repository importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")) if p
    )
    return env


def worker(*args: str, **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``python tests/helpers/reliability_helpers.py ARGS...`` as a new process."""
    return subprocess.Popen(
        [sys.executable, str(HERE), *args],
        env=python_env(),
        cwd=str(ROOT),
        **kwargs,
    )


# -- records with verifiable payloads ---------------------------------------------------


def payload(writer: str, index: int, size: int) -> str:
    """A deterministic ASCII payload of exactly ``size`` characters for record ``index``.

    Deterministic so the checker can recompute it: a record that loads but carries
    somebody else's bytes (an interleaving that happens to stay valid JSON) is caught.
    """
    seed = f"{writer}:{index}:".encode()
    block = hashlib.sha256(seed).hexdigest()  # 64 hex chars
    return (block * (size // 64 + 1))[:size]


def node_record(writer: str, index: int, size: int, parent: str | None) -> dict[str, Any]:
    """A message node whose id says who wrote it and in what order (roles alternate)."""
    role = "user" if index % 2 == 0 else "assistant"
    return {
        "id": f"{writer}-{index}",
        "parentId": parent,
        "message": {"role": role, "content": payload(writer, index, size)},
        "meta": {"writer": writer, "index": index, "size": size},
    }


def record_sizes(count: int, seed: int, *, big_every: int = 100) -> list[int]:
    """Mostly small records (100 B-4 KB), one in ``big_every`` large (64 KB-1 MB).

    The large ones include exactly 1 MB, so the "100 bytes to 1 MB" range is covered
    while the file stays around 100 MB per 10,000 records.
    """
    rng = random.Random(seed)
    sizes = []
    for i in range(count):
        if i % big_every == big_every // 2:
            sizes.append(1_000_000 if rng.random() < 0.25 else rng.randint(65_536, 1_000_000))
        else:
            sizes.append(rng.randint(100, 4096))
    sizes[0] = 100
    return sizes


@dataclass
class FileCheck:
    """What a checker found in a multi-writer file."""

    records: int = 0
    broken_lines: list[int] = field(default_factory=list)  # not JSON, or not a dict
    wrong_payload: list[str] = field(default_factory=list)  # JSON, but bytes not its own
    missing: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    out_of_order: list[str] = field(default_factory=list)

    @property
    def faults(self) -> int:
        return (
            len(self.broken_lines)
            + len(self.wrong_payload)
            + len(self.missing)
            + len(self.duplicated)
            + len(self.out_of_order)
        )


def check_writers_file(data: bytes, expected: dict[str, int]) -> FileCheck:
    """Check every line of a file that writers ``{name: count}`` appended to.

    Independent of the project's loader on purpose: it judges the bytes line by line,
    so a loader that quietly skipped a broken line could not hide it.
    """
    check = FileCheck()
    seen: dict[str, int] = {}
    last_index = dict.fromkeys(expected, -1)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, 1):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            check.broken_lines.append(number)
            continue
        if not isinstance(record, dict):
            check.broken_lines.append(number)
            continue
        if record.get("type") == "session":
            continue
        meta = record.get("meta") or {}
        writer, index, size = meta.get("writer"), meta.get("index"), meta.get("size")
        node_id = record.get("id")
        if writer not in expected or not isinstance(index, int) or not isinstance(size, int):
            check.wrong_payload.append(str(node_id))
            continue
        content = record.get("message", {}).get("content")
        if content != payload(writer, index, size) or node_id != f"{writer}-{index}":
            check.wrong_payload.append(str(node_id))
            continue
        if node_id in seen:
            check.duplicated.append(node_id)
            continue
        seen[node_id] = number
        if index <= last_index[writer]:
            check.out_of_order.append(node_id)
        last_index[writer] = index
        check.records += 1
    for writer, count in expected.items():
        for index in range(count):
            if f"{writer}-{index}" not in seen:
                check.missing.append(f"{writer}-{index}")
    return check


# -- worker: append until killed -------------------------------------------------------


CRASH_SIZES = (200, 2_000, 20_000, 200_000, 1_000_000)
CRASH_WEIGHTS = (40, 30, 15, 10, 5)


def crash_worker(
    path: str, ack_path: str, seed: int, pause: float = 0.002, big: int = 1_000_000
) -> None:
    """Load the session file, then append a chain of nodes forever, acknowledging each.

    After ``FileStore.append`` returns, the number of finished appends is written to a
    shared 8-byte counter (an mmap of ``ack_path``), so the parent knows, after SIGKILL,
    which records were *done* (must be on disk) and which one may have been in flight.
    The chain continues from the loaded leaf, as a restarted kernel would.
    """
    from jupyter_tree_chat.history import store as store_module

    store = store_module.FileStore(path)
    loaded = store.load()
    parent = loaded.tree.leaf
    role = loaded.tree.get(parent).message.get("role") if parent is not None else "assistant"
    writer = f"w{seed}"
    rng = random.Random(seed)
    with open(ack_path, "r+b") as ack_file:
        ack = mmap.mmap(ack_file.fileno(), 16)
        real_write_all = store_module._write_all

        def announced_write_all(fd: int, data: bytes) -> None:
            # say "a write of this many bytes starts now", so a test can aim a kill at it
            ack[8:16] = struct.pack("<q", len(data))
            real_write_all(fd, data)
            ack[8:16] = struct.pack("<q", 0)

        store_module._write_all = announced_write_all
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        index = 0
        while True:
            # mostly small, sometimes 1 MB, so some kills land inside a long write()
            size = rng.choices(CRASH_SIZES, CRASH_WEIGHTS)[0]
            size = big if size == CRASH_SIZES[-1] else size
            record = node_record(writer, index, size, parent)
            role = "assistant" if role == "user" else "user"  # alternate after the leaf
            record["message"]["role"] = role
            store.append([record], durable=False)
            ack[:8] = struct.pack("<q", index + 1)
            parent = record["id"]
            index += 1
            if pause:
                time.sleep(rng.random() * pause)  # a kernel does other work between appends


# -- worker: append N records, locked or not --------------------------------------------


def append_worker(path: str, writer: str, count: int, seed: int, go: str, mode: str) -> None:
    """Append ``count`` chained nodes to ``path``, starting when the file ``go`` appears.

    ``locked`` uses the project's ``FileStore`` (flock, one write per record).
    ``unlocked`` is the negative control: the same records, ``O_APPEND`` but no lock and
    each record written in several pieces, as a naive writer (``f.write`` of a big
    string through a buffered file, or ``print``) would. The test asserts that the
    checker *does* find damage in that mode, which proves it can.
    """
    from jupyter_tree_chat.history.store import FileStore, encode_record

    sizes = record_sizes(count, seed)
    store = FileStore(path)
    Path(f"{go}.{writer}.ready").touch()  # up and about to poll: the test may start us
    deadline = time.monotonic() + 60
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise SystemExit("the go file never appeared")
        time.sleep(0.001)
    parent: str | None = None
    for index, size in enumerate(sizes):
        record = node_record(writer, index, size, parent)
        parent = record["id"]
        if mode == "locked":
            store.append([record], durable=False)
        else:
            line = encode_record(record)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                pieces = 4
                step = max(1, len(line) // pieces)
                for start in range(0, len(line), step):
                    os.write(fd, line[start : start + step])
                    os.sched_yield()
            finally:
                os.close(fd)


# -- disk faults -------------------------------------------------------------------------


@dataclass
class FaultDir:
    """A directory with a disk fault, and an honest word on how the fault is made."""

    path: Path
    how: str


def _run(*cmd: str) -> bool:
    return subprocess.run(cmd, capture_output=True).returncode == 0


def _may_mount() -> bool:
    """Mounting is tried unless ``JTC_FAULT_NO_MOUNT=1`` (to exercise the fallbacks)."""
    return os.geteuid() == 0 and os.environ.get("JTC_FAULT_NO_MOUNT") != "1"


@contextlib.contextmanager
def small_tmpfs(size_kb: int = 256) -> Iterator[FaultDir]:
    """A real tmpfs of ``size_kb`` KB: filling it (``fill_disk``) gives the kernel's ENOSPC.

    Needs mount privileges; without them ``how`` is ``"unavailable"`` and the caller
    falls back to ``/dev/full`` (a device whose every write fails with ENOSPC).
    """
    base = Path(tempfile.mkdtemp(prefix="jtc-enospc-"))
    mounted = _may_mount() and _run(
        "mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs", str(base)
    )
    try:
        yield FaultDir(base, f"a real tmpfs of {size_kb} KB, filled" if mounted else "unavailable")
    finally:
        if mounted:
            _run("umount", "-l", str(base))
        shutil.rmtree(base, ignore_errors=True)


def fill_disk(folder: Path) -> None:
    """Write filler into ``folder`` until the file system says ENOSPC, to the last byte."""
    with open(folder / "filler", "wb", buffering=0) as f:
        for chunk in (b"\0" * 65536, b"\0" * 512, b"\0"):
            with contextlib.suppress(OSError):
                while True:
                    f.write(chunk)
    # an empty file still fits (an inode, no block): that is fine, data does not


@contextlib.contextmanager
def readonly_dir() -> Iterator[FaultDir]:
    """A directory that ``make_readonly`` turns read-only; ``how`` says which way.

    Root ignores permission bits, so for root this is a private tmpfs remounted
    read-only (the kernel's own EROFS); without mount rights, root gets ``chattr +i``
    (immutable: EPERM) and a normal user ``chmod 0500`` (EACCES).
    """
    base = Path(tempfile.mkdtemp(prefix="jtc-ro-"))
    mounted = _may_mount() and _run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(base))
    if mounted:
        how = "a real tmpfs remounted read-only (EROFS)"
    elif os.geteuid() == 0:
        how = "FALLBACK (no mount rights): chattr +i on the folder and its files (EPERM)"
    else:
        how = "FALLBACK (no mount rights): chmod 0500 on the folder, 0400 on its files (EACCES)"
    fault = FaultDir(base, how)
    try:
        yield fault
    finally:
        if mounted:
            _run("mount", "-o", "remount,rw", str(base))
            _run("umount", "-l", str(base))
        elif os.geteuid() == 0:
            _run("chattr", "-R", "-i", str(base))
        else:
            with contextlib.suppress(OSError):
                os.chmod(base, 0o700)
        shutil.rmtree(base, ignore_errors=True)


def make_readonly(fault: FaultDir) -> None:
    """Turn the fault directory read-only (after the test wrote what it wanted there)."""
    if "remounted" in fault.how:
        ok = _run("mount", "-o", "remount,ro", str(fault.path))
    elif "chattr" in fault.how:
        ok = _run("chattr", "-R", "+i", str(fault.path))
    else:
        for p in fault.path.rglob("*"):
            os.chmod(p, 0o400)
        os.chmod(fault.path, 0o500)
        ok = True
    if not ok:
        raise OSError(errno.EPERM, f"could not make it read-only ({fault.how})", str(fault.path))


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL a worker and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def read_ack(ack_path: Path) -> int:
    """The crash worker's count of finished appends."""
    with open(ack_path, "rb") as f:
        return int(struct.unpack("<q", f.read(8))[0])


def wait_for_big_write(ack_path: Path, size: int, timeout: float = 10.0) -> bool:
    """Spin until the crash worker is inside a ``write()`` of at least ``size`` bytes."""
    with open(ack_path, "rb") as f:
        view = mmap.mmap(f.fileno(), 16, access=mmap.ACCESS_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if struct.unpack("<q", view[8:16])[0] >= size:
                return True
        return False


def lock_is_free(path: Path) -> bool:
    """True if nobody holds the append lock on ``path`` (a killed writer must not keep it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "crash-worker":
        pause = float(args[3]) if len(args) > 3 else 0.002
        big = int(args[4]) if len(args) > 4 else 1_000_000
        crash_worker(args[0], args[1], int(args[2]), pause, big)
    elif command == "append-worker":
        append_worker(args[0], args[1], int(args[2]), int(args[3]), args[4], args[5])
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
