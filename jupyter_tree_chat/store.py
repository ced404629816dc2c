"""The only code that touches session files (``*.chat.jsonl``, see docs/format.md).

Loading is tolerant: damage (a torn tail, garbage, orphans, duplicates, unknown record
types) becomes a ``Problem`` with its line number and never stops the load. Writing only
ever appends: one ``write`` per whole record, under an advisory lock, so two kernels
sharing a file never interleave. The file is never rewritten, truncated or replaced.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from .errors import SessionNameError, SessionNotSaved, StoreError
from .tree import Node, SessionTree

FORMAT_VERSION = 1
SESSION_SUFFIX = ".chat.jsonl"
_NAME_RE = re.compile(r"[\w][\w.-]*")  # always used with fullmatch: `$` would accept "x\n"
_MAX_NAME = 100


@dataclass(frozen=True)
class Problem:
    """Something wrong in a session file, at a 1-based line number."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class LoadResult:
    """What a session file holds: the tree (its leaf set), labels, the header, problems."""

    tree: SessionTree
    problems: list[Problem] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    header: dict[str, Any] | None = None
    #: 1-based line of each node, for reports that point into the file
    lines: dict[str, int] = field(default_factory=dict)


# -- reading -------------------------------------------------------------------------


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def parse_session(data: bytes) -> LoadResult:
    """Rebuild the tree from a file's bytes, reporting every problem by line number.

    Lines are split on ``\\n`` only (U+2028 inside a string is not a line break).
    """
    tree = SessionTree()
    result = LoadResult(tree)
    problems = result.problems
    report = problems.append
    lines_of = result.lines
    nodes = tree._nodes  # the loader is the tree's bulk path; add() per node is 2x slower
    children = tree._children
    loads = orjson.loads
    leaf: str | None = None

    if data.startswith(b"\xef\xbb\xbf"):
        report(Problem(1, "starts with a UTF-8 byte order mark (ignored)"))
        data = data[3:]
    raw_lines = data.split(b"\n")
    last = len(raw_lines)
    if raw_lines[-1] == b"":
        raw_lines.pop()  # the file ends with a newline, as it should
        last = 0

    for number, line in enumerate(raw_lines, 1):
        if line.endswith(b"\r"):
            report(Problem(number, "ends with CRLF (read as LF)"))
            line = line[:-1]
        try:
            record = loads(line)
        except orjson.JSONDecodeError:
            if not line.strip():
                report(Problem(number, "blank line (ignored)"))
            elif number == last:
                report(Problem(number, f"torn last line: an incomplete record of {len(line)} bytes (ignored)"))
            else:
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    report(Problem(number, "not valid UTF-8 (ignored)"))
                else:
                    report(Problem(number, "not valid JSON (ignored)"))
            continue
        if type(record) is not dict:
            report(Problem(number, f"JSON but not a record: {_kind(record)} (ignored)"))
            continue
        kind = record.get("type")
        if kind is None:
            node_id = record.get("id")
            parent = record.get("parentId", ...)
            message = record.get("message")
            if type(node_id) is not str or not node_id or parent is ... or type(message) is not dict:
                report(Problem(number, _why_not_a_node(record)))
                continue
            if node_id in nodes:
                report(Problem(number, f"duplicate id {node_id!r}, first on line {lines_of[node_id]} (ignored)"))
                continue
            if parent is not None:
                if type(parent) is not str:
                    report(Problem(number, f"node {node_id!r} has a parentId that is not a string (ignored)"))
                    continue
                parent_node = nodes.get(parent)
                if parent_node is None:
                    why = ("is its own parent, which would form a cycle" if parent == node_id
                           else f"is an orphan: its parent {parent!r} has not appeared earlier")
                    report(Problem(number, f"node {node_id!r} {why} (not attached)"))
                    continue
                if parent_node.message.get("role") == message.get("role"):
                    role = message.get("role")
                    report(Problem(number, f"node {node_id!r}: a {role} message under a {role} message (kept as written)"))
            meta = record.get("meta")
            nodes[node_id] = Node(node_id, parent, message, meta if type(meta) is dict else None)
            siblings = children.get(parent)
            if siblings is None:
                children[parent] = [node_id]
            else:
                siblings.append(node_id)
            lines_of[node_id] = number
            leaf = node_id
        elif kind == "leaf":
            target = record.get("id")
            if type(target) is str and target in nodes:
                leaf = target
            else:
                report(Problem(number, f"leaf record points at unknown node {target!r} (ignored)"))
        elif kind == "label":
            target, label = record.get("id"), record.get("label")
            if type(target) is str and target in nodes and type(label) is str:
                if label:
                    result.labels[target] = label
                else:
                    result.labels.pop(target, None)
            else:
                report(Problem(number, f"label record for unknown node {target!r} (ignored)"))
        elif kind == "session":
            if result.header is None:
                result.header = record
            else:
                report(Problem(number, "a second session header (ignored)"))
        else:
            report(Problem(number, f"unknown record type {kind!r} (skipped)"))
    tree.leaf = leaf
    return result


