"""Finding a node (share/find.py): every branch searched, hidden ones counted or found,
thinking and tool results marked, case ignored unless asked, CJK text, regular
expressions, and what each match says of where it stands."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.errors import QueryError
from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.share.find import (
    Query,
    find,
    hidden_line,
    match_lines,
    message_fields,
    summary_line,
    text_index,
)


def build(*rows: tuple[str, str | None, str, object]) -> SessionTree:
    tree = SessionTree()
    for node_id, parent, role, content in rows:
        tree.add(Node(node_id, parent, {"role": role, "content": content}), check_roles=False)
    tree.leaf = rows[-1][0]
    return tree


def lesson() -> SessionTree:
    """Two questions forked at the root's answer, a retry, a tool round, thinking, CJK."""
    tool_use = [
        {"type": "text", "text": "Let me count."},
        {"type": "tool_use", "id": "t1", "name": "word_count", "input": {"text": "alpha beta"}},
    ]
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": "2 words, says the tool"}]
    thought = [
        {"type": "thinking", "thinking": "The user wants the branches.", "signature": "s"},
        {"type": "text", "text": "Each branch keeps its own path."},
    ]
    return build(
        ("q1", None, "user", "What is a session tree?"),
        ("a1", "q1", "assistant", "A Session Tree keeps every branch."),
        ("a1b", "q1", "assistant", "It is a tree of messages."),
        ("q2", "a1", "user", "Count the words in alpha beta"),
        ("a2", "q2", "assistant", tool_use),
        ("t2", "a2", "user", result),
        ("a3", "t2", "assistant", "Two words."),
        ("q3", "a1", "user", "Explain branches"),
        ("a4", "q3", "assistant", thought),
        ("q4", "a4", "user", "什么是会话树？"),
        ("a5", "q4", "assistant", "会话树保存每一个分支。"),
    )


def ids(tree: SessionTree, text: str, **options: object) -> list[str]:
    kw = {k: v for k, v in options.items() if k in ("labels", "hidden", "leaf", "limit")}
    query = Query(text, **{k: v for k, v in options.items() if k not in kw})  # type: ignore[arg-type]
    return find(tree, query, **kw).ids  # type: ignore[arg-type]


def test_every_branch_is_searched_in_the_files_order_ignoring_case():
    tree = lesson()
    assert ids(tree, "session tree") == ["q1", "a1"]  # "Session Tree" too
    assert ids(tree, "TREE") == ["q1", "a1", "a1b"]
    assert ids(tree, "Session Tree", case_sensitive=True) == ["a1"]


def test_each_match_says_where_it_stands():
    tree = lesson()
    found = find(tree, Query("tree"), labels={"a1b": "short one"})
    by_id = {m.node_id: m for m in found.matches}
    assert by_id["q1"].role == "user" and by_id["q1"].position == "1/1"
    assert by_id["a1"].position == "1/2" and by_id["a1b"].position == "2/2"
    assert by_id["a1b"].branch == "short one"  # a label names its branch
    assert by_id["a1"].branch == "What is a session tree?"  # else the question above
    assert (by_id["a1"].before, by_id["a1"].found, by_id["a1"].after) == (
        "A Session ",
        "Tree",
        " keeps every branch.",
    )
    # below a fork, a branch is named by the question where it left the others
    found = find(tree, Query("words"))
    assert {m.node_id: m.branch for m in found.matches} == {
        "q2": "Count the words in alpha beta",
        "t2": "Count the words in alpha beta",
        "a3": "Count the words in alpha beta",
    }


def test_thinking_tool_results_and_tool_calls_count_and_are_marked():
    tree = lesson()
    found = find(tree, Query("the user wants"))
    assert [(m.node_id, m.where) for m in found.matches] == [("a4", "thinking")]
    found = find(tree, Query("says the tool"))
    assert [(m.node_id, m.role, m.where) for m in found.matches] == [("t2", "tool", "tool result")]
    found = find(tree, Query("word_count"))
    assert [(m.node_id, m.where) for m in found.matches] == [("a2", "tool call")]
    # the answer's own words win over its thinking when both match
    assert [m.where for m in find(tree, Query("branch")).matches if m.node_id == "a4"] == ["text"]
    lines = match_lines(find(tree, Query("says the tool")), 3)
    assert lines == ["t2   tool        1/1  “Count the words in alpha beta”  [in a tool result] "
                     "2 words, «says the tool»"]  # fmt: skip


def test_cjk_text_is_found_and_shown_around_the_match():
    tree = lesson()
    found = find(tree, Query("会话树"))
    assert found.ids == ["q4", "a5"]
    reply = found.matches[1]
    assert (reply.before, reply.found, reply.after) == ("", "会话树", "保存每一个分支。")
    assert reply.branch == "Explain branches"


