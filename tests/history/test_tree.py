"""The session tree, built by hand: every scenario of the chapter, no files."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from jupyter_tree_chat.errors import AmbiguousId, NodeNotFound, RoleOrderError, TreeError
from jupyter_tree_chat.history.tree import (
    Node,
    SessionTree,
    check_role_order,
    is_tool_result,
    message_text,
    only_thinking,
    redacted_thinking_count,
    thinking_text,
)


def user(text: Any, ts: int = 0) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def texts(tree: SessionTree, leaf: str | None = None) -> list[str]:
    return [message_text(m) for m in tree.active_path(leaf)]


def linear(*ids: str) -> SessionTree:
    """A → B → C ..., alternating user and assistant, each message's text its id."""
    tree = SessionTree()
    for i, node_id in enumerate(ids):
        tree.append(node_id, user(node_id) if i % 2 == 0 else assistant(node_id))
    return tree


# -- the chapter's scenarios -----------------------------------------------------------


def test_fork_at_b_after_a_b_c_d_e_gives_a_path_that_skips_c_d_e() -> None:
    tree = linear("A", "B", "C", "D", "E")
    assert texts(tree) == ["A", "B", "C", "D", "E"]

    new = tree.fork("B", "C2", user("ask another way"))

    assert tree.leaf == "C2"
    assert texts(tree) == ["A", "B", "ask another way"]
    assert texts(tree, "E") == ["A", "B", "C", "D", "E"]  # the old branch is kept whole
    assert [n.id for n in tree.branches("B")] == ["C", "C2"]
    assert new.parent_id == "B"


def test_editing_a_user_message_adds_a_sibling_and_keeps_the_original() -> None:
    tree = linear("A", "B", "C", "D")

    edited = tree.edit("C", "C2", "better question", timestamp=99)

    assert edited.parent_id == "B"
    assert edited.message == {"role": "user", "content": "better question", "timestamp": 99}
    assert tree.get("C").message == user("C")  # unchanged
    assert tree.leaf == "C2"
    assert texts(tree) == ["A", "B", "better question"]
    assert str(tree.sibling_position("C2")) == "2/2"
    assert str(tree.sibling_position("C")) == "1/2"


def test_editing_the_first_message_makes_a_second_root() -> None:
    tree = linear("A", "B")
    tree.edit("A", "A2", "hello again")
    assert [n.id for n in tree.roots()] == ["A", "A2"]
    assert texts(tree) == ["hello again"]


def tool_session() -> SessionTree:
    """The chapter's scenario 2: a refactor request, a tool call, its result, a summary."""
    tree = SessionTree()
    tree.append("u1", user("hi"))
    tree.append("a1", assistant("hello"))
    tree.append("u2", user("refactor this file"))
    tree.append(
        "a2",
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "edit_file", "input": {}}],
        },
    )
    tree.append(
        "r2",
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    )
    tree.append("a3", assistant("refactoring done"))
    return tree


def test_fork_before_tool_use_goes_back_past_the_tool_result_to_the_real_question() -> None:
    tree = tool_session()

    point = tree.fork_before_tool_use_point()
    assert point.id == "u2"  # not r2: that one the tool system wrote

    new = tree.fork_before_tool_use("u2b", "refactor this file\n\n(try another approach)")
    assert new.parent_id == "a1"
    assert texts(tree) == ["hi", "hello", "refactor this file\n\n(try another approach)"]
    # the model no longer sees the tool call or its result
    assert not any(is_tool_result(m) for m in tree.active_path())


def test_fork_before_tool_use_keeps_the_question_when_no_content_is_given() -> None:
    tree = tool_session()
    tree.fork_before_tool_use("u2b", timestamp=5)
    assert tree.active_path()[-1] == {
        "role": "user",
        "content": "refactor this file",
        "timestamp": 5,
    }


def test_fork_before_tool_use_with_no_user_message_says_so() -> None:
    with pytest.raises(TreeError, match="empty"):
        SessionTree().fork_before_tool_use_point()


def test_retry_gives_sibling_assistant_replies_under_the_same_user_node() -> None:
    tree = SessionTree()
    tree.append("u", user("explain quantum computing"))
    tree.append("v1", assistant("quantum computing is..."))

    assert tree.retry("v1").id == "u"  # an assistant's retry point is its user message
    assert tree.leaf == "u"
    tree.append("v2", assistant("starting from classical computing..."))

    assert [n.id for n in tree.branches("u")] == ["v1", "v2"]
    assert str(tree.sibling_position("v2")) == "2/2"
    assert len(tree) == 3  # no duplicate user node
    assert texts(tree) == ["explain quantum computing", "starting from classical computing..."]


