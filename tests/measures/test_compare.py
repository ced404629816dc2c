"""compare.py: the sibling answers of a question, as the facts a person compares.

Hand-built trees, no files: which question an id names, the answers in sibling order,
an answer with tool rounds counted as one (its tokens and time added up, its text the
last reply's), and the rows a DataFrame is made of.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_tree_chat.errors import TreeError
from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.measures.compare import COLUMNS, question_of, rows, sibling_answers
from jupyter_tree_chat.measures.models import Price


def reply(node_id: str, parent: str, text: str, **meta: Any) -> Node:
    usage = meta.pop("usage", {"input_tokens": 10, "output_tokens": 5})
    full = {"model": "m", "usage": usage, "stop_reason": "end_turn", "duration_ms": 1500, **meta}
    return Node(node_id, parent, {"role": "assistant", "content": text}, full)


def question(node_id: str, parent: str | None, text: str) -> Node:
    return Node(node_id, parent, {"role": "user", "content": text})


@pytest.fixture
def tree() -> SessionTree:
    tree = SessionTree()
    tree.add(question("q1", None, "Which colour?"))
    tree.add(reply("a1", "q1", "Blue.", temperature=0.0))
    tree.add(
        Node(
            "a2",
            "q1",
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "look", "input": {}}],
            },
            {"model": "m", "usage": {"input_tokens": 10, "output_tokens": 3}, "duration_ms": 500,
             "stop_reason": "tool_use"},
        )
    )  # fmt: skip
    tree.add(
        Node(
            "r2",
            "a2",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                          "content": "green"}]},
            {"tool_results": True},
        )
    )  # fmt: skip
    tree.add(
        reply("f2", "r2", "Green, it says.", usage={"input_tokens": 20, "output_tokens": 4,
              "cache_read_input_tokens": 7})
    )  # fmt: skip
    tree.add(reply("a3", "q1", "Red", interrupted=True, error="interrupted by the user"))
    tree.add(question("q2", "a1", "Why blue?"))
    tree.add(reply("a4", "q2", "Because."))
    tree.leaf = "a4"
    return tree


def test_the_question_is_the_one_an_id_names_or_the_last_on_the_path(tree):
    assert question_of(tree, None).id == "q2"
    assert question_of(tree, "q1").id == "q1"
    assert question_of(tree, "a3").id == "q1"
    assert question_of(tree, "f2").id == "q1"  # a reply after a tool round answers q1


def test_every_answer_in_sibling_order_with_its_tool_rounds(tree):
    answers = sibling_answers(tree, "q1")
    assert [a.head.id for a in answers] == ["a1", "a2", "a3"]
    assert [a.position for a in answers] == ["1/3", "2/3", "3/3"]
    assert [n.id for n in answers[1].nodes] == ["a2", "r2", "f2"]
    assert answers[0].nodes == (tree.get("a1"),)  # the follow-up question is not part of it
    assert answers[1].text == "Green, it says."
    assert answers[1].usage("input_tokens") == 30
    assert answers[1].usage("cache_read_input_tokens") == 7
    assert answers[0].usage("cache_read_input_tokens") is None
    assert answers[1].seconds == 2.0


def test_rows_hold_every_column_in_order(tree):
    table = rows(sibling_answers(tree, "a1"))
    assert [list(row) for row in table] == [list(COLUMNS)] * 3
    assert table[0] == {
        "id": "a1",
        "position": "1/3",
        "endpoint": None,  # no endpoint nor provider recorded in this hand-built tree
        "model": "m",
        "served_model": None,
        "temperature": 0.0,
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": None,
        "cost": None,  # model "m" has no price in the built-in table
        "seconds": 1.5,
        "stop_reason": "end_turn",
        "interrupted": False,
        "text": "Blue.",
    }
    assert table[2]["interrupted"] is True and table[2]["temperature"] is None


def test_each_answer_costs_its_replies_at_the_prices_given(tree):
    prices = {"m": Price(input=3, output=15, cache_write=3.75, cache_read=0.30)}
    costs = [row["cost"] for row in rows(sibling_answers(tree, "q1", prices))]
    # 10 in + 5 out; with its tool round 10 + 20 in, 3 + 4 out, 7 cache read; 10 in + 5 out
    assert costs == pytest.approx([105e-6, (30 * 3 + 7 * 15 + 7 * 0.30) / 1e6, 105e-6])
    assert costs[1] == pytest.approx(197.1e-6)
    tree.get("f2").meta["model"] = "unpriced"  # one reply without a price: no partial sum
    assert rows(sibling_answers(tree, "q1", prices))[1]["cost"] is None


def test_adding_a_column_is_one_line(tree, monkeypatch):
    monkeypatch.setitem(COLUMNS, "words", lambda a: len(a.text.split()))
    assert [row["words"] for row in rows(sibling_answers(tree, "q1"))] == [1, 3, 1]


def test_an_empty_session_says_what_to_do():
    with pytest.raises(TreeError, match="ask something first"):
        sibling_answers(SessionTree(), None)
