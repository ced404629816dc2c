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
import gc
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
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
    """What a session file holds: the tree (its leaf set), labels, hidden branches, the
    header, problems."""

    tree: SessionTree
    problems: list[Problem] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    #: ids whose branch is hidden (a ``hidden`` record): folded away in views, never deleted
    hidden: set[str] = field(default_factory=set)
    header: dict[str, Any] | None = None
    #: 1-based line of each node, for reports that point into the file
    lines: Mapping[str, int] = field(default_factory=dict)


class _Lines(Mapping[str, int]):
    """Node id → line, read from the nodes themselves: no second million-entry dict."""

    def __init__(self, nodes: dict[str, Node]) -> None:
        self._nodes = nodes

    def __getitem__(self, node_id: str) -> int:
        line = self._nodes[node_id].line
        if line is None:
            raise KeyError(node_id)
        return line

    def __iter__(self) -> Iterator[str]:
        return (n.id for n in self._nodes.values() if n.line is not None)

    def __len__(self) -> int:
        return sum(1 for n in self._nodes.values() if n.line is not None)


# -- reading -------------------------------------------------------------------------


def _kind(value: Any) -> str:
    kinds = {list: "an array", str: "a string", int: "a number", float: "a number"}
    kinds.update({bool: "a boolean", type(None): "null", dict: "an object"})
    return kinds.get(type(value), type(value).__name__)


