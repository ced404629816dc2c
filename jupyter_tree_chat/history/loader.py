"""Reading session files: the lazy index, and every problem with its line number.

Loading is tolerant: damage (a torn tail, garbage, orphans, duplicates, unknown record
types) becomes a ``Problem`` (worded in problems.py) and never stops the load. See
docs/format.md.

Speed: a file is split into lines and each line is decoded by msgspec straight into a
``Node`` (its message body left raw, see node.py) in one C-level pass; the Python loop
that follows only links ids to parents and checks what the index needs. A line that
does not decode that way (a typed record such as the header or a leaf pointer, a torn
or garbage line, a node of an odd shape) is read whole with orjson, one line at a time,
by the same code that reports its problem, so a damaged file is slower, never read
differently. Each line is decided on its own, so its fate never depends on the others.

``Reader`` keeps its place, so a session shared with other processes can read what
they appended since (``Reader.feed`` with ``final=False``: a last line still being
written is left for the next read).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress, count, islice, repeat
from operator import attrgetter, eq, ge, is_
from typing import Any, cast

import msgspec
import orjson

from ..i18n import _
from .batch_record import RECORD_TYPES as BATCH_RECORDS
from .batch_record import Batches
from .grade_record import GRADE, PREFERENCE, Grades
from .node import Node, RawBody
from .problems import (
    Problem,
    bom_problem,
    duplicate,
    is_odd,
    kind_of,
    lone_surrogates_problem,
    odd_node,
    orphan_problems,
    same_role_twice,
    why_not_a_node,
    why_not_json,
    with_lone_surrogates,
)
from .tree import SessionTree

_decode_node = msgspec.json.Decoder(Node).decode
_SHORT_RUN = 64  # fewer plain nodes in a row than this are linked one by one
# lines are linked a few thousand at a time: a run's nodes, its window of recent ids and
# its lists then stay in the CPU's cache (measured: 256 KiB loads ~10% faster than 1 MiB)
_PIECE = 1 << 18
_ID = attrgetter("id")
_PARENT = attrgetter("parent_id")
_LINE = attrgetter("line")
_ROLE = attrgetter("_message.role")
_META = attrgetter("_meta")
_MISS: Any = object()

_NOWHERE: Any = Node("", None, cast(Any, RawBody(cast(Any, object()), "")), None, 0)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off meanwhile (and back as it was): reading a session makes
    millions of small objects, none in a cycle, which it would otherwise rescan again
    and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _MetaProbe(msgspec.Struct, gc=False):
    """An object, its contents skipped: what a node's raw ``meta`` must be."""


_check_metas = msgspec.json.Decoder(list[_MetaProbe | None]).decode
_check_meta = msgspec.json.Decoder(_MetaProbe | None).decode
_BOM = b"\xef\xbb\xbf"


@dataclass
class LoadResult:
    """What a session file holds: the tree (its leaf set), labels, hidden branches, the
    header, problems."""

    tree: SessionTree
    problems: list[Problem] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    #: ids whose branch is hidden (a ``hidden`` record): folded away in views, never deleted
    hidden: set[str] = field(default_factory=set)
    #: grades and preferences (grade_record.py): the latest word of each
    grades: Grades = field(default_factory=Grades)
    #: vendor batches: their plans, ids and what of them is applied (batch_record.py)
    batches: Batches = field(default_factory=Batches)
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
        return (n.id for n in list(self._nodes.values()) if n.line is not None)

    def __len__(self) -> int:
        return sum(1 for n in list(self._nodes.values()) if n.line is not None)


def parse_session(data: bytes) -> LoadResult:
    """Rebuild the tree from a file's bytes, reporting every problem by line number."""
    reader = Reader()
    reader.feed(data)
    reader.close()
    return reader.result


