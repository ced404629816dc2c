"""The only code that touches session files (``*.chat.jsonl``, see docs/format.md).

Loading is tolerant: damage (a torn tail, garbage, orphans, duplicates, unknown record
types) becomes a ``Problem`` with its line number and never stops the load. Writing only
ever appends: one ``write`` per whole record, under an advisory lock, so two kernels
sharing a file never interleave. The file is never rewritten, truncated or replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from ..errors import SessionNameError, SessionNotSaved, StoreError
from ..i18n import _
from .loader import LoadResult, Reader
from .loader import parse_session as parse_session  # the store's name before loader.py
from .problems import Problem, scrub_surrogates
from .tree import Node
from .uninterrupted import interrupts_held

FORMAT_VERSION = 1
SESSION_SUFFIX = ".chat.jsonl"
_NAME_RE = re.compile(r"[\w][\w.-]*")  # always used with fullmatch: `$` would accept "x\n"
_MAX_NAME = 100


# -- reading -------------------------------------------------------------------------


CHUNK = 1 << 20  # a file is read 1 MiB at a time, so its bytes are never held twice


def open_session_file(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of a session file; ``FileNotFoundError`` passes, the rest
    is one line. Only regular files: a FIFO would hang the reader, ``/dev/zero`` fill
    memory."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise StoreError(_("{path} is a directory, not a session file").format(path=path)) from None
    except OSError as exc:  # permission denied, also on a folder on the way
        why = _("cannot read {path}: {error}").format(path=path, error=exc.strerror or exc)
        raise StoreError(why) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise StoreError(_("{path} is a directory, not a session file").format(path=path))
        raise StoreError(_("{path} is a device or a pipe, not a session file").format(path=path))
    return fd


def refuse_session_target(
    target: str | os.PathLike[str], source: str | os.PathLike[str] | None = None
) -> None:
    """Refuse to write an export over a session file (``*.chat.jsonl``, or the file the
    export was read from): the session file is the user's data, never rewritten."""
    target = Path(target)
    if target.name.endswith(SESSION_SUFFIX) or (source is not None and _same_file(target, source)):
        why = _("{path} is a session file, which is never overwritten").format(path=target)
        raise StoreError(why)