def test_the_role_option_keeps_questions_answers_or_tool_results():
    tree = lesson()
    assert ids(tree, "words", role="user") == ["q2"]
    assert ids(tree, "words", role="tool") == ["t2"]
    assert ids(tree, "words", role="assistant") == ["a3"]
    with pytest.raises(QueryError, match="give --role user, assistant or tool"):
        Query("x", role="system")


def test_regular_expressions_and_their_mistakes():
    tree = lesson()
    assert ids(tree, r"^(What|Explain)\b", regex=True) == ["q1", "q3"]
    assert ids(tree, r"\d+ words", regex=True) == ["t2"]
    with pytest.raises(QueryError, match=r"is not a regular expression .*leave out --regex"):
        find(tree, Query("(unclosed", regex=True))
    with pytest.raises(QueryError, match="nothing to find"):
        Query("")
    # without --regex the text is literal
    assert ids(tree, "(unclosed") == []


def test_hidden_branches_are_counted_and_found_only_when_asked():
    tree = lesson()
    tree.leaf = "a5"
    hidden = {"q2", "a1b"}  # the tool branch and the retry, both off the current path
    found = find(tree, Query("words"), hidden=hidden, leaf="a5")
    assert found.ids == [] and found.hidden == 3
    assert hidden_line(found, "--all finds them too") == (
        "(3 more matches in hidden branches; --all finds them too)"
    )
    found = find(tree, Query("words", include_hidden=True), hidden=hidden, leaf="a5")
    assert found.ids == ["q2", "t2", "a3"] and all(m.hidden for m in found.matches)
    # a hidden node on the current path is not folded away, so it is found
    assert ids(tree, "tree", hidden={"a1"}, leaf="a5") == ["q1", "a1", "a1b"]


def test_a_limit_describes_the_first_matches_and_counts_them_all():
    tree = lesson()
    found = find(tree, Query("e"), limit=2)
    assert len(found.matches) == 2 and len(found.ids) > 2
    assert summary_line(found, Query("e")) == f"{len(found.ids)} matches for 'e'."
    assert find(tree, Query("e"), limit=0).matches == []


def test_the_index_follows_a_growing_tree():
    tree = lesson()
    assert ids(tree, "appended later") == []
    index = text_index(tree)
    tree.add(Node("q9", "a5", {"role": "user", "content": "appended later"}))
    assert ids(tree, "appended later") == ["q9"]
    assert text_index(tree) is index and len(index.ids) == len(tree)


def test_a_deep_chain_is_named_without_recursion():
    rows = [("n0", None, "user", "the first question")]
    for k in range(1, 6000):
        role = "assistant" if k % 2 else "user"
        rows.append((f"n{k}", f"n{k - 1}", role, f"step {k} needle"))
    tree = build(*rows)
    found = find(tree, Query("needle"))
    assert len(found.ids) == 5999
    assert {m.branch for m in found.matches} == {"the first question"}


def test_message_fields_read_every_kind_of_content():
    assert message_fields({"content": "plain"}) == [("text", "plain")]
    blocks = [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "said"},
        {"type": "tool_result", "content": [{"type": "text", "text": "r1"}, {"type": "image"}]},
        {"type": "tool_use", "name": "f", "input": {"a": 1, "b": [2, "三"]}},
        {"type": "redacted_thinking", "data": "xx"},
        "not a block",
    ]
    assert message_fields({"content": blocks}) == [
        ("text", "said"),
        ("thinking", "hmm"),
        ("tool result", "r1"),
        ("tool call", 'f {"a": 1, "b": [2, "三"]}'),
    ]


def test_a_file_is_searched_from_its_raw_blocks_as_its_decoded_messages_would_be():
    import json

    from jupyter_tree_chat.history.store import parse_session
    from jupyter_tree_chat.share.find import node_fields

    contents = [
        "plain text",
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "x"}],
        [{"type": "tool_use", "id": "1", "name": "f", "input": {"q": "三", "n": [1, 2.5]}}],
        [{"type": "tool_result", "tool_use_id": "1", "content": [{"type": "text", "text": "r"}]}],
        [{"type": "text", "text": 7}, {"type": 3}, "a string", {"type": "redacted_thinking"}],
        [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AA=="},
            }
        ],
    ]
    lines = [
        json.dumps({"id": f"n{k}", "parentId": None, "message": {"role": "user", "content": c}})
        for k, c in enumerate(contents)
    ]
    result = parse_session(("\n".join(lines) + "\n").encode())
    nodes = list(result.tree)
    raw = [node_fields(node) for node in nodes]  # before anything decodes the messages
    assert raw == [message_fields(node.message) for node in nodes]
    assert raw[3] == [("tool call", 'f {"q": "三", "n": [1, 2.5]}')]