class Reader:
    """Reads a session file's lines into one ``LoadResult``, in one go or piece by piece.

    ``feed`` takes the next bytes of the file (any cut: a line split between two feeds
    is joined), ``close`` reads a last line that has no newline and reports what only
    the end can tell (orphans and cycles). ``offset`` is how many bytes of the file it
    was given, so a later read of the file continues there; ``settle`` reports the
    orphans of what was fed since, leaving a line still being written for later.

    The tree's current leaf follows the file (its last node or leaf record) while
    ``follow_leaf`` is on; a kernel that keeps a leaf of its own turns it off after the
    first load, and ``leaf`` still tells what the file says.
    """

    def __init__(self, result: LoadResult | None = None) -> None:
        self.result = result if result is not None else LoadResult(SessionTree())
        self.result.lines = _Lines(self.result.tree._nodes)
        self.follow_leaf = True
        self.leaf: str | None = self.result.tree.leaf
        self.lines_read = 0
        self.offset = 0
        self._pending = b""  # the start of a line whose newline has not come yet
        self._newline_owed = False
        self._orphans: list[tuple[int, str, str]] = []
        self._unsorted = False
        self._problems_from = 0  # where the problems of this load (or tail read) begin
        self._window: dict[str, Node] = {}  # the nodes of the last run linked at once

    def feed(self, data: bytes) -> list[Node]:
        """Read the complete lines in ``data``; returns the nodes that were added.

        The cyclic garbage collector is paused meanwhile: it would rescan the new
        objects over and over as they are made (nodes themselves are not tracked).
        """
        self.offset += len(data)
        if self._newline_owed and data:
            self._newline_owed = False
            if data.startswith(b"\n"):  # the end of the last line read by close(growing=True)
                data = data[1:]
        if self._pending:
            data = self._pending + data
        cut = data.rfind(b"\n") + 1
        self._pending = data[cut:]
        added: list[Node] = []
        with gc_paused():
            for piece in _pieces(data[:cut] if cut < len(data) else data):
                added += self._feed(piece, 0)
        return added

    def close(self, *, growing: bool = False) -> list[Node]:
        """The end of the file: a last line without newline counts (torn, if it is not a
        record); orphans and the order of problems are settled.

        ``growing`` says another process may still be writing that line: it is read and
        reported as today, and if it was not yet a record it is read again by the next
        ``feed``, joined with what comes after it.
        """
        pending, self._pending = self._pending, b""
        added: list[Node] = []
        if pending:
            lines_before = self.lines_read
            with gc_paused():
                added = self._feed(pending + b"\n", lines_before + 1)
            if growing and not added:
                self._pending, self.lines_read = pending, lines_before
            self._newline_owed = growing and bool(added)
        self.settle()
        return added

    def skip(self, size: int, lines: int) -> None:
        """Pass over ``size`` bytes holding ``lines`` whole lines already known (a
        process's own appends); nothing is pending then."""
        self.offset += size
        self.lines_read += lines

    def settle(self) -> None:
        """Report the orphans fed so far and put the new problems in line order."""
        problems = self.result.problems
        if self._orphans:
            problems.extend(orphan_problems(self._orphans, self.result.lines))
            self._orphans = []
            self._unsorted = True
        if self._unsorted:  # stable: a line's own problems keep their order
            problems[self._problems_from :] = sorted(
                problems[self._problems_from :], key=lambda p: p.line
            )
            self._unsorted = False
        self._problems_from = len(problems)

    def _feed(self, data: bytes, torn_line: int) -> list[Node]:
        """Read ``data``, whole lines each ending with a newline."""
        if not data:
            return []
        problems = self.result.problems
        if self.lines_read == 0 and data.startswith(_BOM):
            problems.append(Problem(1, bom_problem()))
            data = data[3:]
        lines = data.split(b"\n")
        lines.pop()  # what follows the last newline: nothing
        first = self.lines_read + 1
        self.lines_read += len(lines)
        if b"\r" in data:  # rare: checked once here rather than on every line
            for number, line in enumerate(lines, first):
                if line.endswith(b"\r"):
                    problems.append(Problem(number, _("ends with CRLF (read as LF)")))
                    lines[number - first] = line[:-1]
                    self._unsorted = True
        decoded, unread = _decode_lines(lines, data.isascii())
        del data  # the lines hold the bytes now: do not keep the file twice
        return self._index(lines, decoded, unread, first, torn_line)

    def _index(
        self,
        lines: list[bytes],
        decoded: list[Any],
        unread: list[int],
        first: int,
        torn_line: int,
    ) -> list[Node]:
        """Link the decoded nodes into the tree, in file order.

        Runs of plain nodes are linked by ``_link_run`` in C-level passes; a run it
        finds anything unusual in (an orphan, a duplicate, an odd role), and every line
        that is not a plain node, goes through ``_link_one_by_one``, which says why.
        """
        tree = self.result.tree
        nodes = tree._nodes  # the loader is the tree's bulk path: it links children later
        known = len(nodes)
        if not known:
            tree._unlinked()
        start, end = 0, len(decoded)
        for stop in [*unread, end]:  # runs of plain nodes, and between them a line to read
            if stop - start < _SHORT_RUN or not self._link_run(decoded[start:stop], first + start):
                self._link_one_by_one(lines, decoded, start, stop, first, torn_line)
            if stop < end:
                self._link_one_by_one(lines, decoded, stop, stop + 1, first, torn_line)
            start = stop + 1
        if self.follow_leaf:
            tree.leaf = self.leaf
        added = list(islice(reversed(nodes.values()), len(nodes) - known))[::-1]
        if known and tree._linked:  # a later feed: link what it added (readers see it now)
            for node in added:
                tree._link(node)
        return added

    def _link_run(self, run: list[Any], number: int) -> bool:
        """Link plain nodes from line ``number`` on if nothing in them needs a word; else
        leave the tree as it was and return False. Each step is one pass in C over the run.

        The run joins the index only once it has passed, so a parent found there is on
        an earlier line; one found in the run itself is checked to come first.
        """
        nodes = self.result.tree._nodes
        lines = list(range(number, number + len(run)))  # made once, read twice
        any(map(setattr, run, repeat("line"), lines))
        ids = list(map(_ID, run))
        # parents are nearly always recent: this run's and the last run's few thousand
        # nodes stay in the CPU's cache, where the big index does not
        window = dict(zip(ids, run, strict=True))
        if len(window) < len(run) or not nodes.keys().isdisjoint(window):
            return False  # a duplicate id
        parents = list(map(_PARENT, run))
        above = list(map(window.get, parents, map(self._window.get, parents, repeat(_MISS))))
        find = nodes.get
        for position in compress(count(), map(is_, above, repeat(_MISS))):
            above[position] = find(parents[position], _NOWHERE)  # a root, an old fork
        try:
            plain = (
                sum(map(is_, above, repeat(_NOWHERE)))  # no orphan
                == sum(map(is_, parents, repeat(None)))
                and not any(map(ge, map(_LINE, above), lines))  # parents come first
                and not any(map(eq, map(_ROLE, above), map(_ROLE, run)))  # roles alternate
            )
        except AttributeError:  # a parent whose message was decoded already: a dict
            plain = False
        if plain:
            nodes.update(window)
            self.leaf = ids[-1]
            self._window = window
        return plain

    def _link_one_by_one(
        self,
        lines: list[bytes],
        decoded: list[Any],
        start: int,
        stop: int,
        first: int,
        torn_line: int,
    ) -> None:
        """Link ``decoded[start:stop]``, saying what is wrong with each line that is."""
        nodes = self.result.tree._nodes
        find = nodes.get
        setdefault = nodes.setdefault
        recent: dict[str, Node] = {}
        older: dict[str, Node] = {}
        window = 0
        report = self.result.problems.append
        orphans = self._orphans
        leaf = self.leaf
        number = first + start - 1
        node: Any  # a Node as decoded: its message a RawBody
        for node, line in zip(decoded[start:stop], lines[start:stop], strict=True):
            number += 1
            if node is None:  # not a plain node: read the line whole
                self.leaf = leaf
                node = cast(Any, self._read_slowly(line, number, number == torn_line))
                leaf = self.leaf  # a leaf record moves it
                if node is None:
                    continue
                role = node._message.get("role")
                plain = False
            else:
                role = node._message.role
                plain = True
            node_id = node.id
            parent = node.parent_id
            if parent is not None:
                above = recent.get(parent) or older.get(parent) or find(parent)
                if above is None:
                    if node_id not in nodes:  # a duplicate is reported as one, below
                        orphans.append((number, node_id, parent))
                        continue
                else:
                    up: Any = above._message  # a RawBody, or a dict once decoded
                    try:
                        above_role = up.role
                    except AttributeError:
                        above_role = up.get("role")
                    if above_role == role and node_id not in nodes:
                        report(Problem(number, same_role_twice(node_id, role)))
            node.line = number
            if setdefault(node_id, node) is not node:  # one lookup both checks and inserts
                report(Problem(number, duplicate(node_id, nodes[node_id].line)))
                continue
            recent[node_id] = node
            window += 1
            if window == 2048:
                older, recent, window = recent, {}, 0
            leaf = node_id
            if not plain and is_odd(node._message, role, node._meta):
                odd_node(node, node._meta, number, report)
        self.leaf = leaf

    def _read_slowly(self, line: bytes, number: int, torn: bool) -> Node | None:
        """One line as today's records are read: a node to attach, or None (reported)."""
        report = self.result.problems.append
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = with_lone_surrogates(line)
            if record is None:
                report(Problem(number, why_not_json(line, torn)))
                return None
            report(Problem(number, lone_surrogates_problem()))
        try:
            node_id = record["id"]
            parent = record["parentId"]
            message = record["message"]
        except (KeyError, TypeError):
            self._other_record(record, number)
            return None
        if len(record) == 3:  # id, parentId and message only: no type, no meta
            meta = None
        elif record.get("type") is not None:  # a typed record that also has node fields
            self._other_record(record, number)
            return None
        else:
            meta = record.get("meta")
        if type(node_id) is not str or not node_id or type(message) is not dict:
            report(Problem(number, why_not_a_node(record)))
            return None
        if parent is not None and type(parent) is not str:
            nodes = self.result.tree._nodes
            if node_id in nodes:
                why = duplicate(node_id, nodes[node_id].line)
            else:
                why = _("node {node} has a parentId that is not a string (ignored)").format(
                    node=repr(node_id)
                )
            report(Problem(number, why))
            return None
        return Node(node_id, parent, message, meta)

    def _other_record(self, record: Any, number: int) -> None:
        """A line that is JSON but not a message node: a typed record, or not a record."""
        result = self.result
        report = result.problems.append
        nodes = result.tree._nodes
        if type(record) is not dict:
            why = _("JSON but not a record: {kind} (ignored)").format(kind=kind_of(record))
            report(Problem(number, why))
            return
        kind = record.get("type")
        if kind is None:
            report(Problem(number, why_not_a_node(record)))
        elif kind == "leaf":
            target = record.get("id")
            if type(target) is str and target in nodes:
                self.leaf = target
            else:
                why = _("leaf record points at unknown node {node} (ignored)")
                report(Problem(number, why.format(node=repr(target))))
        elif kind == "label":
            target, label = record.get("id"), record.get("label")
            if type(target) is not str or target not in nodes:
                why = _("label record for unknown node {node} (ignored)")
                report(Problem(number, why.format(node=repr(target))))
            elif type(label) is not str:
                why = _("label for {node} is {kind}, not a string (ignored)")
                report(Problem(number, why.format(node=repr(target), kind=kind_of(label))))
            elif label:
                result.labels[target] = label
            else:
                result.labels.pop(target, None)
        elif kind == "hidden":
            self._hidden_record(record, number)
        elif kind in (GRADE, PREFERENCE):
            skipped = result.grades.take(record, nodes.__contains__)
            if skipped is not None:
                report(Problem(number, skipped))
        elif kind in BATCH_RECORDS:
            skipped = result.batches.take(record)
            if skipped is not None:
                report(Problem(number, skipped))
        elif kind == "session":
            if result.header is None:
                result.header = record
            else:
                report(Problem(number, _("a second session header (ignored)")))
        else:
            why = _("unknown record type {kind} (skipped)").format(kind=repr(kind))
            report(Problem(number, why))

    def _hidden_record(self, record: dict[str, Any], number: int) -> None:
        """``{"type":"hidden","id":ID}`` hides ID's branch; ``"hidden":false`` shows it
        again (the last record wins, like labels)."""
        result = self.result
        target, hidden = record.get("id"), record.get("hidden", True)
        if type(target) is not str or target not in result.tree._nodes:
            why = _("hidden record for unknown node {node} (ignored)").format(node=repr(target))
        elif type(hidden) is not bool:
            why = _("hidden record for {node}: 'hidden' is {kind}, not a boolean (ignored)")
            why = why.format(node=repr(target), kind=kind_of(hidden))
        elif hidden:
            result.hidden.add(target)
            return
        else:
            result.hidden.discard(target)
            return
        result.problems.append(Problem(number, why))


