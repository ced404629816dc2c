"""``path`` on a clean session file without loading the whole tree.

``jupyter tree-chat path FILE`` prints one root-to-leaf path, yet the full loader
(loader.py) builds every node and checks every line, which on a million-node file
costs about twice a bare parse of its lines. This fast path reads the file once with a
light msgspec decoder (ids, parents and the shape of each record, nothing decoded that
a path does not need), builds ``id → (parent, line)``, walks up from the leaf, and
reads only the path's lines with the real loader.

The promise: it never gives an answer the full loader would not. Whenever the file is
anything but plain (a line the light decoder refuses and orjson does not read as a
known typed record, a torn or blank last line, CRLF, a byte order mark, bytes that are
not UTF-8, lone surrogate escapes, a duplicate id, a parent that is missing or comes
later, an id reference that is not a whole id or a unique prefix, or any problem the
loader reports on the path's own lines), ``quick_path`` returns None and the caller
uses the full loader. ``tests/test_cli_quickpath.py`` checks the two agree.
"""

from __future__ import annotations

import gc
import os
import re
from bisect import bisect_right
from itertools import compress, count, repeat
from operator import attrgetter, is_
from typing import cast

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from .. import formats
from ..errors import ChatError
from ..formats.detect import SCAN_BYTES
from ..loader import parse_session
from ..node import Node
from ..store import open_session_file, read_session_bytes


class _Record(msgspec.Struct, gc=False, rename={"parent_id": "parentId"}):
    """Any record, only what the index needs; every other field is skipped."""

    id: str | None = None
    parent_id: str | UnsetType | None = UNSET
    type: str | None = None


_decode_lines = msgspec.json.Decoder(_Record).decode_lines
_ID = attrgetter("id")
_PARENT = attrgetter("parent_id")
_TYPE = attrgetter("type")
_TYPED = frozenset({"session", "label", "hidden", "leaf"})  # a path reads only "leaf"
#: a newline not followed by a record (the file's last newline excepted, see _read)
_LINE_NOT_A_RECORD = re.compile(rb"\n(?!\{)")
_FEW = 64  # up to this many typed records are taken out of the node list one by one
_BLOCK = 1 << 15  # lines are decoded, counted and found a block of this many bytes at a time


class _Lines:
    """The file's bytes, and where each block of lines starts: any line found without
    splitting the whole file."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts: list[int] = []  # byte offset of each block
        self.firsts: list[int] = []  # 0-based number of each block's first line

    def line(self, number: int) -> bytes:
        data = self.data
        block = bisect_right(self.firsts, number) - 1
        start = self.starts[block]
        for _ in range(number - self.firsts[block]):
            start = data.index(b"\n", start) + 1
        return data[start : data.index(b"\n", start)]


def quick_path(name: str, ref: str | None) -> list[Node] | None:
    """The path to ``ref`` (or to the file's leaf), root first, its nodes read by the
    loader; None whenever the full loader must decide."""
    try:
        data = _read(name)
    except (OSError, ValueError, ChatError):
        return None
    if data is None:
        return None
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        lines = _Lines(data)
        records = _decode(lines)
        return None if records is None else _path(lines, records, ref)
    finally:
        if was_enabled:
            gc.enable()


def _read(name: str) -> bytes | None:
    """The file's bytes if it is a native session file whose every line starts a
    record; else None."""
    fd = open_session_file(name)
    try:
        head = os.pread(fd, SCAN_BYTES, 0)
    finally:
        os.close(fd)
    if formats.detect(head) in formats.FORMATS:
        return None
    data = read_session_bytes(name)
    if not data.startswith(b"{") or not data.endswith(b"\n") or b"\r" in data:
        return None  # a byte order mark, a torn last line, CRLF: the loader says
    if _LINE_NOT_A_RECORD.search(data, 0, len(data) - 1):
        return None  # a blank line, or one that is not a record
    return data


def _decode(lines: _Lines) -> list[_Record] | None:
    """Every line decoded, a block at a time; None if a line is not one record."""
    data = lines.data
    view = memoryview(data)
    records: list[_Record] = []
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start + _BLOCK) + 1 or size
        first = len(records)
        try:
            records += _decode_lines(view[start:end])
        except msgspec.DecodeError:
            return None
        if len(records) - first != data.count(b"\n", start, end):
            return None  # two records on one line: the loader reads it as garbage
        lines.starts.append(start)
        lines.firsts.append(first)
        start = end
    return records


def _path(lines: _Lines, records: list[_Record], ref: str | None) -> list[Node] | None:
    """Index the nodes, choose the leaf as the loader would, and read the path's lines
    with the real loader, in file order."""
    kinds = list(map(_TYPE, records))
    if "" in kinds:
        return None
    typed = list(compress(count(), kinds))  # the typed records' line numbers
    del kinds
    nodes = records
    if len(typed) > _FEW:
        nodes = list(compress(records, map(is_, map(_TYPE, records), repeat(None))))
    elif typed:
        nodes = records.copy()
        for number in reversed(typed):
            del nodes[number]
    # node ``p`` is on line ``p + bisect_right(shifts, p)``: typed lines push it down
    shifts = [number - before for before, number in enumerate(typed)]
    index = dict(zip(map(_ID, nodes), count()))
    if not index or len(index) < len(nodes) or None in index or "" in index:
        return None  # no node, a duplicate id, or a node without a proper id
    if any(map(is_, map(_PARENT, nodes), repeat(UNSET))):
        return None  # a line with no parentId: not a node, as the loader will say
    leaf_records = _leaf_records(lines, typed)
    if leaf_records is None:
        return None
    if any(target not in index for _, target in leaf_records):
        return None  # a leaf record the loader ignores: let it say so
    last = len(nodes) - 1
    leaf = nodes[last].id  # the last node, unless a leaf record comes after it
    if leaf_records and leaf_records[-1][0] > last + bisect_right(shifts, last):
        leaf = leaf_records[-1][1]  # after every node, so its target came before it
    if ref is not None:
        if ref in index:
            leaf = ref
        else:
            matches = [node_id for node_id in index if node_id.startswith(ref)] if ref else []
            if len(matches) != 1:
                return None  # the loader's message says what is wrong
            leaf = matches[0]
    chain: list[int] = []
    position: int | None = index[cast(str, leaf)]
    while position is not None:
        if len(chain) > len(nodes):
            return None  # a cycle
        chain.append(position)
        parent = nodes[position].parent_id
        position = None if parent is None else index.get(cast(str, parent), -1)
        if position == -1:
            return None  # an orphan
    chain.sort()  # in file order, so a parent that comes later is an orphan here too
    path_lines = [lines.line(p + bisect_right(shifts, p)) + b"\n" for p in chain]
    result = parse_session(b"".join(path_lines))
    tree = result.tree
    if result.problems or [node.id for node in tree] != [nodes[p].id for p in chain]:
        return None
    return tree.path_nodes(cast(str, leaf))


def _leaf_records(lines: _Lines, typed: list[int]) -> list[tuple[int, str]] | None:
    """The leaf records among the typed lines, read as the loader reads them (orjson);
    None if one is not a record the loader reads the same way."""
    found: list[tuple[int, str]] = []
    for number in typed:
        try:
            record = orjson.loads(lines.line(number))
        except orjson.JSONDecodeError:
            return None
        kind = record.get("type") if type(record) is dict else None
        if kind not in _TYPED:
            return None
        if kind == "leaf":
            target = record.get("id")
            if type(target) is not str:
                return None
            found.append((number, target))
    return found
