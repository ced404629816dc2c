"""``path --json``'s fast path answers exactly as the full loader does, on any file.

quickpath.py reads only the path's lines in full and falls back to the full loader on
anything odd. A fast path that answered differently would be a wrong one, so every file
here (clean sessions of every shape, and damaged ones with each kind of damage the
loader knows) is run through the command line both ways: stdout, stderr and the exit
status must be the same, word for word. On a clean file the fast path must be taken.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from helpers.import_samples import claude_code_session, jsonl
from helpers.made_sessions import damaged_file, lines_of, next_parent, record, sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_tree_chat.cli import main
from jupyter_tree_chat.cli.quickpath import quick_path
from jupyter_tree_chat.history.loader import parse_session
from jupyter_tree_chat.history.store import (
    encode_record,
    header_record,
    hidden_record,
    label_record,
    leaf_record,
)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def both_ways(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command with the fast path and with the full loader; they must agree."""
    quick = main(list(argv)), *capsys.readouterr()
    full = main(list(argv), quick=False), *capsys.readouterr()
    assert quick == full
    return quick


def refs_for(data: bytes, rng: random.Random) -> list[str | None]:
    """Leaf references worth trying on a file: none, whole ids, prefixes, nonsense."""
    ids = [i for i in parse_session(data).tree._nodes]
    refs: list[str | None] = [None, "", "zz-none", "n0"]
    for node_id in rng.sample(ids, min(3, len(ids))):
        refs += [node_id, node_id[: rng.randrange(1, len(node_id) + 1)]]
    return refs


def check_file(capsys: pytest.CaptureFixture[str], path: Path, seed: int) -> None:
    rng = random.Random(seed)
    for ref in refs_for(path.read_bytes(), rng):
        leaf = [] if ref is None else ["--leaf", ref]
        both_ways(capsys, "path", str(path), *leaf, "--json")


def chain_file(size: int, seed: int) -> bytes:
    """A deep conversation with forks from old nodes and side branches, a header and a
    leaf record: the shape of a long-used session."""
    rng = random.Random(seed)
    lines = [encode_record(header_record())]
    nodes: list[tuple[str, str]] = []
    for i in range(size):
        parent, role = next_parent(rng, nodes, stay=0.95, newest=0.8)
        node_id = f"{rng.getrandbits(48):012x}"
        lines.append(encode_record(record(node_id, parent, role, i)))
        nodes.append((node_id, role))
        if rng.random() < 0.01:
            lines.append(encode_record(leaf_record(rng.choice(nodes)[0])))
    return b"".join(lines)


# -- clean files: the fast path is taken and agrees ------------------------------------