def _why_not_a_node(record: dict[str, Any]) -> str:
    for key in ("id", "parentId", "message"):
        if key not in record:
            return f"not a message record: no {key!r} field (ignored)"
    if not isinstance(record.get("message"), dict):
        return "not a message record: 'message' is not an object (ignored)"
    return "not a message record: 'id' is not a non-empty string (ignored)"


def load_file(path: str | os.PathLike[str]) -> LoadResult:
    """Load a session file; a missing file is an empty session."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LoadResult(SessionTree())
    except IsADirectoryError:
        raise StoreError(f"{path} is a directory, not a session file") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_session(data)


# -- records ---------------------------------------------------------------------------


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as one line: compact UTF-8 JSON and a newline."""
    return orjson.dumps(record) + b"\n"


def header_record(**extra: Any) -> dict[str, Any]:
    return {"type": "session", "version": FORMAT_VERSION, "created": int(time.time()), **extra}


def leaf_record(node_id: str) -> dict[str, Any]:
    return {"type": "leaf", "id": node_id}


def label_record(node_id: str, label: str) -> dict[str, Any]:
    return {"type": "label", "id": node_id, "label": label}


# -- stores ----------------------------------------------------------------------------


class Store(Protocol):
    """Where a session's records go. ``FileStore`` for real, ``MemoryStore`` for tests."""

    def load(self) -> LoadResult: ...

    def append(self, records: Iterable[dict[str, Any]], *, durable: bool = False) -> None: ...

    def sync(self) -> None: ...

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

    def sync(self) -> None:
        pass


class FileStore:
    """Appends records to a ``*.chat.jsonl`` file, never anything else.

    Each append opens the file with ``O_APPEND``, takes ``flock``, writes a newline
    first if the last writer was cut off mid-line, writes each record in one
    ``write`` and optionally fsyncs. If the file is deleted or replaced under us the
    append refuses (``SessionNotSaved``) rather than start a headless new file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._identity: tuple[int, int] | None = None
        self._dirty = False

    @property
    def location(self) -> str:
        return str(self.path)

    def load(self) -> LoadResult:
        result = load_file(self.path)
        try:
            st = os.stat(self.path)
        except OSError:
            self._identity = None
        else:
            self._identity = (st.st_dev, st.st_ino)
        return result

    def append(self, records: Iterable[dict[str, Any]], *, durable: bool = False) -> None:
        lines = [encode_record(r) for r in records]
        try:
            fd = self._open()
        except OSError as exc:
            raise self._not_saved(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            if st.st_size == 0:
                lines.insert(0, encode_record(header_record()))
            elif os.pread(fd, 1, st.st_size - 1) != b"\n":
                lines.insert(0, b"\n")  # a torn tail: keep the next record on its own line
            for line in lines:
                _write_all(fd, line)
            if durable:
                os.fsync(fd)
                self._dirty = False
            else:
                self._dirty = True
            self._identity = (st.st_dev, st.st_ino)
        except OSError as exc:
            raise self._not_saved(exc) from None
        finally:
            os.close(fd)  # closing releases the lock

    def sync(self) -> None:
        """Make every append so far durable (called at the end of each turn)."""
        if not self._dirty:
            return
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise self._not_saved(exc) from None
        try:
            os.fsync(fd)
            self._dirty = False
        finally:
            os.close(fd)

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
        reason = {
            errno.ENOSPC: "the disk is full",
            errno.EDQUOT: "the disk quota is exceeded",
            errno.EROFS: "the file system is read-only",
            errno.EACCES: "permission denied",
            errno.EPERM: "permission denied",
            errno.ENOENT: "the file was deleted, moved or replaced",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        return SessionNotSaved(
            f"the session is NOT being saved to {self.path}: {reason}; "
            "the conversation goes on in memory only"
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# -- where sessions live ---------------------------------------------------------------


def validate_session_name(name: str) -> str:
    """Return ``name`` if it is a plain session name, else raise ``SessionNameError``."""
    hint = "use letters, digits, '-', '_' or '.', at most 100 characters"
    if not isinstance(name, str) or not name:
        raise SessionNameError(f"a session name cannot be empty; {hint}")
    if "\0" in name:
        raise SessionNameError(f"session name {name!r} contains a NUL character; {hint}")
    if "/" in name or "\\" in name or os.sep in name:
        raise SessionNameError(f"session name {name!r} contains a path separator; {hint}")
    if ".." in name:
        raise SessionNameError(f"session name {name!r} contains '..'; {hint}")
    if len(name) > _MAX_NAME:
        raise SessionNameError(f"session name is {len(name)} characters long; {hint}")
    if not _NAME_RE.fullmatch(name):
        raise SessionNameError(f"session name {name!r} is not allowed; {hint}")
    return name


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