def _same_file(one: str | os.PathLike[str], other: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:  # the target does not exist yet
        return False


def read_session_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a session file (errors as ``open_session_file``)."""
    fd = open_session_file(path)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _read_into(reader: Reader, fd: int, start: int, end: int) -> list[Node]:
    """Feed the file's bytes from ``start`` to ``end`` to ``reader``, a chunk at a time;
    returns the nodes added."""
    added: list[Node] = []
    while start < end:
        chunk = os.pread(fd, min(CHUNK, end - start), start)
        if not chunk:
            break
        added += reader.feed(chunk)
        start += len(chunk)
    return added


def load_file(path: str | os.PathLike[str], *, missing_ok: bool = True) -> LoadResult:
    """Load a session file; a missing file is an empty session (``missing_ok``)."""
    reader = Reader()
    try:
        fd = open_session_file(path)
    except FileNotFoundError:
        if not missing_ok:
            raise
        return reader.result
    try:
        _read_into(reader, fd, 0, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    reader.close()
    return reader.result


# -- records ---------------------------------------------------------------------------


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as one line: compact UTF-8 JSON and a newline.

    A lone surrogate in a string (half an emoji pasted from a browser) cannot be UTF-8;
    it is written as U+FFFD rather than making the append raise.
    """
    try:
        return orjson.dumps(record) + b"\n"
    except orjson.JSONEncodeError:
        return orjson.dumps(scrub_surrogates(record)) + b"\n"


def header_record(**extra: Any) -> dict[str, Any]:
    return {"type": "session", "version": FORMAT_VERSION, "created": int(time.time()), **extra}


def leaf_record(node_id: str) -> dict[str, Any]:
    return {"type": "leaf", "id": node_id}


def label_record(node_id: str, label: str) -> dict[str, Any]:
    return {"type": "label", "id": node_id, "label": label}


def hidden_record(node_id: str, hidden: bool = True) -> dict[str, Any]:
    return {"type": "hidden", "id": node_id, "hidden": hidden}


# -- stores ----------------------------------------------------------------------------


class Store(Protocol):
    """Where a session's records go. ``FileStore`` for real, ``MemoryStore`` for tests."""

    def load(self) -> LoadResult: ...

    def append(self, records: Iterable[dict[str, Any]], *, durable: bool = False) -> None: ...

    def append_checked(self, decide: Decide, *, durable: bool = True) -> NewRecords: ...

    def read_new(self) -> NewRecords: ...

    def sync(self, *, wait: bool = True) -> None: ...

    @property
    def location(self) -> str: ...


class MemoryStore:
    """Keeps the lines it would have written, so tests can parse them back."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = bytearray(data)

    @property
    def location(self) -> str:
        return "memory"

    def load(self) -> LoadResult:
        return parse_session(bytes(self.data))

    def append(self, records: Iterable[dict[str, Any]], *, durable: bool = False) -> None:
        if not self.data:
            self.data += encode_record(header_record())
        elif not self.data.endswith(b"\n"):
            self.data += b"\n"
        for record in records:
            self.data += encode_record(record)

    def append_checked(self, decide: Decide, *, durable: bool = True) -> NewRecords:
        found = NewRecords()  # no other process writes here
        self.append(decide(found), durable=durable)
        return found

    def read_new(self) -> NewRecords:
        return NewRecords()  # no other process writes here

    def sync(self, *, wait: bool = True) -> None:
        pass


@dataclass
class NewRecords:
    """What ``read_new`` found: nodes other processes appended, their problems, and a
    one-line note when the file itself changed under us (then nothing more is read)."""

    nodes: list[Node] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    note: str | None = None


Decide = Callable[["NewRecords"], list[dict[str, Any]]]  # what others appended → records


class FileStore:
    """Appends records to a ``*.chat.jsonl`` file, never anything else; reads what
    other processes append to it.

    Each append opens the file with ``O_APPEND``, takes ``flock``, writes a newline
    first if the last writer was cut off mid-line, writes each record in one
    ``write`` and optionally fsyncs. If the file is deleted, replaced or truncated
    under us the append refuses (``SessionNotSaved``) rather than start a headless
    new file or write after a hole.

    ``read_new`` continues from where the last read stopped, under a shared lock (so
    no append is half-visible), skipping the bytes this store wrote itself; a last
    line still without its newline is left for the next read.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._identity: tuple[int, int] | None = None
        self._dirty = False
        self._reader: Reader | None = None
        self._own: list[tuple[int, int, int]] = []  # (start, end, lines) of our appends
        self._broken: str | None = None  # why appends refuse: the file changed under us
        self._syncing: threading.Thread | None = None  # a sync(wait=False) still running
        self._late_error: SessionNotSaved | None = None  # what that one met

    @property
    def location(self) -> str:
        return str(self.path)

    def load(self) -> LoadResult:
        reader = Reader()
        self._identity, self._own, self._broken = None, [], None
        try:
            fd = open_session_file(self.path)
        except FileNotFoundError:
            pass
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
                st = os.fstat(fd)
                self._identity = (st.st_dev, st.st_ino)
                _read_into(reader, fd, 0, st.st_size)
            finally:
                os.close(fd)
        reader.close(growing=True)  # a last line being written is read again later
        reader.follow_leaf = False  # from now on the leaf is this process's own
        self._reader = reader
        return reader.result

    def read_new(self) -> NewRecords:
        """The records other processes appended since the last read (see the class)."""
        reader = self._reader
        if reader is None or self._broken is not None:
            return NewRecords()
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            if self._identity is None:
                return NewRecords()  # not created yet
            return self._changed(
                _(
                    "{path} was deleted or moved; this session goes on from what was read, "
                    "in memory only (nothing more is written there)"
                ).format(path=self.path)
            )
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            st = os.fstat(fd)
            if self._identity is None:
                self._identity = (st.st_dev, st.st_ino)  # created by another process
            elif (st.st_dev, st.st_ino) != self._identity:
                return self._changed(
                    _(
                        "{path} was replaced by another file; this session goes on from what "
                        "was read, in memory only (nothing more is written there)"
                    ).format(path=self.path)
                )
            if st.st_size < reader.offset:
                return self._changed(
                    _(
                        "{path} was truncated by another program ({size} bytes, {read} were "
                        "read); this session goes on from what was read, in memory only "
                        "(nothing more is written there)"
                    ).format(path=self.path, size=st.st_size, read=reader.offset),
                    truncated=True,
                )
            return self._read_locked(fd, st.st_size, NewRecords())
        finally:
            os.close(fd)

    def _read_foreign(self, reader: Reader, fd: int, end: int) -> list[Node]:
        """Feed what lies between ``reader.offset`` and ``end``, our own appends cut out."""
        nodes: list[Node] = []
        for start, stop, lines in [*self._own, (end, end, 0)]:
            if stop <= reader.offset:
                continue
            if start > reader.offset:
                nodes += _read_into(reader, fd, reader.offset, start)
            reader.skip(stop - reader.offset, lines)
        self._own = []
        return nodes

    def _read_locked(self, fd: int, size: int, found: NewRecords) -> NewRecords:
        """What others appended up to ``size``, read through the locked ``fd``."""
        if (reader := self._reader) is None:
            return found
        before = len(reader.result.problems)
        found.nodes += self._read_foreign(reader, fd, size)
        reader.settle()
        found.problems += reader.result.problems[before:]
        return found

    def _changed(self, note: str, truncated: bool = False) -> NewRecords:
        # what an append says from now on, as when it finds it itself
        self._broken = "truncated" if truncated else "replaced"
        return NewRecords(note=note)

    def append(self, records: Iterable[dict[str, Any]], *, durable: bool = False) -> None:
        with interrupts_held():  # a Ctrl-C waits for the records to be whole on disk
            self._append([encode_record(r) for r in records], durable)

    def append_checked(self, decide: Decide, *, durable: bool = True) -> NewRecords:
        """Under one lock, read what others appended, then append what ``decide`` makes of it."""
        with interrupts_held():
            return self._append([], durable, decide)

    def _append(
        self, lines: list[bytes], durable: bool, decide: Decide | None = None
    ) -> NewRecords:
        self._raise_late_error()
        if self._broken is not None:
            raise self._not_saved(OSError(errno.ESTALE, self._broken))
        try:
            fd = self._open()
        except OSError as exc:
            raise self._not_saved(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            reader = self._reader
            if reader is not None and st.st_size < max(
                [reader.offset, *(end for _start, end, _lines in self._own)]
            ):
                self._broken = "truncated"
                raise OSError(errno.ESTALE, self._broken)
            found = self._read_locked(fd, st.st_size, NewRecords()) if decide else NewRecords()
            if decide is not None and not (lines := [encode_record(r) for r in decide(found)]):
                return found
            if st.st_size == 0:
                lines.insert(0, encode_record(header_record()))
            start = st.st_size
            if st.st_size and os.pread(fd, 1, st.st_size - 1) != b"\n":
                _write_all(fd, b"\n")  # a torn tail: keep the next record on its own line
                start += 1  # that newline ends the other writer's line: it is theirs
            for line in lines:
                _write_all(fd, line)
            self._own.append((start, start + sum(map(len, lines)), len(lines)))
            if durable:
                os.fsync(fd)
                if st.st_size == 0:
                    _fsync_folder(self.path)  # a new file's name must survive a crash too
                self._dirty = False
            else:
                self._dirty = True
            self._identity = (st.st_dev, st.st_ino)
            return found
        except OSError as exc:
            raise self._not_saved(exc) from None
        finally:
            os.close(fd)  # closing releases the lock

    def sync(self, *, wait: bool = True) -> None:
        """Make every append so far durable (called at the end of each turn).

        With ``wait=False`` the fsync runs on a thread of its own, so the cell does not
        wait for the disk: what was appended is already written (a killed process loses
        none of it), and the next durable append's fsync covers it anyway. What that
        thread meets is raised by the next ``append`` or ``sync``."""
        self._raise_late_error()
        if not self._dirty:
            return
        if wait:
            self._fsync()
            return
        self._dirty = False
        self._syncing = threading.Thread(
            target=self._fsync_later, name="session fsync", daemon=True
        )
        self._syncing.start()

    def wait_for_sync(self) -> None:
        """Wait for a ``sync(wait=False)`` still running (what it met waits for the next
        ``append`` or ``sync``)."""
        syncing = self._syncing
        if syncing is not None:
            syncing.join()

    def _fsync(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise self._not_saved(exc) from None
        try:
            os.fsync(fd)
            self._dirty = False
        except OSError as exc:
            raise self._not_saved(exc) from None
        finally:
            os.close(fd)

    def _fsync_later(self) -> None:
        try:
            self._fsync()
        except SessionNotSaved as error:
            self._late_error = error

    def _raise_late_error(self) -> None:
        error, self._late_error = self._late_error, None
        if error is not None:
            self._dirty = True  # not known to be on disk
            raise error

    def _open(self) -> int:
        if self._identity is None:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            return fd
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._identity:
            os.close(fd)
            raise FileNotFoundError(errno.ENOENT, "replaced by another file", str(self.path))
        return fd

    def _not_saved(self, exc: OSError) -> SessionNotSaved:
        replaced = _("the file was deleted, moved or replaced")
        reason = {
            errno.ENOSPC: _("the disk is full"),
            errno.EDQUOT: _("the disk quota is exceeded"),
            errno.EROFS: _("the file system is read-only"),
            errno.EACCES: _("permission denied"),
            errno.EPERM: _("permission denied"),
            errno.ENOENT: replaced,
            errno.ESTALE: (
                _("the file was truncated by another program")
                if self._broken == "truncated"
                else replaced
            ),
        }.get(exc.errno or 0, exc.strerror or str(exc))
        return SessionNotSaved(
            _(
                "the session is NOT being saved to {path}: {reason}; "
                "the conversation goes on in memory only"
            ).format(path=self.path, reason=reason)
        )


def _fsync_folder(path: Path) -> None:
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def create_session_file(
    path: str | os.PathLike[str], data: bytes, *, replace: bool = False
) -> None:
    """Write a new session file (an import) in one go; an existing file is left alone.

    Without ``replace`` the file is created exclusively, so an existing one is never
    touched (``FileExistsError``). With it, the data goes to a temporary file beside the
    target, fsynced, then renamed over it: a reader sees the old file or the new one.
    """
    path = Path(path)
    target = path.with_name(f".{path.name}.{os.getpid()}.tmp") if replace else path
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:  # the file at ``target`` is ours (created exclusively): remove it if cut short
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(target, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(target)
        raise
    _fsync_folder(path)


# -- where sessions live ---------------------------------------------------------------


def validate_session_name(name: str) -> str:
    """Return ``name`` if it is a plain session name, else raise ``SessionNameError``."""
    if not isinstance(name, str) or not name:
        why = _("a session name cannot be empty; {hint}")
    elif "\0" in name:
        why = _("session name {name} contains a NUL character; {hint}")
    elif "/" in name or "\\" in name or os.sep in name:
        why = _("session name {name} contains a path separator; {hint}")
    elif ".." in name:
        why = _("session name {name} contains '..'; {hint}")
    elif len(name) > _MAX_NAME:
        why = _("session name is {length} characters long; {hint}")
    elif not _NAME_RE.fullmatch(name):
        why = _("session name {name} is not allowed; {hint}")
    else:
        return name
    hint = _("use letters, digits, '-', '_' or '.', at most {most} characters")
    raise SessionNameError(
        why.format(
            name=repr(name),
            length=len(name) if isinstance(name, str) else 0,
            hint=hint.format(most=_MAX_NAME),
        )
    )


def session_path(notebook: str | os.PathLike[str], name: str | None = None) -> Path:
    """``analysis.ipynb`` → ``analysis.chat.jsonl``, or ``analysis.NAME.chat.jsonl``."""
    notebook = Path(notebook)
    stem = notebook.name[: -len(notebook.suffix)] if notebook.suffix else notebook.name
    if name is None:
        return notebook.with_name(stem + SESSION_SUFFIX)
    return notebook.with_name(f"{stem}.{validate_session_name(name)}{SESSION_SUFFIX}")


def list_sessions(notebook: str | os.PathLike[str]) -> dict[str | None, Path]:
    """The sessions beside a notebook: ``None`` for the default one, else by name."""
    notebook = Path(notebook)
    stem = notebook.name[: -len(notebook.suffix)] if notebook.suffix else notebook.name
    found: dict[str | None, Path] = {}
    folder = notebook.parent
    if not folder.is_dir():
        return found
    for candidate in sorted(folder.glob(f"{glob_escape(stem)}*{SESSION_SUFFIX}")):
        middle = candidate.name[len(stem) : -len(SESSION_SUFFIX)]
        if middle == "":
            found[None] = candidate
        elif middle.startswith(".") and _NAME_RE.fullmatch(middle[1:]) and ".." not in middle:
            found[middle[1:]] = candidate
    return found


def glob_escape(text: str) -> str:
    return re.sub(r"([\[\]*?])", r"[\1]", text)


#: folders a walk for session files does not go into (caches, environments, checkouts)
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages", ".ipynb_checkpoints"})


def session_files(folder: str | os.PathLike[str], *, recursive: bool = True) -> list[Path]:
    """Every ``*.chat.jsonl`` in ``folder`` (and, ``recursive``, below it, but not in
    hidden folders or ``SKIPPED_FOLDERS``), sorted by path; a walk without recursion."""
    found: list[Path] = []
    pending = [Path(folder)]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue  # unreadable: nothing of it can be searched
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if recursive and not name.startswith(".") and name not in SKIPPED_FOLDERS:
                    pending.append(Path(entry.path))
            elif name.endswith(SESSION_SUFFIX) and entry.is_file():
                found.append(Path(entry.path))
    return sorted(found)
