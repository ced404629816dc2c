"""``path`` on a clean session file without loading the whole tree.

``jupyter tree-chat path FILE`` prints one root-to-leaf path, yet the full loader
(loader.py) builds every node and checks every line, which on a million-node file
costs about twice a bare parse of its lines. This fast path reads the file once, a
block at a time, with a light msgspec decoder (ids, parents and the shape of each
record, nothing decoded that a path does not need), walks up from the leaf searching
each parent backwards from its child, checks the path's ids are used once, and reads
only the path's lines again, with the real loader.

The promise: it never gives an answer the full loader would not. Whenever the file is
anything but plain (a line the light decoder refuses and orjson does not read as a
known typed record, a record without ``parentId`` that is not a typed one, a torn or
blank last line, CRLF, a byte order mark, bytes that are not UTF-8, lone surrogate
escapes, an id of the path used twice, a parent that is missing or comes later, an id
reference that is not a whole id or a unique prefix, or any problem the loader reports
on the path's own lines), ``quick_path`` returns None and the caller uses the full
loader. ``tests/cli/test_cli_quickpath.py`` checks the two agree.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from itertools import compress, count, repeat
from operator import attrgetter, is_, is_not
from typing import Annotated, cast

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from .. import formats
from ..errors import ChatError
from ..formats.detect import SCAN_BYTES
from ..history.loader import gc_paused, parse_session
from ..history.node import Node
from ..history.store import open_session_file

#: an id; an empty one is refused while decoding (the loader says why), which spares a
#: pass over a million ids looking for one
_Id = Annotated[str, msgspec.Meta(min_length=1)]


class _Record(msgspec.Struct, gc=False, rename={"parent_id": "parentId"}):
    """Any record, only what the index needs; every other field is skipped.

    A record without ``parentId`` is taken for a typed one (header, label, hidden mark,
    leaf) and read again whole by orjson, which says whether it is; so ``type`` is not
    decoded, and one pass over the parents finds both the typed records and a node
    missing its parent. A typed record that has a ``parentId`` is taken for a node: it
    changes nothing off the path, and on it (as leaf or parent) the loader's reading of
    the path's lines, or the path's ids being used twice, sends the file to the loader."""

    id: _Id | None = None
    parent_id: str | UnsetType | None = UNSET


_decode_array = msgspec.json.Decoder(list[_Record]).decode
_ID = attrgetter("id")
_PARENT = attrgetter("parent_id")
_TYPED = frozenset({"session", "label", "hidden", "leaf"})  # a path reads only "leaf"
_FEW = 64  # up to this many typed records are taken out of the node list one by one
_BLOCK = 1 << 15  # lines are decoded, counted and found a block of this many bytes at a time


class _Lines:
    """Where each block of the file's lines starts and ends: any line is read again
    with one ``pread``, and the file is never held in memory whole."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.bounds: list[int] = [0]  # byte offset of each block, then where the last ends
        self.firsts: list[int] = []  # 0-based number of each block's first line

    def read(self, numbers: list[int]) -> list[bytes]:
        """The lines with these numbers (ascending; no newline), each block read once."""
        found: list[bytes] = []
        block, data = -1, b""
        for number in numbers:
            wanted = bisect_right(self.firsts, number) - 1
            if wanted != block:
                block = wanted
                start, end = self.bounds[block], self.bounds[block + 1]
                data = os.pread(self.fd, end - start, start)
            skip = number - self.firsts[block]
            found.append(data.split(b"\n", skip + 1)[skip])
        return found


def quick_path(name: str, ref: str | None, keep: list[object] | None = None) -> list[Node] | None:
    """The path to ``ref`` (or to the file's leaf), root first, its nodes read by the
    loader; None whenever the full loader must decide.

    ``keep``, if given, is handed the file's index: a process about to end by
    ``os._exit`` (the console script) need not free a million records one by one."""
    try:
        fd = open_session_file(name)
    except (OSError, ValueError, ChatError):
        return None  # the loader's message says what is wrong
    try:
        if formats.detect(os.pread(fd, SCAN_BYTES, 0)) in formats.FORMATS:
            return None
        with gc_paused():
            lines = _Lines(fd)
            records = _decode(lines, os.fstat(fd).st_size)
            if keep is not None:
                keep.append(records)
            return None if records is None else _path(lines, records, ref)
    except OSError:
        return None
    finally:
        os.close(fd)


