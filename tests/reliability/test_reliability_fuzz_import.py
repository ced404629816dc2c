"""Damaged sources never stop an import, and whatever is imported is a sendable tree.

Another tool's file may be cut by a crash, edited by hand, or written by a version we
have never seen. The promises (issue 14): damage is reported with its line number and
never stops the import; every good record is imported; the result obeys this project's
tree rules and is a valid Messages API path from every leaf.

Hypothesis builds Claude Code sessions (random trees of prompts, answers written one
record per block, tool calls with their results, progress and system records in the
chain, rewinds) and damages them: random bytes, a cut at every offset of a record,
shuffled, duplicated and glued lines. Apart from that, the builder gets random links
(orphans, cycles, repeated roles, split messages anywhere). The invariants everywhere:
``formats.read`` returns; the records load with no problem; each problem points at a
real line; the text of every intact message line is in the import; every leaf's path,
as sent, passes the fake API's rules (the real API's).
"""

from __future__ import annotations

import json
from typing import Any

from helpers.import_samples import (
    cc_record,
    chatgpt_export,
    imported_pieces,
    jsonl,
    pieces_of_content,
)
from helpers.sendable import refusal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_tree_chat import formats
from jupyter_tree_chat.formats import Imported, Source
from jupyter_tree_chat.formats.builder import TreeBuilder
from jupyter_tree_chat.formats.common import Entry

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def claude_sessions(draw: st.DrawFn, max_turns: int = 12) -> list[dict[str, Any]]:
    """A valid Claude Code session: prompts under answers (rewinds included), answers
    split into records, tool calls answered by results, records that are not messages."""
    records: list[dict[str, Any]] = []
    answers: list[str] = []  # ids a new prompt may hang under
    for turn in range(draw(st.integers(1, max_turns))):
        parent = draw(st.sampled_from([None, *answers])) if answers else None
        prompt = f"u{turn}"
        records.append(cc_record("user", prompt, parent, f"prompt {turn} {draw(words)}"))
        last, tools = prompt, 0
        while True:
            message_id = f"msg_{turn}_{tools}"
            blocks = draw(st.integers(1, 3))
            uses = draw(st.integers(0, 2))
            for b in range(blocks + uses):
                uuid = f"a{turn}_{tools}_{b}"
                block = (
                    {"type": "text", "text": f"answer {turn} {draw(words)}"}
                    if b < blocks
                    else {
                        "type": "tool_use",
                        "id": f"toolu_{turn}_{tools}_{b}",
                        "name": "f",
                        "input": {},
                    }
                )
                records.append(cc_record("assistant", uuid, last, [block], message_id=message_id))
                last = uuid
                if draw(st.integers(0, 4)) == 0:
                    records.append(cc_record("progress", f"p-{uuid}", last))
                    last = f"p-{uuid}"
            if not uses or tools >= 2:
                break
            for b in range(blocks, blocks + uses):
                result_id = f"r{turn}_{tools}_{b}"
                result = {
                    "type": "tool_result",
                    "tool_use_id": f"toolu_{turn}_{tools}_{b}",
                    "content": "ok",
                }
                records.append(cc_record("user", result_id, last, [result]))
                last = result_id
            tools += 1
        answers.append(last)
        if draw(st.booleans()):
            records.append(cc_record("system", f"s{turn}", last, subtype="turn_duration"))
    if draw(st.booleans()):
        records.append({"type": "last-prompt", "leafUuid": draw(st.sampled_from(answers))})
    return records


def check(imported: Imported, data: bytes) -> None:
    """The invariants: a clean load, real line numbers, every leaf's path sendable."""
    loaded = formats.load(imported)
    assert loaded.problems == []
    lines = data.count(b"\n") + 1
    for problem in imported.problems:
        assert problem.line is None or 1 <= problem.line <= lines, problem
    for leaf in loaded.tree.leaves():
        messages = [node.message for node in loaded.tree.path_nodes(leaf.id)]
        if messages[-1]["role"] == "assistant":
            messages.append({"role": "user", "content": "next"})
        problem = refusal(messages)
        assert problem is None, (leaf.id, problem)


def read(data: bytes, fmt: str = "claude-code") -> Imported:
    return formats.read([Source("s.jsonl", data)], fmt)


def assert_intact_lines_kept(lines: list[bytes], imported: Imported) -> None:
    kept = imported_pieces(imported.records)
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
            for piece in pieces_of_content(record["message"]["content"]):
                assert piece in kept, piece


@FUZZ
@given(claude_sessions())
def test_a_valid_session_imports_whole(records: list[dict[str, Any]]) -> None:
    data = jsonl(records)
    imported = read(data)
    assert imported.problems == []
    check(imported, data)
    assert_intact_lines_kept(data.splitlines(), imported)


