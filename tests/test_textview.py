"""The text tree and the Markdown export, as a person reads them."""

from __future__ import annotations

from typing import Any

from jupyter_tree_chat.history.tree import SessionTree
from jupyter_tree_chat.textview import (
    Chip,
    chip_text,
    draw_tree,
    hidden_branches,
    hidden_note,
    path_markdown,
    question_as_typed,
    short_id_length,
    summary,
    typed_pieces,
    typed_source,
)


def user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def chapter_tree() -> SessionTree:
    tree = SessionTree()
    tree.append("msg_001", user("hello"))
    tree.append("msg_002", assistant("Hi!\nHow can I help?"))
    tree.append("msg_003", user("continue"))
    tree.fork("msg_002", "msg_004", user("ask another way"))
    return tree


def test_the_tree_shows_ids_roles_first_lines_reply_counts_labels_and_the_leaf() -> None:
    tree = chapter_tree()
    drawing = draw_tree(tree, labels={"msg_002": "greeting"}, leaf="msg_004")
    assert drawing.splitlines() == [
        "msg_001 user  hello",
        "msg_002 assistant  Hi! …".ljust(56) + "  [2 replies] (greeting)",
        "├─ msg_003 user  continue",
        "└─ msg_004 user  ask another way".ljust(56) + "  ← current",
    ]


def test_a_hidden_branch_is_left_out_counted_on_its_parent_and_shown_with_all() -> None:
    tree = chapter_tree()
    tree.switch("msg_003")
    tree.append("msg_005", assistant("under the hidden one"))
    tree.switch("msg_003")
    drawing = draw_tree(tree, leaf="msg_003", hidden={"msg_004", "msg_005", "unknown"})
    assert drawing.splitlines() == [
        "msg_001 user  hello",
        "msg_002 assistant  Hi! …".ljust(56) + "  [2 replies] [1 hidden]",
        "msg_003 user  continue".ljust(56) + "  [1 hidden] ← current",
    ]
    assert hidden_branches(tree, {"msg_004", "msg_005", "unknown"}, "msg_003") == {
        "msg_004",
        "msg_005",
    }
    everything = draw_tree(tree, leaf="msg_003", hidden={"msg_004"}, show_hidden=True)
    assert (
        everything.splitlines()[-1] == "└─ msg_004 user  ask another way".ljust(56) + "  (hidden)"
    )
    assert hidden_note(2, "`show --all` shows them") == (
        "(2 hidden branches are not shown; `show --all` shows them)"
    )


def test_the_current_path_is_never_hidden_and_nested_hidden_branches_count_once() -> None:
    tree = chapter_tree()
    tree.switch("msg_003")
    tree.append("msg_005", assistant("deeper"))
    assert hidden_branches(tree, {"msg_003", "msg_005"}, "msg_004") == {"msg_003"}
    assert hidden_branches(tree, {"msg_003", "msg_004"}, "msg_005") == {"msg_004"}
    assert "msg_005" in draw_tree(tree, leaf="msg_005", hidden={"msg_003"})


def test_chains_inside_a_branch_continue_under_their_connector() -> None:
    tree = chapter_tree()
    tree.switch("msg_003")
    tree.append("msg_005", assistant("ok"))
    lines = draw_tree(tree).splitlines()
    assert lines[2:] == [
        "├─ msg_003 user  continue",
        "│  msg_005 assistant  ok",
        "└─ msg_004 user  ask another way",
    ]


def test_ids_are_shortened_like_git_to_a_unique_prefix_of_at_least_seven() -> None:
    assert short_id_length(["a1b2c3d4e5", "ffffffffff"]) == 7
    assert short_id_length(["abcdefgh11", "abcdefgh22"]) == 9
    tree = SessionTree()
    tree.append("0123456789abcdef", user("hi"))
    assert draw_tree(tree) == "0123456 user  hi"


def test_tool_blocks_are_named_when_a_message_has_no_text() -> None:
    use = {"role": "assistant", "content": [{"type": "tool_use", "name": "edit_file", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "content": "file changed"}]}
    assert summary(use) == "[tool_use edit_file]"
    assert summary(result) == "[tool_result] file changed"
    assert summary(user("x" * 100)) == "x" * 59 + " …"


def test_a_100000_deep_session_draws_one_short_line_per_node() -> None:
    tree = SessionTree()
    for i in range(100_000):
        tree.append(f"n{i:06d}", user("q") if i % 2 == 0 else assistant("a"))
    lines = draw_tree(tree, leaf="n099999").splitlines()
    assert len(lines) == 100_000
    assert lines[-1].startswith("n099999 assistant  a") and lines[-1].endswith("← current")


def test_the_markdown_export_holds_the_path_only() -> None:
    markdown = path_markdown(chapter_tree(), "msg_004")
    assert markdown == (
        "# Chat session\n\n3 messages, leaf `msg_004`.\n\n"
        "## User `msg_001`\n\nhello\n\n"
        "## Assistant `msg_002`\n\nHi!\nHow can I help?\n\n"
        "## User `msg_004`\n\nask another way\n"
    )
    assert "continue" not in markdown