def _decode(lines: _Lines, size: int) -> list[_Record] | None:
    """Every line decoded, a block at a time; None unless every line is one record and
    the last line is whole.

    A block's lines are decoded as one JSON array (each newline made a comma): the
    decoder itself then refuses a blank line, two records on one line and a line that is
    not an object, so each block's lines need no scan of their own (a newline count and
    a search for lines not starting with ``{`` cost about as much as the decoding)."""
    records: list[_Record] = []
    start = 0
    while start < size:
        chunk = _block(lines.fd, start, size)
        end = chunk.rfind(b"\n") + 1
        if not end:
            return None  # a torn last line: the loader says
        if chunk.find(b"\r", 0, end) != -1:
            return None  # CRLF
        first = len(records)
        try:
            records += _decode_array(b"[" + chunk[: end - 1].replace(b"\n", b",") + b"]")
        except msgspec.DecodeError:
            return None  # a byte order mark, a line that is not one record
        lines.firsts.append(first)
        start += end
        lines.bounds.append(start)
    return records


def _block(fd: int, start: int, size: int) -> bytes:
    """About ``_BLOCK`` bytes from ``start``, more if needed to hold a whole line (a
    long one, an image): the caller decodes up to the last newline."""
    want = _BLOCK
    while True:
        chunk = os.pread(fd, min(want, size - start), start)
        if b"\n" in chunk or start + len(chunk) >= size or not chunk:
            return chunk
        want *= 4


def _path(lines: _Lines, records: list[_Record], ref: str | None) -> list[Node] | None:
    """Check the ids, choose the leaf as the loader would, walk up to the root, and
    read the path's lines with the real loader, in file order."""
    parentless = map(is_, map(_PARENT, records), repeat(UNSET))
    typed = list(compress(count(), parentless))  # the typed records' line numbers
    nodes = records
    if len(typed) > _FEW:
        nodes = list(compress(records, map(is_not, map(_PARENT, records), repeat(UNSET))))
    elif typed:
        nodes = records.copy()
        for number in reversed(typed):
            del nodes[number]
    # node ``p`` is on line ``p + bisect_right(shifts, p)``: typed lines push it down
    shifts = [number - before for before, number in enumerate(typed)]
    ids = list(map(_ID, nodes))
    if not ids or None in ids:
        return None  # no node, or a node without a proper id
    leaf_records = _leaf_records(lines, typed)
    if leaf_records is None:
        return None
    targets = {target for _, target in leaf_records}
    if len(targets.intersection(ids)) < len(targets):
        return None  # a leaf record the loader ignores: let it say so
    last = len(nodes) - 1
    leaf = ids[last]  # the last node, unless a leaf record comes after it
    if leaf_records and leaf_records[-1][0] > last + bisect_right(shifts, last):
        leaf = leaf_records[-1][1]  # after every node, so its target came before it
    if ref is not None:
        if ref in ids:
            leaf = ref
        else:
            matches = [node_id for node_id in ids if node_id.startswith(ref)] if ref else []
            if len(matches) != 1:
                return None  # the loader's message says what is wrong
            leaf = matches[0]
    chain = _chain(nodes, ids, cast(str, leaf))
    if chain is None or _repeated(ids, [ids[p] for p in chain]):
        return None
    numbers = [p + bisect_right(shifts, p) for p in chain]
    result = parse_session(b"\n".join(lines.read(numbers)) + b"\n")
    tree = result.tree
    if result.problems or [node.id for node in tree] != [ids[p] for p in chain]:
        return None
    return tree.path_nodes(cast(str, leaf))


def _chain(nodes: list[_Record], ids: list[str], leaf: str) -> list[int] | None:
    """The positions of the leaf and its ancestors, root first; None if a parent is
    missing or comes after its child (an orphan the loader reports).

    Each parent is searched for backwards from its child, in a reversed copy of the
    ids, so the whole walk reads each id at most once and needs no index."""
    backwards = ids[::-1]
    last = len(ids) - 1
    at = backwards.index(leaf)
    chain: list[int] = []
    while True:
        position = last - at
        chain.append(position)
        parent = nodes[position].parent_id
        if parent is None:
            chain.reverse()
            return chain
        try:
            at = backwards.index(cast(str, parent), at + 1)
        except ValueError:
            return None


def _repeated(ids: list[str], path_ids: list[str]) -> bool:
    """Whether an id of the path is used by another line too (the loader keeps only
    its first record, and reports the rest).

    Only the path's ids matter: a duplicate elsewhere is a line the loader skips, off
    the path, and the path (each parent found backwards from its child) is the same.
    One pass looking each id up in a set of the path's 2,000, not a set of the
    million ids, which costs a fifth of the per-line parse to build and to free."""
    wanted = set(path_ids)
    return len(list(filter(wanted.__contains__, ids))) != len(wanted)


def _leaf_records(lines: _Lines, typed: list[int]) -> list[tuple[int, str]] | None:
    """The leaf records among the typed lines, read as the loader reads them (orjson);
    None if one is not a record the loader reads the same way."""
    found: list[tuple[int, str]] = []
    for number, line in zip(typed, lines.read(typed), strict=True):
        try:
            record = orjson.loads(line)
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
