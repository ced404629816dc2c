"""The rules every format shares (formats/builder.py), on hand-built entries.

Each test builds a few entries as a reader would hand them over, builds, and looks at
the records a session file would hold: which nodes, under which parents, with what
content, and what the problems and counts say.
"""

from __future__ import annotations

from typing import Any

from jupyter_tree_chat.formats.builder import SYNTHETIC_QUESTION, TreeBuilder
from jupyter_tree_chat.formats.common import Entry
from jupyter_tree_chat.history.store import encode_record, parse_session


def entry(node_id: str, parent: str | None, role: str | None, content: Any = "", **kw: Any):
    return Entry(
        node_id, parent, role, {"file": "f.jsonl", "line": kw.pop("line", 1)}, content, **kw
    )


def build(*entries: Entry, leaf: str | None = None) -> tuple[TreeBuilder, list[dict[str, Any]]]:
    builder = TreeBuilder("test")
    for item in entries:
        builder.add(item)
    if leaf is not None:
        builder.prefer_leaf(leaf)
    built = builder.build({"type": "session", "version": 1})
    return builder, built.records


def nodes(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records if "type" not in r}


def shape(records: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
    return [(r["id"], r["parentId"], r["message"]["role"]) for r in nodes(records).values()]


def leaf_of(records: list[dict[str, Any]]) -> str | None:
    return next((r["id"] for r in records if r.get("type") == "leaf"), None)


def test_a_record_that_is_not_a_message_is_bridged_to_the_message_above_it():
    _, records = build(
        entry("u1", None, "user", "hi"),
        entry("a1", "u1", "assistant", "hello"),
        entry("sys", "a1", None),
        entry("prog", "sys", None),
        entry("u2", "prog", "user", "again"),
    )
    assert shape(records) == [("u1", None, "user"), ("a1", "u1", "assistant"), ("u2", "a1", "user")]


def test_records_of_one_api_message_become_one_assistant_node_in_order():
    one = {"type": "text", "text": "one"}
    two = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    builder, records = build(
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", [one], group="msg_1", meta={"usage": {"output_tokens": 1}}),
        entry("a2", "a1", "assistant", [two], group="msg_1", meta={"usage": {"output_tokens": 9}}),
        entry("r1", "a2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]),
    )
    held = nodes(records)["a1"]
    assert held["message"]["content"] == [one, two]
    assert held["meta"]["usage"] == {"output_tokens": 9}  # the last record's: the final count
    assert held["meta"]["merged"] == [{"id": "a2", "file": "f.jsonl", "line": 1}]
    assert shape(records)[-1] == ("r1", "a1", "user")
    assert builder.counts["split assistant records"] == 1


def test_sibling_tool_results_become_one_user_message_and_the_continuation_hangs_under_it():
    use = lambda i: {"type": "tool_use", "id": i, "name": "f", "input": {}}  # noqa: E731
    result = lambda i: [{"type": "tool_result", "tool_use_id": i, "content": i}]  # noqa: E731
    _, records = build(
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", [use("t1"), use("t2")]),
        entry("r1", "a1", "user", result("t1")),
        entry("next", "a1", "assistant", [{"type": "text", "text": "after"}]),
        entry("r2", "a1", "user", result("t2")),
    )
    assert shape(records) == [
        ("u1", None, "user"),
        ("a1", "u1", "assistant"),
        ("r1", "a1", "user"),
        ("next", "r1", "assistant"),
    ]
    assert nodes(records)["r1"]["message"]["content"] == result("t1") + result("t2")


def test_an_only_child_of_the_same_role_is_merged_into_its_parent_results_first():
    builder, records = build(
        entry("u1", None, "user", "typed first"),
        entry("u2", "u1", "user", [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]),
        entry("a1", "u2", "assistant", "answer"),
    )
    assert shape(records) == [("u1", None, "user"), ("a1", "u1", "assistant")]
    content = nodes(records)["u1"]["message"]["content"]
    assert [b["type"] for b in content] == ["tool_result", "text"]
    assert builder.counts["role-order repairs"] == 1


def test_a_same_role_child_among_siblings_is_rebuilt_beside_its_parent_with_both_texts():
    _, records = build(
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", "first"),
        entry("a2", "a1", "assistant", "second"),
        entry("u2", "a1", "user", "follow-up"),
    )
    assert shape(records) == [
        ("u1", None, "user"),
        ("a1", "u1", "assistant"),
        ("u2", "a1", "user"),
        ("a2", "u1", "assistant"),
    ]
    rebuilt = nodes(records)["a2"]
    assert [b["text"] for b in rebuilt["message"]["content"]] == ["first", "second"]
    assert rebuilt["meta"]["repeats"] == "a1"


def test_replayed_siblings_are_taken_once_and_their_children_kept():
    _, records = build(
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", "a", stamp="T1"),
        entry("a1-replay", "u1", "assistant", "a", stamp="T1"),
        entry("u2", "a1-replay", "user", "more"),
    )
    assert shape(records) == [("u1", None, "user"), ("a1", "u1", "assistant"), ("u2", "a1", "user")]


def test_siblings_at_one_time_with_different_text_are_a_real_branch():
    _, records = build(
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", "a", stamp="T1"),
        entry("a2", "u1", "assistant", "b", stamp="T1"),
    )
    assert [r[0] for r in shape(records)] == ["u1", "a1", "a2"]


def test_an_orphan_is_a_reported_root_and_an_answer_root_gets_a_marked_question():
    builder, records = build(
        entry("a1", "gone", "assistant", "an answer", line=4),
        entry("u1", "a1", "user", "q"),
    )
    question, answer, user = nodes(records).values()
    assert question["message"]["content"] == SYNTHETIC_QUESTION
    assert question["meta"]["synthetic"] is True
    assert (answer["id"], answer["parentId"]) == ("a1", question["id"])
    assert user["parentId"] == "a1"
    assert [str(p) for p in builder.problems] == [
        "f.jsonl line 4: record 'a1': its parent 'gone' is not in the source (imported as a root)"
    ]


def test_a_parent_cycle_is_broken_into_a_root_and_reported():
    builder, records = build(
        entry("u1", "a1", "user", "q", line=1),
        entry("a1", "u1", "assistant", "a", line=2),
    )
    assert shape(records) == [("u1", None, "user"), ("a1", "u1", "assistant")]
    assert [p.line for p in builder.problems] == [1]
    assert "closes a cycle" in builder.problems[0].message


def test_a_repeated_id_is_taken_once_unless_the_first_was_damaged():
    builder, records = build(
        entry("u1", None, "user", "first"),
        entry("u1", None, "user", "first"),
        entry("a1", "u1", None, damaged=True),
        entry("a1", "u1", "assistant", "the good copy", line=9),
    )
    assert [r["message"]["content"] for r in nodes(records).values()] == ["first", "the good copy"]
    assert builder.counts["repeated records"] == 1
    assert [str(p) for p in builder.problems] == [
        "f.jsonl line 9: id 'a1': this record replaces a damaged one"
    ]


def test_the_leaf_and_labels_follow_merges_and_bridges_to_the_nodes_holding_them():
    builder = TreeBuilder("test")
    for item in (
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", "x", group="m"),
        entry("a2", "a1", "assistant", "y", group="m"),
        entry("sys", "a2", None),
    ):
        builder.add(item)
    builder.prefer_leaf("nowhere")
    builder.prefer_leaf("sys")  # newer, and it resolves: a system record under a2 → a1
    builder.label("a2", "joined", {"file": "f.jsonl", "line": 5})
    builder.label("ghost", "lost", {"file": "f.jsonl", "line": 6})
    records = builder.build({"type": "session", "version": 1}).records
    assert leaf_of(records) == "a1"
    assert {"type": "label", "id": "a1", "label": "joined"} in records
    assert [p.line for p in builder.problems] == [6]


def test_without_a_leaf_the_last_message_of_the_main_conversation_is_current():
    _, records = build(
        entry("u1", None, "user", "q"),
        entry("a1", "u1", "assistant", "main"),
        entry("s1", None, "user", "side", meta={"sidechain": "agent"}),
    )
    assert leaf_of(records) == "a1"


def test_the_records_load_with_no_problems_parents_first():
    _, records = build(
        entry("a2", "u2", "assistant", "late in the file, early in the tree"),
        entry("u2", "a1", "user", "q2"),
        entry("a1", "u1", "assistant", "a1"),
        entry("u1", None, "user", "q1"),
    )
    loaded = parse_session(b"".join(map(encode_record, records)))
    assert loaded.problems == []
    assert [n.id for n in loaded.tree.path_nodes("a2")] == ["u1", "a1", "u2", "a2"]


def test_a_deep_chain_builds_without_recursion():
    chain = [entry("n0", None, "user", "q")]
    for i in range(1, 60_000):
        chain.append(entry(f"n{i}", f"n{i - 1}", "assistant" if i % 2 else "user", "x"))
    _, records = build(*chain)
    assert len(nodes(records)) == 60_000
    assert leaf_of(records) == "n59999"