def test_the_markdown_export_fences_tool_calls_and_results() -> None:
    tree = SessionTree()
    tree.append("u1", user("refactor"))
    tree.append(
        "a1",
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "run", "input": {"cmd": "ls"}}],
        },
    )
    tree.append(
        "r1",
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": "```x```"}],
        },
    )
    markdown = path_markdown(tree, "r1")
    assert 'Tool call `run`:\n\n```json\n{\n  "cmd": "ls"\n}\n```\n' in markdown
    assert "## Tool result `r1`\n\n````\n```x```\n````\n" in markdown


def test_the_markdown_export_quotes_thinking_and_names_redacted_thinking() -> None:
    tree = SessionTree()
    tree.append("u1", user("2 + 2?"))
    thought = {"type": "thinking", "thinking": "Two and two.\nFour.", "signature": "s"}
    hidden = {"type": "redacted_thinking", "data": "d"}
    tree.append(
        "a1", {"role": "assistant", "content": [thought, hidden, assistant("4")["content"][0]]}
    )
    markdown = path_markdown(tree, "a1")
    assert "*Thinking:*\n\n> Two and two.\n> Four.\n" in markdown
    assert "*[thinking encrypted by the API]*\n" in markdown
    assert markdown.rstrip().endswith("4")


# -- a question as typed (meta.typed) ---------------------------------------------------

TABLE = "|    |   x |\n|---:|----:|\n|  0 |   1 |\n\n1 rows × 1 columns"
SENT = f"What does \n\n{TABLE}\n\n show, given {{notes}}?"
TYPED_META = {
    "typed": [
        {"field": "results.pdf", "kind": "attachment", "about": "PDF 1.2 MB"},
        {"field": "3f2a9c1", "kind": "node", "about": "answer 12 chars", "sent": [0, 4]},
        "What does ",
        {
            "field": "df",
            "kind": "variable",
            "about": "DataFrame 1×1",
            "sent": [SENT.index(TABLE), SENT.index(TABLE) + len(TABLE)],
        },
        " show, given {{notes}}?",
    ]
}


def test_a_question_reads_as_typed_with_a_chip_per_substitution() -> None:
    message = user(SENT)
    assert question_as_typed(message, TYPED_META) == (
        "[results.pdf · PDF 1.2 MB] [from 3f2a9c1] What does [df · DataFrame 1×1] show, "
        "given {{notes}}?"
    )
    assert typed_source(TYPED_META) == "What does {df} show, given {{notes}}?"
    pieces = typed_pieces(TYPED_META)
    assert pieces is not None
    chips = [p for p in pieces if isinstance(p, Chip)]
    assert [c.label for c in chips] == [
        "results.pdf · PDF 1.2 MB",
        "from 3f2a9c1",
        "df · DataFrame 1×1",
    ]
    assert chip_text(chips[2], message) == TABLE  # what opening the chip shows
    assert chip_text(chips[0], message) is None  # a PDF: its block is what was sent


def test_the_tree_and_a_summary_show_the_chip_and_not_the_table() -> None:
    only_df = {"typed": TYPED_META["typed"][2:]}
    tree = SessionTree()
    tree.append("q1", user(SENT), only_df)
    assert draw_tree(tree) == "q1 user  What does [df · DataFrame 1×1] show, given {{notes}}?"
    assert summary(user(SENT), meta=TYPED_META).startswith("[results.pdf · PDF 1.2 MB]")


def test_a_question_without_typed_text_or_with_a_foreign_shape_shows_what_was_sent() -> None:
    message = user(SENT)
    for meta in (None, {}, {"typed": "What"}, {"typed": [{"field": "df", "kind": "spell"}]}):
        assert question_as_typed(message, meta) == SENT
        assert typed_source(meta) is None
    broken_span = {"typed": [{"field": "df", "kind": "variable", "sent": [5, 2]}]}
    (chip,) = typed_pieces(broken_span) or []
    assert isinstance(chip, Chip) and chip.sent is None
    beyond = Chip("df", "variable", "", (0, len(SENT) + 1))
    assert chip_text(beyond, message) is None  # never a piece of something else


def test_chip_offsets_count_code_points_as_python_strings_do() -> None:
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "🙂 ab "}, {"type": "text", "text": "cd"}],
    }
    assert chip_text(Chip("s", "variable", "", (2, 6)), message) == "ab c"


def test_a_one_line_summary_shows_a_chip_whole_or_not_at_all() -> None:
    meta = {
        "typed": [
            "x" * 40 + " ",
            {"field": "df", "kind": "variable", "about": "DataFrame 1×1"},
            "!",
        ]
    }
    assert summary(user("sent"), 61, meta) == "x" * 40 + " [df · DataFrame 1×1] …"
    assert summary(user("sent"), 50, meta) == "x" * 40 + " …"
    assert summary(user("sent"), 80, {"typed": ["first line\nsecond"]}) == "first line …"


def test_a_path_quoted_for_the_model_stays_english_in_any_readers_language() -> None:
    from jupyter_tree_chat.i18n import language, set_language

    tree = chapter_tree()
    quoted = path_markdown(tree, "msg_004", for_model=True)
    assert quoted.startswith("# Chat session\n\n3 messages, leaf `msg_004`.\n")
    assert "## User `msg_001`" in quoted and "## Assistant `msg_002`" in quoted
    assert quoted == path_markdown(tree, "msg_004")  # English readers see the same words
    was = language()
    set_language("zh_CN")
    try:
        assert path_markdown(tree, "msg_004", for_model=True) == quoted
    finally:
        set_language(was)
