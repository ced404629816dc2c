"""The records quickpath.py reads differently since it decodes only ids and parents.

It takes a record without ``parentId`` for a typed one (read again by orjson), a typed
record with a ``parentId`` for a node, and checks only the path's ids for a second use.
Each file here has one such record, off the path or on it (as the leaf, as a parent):
the command must print what the full loader prints, word for word.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from helpers.made_sessions import record

from jupyter_tree_chat.cli import main
from jupyter_tree_chat.cli.quickpath import quick_path
from jupyter_tree_chat.history.store import encode_record, header_record, label_record


def chain(size: int) -> list[bytes]:
    """A header and a chain of ``size`` nodes, n0 the root."""
    lines = [encode_record(header_record())]
    for i in range(size):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(encode_record(record(f"n{i}", f"n{i - 1}" if i else None, role, i)))
    return lines


def line(value: dict[str, object]) -> bytes:
    return orjson.dumps(value) + b"\n"


ODD = {
    "label with a parentId, last": lambda lines: [
        *lines,
        line({**label_record("n3", "x"), "parentId": "n2"}),
    ],
    "label with a parentId naming no node, last": lambda lines: [
        *lines,
        line({"type": "label", "id": "ghost", "label": "x", "parentId": None}),
    ],
    "label with a parentId, in the middle": lambda lines: [
        *lines[:4],
        line({**label_record("n1", "x"), "parentId": "n0"}),
        *lines[4:],
    ],
    "a side node's id used again": lambda lines: [
        *lines[:2],
        encode_record(record("s1", "n0", "assistant", 98)),
        *lines[2:5],
        encode_record(record("s1", "n0", "assistant", 99)),
        *lines[5:],
    ],
    "a path node's id used again, in the middle": lambda lines: [
        *lines[:5],
        encode_record(record("n1", "n0", "assistant", 99)),
        *lines[5:],
    ],
    "a path node's id used again, last": lambda lines: [
        *lines,
        encode_record(record("n5", "n4", "assistant", 99)),
    ],
    "a node without parentId": lambda lines: [
        *lines[:3],
        line({"id": "q", "message": {}}),
        *lines[3:],
    ],
    "a record of an unknown type without parentId": lambda lines: [
        *lines[:3],
        line({"type": "note", "id": "n1"}),
        *lines[3:],
    ],
    "a line led by spaces": lambda lines: [*lines[:3], b"  " + lines[3], *lines[4:]],
}


@pytest.mark.parametrize("odd", list(ODD))
@pytest.mark.parametrize("ref", [None, "n5", "n2", "n1", "s1", "n"])
def test_records_read_by_ids_and_parents_answer_as_the_loader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], odd: str, ref: str | None
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(b"".join(ODD[odd](chain(6))))
    argv = ["path", str(path), "--json", *([] if ref is None else ["--leaf", ref])]
    quick = main(argv), *capsys.readouterr()
    full = main(argv, quick=False), *capsys.readouterr()
    assert quick == full


def test_a_duplicate_off_the_path_keeps_the_fast_path(tmp_path: Path) -> None:
    """Only the path's ids are checked for a second use: a repeated id elsewhere no
    longer sends a million-node file to the full loader; one on the path does."""
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(b"".join(ODD["a side node's id used again"](chain(6))))
    nodes = quick_path(str(path), "n5")
    assert nodes is not None, "a repeated id off the path fell back to the full loader"
    assert [node.id for node in nodes] == [f"n{i}" for i in range(6)]
    assert quick_path(str(path), "s1") is None  # s1 is the path now, and used twice