def test_the_retry_point_of_a_user_node_is_itself() -> None:
    tree = linear("A", "B")
    assert tree.retry_point("A").id == "A"


def test_branches_switch_and_deepest_leaf() -> None:
    tree = linear("A", "B", "C", "D", "E")
    tree.fork("B", "C2", user("C2"))
    tree.append("D2", assistant("D2"))
    tree.switch("E")
    assert texts(tree) == ["A", "B", "C", "D", "E"]

    assert [n.id for n in tree.branches("B")] == ["C", "C2"]
    assert tree.deepest_leaf("B") == "D2"  # newest child at each step
    assert tree.deepest_leaf("C") == "E"
    assert tree.deepest_leaf("E") == "E"

    tree.switch(tree.deepest_leaf("B"))
    assert texts(tree) == ["A", "B", "C2", "D2"]
    assert {n.id for n in tree.leaves()} == {"E", "D2"}


def test_a_linear_session_is_the_special_case_with_no_branches() -> None:
    tree = linear("A", "B", "C", "D")
    assert [n.parent_id for n in tree] == [None, "A", "B", "C"]
    assert all(len(tree.branches(n.id)) <= 1 for n in tree)
    assert all(str(tree.sibling_position(n.id)) == "1/1" for n in tree)
    assert tree.deepest_leaf("A") == "D" == tree.leaf


def test_compaction_is_a_new_root_linked_to_the_leaf_it_summarises() -> None:
    tree = linear("A", "B", "C", "D")
    root, ack = tree.compact("we said A to D", "D", "S", "S1", timestamp=7)

    assert root.parent_id is None and root.meta == {"compacted_from": "D"}
    assert ack.parent_id == "S" and ack.meta == {"synthetic": True}
    assert tree.leaf == "S1"
    assert texts(tree)[0].endswith("we said A to D")
    tree.append("E", user("go on"))  # a question can follow the acknowledgement
    tree.switch("D")
    assert texts(tree) == ["A", "B", "C", "D"]  # the full history is one switch away


def test_compaction_writes_the_heading_and_acknowledgement_it_is_given() -> None:
    tree = linear("A", "B")
    root, ack = tree.compact(
        "我们聊了 A 和 B", "B", "S", "S1", heading="总结：", acknowledgement="好。"
    )
    assert root.text == "总结：\n\n我们聊了 A 和 B" and ack.text == "好。"
    english, _ = linear("A", "B").compact("we said A and B", "B", "S", "S1")
    assert english.text == "Summary of our conversation so far:\n\nwe said A and B"


def test_compaction_refuses_reused_ids_without_changing_the_tree() -> None:
    tree = linear("A", "B")
    with pytest.raises(TreeError, match="already in the tree"):
        tree.compact("s", "B", "S", "A")
    with pytest.raises(TreeError, match="two different ids"):
        tree.compact("s", "B", "S", "S")
    assert len(tree) == 2 and tree.leaf == "B"


# -- role order ------------------------------------------------------------------------


def test_an_assistant_under_an_assistant_is_refused_with_the_reason() -> None:
    tree = linear("A", "B")
    with pytest.raises(RoleOrderError, match="assistant message cannot follow another"):
        tree.append("C", assistant("again"))
    assert len(tree) == 2 and tree.leaf == "B"


def test_a_user_message_under_a_user_message_is_refused() -> None:
    tree = linear("A")
    with pytest.raises(RoleOrderError, match="user message cannot follow another user"):
        tree.append("B", user("again"))


def test_a_conversation_starts_with_a_user_message() -> None:
    with pytest.raises(RoleOrderError, match="must start with a user message"):
        SessionTree().append("A", assistant("hi"))


def test_a_tool_result_must_follow_a_tool_use() -> None:
    tree = linear("A", "B")
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}
    with pytest.raises(RoleOrderError, match="tool_result"):
        tree.append("C", result)


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(RoleOrderError, match="'system'"):
        check_role_order(None, {"role": "system", "content": "x"})