@FUZZ
@given(claude_sessions(), st.binary(min_size=1, max_size=512), st.data())
def test_random_bytes_inside_a_session_are_reported_and_cost_nothing_else(
    records: list[dict[str, Any]], garbage: bytes, data: Any
) -> None:
    lines = jsonl(records).splitlines(keepends=True)
    where = data.draw(st.integers(0, len(lines)))
    damaged = b"".join([*lines[:where], garbage + b"\n", *lines[where:]])
    imported = read(damaged)
    check(imported, damaged)
    assert_intact_lines_kept([line.rstrip(b"\n") for line in lines], imported)


@settings(FUZZ, max_examples=25)
@given(claude_sessions(max_turns=4), st.data())
def test_a_cut_at_every_offset_of_a_record(records: list[dict[str, Any]], data: Any) -> None:
    lines = jsonl(records).splitlines(keepends=True)
    target = data.draw(st.integers(0, len(lines) - 1))
    start = sum(len(line) for line in lines[:target])
    whole = b"".join(lines)
    for cut in range(start + 1, start + len(lines[target])):
        chopped = whole[:cut]
        imported = read(chopped)
        check(imported, chopped)
        assert_intact_lines_kept([line.rstrip(b"\n") for line in lines[:target]], imported)


@FUZZ
@given(claude_sessions(), st.randoms(use_true_random=False), st.data())
def test_shuffled_duplicated_and_glued_lines_still_import_every_message(
    records: list[dict[str, Any]], rng: Any, data: Any
) -> None:
    lines = [line + b"\n" for line in jsonl(records).splitlines()]
    rng.shuffle(lines)
    copy = data.draw(st.integers(0, len(lines) - 1))
    lines.insert(data.draw(st.integers(0, len(lines))), lines[copy])
    if len(lines) > 2:
        glue = data.draw(st.integers(0, len(lines) - 2))
        lines[glue : glue + 2] = [lines[glue].rstrip(b"\n") + lines[glue + 1]]
    damaged = b"".join(lines)
    imported = read(damaged)
    check(imported, damaged)
    assert_intact_lines_kept(jsonl(records).splitlines(), imported)


@FUZZ
@given(st.binary(max_size=2048), st.sampled_from(formats.FORMATS))
def test_any_bytes_in_any_format_never_raise(data: bytes, fmt: str) -> None:
    imported = read(data, fmt)
    check(imported, data)


@FUZZ
@given(st.data())
def test_a_damaged_chatgpt_export_never_raises(data: Any) -> None:
    whole = json.dumps(chatgpt_export()).encode()
    cut = data.draw(st.integers(0, len(whole)))
    flip = data.draw(st.integers(0, len(whole) - 1))
    damaged = bytearray(whole[:cut] + whole[cut:])
    damaged[flip] = data.draw(st.integers(0, 255))
    imported = read(bytes(damaged), "chatgpt")
    check(imported, bytes(damaged))


@st.composite
def random_entries(draw: st.DrawFn) -> list[Entry]:
    """Entries with any links: orphans, cycles, repeated roles, split messages anywhere."""
    count = draw(st.integers(1, 30))
    ids = [f"e{i}" for i in range(count)]
    found = []
    for index, entry_id in enumerate(ids):
        parent = draw(st.sampled_from([None, "missing", *ids]))
        role = draw(st.sampled_from(["user", "assistant", None]))
        kind = draw(st.integers(0, 3))
        if role == "assistant" and kind == 0:
            content: Any = [{"type": "tool_use", "id": f"t{index}", "name": "f", "input": {}}]
        elif role == "user" and kind == 0:
            use = draw(st.integers(0, count))
            content = [{"type": "tool_result", "tool_use_id": f"t{use}", "content": "r"}]
        elif kind == 1:
            content = [{"type": "thinking", "thinking": "hm", "signature": ""}]
        else:
            content = f"text {index}"
        found.append(
            Entry(
                entry_id,
                parent,
                role,
                {"file": "f", "line": index + 1},
                content,
                group=draw(st.sampled_from([None, "g1", "g2"])) if role == "assistant" else None,
                stamp=draw(st.sampled_from([None, "T"])),
            )
        )
    return found


@FUZZ
@given(random_entries())
def test_any_links_build_a_tree_whose_every_path_is_sendable(entries: list[Entry]) -> None:
    builder = TreeBuilder("test")
    for entry in entries:
        builder.add(entry)
    built = builder.build({"type": "session", "version": 1})
    imported = Imported("test", ["f"], built.records, builder.problems, built.nodes)
    check(imported, b"\n" * len(entries))
    kept = imported_pieces(built.records)
    for entry in entries:
        if entry.role is not None and isinstance(entry.content, str):
            assert entry.content in kept