def parse_session(data: bytes) -> LoadResult:
    """Rebuild the tree from a file's bytes, reporting every problem by line number.

    Lines are split on ``\n`` only (U+2028 inside a string is not a line break).
    The cyclic garbage collector is paused while a million small objects are made:
    it would otherwise rescan them over and over and triple the load time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(data)
    finally:
        if was_enabled:
            gc.enable()


def _parse(data: bytes) -> LoadResult:
    tree = SessionTree()
    result = LoadResult(tree)
    problems = result.problems
    report = problems.append
    lines_of = _Lines(tree._nodes)
    result.lines = lines_of
    nodes = tree._nodes  # the loader is the tree's bulk path; add() per node is 2x slower
    roots = tree._roots
    get_node = nodes.get
    set_node = nodes.setdefault
    loads = orjson.loads
    new_object = object.__new__
    decode_error = orjson.JSONDecodeError
    leaf: str | None = None
    orphans: list[tuple[int, str, str]] = []

    if data.startswith(b"\xef\xbb\xbf"):
        report(Problem(1, "starts with a UTF-8 byte order mark (ignored)"))
        data = data[3:]
    raw_lines = data.split(b"\n")
    last = len(raw_lines)
    if raw_lines[-1] == b"":
        raw_lines.pop()  # the file ends with a newline, as it should
        last = 0
    crlf = b"\r" in data
    if crlf:  # rare: checked once here rather than on every line
        for number, line in enumerate(raw_lines, 1):
            if line.endswith(b"\r"):
                report(Problem(number, "ends with CRLF (read as LF)"))
                raw_lines[number - 1] = line[:-1]

    for number, line in enumerate(raw_lines, 1):
        try:
            record = loads(line)
        except decode_error:
            record = _with_lone_surrogates(line)
            if record is None:
                report(Problem(number, _why_not_json(line, number == last)))
                continue
            report(Problem(number, "lone surrogate escapes (a broken emoji?) read as U+FFFD"))
        try:  # the common case, a well-formed node, costs three lookups
            node_id = record["id"]
            parent = record["parentId"]
            message = record["message"]
        except (KeyError, TypeError):
            leaf = _other_record(record, number, result, leaf)
            continue
        if len(record) == 3:  # id, parentId and message only: no type, no meta
            meta = None
        elif record.get("type") is not None:  # a typed record that also has node fields
            leaf = _other_record(record, number, result, leaf)
            continue
        else:
            meta = record.get("meta")
        if type(node_id) is not str or not node_id or type(message) is not dict:
            report(Problem(number, _why_not_a_node(record)))
            continue
        parent_node = None
        role = message.get("role")
        if parent is None:
            pass
        elif type(parent) is str and (parent_node := get_node(parent)) is not None:
            if parent_node.message.get("role") == role and node_id not in nodes:
                why = f"{_a(role)} message under {_a(role)} message (kept as written)"
                report(Problem(number, f"node {node_id!r}: {why}"))
        elif node_id not in nodes:  # a duplicate is reported as one, below
            if type(parent) is not str:
                why = "has a parentId that is not a string"
                report(Problem(number, f"node {node_id!r} {why} (ignored)"))
            else:
                orphans.append((number, node_id, parent))
            continue
        node = new_object(Node)  # Node.__init__ written out: calling it costs half again
        node.id = node_id
        node.parent_id = parent
        node.message = message
        node.meta = meta
        node.line = number
        node.kids = None
        if set_node(node_id, node) is not node:  # one lookup both checks and inserts
            first = nodes[node_id].line
            report(Problem(number, f"duplicate id {node_id!r}, first on line {first} (ignored)"))
            continue
        if parent_node is None:
            roots.append(node_id)
        elif (siblings := parent_node.kids) is None:
            parent_node.kids = [node_id]
        else:
            siblings.append(node_id)
        leaf = node_id
        if (
            (role != "user" and role != "assistant")
            or ((kind := type(message.get("content"))) is not str and kind is not list)
            or (meta is not None and type(meta) is not dict)
        ):  # rare: a kept node whose fields are not what the format says
            _odd_node(node, record, number, report)
    if orphans:
        problems.extend(_orphan_problems(orphans, lines_of))
    if orphans or crlf:
        problems.sort(key=lambda p: p.line)  # stable: a line's own problems keep their order
    tree.leaf = leaf
    return result


def _odd_node(
    node: Node, record: dict[str, Any], number: int, report: Callable[[Problem], None]
) -> None:
    """Report a kept node's role, content or meta that the format does not allow.

    The message stays as written (it is the user's data); a meta that is not an
    object is dropped from the node, as nothing reads it.
    """
    message, name = node.message, node.id
    if "role" not in message:
        report(Problem(number, f"node {name!r}: message has no role (kept as written)"))
    elif (role := message["role"]) != "user" and role != "assistant":
        why = f"role {role!r} is not 'user' or 'assistant' (kept as written)"
        report(Problem(number, f"node {name!r}: {why}"))
    if "content" not in message:
        report(Problem(number, f"node {name!r}: message has no content (kept as written)"))
    elif type(content := message["content"]) is not str and type(content) is not list:
        why = f"content is {_kind(content)}, not a string or a list (kept as written)"
        report(Problem(number, f"node {name!r}: {why}"))
    meta = record.get("meta")
    if meta is not None and type(meta) is not dict:
        report(Problem(number, f"node {name!r}: meta is {_kind(meta)}, not an object (ignored)"))
        node.meta = None


def _a(role: Any) -> str:
    return f"an {role}" if role == "assistant" else f"a {role}"


def _why_not_json(line: bytes, is_last: bool) -> str:
    if not line.strip():
        return "blank line (ignored)"
    if is_last:
        return f"torn last line: an incomplete record of {len(line)} bytes (ignored)"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8 (ignored)"
    return "not valid JSON (ignored)"


def _other_record(record: Any, number: int, result: LoadResult, leaf: str | None) -> str | None:
    """A line that is JSON but not a message node: a typed record, or not a record.

    Returns the current leaf, which a ``leaf`` record changes.
    """
    report = result.problems.append
    nodes = result.tree._nodes
    if type(record) is not dict:
        report(Problem(number, f"JSON but not a record: {_kind(record)} (ignored)"))
        return leaf
    kind = record.get("type")
    if kind is None:
        report(Problem(number, _why_not_a_node(record)))
    elif kind == "leaf":
        target = record.get("id")
        if type(target) is str and target in nodes:
            return target
        report(Problem(number, f"leaf record points at unknown node {target!r} (ignored)"))
    elif kind == "label":
        target, label = record.get("id"), record.get("label")
        if type(target) is not str or target not in nodes:
            report(Problem(number, f"label record for unknown node {target!r} (ignored)"))
        elif type(label) is not str:
            report(
                Problem(number, f"label for {target!r} is {_kind(label)}, not a string (ignored)")
            )
        elif label:
            result.labels[target] = label
        else:
            result.labels.pop(target, None)
    elif kind == "hidden":
        _hidden_record(record, number, result)
    elif kind == "session":
        if result.header is None:
            result.header = record
        else:
            report(Problem(number, "a second session header (ignored)"))
    else:
        report(Problem(number, f"unknown record type {kind!r} (skipped)"))
    return leaf


def _hidden_record(record: dict[str, Any], number: int, result: LoadResult) -> None:
    """``{"type":"hidden","id":ID}`` hides ID's branch; ``"hidden":false`` shows it again."""
    target, hidden = record.get("id"), record.get("hidden", True)
    if type(target) is not str or target not in result.tree._nodes:
        why = f"hidden record for unknown node {target!r} (ignored)"
    elif type(hidden) is not bool:
        why = f"hidden record for {target!r}: 'hidden' is {_kind(hidden)}, not a boolean (ignored)"
    elif hidden:
        result.hidden.add(target)
        return
    else:
        result.hidden.discard(target)
        return
    result.problems.append(Problem(number, why))


def _orphan_problems(
    orphans: list[tuple[int, str, str]], lines_of: Mapping[str, int]
) -> list[Problem]:
    """Say why each orphan was not attached: a missing parent, a late one, or a cycle.

    Orphans link to each other through ``parentId``; following those links (each node
    has one, so this is a walk, not a search) finds the ones that loop back.
    """
    parent_of: dict[str, str] = {}
    for _number, node_id, parent in orphans:
        parent_of.setdefault(node_id, parent)
    in_cycle: set[str] = set()
    done: set[str] = set()
    for start in parent_of:
        if start in done:
            continue
        walk: list[str] = []
        on_walk: dict[str, int] = {}
        current: str | None = start
        while current is not None and current in parent_of and current not in done:
            if current in on_walk:
                in_cycle.update(walk[on_walk[current] :])
                break
            on_walk[current] = len(walk)
            walk.append(current)
            current = parent_of[current]
        done.update(walk)
    found: list[Problem] = []
    for number, node_id, parent in orphans:
        if parent == node_id:
            found.append(
                Problem(
                    number,
                    f"node {node_id!r} is its own parent, which would form a cycle (not attached)",
                )
            )
        elif node_id in in_cycle:
            found.append(
                Problem(
                    number,
                    f"node {node_id!r}: parent {parent!r} would close a cycle (not attached)",
                )
            )
        else:
            why = f"its parent {parent!r} has not appeared earlier"
            found.append(Problem(number, f"node {node_id!r} is an orphan: {why} (not attached)"))
    return found


def _why_not_a_node(record: dict[str, Any]) -> str:
    for key in ("id", "parentId", "message"):
        if key not in record:
            return f"not a message record: no {key!r} field (ignored)"
    if not isinstance(record.get("message"), dict):
        return "not a message record: 'message' is not an object (ignored)"
    return "not a message record: 'id' is not a non-empty string (ignored)"


def read_session_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a session file; ``FileNotFoundError`` passes, the rest is one line.

    Only regular files are read: a FIFO would hang the reader, ``/dev/zero`` fill memory.
    """
    path = Path(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir():
            raise StoreError(f"{path} is a device or a pipe, not a session file")
        return path.read_bytes()
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise StoreError(f"{path} is a directory, not a session file") from None
    except OSError as exc:  # permission denied, also on a folder on the way
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None


def load_file(path: str | os.PathLike[str]) -> LoadResult:
    """Load a session file; a missing file is an empty session."""
    try:
        return parse_session(read_session_bytes(path))
    except FileNotFoundError:
        return LoadResult(SessionTree())


# -- records ---------------------------------------------------------------------------


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as one line: compact UTF-8 JSON and a newline.

    A lone surrogate in a string (half an emoji pasted from a browser) cannot be UTF-8;
    it is written as U+FFFD rather than making the append raise.
    """
    try:
        return orjson.dumps(record) + b"\n"
    except orjson.JSONEncodeError:
        return orjson.dumps(_scrub_surrogates(record)) + b"\n"


def _scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_scrub_surrogates(k): _scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub_surrogates(v) for v in value]
    return value


def _with_lone_surrogates(line: bytes) -> Any:
    """A line orjson refused only for lone ``\\udXXX`` escapes (valid JSON, as written by
    JavaScript's ``JSON.stringify``), parsed with U+FFFD for them; else ``None``."""
    if b"\\u" not in line:
        return None
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    scrubbed = _scrub_surrogates(value)
    return scrubbed if scrubbed != value else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


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
                if st.st_size == 0:
                    _fsync_folder(self.path)  # a new file's name must survive a crash too
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