def test_nodes_added_without_role_checks_keep_history_as_written() -> None:
    tree = SessionTree()
    tree.add(Node("a", None, assistant("first")), check_roles=False)
    tree.add(Node("b", "a", assistant("second")), check_roles=False)
    assert texts(tree, "b") == ["first", "second"]


# -- ids ---------------------------------------------------------------------------------


def test_unknown_ids_and_parents_are_refused() -> None:
    tree = linear("A")
    with pytest.raises(NodeNotFound, match="no node with id 'X'"):
        tree.fork("X", "B", assistant("b"))
    with pytest.raises(NodeNotFound, match="parent 'X'"):
        tree.add(Node("B", "X", assistant("b")))
    with pytest.raises(TreeError, match="already in the tree"):
        tree.add(Node("A", None, user("again")))


def test_resolve_takes_a_whole_id_or_a_unique_prefix_and_a_whole_id_wins() -> None:
    tree = linear("C", "C2", "abc123", "abd456")
    assert tree.resolve("C").id == "C"  # whole id beats being a prefix of C2
    assert tree.resolve("abc").id == "abc123"
    with pytest.raises(AmbiguousId, match="'ab' matches 2 nodes"):
        tree.resolve("ab")
    with pytest.raises(NodeNotFound, match="no node id starts with 'z'"):
        tree.resolve("z")


SIGNED = {"type": "thinking", "thinking": "Let me see.", "signature": "c2ln"}
UNSIGNED = {"type": "thinking", "thinking": "Let me s", "signature": ""}
REDACTED = {"type": "redacted_thinking", "data": "ZW5j"}
TEXT = {"type": "text", "text": "Five."}


def test_a_reply_cut_while_thinking_holds_only_thinking() -> None:
    assert only_thinking({"role": "assistant", "content": [UNSIGNED]})
    assert only_thinking({"role": "assistant", "content": [SIGNED, {"type": "text", "text": ""}]})
    assert not only_thinking({"role": "assistant", "content": [SIGNED, TEXT]})
    assert not only_thinking({"role": "assistant", "content": [{"type": "text", "text": ""}]})
    assert not only_thinking(user("hi"))


def test_thinking_text_joins_the_thinking_and_message_text_leaves_it_out() -> None:
    message = {"role": "assistant", "content": [SIGNED, REDACTED, UNSIGNED, TEXT]}
    assert thinking_text(message) == "Let me see.\n\nLet me s"
    assert redacted_thinking_count(message) == 1
    assert message_text(message) == "Five."


# -- depth -------------------------------------------------------------------------------


def test_a_100000_deep_tree_walks_without_hitting_the_recursion_limit() -> None:
    tree = SessionTree()
    depth = 100_000
    for i in range(depth):
        tree.append(f"n{i}", user(str(i)) if i % 2 == 0 else assistant(str(i)))
    leaf = f"n{depth - 1}"
    assert len(tree.active_path(leaf)) == depth
    assert tree.depth(leaf) == depth
    assert tree.deepest_leaf("n0") == leaf
    assert tree.fork_before_tool_use_point(leaf).id == f"n{depth - 2}"
    tree.fork("n0", "side", assistant("side"))
    assert tree.deepest_leaf("n0") == "side"
    assert tree.get("n5") == Node("n5", "n4", assistant("5"))


def test_a_node_taken_from_one_tree_into_another_leaves_the_first_intact() -> None:
    first = linear("A", "B", "C")
    second = SessionTree()
    for node in first:
        second.add(node)
    second.fork("A", "B2", assistant("other"))
    assert [n.id for n in first.branches("A")] == ["B"]
    assert [n.id for n in second.branches("A")] == ["B", "B2"]


def test_iterating_while_another_thread_appends_never_fails() -> None:
    """The panel reads the tree on a kernel subshell thread while a turn appends."""
    tree = SessionTree()
    tree.fork(None, "r", {"role": "user", "content": "root"})
    stop = threading.Event()

    def append_forever() -> None:
        number = 0
        while not stop.is_set():
            number += 1
            tree.fork("r", f"a{number}", {"role": "assistant", "content": "x"})

    writer = threading.Thread(target=append_forever)
    writer.start()
    try:
        for _ in range(200):
            assert len(list(tree)) >= 1
            assert tree.leaves()
            tree.resolve("r")
    finally:
        stop.set()
        writer.join()
