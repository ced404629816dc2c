"""The loader's fast paths read exactly what the line-by-line path reads.

A run of plain nodes is linked in C-level passes and a line that decodes straight into
a ``Node`` keeps its body raw; everything else takes the slower path that says why. A
fast path that read a file differently would be a wrong one, so every damaged file
here is loaded three ways (whole, cut into random pieces, and with the fast linking
turned off) and the results must be the same: nodes, parents, lines, the leaf, labels
and every problem, word for word.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers.made_sessions import damaged_file, record

from jupyter_tree_chat.history import loader
from jupyter_tree_chat.history.loader import LoadResult, Reader, parse_session
from jupyter_tree_chat.history.node import RawBody
from jupyter_tree_chat.history.store import encode_record


def picture(result: LoadResult) -> dict[str, Any]:
    tree = result.tree
    return {
        "nodes": [(n.id, n.parent_id, n.line, n.to_record()) for n in tree],
        "children": {n.id: [c.id for c in tree.children(n.id)] for n in tree},
        "leaf": tree.leaf,
        "labels": result.labels,
        "problems": [str(p) for p in result.problems],
    }


def in_pieces(data: bytes, seed: int) -> LoadResult:
    rng = random.Random(seed)
    reader = Reader()
    at = 0
    while at < len(data):
        step = rng.choice([1, 7, 100, 1000, 5000])
        reader.feed(data[at : at + step])
        at += step
    reader.close()
    return reader.result


@pytest.mark.parametrize("seed", range(12))
def test_whole_in_pieces_and_one_by_one_read_the_same(seed: int, monkeypatch) -> None:
    data = damaged_file(seed)
    monkeypatch.setattr(loader, "_SHORT_RUN", 10**9)  # every run linked one by one
    one_by_one = picture(parse_session(data))
    assert one_by_one["problems"]  # the file is damaged: there is something to say
    monkeypatch.setattr(loader, "_SHORT_RUN", 1)  # every run tried at once first
    assert picture(parse_session(data)) == one_by_one
    assert picture(in_pieces(data, seed)) == one_by_one


def test_a_clean_file_is_linked_by_the_fast_path_and_says_nothing() -> None:
    lines = [encode_record(record("n0", None, "user", 0))]
    lines += [
        encode_record(record(f"n{i}", f"n{i - 1}", "assistant" if i % 2 else "user", i))
        for i in range(1, 500)
    ]
    result = parse_session(b"".join(lines))
    assert result.problems == [] and len(result.tree) == 500
    assert result.tree.leaf == "n499" and result.tree.depth("n499") == 500
    assert [n.line for n in result.tree][:3] == [1, 2, 3]


def test_a_body_stays_raw_until_read_then_is_kept_once_as_objects() -> None:
    data = encode_record(record("u1", None, "user", 1)) + encode_record(
        record("a1", "u1", "assistant", 2)
    )
    tree = parse_session(data).tree
    answer = tree.get("a1")
    assert type(answer._message) is RawBody  # not decoded by loading
    assert answer.role == "assistant" and tree.get("u1").role == "user"  # nor by the role
    assert type(answer._message) is RawBody
    assert answer.message == record("a1", "u1", "assistant", 2)["message"]
    assert type(answer._message) is dict  # decoded once, the raw bytes let go
    assert answer.message is answer.message
    assert answer.meta == {"model": "m", "usage": {"input_tokens": 2, "output_tokens": 1}}
    assert type(answer._meta) is dict