def _pieces(data: bytes) -> Iterator[bytes]:
    """``data`` (whole lines) cut after the first newline past every ``_PIECE`` bytes."""
    start, size = 0, len(data)
    while size - start > _PIECE:
        end = data.find(b"\n", start + _PIECE - 1) + 1 or size
        yield data[start:end]
        start = end
    if start < size:
        yield data[start:] if start else data


def _decode_lines(lines: list[bytes], ascii_only: bool) -> tuple[list[Any], list[int]]:
    """Each line as a ``Node``, or None where it is not a plain node; and the positions
    of those Nones, in order (those lines are read whole)."""
    decoded: list[Any] = []
    unread: list[int] = []
    remaining = iter(lines)
    while True:
        try:
            decoded.extend(map(_decode_node, remaining))  # keeps what it decoded on error
            break
        except msgspec.DecodeError:
            unread.append(len(decoded))
            decoded.append(None)  # the line that failed; go on with the next one
    bad: list[int] = []
    if not ascii_only:  # msgspec skips raw values without checking their UTF-8
        for position, line in enumerate(lines):
            if decoded[position] is not None and not line.isascii():
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError:
                    bad.append(position)
    metas = list(filter(None, map(_META, filter(None, decoded))))
    try:  # every meta an object or null, checked in one call
        _check_metas(b"".join((b"[", b",".join(metas), b"]")))
    except msgspec.DecodeError:  # rare: find them, and read those lines whole
        for position, node in enumerate(decoded):
            if node is not None and node._meta is not None:
                try:
                    _check_meta(node._meta)
                except msgspec.DecodeError:
                    bad.append(position)
    for position in bad:
        decoded[position] = None
    return decoded, sorted({*unread, *bad}) if bad else unread
