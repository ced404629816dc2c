"""The loader survives any bytes, reports the damage, and keeps what came before it.

A session file is user data that may be years old, written by the chapter's TypeScript
code, cut by a crash, edited by hand, merged by git, or zero-filled by a file system
after a power cut. The promise (docs/design.md): damage "never stops a session from loading;
each is reported with its line number", and nothing valid before the damage is lost.

Hypothesis builds valid sessions (random trees with unicode content) and damages them:
random bytes, truncation at *every* byte offset of a record, shuffled, duplicated and
welded lines, NUL tails, lone surrogate escapes (what ``JSON.stringify`` writes for a
broken emoji). Separate tests load a 50 MB line, a 100,000-deep chain and 10,000
siblings. The invariant everywhere: ``parse_session`` returns, and every node record
on a line *before* the first damaged line is in the tree exactly as written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.made_sessions import lines_of, sessions
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from jupyter_tree_chat.history.store import (
    FileStore,
    LoadResult,
    encode_record,
    header_record,
    parse_session,
)

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- building valid sessions -------------------------------------------------------------


def node_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if "type" not in r]


def assert_kept(records: list[dict[str, Any]], result: LoadResult) -> None:
    """Every node record in ``records`` (a valid prefix) is in the tree as written."""
    for record in node_records(records):
        node = result.tree._nodes.get(record["id"])
        assert node is not None, f"valid record {record['id']!r} before the damage was lost"
        assert node.parent_id == record["parentId"]
        assert node.message == record["message"]


def is_damage(message: str) -> bool:
    """A problem that says a line could not be read at all."""
    return "JSON" in message or "torn" in message or "UTF-8" in message


def assert_sane_problems(result: LoadResult, data: bytes) -> None:
    """Each problem points at a real line."""
    line_count = data.count(b"\n") + 1
    for problem in result.problems:
        assert 1 <= problem.line <= line_count, problem
        assert problem.message


# -- random bytes ------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=4096))
@example(b"\0" * 100)
@example(b"\xff\xfe{")
@example(b"\xef\xbb\xbf")
@example(b"\n\n\r\n")
@example(b'{"type":"leaf"}')
@example(b'{"id":"a","parentId":"a","message":{}}')
@example(b'[1,2]\n"s"\nnull\n1e999\n')
@example(b'{"id":"a","parentId":null,"message":{"role":"user","content":"' + b"[" * 10000 + b'"}}')
@example(b"[" * 100000)
def test_random_bytes_never_raise(data: bytes) -> None:
    """Any bytes at all: the loader returns a result, problems point at real lines."""
    result = parse_session(data)
    assert_sane_problems(result, data)


@FUZZ
@given(sessions(), st.binary(min_size=1, max_size=2048))
def test_random_bytes_after_a_valid_prefix_keep_the_prefix(
    records: list[dict[str, Any]], garbage: bytes
) -> None:
    """Garbage after whole lines never costs a record before it."""
    data = b"".join(lines_of(records)) + garbage
    result = parse_session(data)
    assert_kept(records, result)
    assert_sane_problems(result, data)


# -- truncation ------------------------------------------------------------------------------


@settings(FUZZ, max_examples=60)
@given(sessions(max_nodes=8), st.data())
def test_truncation_at_every_offset_of_a_record(records: list[dict[str, Any]], data: Any) -> None:
    """Cut the file at every byte of one record: the records before it always load,
    and a cut record is reported as torn on its own line number."""
    lines = lines_of(records)
    target = data.draw(st.integers(0, len(lines) - 1), label="record")
    start = sum(len(line) for line in lines[:target])
    end = start + len(lines[target])
    whole = b"".join(lines)
    for cut in range(start + 1, end):
        chopped = whole[:cut]
        result = parse_session(chopped)
        assert_kept(records[:target], result)
        if cut < end - 1:  # the record itself is incomplete (only its "\n" missing is fine)
            torn = [p for p in result.problems if p.line == target + 1]
            assert torn and "torn" in torn[0].message, result.problems


def test_truncation_then_append_puts_the_next_record_on_its_own_line(tmp_path: Path) -> None:
    """After a cut at any offset, FileStore's next append is a whole, loadable line.

    This is the crash-and-restart case at every offset of a record, with real file I/O.
    """
    records = [
        header_record(),
        {"id": "u1", "parentId": None, "message": {"role": "user", "content": "héllo ✓"}},
        {"id": "a1", "parentId": "u1", "message": {"role": "assistant", "content": "hi"}},
    ]
    lines = lines_of(records)
    whole = b"".join(lines)
    start = len(lines[0]) + len(lines[1])
    after = {"id": "u2", "parentId": "u1", "message": {"role": "user", "content": "again"}}
    path = tmp_path / "t.chat.jsonl"
    for cut in range(start, len(whole) + 1):
        path.write_bytes(whole[:cut])
        store = FileStore(path)
        store.load()
        store.append([after])
        result = parse_session(path.read_bytes())
        assert_kept([*records[:2], after], result)
        assert path.read_bytes().startswith(whole[:cut]), "an append changed earlier bytes"
        if start < cut < len(whole) - 1:
            assert any(is_damage(p.message) for p in result.problems)


# -- shuffled, duplicated, welded --------------------------------------------------------


@FUZZ
@given(sessions(), st.randoms(use_true_random=False))
def test_shuffled_lines_keep_every_node_whose_parent_came_first(
    records: list[dict[str, Any]], rng: Any
) -> None:
    """Lines in any order: a node is kept iff its parent appeared earlier; the rest are
    reported as orphans, never attached somewhere else."""
    shuffled = list(records)
    rng.shuffle(shuffled)
    data = b"".join(lines_of(shuffled))
    result = parse_session(data)
    kept: set[str] = set()
    for record in node_records(shuffled):
        if record["parentId"] is None or record["parentId"] in kept:
            kept.add(record["id"])
    assert set(result.tree._nodes) == kept
    orphans = [p for p in result.problems if "orphan" in p.message]
    assert len(orphans) == len(node_records(records)) - len(kept)
    assert_sane_problems(result, data)


@FUZZ
@given(sessions(), st.data())
def test_duplicated_lines_keep_the_first_and_report_the_rest(
    records: list[dict[str, Any]], data: Any
) -> None:
    """A line copied later in the file (a bad merge): the first occurrence wins."""
    lines = lines_of(records)
    source = data.draw(st.integers(0, len(lines) - 1))
    where = data.draw(st.integers(source + 1, len(lines)))
    copies = data.draw(st.integers(1, 3))
    damaged = lines[:where] + [lines[source]] * copies + lines[where:]
    result = parse_session(b"".join(damaged))
    assert_kept(records, result)
    if "type" not in records[source]:
        dups = [p for p in result.problems if "duplicate" in p.message]
        assert [p.line for p in dups] == list(range(where + 1, where + 1 + copies))


@FUZZ
@given(sessions(), st.data())
def test_welded_lines_lose_only_the_welded_pair(records: list[dict[str, Any]], data: Any) -> None:
    """Two records on one line (a lost newline): reported, and everything before kept."""
    lines = lines_of(records)
    assume(len(lines) >= 2)
    i = data.draw(st.integers(0, len(lines) - 2))
    damaged = [*lines[:i], lines[i][:-1] + lines[i + 1], *lines[i + 2 :]]
    result = parse_session(b"".join(damaged))
    assert_kept(records[:i], result)
    assert any(p.line == i + 1 and is_damage(p.message) for p in result.problems)


# -- NUL tails -------------------------------------------------------------------------------


@FUZZ
@given(sessions(), st.integers(1, 8192), st.booleans(), st.booleans())
def test_nul_tail_is_reported_and_costs_nothing_before_it(
    records: list[dict[str, Any]], nuls: int, eat_newline: bool, then_append: bool
) -> None:
    """A zero-filled tail (file size grew, data never reached the disk) is one bad line."""
    lines = lines_of(records)
    whole = b"".join(lines)
    keep = records
    if eat_newline:  # the NULs replaced the end of the last record
        whole = whole[: -min(len(lines[-1]), 5)]
        keep = records[:-1]
    data = whole + b"\0" * nuls
    if then_append:  # the restarted kernel goes on: a newline first, then its record
        data += b"\n" + encode_record(
            {"id": "late", "parentId": None, "message": {"role": "user", "content": "x"}}
        )
    result = parse_session(data)
    assert_kept(keep, result)
    assert any(is_damage(p.message) for p in result.problems)
    if then_append:
        assert "late" in result.tree


# -- lone surrogate escapes -----------------------------------------------------------------


LONE = ["\\ud800", "\\udfff", "a\\ud83d", "\\ude00b", "\\ud83d\\ud83d"]


@pytest.mark.parametrize("escape", LONE)
def test_lone_surrogate_escapes_keep_the_record_and_report_it(escape: str) -> None:
    """JSON.stringify (the chapter's own writer) emits lone surrogates as ``\\udXXX``
    escapes. That is valid JSON; losing the whole message over one broken emoji
    would lose a valid record. The loader keeps it (with U+FFFD) and reports it."""
    before = encode_record(
        {"id": "u0", "parentId": None, "message": {"role": "user", "content": "before"}}
    )
    line = (
        '{"id":"a1","parentId":"u0","message":{"role":"assistant","content":"x' + escape + 'y"}}\n'
    ).encode()
    after = encode_record(
        {"id": "u2", "parentId": "a1", "message": {"role": "user", "content": "after"}}
    )
    assert json.loads(line)  # valid JSON by the standard library's reading
    result = parse_session(before + line + after)
    assert set(result.tree._nodes) == {"u0", "a1", "u2"}
    text = result.tree.get("a1").message["content"]
    assert text.startswith("x") and text.endswith("y") and "\ufffd" in text
    assert orjson.dumps(text)  # and it can be written again
    assert any(p.line == 2 and "surrogate" in p.message for p in result.problems)


def test_a_proper_surrogate_pair_escape_is_not_a_problem() -> None:
    line = b'{"id":"a","parentId":null,"message":{"role":"user","content":"\\ud83d\\ude00"}}\n'
    result = parse_session(line)
    assert result.tree.get("a").message["content"] == "\U0001f600"
    assert result.problems == []


def test_a_lone_surrogate_in_memory_can_still_be_appended(tmp_path: Path) -> None:
    """A str with a lone surrogate (a pasted half emoji from the front end) must not
    make an append raise TypeError: the record is written with U+FFFD instead."""
    store = FileStore(tmp_path / "s.chat.jsonl")
    store.load()
    store.append(
        [{"id": "u", "parentId": None, "message": {"role": "user", "content": "a\ud83db"}}]
    )
    result = parse_session((tmp_path / "s.chat.jsonl").read_bytes())
    assert result.tree.get("u").message["content"] == "a\ufffdb"


# -- size and shape extremes ------------------------------------------------------------


def test_a_50_mb_line_loads(tmp_path: Path) -> None:
    """A 50 MB record loads intact; a 50 MB garbage line is one problem between two
    records that both load."""
    big = "x" * 50_000_000
    first = {"id": "u", "parentId": None, "message": {"role": "user", "content": "q"}}
    huge = {"id": "a", "parentId": "u", "message": {"role": "assistant", "content": big}}
    last = {"id": "u2", "parentId": "a", "message": {"role": "user", "content": "more"}}
    data = encode_record(first) + encode_record(huge) + encode_record(last)
    started = time.monotonic()
    result = parse_session(data)
    assert result.tree.get("a").message["content"] == big
    assert result.problems == []
    garbage = b'{"id":"g","content":"' + b"y" * 50_000_000 + b"\n"
    result = parse_session(encode_record(first) + garbage + encode_record(last))
    assert "u" in result.tree
    assert [p.line for p in result.problems] == [2, 3]  # the garbage, then u2 is an orphan
    assert time.monotonic() - started < 20


def test_a_100000_deep_chain_loads_and_walks() -> None:
    """Deep conversations (long agent loops) must not hit a recursion limit anywhere."""
    depth = 100_000
    parts = []
    parent = None
    for i in range(depth):
        role = "user" if i % 2 == 0 else "assistant"
        parts.append(
            encode_record(
                {"id": f"d{i}", "parentId": parent, "message": {"role": role, "content": "t"}}
            )
        )
        parent = f"d{i}"
    result = parse_session(b"".join(parts))
    tree = result.tree
    assert result.problems == []
    assert len(tree) == depth
    assert tree.leaf == f"d{depth - 1}"
    assert tree.depth(tree.leaf) == depth
    assert len(tree.active_path()) == depth
    assert tree.deepest_leaf("d0") == f"d{depth - 1}"
    assert [n.id for n in tree.leaves()] == [f"d{depth - 1}"]
    tree.switch("d50000")
    assert tree.retry_point("d50001").id == "d50000"


def test_10000_siblings_load() -> None:
    """One question retried 10,000 times: every answer kept, in order, with positions."""
    parts = [
        encode_record({"id": "q", "parentId": None, "message": {"role": "user", "content": "?"}})
    ]
    for i in range(10_000):
        parts.append(
            encode_record(
                {
                    "id": f"s{i}",
                    "parentId": "q",
                    "message": {"role": "assistant", "content": str(i)},
                }
            )
        )
    result = parse_session(b"".join(parts))
    tree = result.tree
    assert result.problems == []
    assert len(tree.children("q")) == 10_000
    assert str(tree.sibling_position("s9999")) == "10000/10000"
    assert [n.id for n in tree.siblings("s0")][:3] == ["s0", "s1", "s2"]
    assert tree.leaf == "s9999"