def test_a_clean_file_takes_the_fast_path_and_reads_the_same_path(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(chain_file(3000, 1))
    full = parse_session(path.read_bytes())
    tree = full.tree
    for ref in [None, *list(tree._nodes)[::500]]:
        nodes = quick_path(str(path), ref)
        assert nodes is not None, "a clean file fell back to the full loader"
        leaf = tree.leaf if ref is None else ref
        expected = tree.path_nodes(leaf)  # type: ignore[arg-type]
        assert [n.id for n in nodes] == [n.id for n in expected]
        assert [n.message for n in nodes] == [n.message for n in expected]


def test_long_lines_and_many_typed_records_take_the_fast_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lines longer than a read block (a pasted log, an image) and hundreds of labels,
    hidden marks and leaf records spread over many blocks: still the fast path, still
    the loader's answer."""
    rng = random.Random(5)
    lines = chain_file(1500, 3).splitlines(keepends=True)
    ids = list(parse_session(b"".join(lines)).tree._nodes)
    for i in range(0, len(lines), 7):
        node_id = rng.choice(ids[: max(1, i - 2)])
        typed = rng.choice([label_record(node_id, f"l{i}"), hidden_record(node_id, i % 2 == 0)])
        lines.insert(i, encode_record(typed))
    for i in range(3, len(lines), 400):  # 200 KB lines, longer than one read block
        long = record(f"long{i}", ids[0], "assistant", i)
        long["message"]["content"][0]["text"] = "x" * 200_000
        lines.insert(i, encode_record(long))
    lines.append(encode_record(leaf_record(ids[len(ids) // 2])))
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(b"".join(lines))
    tree = parse_session(path.read_bytes()).tree
    for ref in [None, "long3", ids[-1], ids[700]]:
        nodes = quick_path(str(path), ref)
        assert nodes is not None, "a clean file fell back to the full loader"
        expected = tree.path_nodes(tree.leaf if ref is None else ref)  # type: ignore[arg-type]
        assert [n.message for n in nodes] == [n.message for n in expected]
    check_file(capsys, path, 5)


def test_a_damaged_file_falls_back(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    data = chain_file(50, 2)
    path.write_bytes(data + b'{"id":"x","parentId":"nowhere","message":{}}\n')
    assert quick_path(str(path), None) is None
    path.write_bytes(data[:-3])  # torn tail
    assert quick_path(str(path), None) is None


@pytest.mark.parametrize("seed", range(6))
def test_deep_chains_with_forks_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(chain_file(2500, seed))
    check_file(capsys, path, seed)


@FUZZ
@given(sessions(), st.integers(0, 2**32))
def test_random_sessions_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], records: list[dict[str, Any]], seed: int
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(b"".join(lines_of(records)))
    check_file(capsys, path, seed)


# -- damaged files: whatever the damage, the same answer --------------------------------

DAMAGE = [
    "torn",
    "garbage",
    "duplicate",
    "duplicate id",
    "orphan",
    "shuffle",
    "cycle",
    "odd role",
    "odd content",
    "unknown record",
    "blank",
    "spaces",
    "crlf",
    "bom",
    "welded",
    "two on a line",
    "not utf-8",
    "surrogate",
    "leaf unknown",
    "leaf later",
    "typed node",
    "meta not object",
    "message null",
    "no parentId",
    "empty id",
    "number id",
    "empty type",
    "hidden",
    "extra key",
    "nul tail",
]


def damage(lines: list[bytes], kind: str, rng: random.Random) -> bytes:
    """``lines`` (each with its newline) with one kind of damage at a random place."""
    lines = list(lines)
    at = rng.choice([rng.randrange(len(lines) + 1), len(lines)])  # the end moves the leaf
    some = rng.choice(lines)
    node = {"id": "d1", "parentId": None, "message": {"role": "user", "content": "x"}}
    insert: bytes | None = None
    if kind == "torn":
        data = b"".join(lines)
        return data[: -rng.randrange(1, min(len(data), 40) + 1)]
    if kind == "garbage":
        insert = some[: rng.randrange(1, len(some))] + b"\n"
    elif kind == "duplicate":
        insert = some
    elif kind == "duplicate id":  # another record under an id used earlier
        first = rng.randrange(len(lines))
        at = rng.randrange(first + 1, len(lines) + 1)
        old = parse_session(lines[first]).tree._nodes
        insert = encode_record({**node, "id": next(iter(old))}) if old else b"\n"
    elif kind == "orphan":
        insert = encode_record({**node, "parentId": "missing"})
    elif kind == "shuffle":
        rng.shuffle(lines)
    elif kind == "cycle":
        lines.append(encode_record({**node, "id": "c1", "parentId": "c2"}))
        lines.append(encode_record({**node, "id": "c2", "parentId": "c1"}))
    elif kind == "odd role":
        insert = encode_record({**node, "message": {"role": "system", "content": "x"}})
    elif kind == "odd content":
        insert = encode_record({**node, "message": {"role": "user", "content": 5}})
    elif kind == "unknown record":
        insert = encode_record({"type": "bookmark", "id": "x"})
    elif kind == "blank":
        insert = b"\n"
    elif kind == "spaces":
        insert = b"  \t\n"
    elif kind == "crlf":
        lines[at % len(lines)] = lines[at % len(lines)].replace(b"\n", b"\r\n")
    elif kind == "bom":
        lines[0] = b"\xef\xbb\xbf" + lines[0]
    elif kind == "welded" and len(lines) >= 2:
        i = rng.randrange(len(lines) - 1)
        lines[i : i + 2] = [lines[i][:-1] + lines[i + 1]]
    elif kind == "two on a line":  # and a blank line later: the line count still matches
        i = rng.randrange(len(lines))
        lines[i : i + 1] = [lines[i][:-1] + b" " + encode_record(node), b"\n"]
    elif kind == "not utf-8":
        i = rng.randrange(len(lines))
        lines[i] = lines[i].replace(b'"content":"', b'"content":"\xff', 1)
    elif kind == "surrogate":
        i = rng.randrange(len(lines))
        lines[i] = lines[i].replace(b'"content":"', b'"content":"\\ud83d', 1)
    elif kind == "leaf unknown":
        insert = encode_record(leaf_record("nobody"))
    elif kind == "leaf later":
        lines.insert(0, encode_record(leaf_record("d1")))
        lines.append(encode_record(node))
    elif kind == "typed node":
        insert = encode_record({**node, "type": "note"})
    elif kind == "meta not object":
        insert = encode_record({**node, "meta": "x"})
    elif kind == "message null":
        insert = encode_record({**node, "message": None})
    elif kind == "no parentId":
        insert = encode_record({"id": "d1", "message": node["message"]})
    elif kind == "empty id":
        insert = encode_record({**node, "id": ""})
    elif kind == "number id":
        insert = encode_record({**node, "id": 7})
    elif kind == "empty type":
        insert = encode_record({**node, "type": ""})
    elif kind == "hidden":
        insert = encode_record({"type": "hidden", "id": "nobody"})
    elif kind == "extra key":
        insert = encode_record({**node, "line": 3})
    elif kind == "nul tail":
        return b"".join(lines) + b"\0" * rng.randrange(1, 100)
    if insert is not None:
        lines.insert(at, insert)
    return b"".join(lines)


@FUZZ
@given(sessions(), st.sampled_from(DAMAGE), st.integers(0, 2**32))
def test_damaged_sessions_agree(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    records: list[dict[str, Any]],
    kind: str,
    seed: int,
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(damage(lines_of(records), kind, random.Random(seed)))
    check_file(capsys, path, seed)


@pytest.mark.parametrize("kind", DAMAGE)
def test_each_damage_in_a_deep_chain_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "s.chat.jsonl"
    lines = chain_file(600, 7).splitlines(keepends=True)
    for seed in range(4):
        path.write_bytes(damage(lines, kind, random.Random(seed)))
        check_file(capsys, path, seed)


@pytest.mark.parametrize("seed", range(12))
def test_the_loader_corpus_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    """The loader tests' damaged files, every kind of damage sprinkled through."""
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(damaged_file(seed))
    check_file(capsys, path, seed)


def test_other_tools_files_and_unreadable_paths_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = tmp_path / "c.jsonl"
    claude.write_bytes(jsonl(claude_code_session()))
    assert quick_path(str(claude), None) is None
    check_file(capsys, claude, 0)
    for name in [tmp_path / "missing.chat.jsonl", tmp_path]:
        status, out, err = both_ways(capsys, "path", str(name), "--json")
        assert status == 2 and out == "" and err
    empty = tmp_path / "e.chat.jsonl"
    empty.write_bytes(b"")
    assert both_ways(capsys, "path", str(empty), "--json")[0] == 0
