"""A branch as a notebook (share/notebook.py): valid nbformat 4.5, one ``%%chat`` cell a
question bound to it by cell id, the answer as its outputs (thinking and tools folded,
images, the footer); and, on a real kernel beside the session file, its cells continue
the session: an edited cell forks there, an unchanged one is a retry, a new one goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from helpers.kernel_harness import Kernel

from jupyter_tree_chat.history.store import load_file, parse_session
from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.share.notebook import branch_notebook, notebook_path

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAA"
    "BJRU5ErkJggg=="
)


def image(media_type: str, data: str) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def lesson() -> SessionTree:
    tree = SessionTree()
    usage = {"input_tokens": 12, "output_tokens": 3}
    tool_call = {"type": "tool_use", "id": "t1", "name": "zoom", "input": {"x": 1}}
    tool_result = {"type": "tool_result", "tool_use_id": "t1", "content": "<b>zoomed</b>"}
    rows = [
        ("q1", None, "user", "What is a {session} tree?", {"cell_id": "c0ffee01"}),
        ("a1", "q1", "assistant", "A **tree**.", {"model": "claude-sonnet-4-6", "usage": usage}),
        (
            "q2",
            "a1",
            "user",
            [
                {"type": "text", "text": "Look at "},
                image("image/png", PNG),
                image("image/svg+xml", "PHN2Zz4="),
            ],
            {"cell_id": "c0ffee02"},
        ),
        (
            "a2",
            "q2",
            "assistant",
            [
                {"type": "thinking", "thinking": "a picture", "signature": "s"},
                {"type": "text", "text": "Let me look."},
                tool_call,
            ],
            None,
        ),
        ("t2", "a2", "user", [tool_result], None),
        ("a3", "t2", "assistant", "One pixel.", {"model": "m"}),
        ("q3", "a3", "user", "And now?", None),  # asked in the panel: no cell id
        ("a4", "q3", "assistant", "Done.", {"model": "m"}),
        ("a4b", "q3", "assistant", "Done, again.", {"model": "m"}),
    ]
    for node_id, parent, role, content, meta in rows:
        tree.add(Node(node_id, parent, {"role": role, "content": content}, meta), check_roles=False)
    tree.leaf = "a4"
    return tree


def test_the_branch_is_a_valid_notebook_that_reads_as_the_conversation():
    tree = lesson()
    notebook = branch_notebook(
        tree, "a4", session_file="analysis.chat.jsonl", labels={"a4": "best"}
    )
    nbformat.validate(nbformat.from_dict(notebook))  # raises if it is not nbformat 4.5
    cells = notebook["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "code", "code", "code", "code"]
    assert "analysis.chat.jsonl" in cells[0]["source"] and "`a4`" in cells[0]["source"]
    assert cells[1]["source"] == (
        "%load_ext jupyter_tree_chat\n"
        '%config TreeChat.session_file = "analysis.chat.jsonl"\n'
        "%chat switch a4"
    )
    # each question by its own cell's id; one asked outside a cell by its node id
    assert [c["id"] for c in cells[2:]] == ["c0ffee01", "c0ffee02", "q3"]
    # braces would be read as {name} fields: such a cell sends its text as it was sent
    assert cells[2]["source"] == "%%chat --raw\nWhat is a {session} tree?"
    assert cells[3]["source"] == "%%chat\nLook at "
    assert cells[4]["source"] == "%%chat\nAnd now?"


def test_each_answer_is_its_cells_output_with_thinking_and_tools_folded():
    cells = branch_notebook(lesson(), "a4", session_file="s.chat.jsonl", labels={"a4": "best"})[
        "cells"
    ]
    first = cells[2]["outputs"]
    assert first[0]["data"]["text/markdown"] == "A **tree**."
    assert (
        first[-1]["data"]["text/plain"]
        == "a1 · claude-sonnet-4-6 · 12 in · 3 out · <$0.0001 · reply 1/1"
    )
    second = cells[3]["outputs"]
    kinds = [next(k for k in o["data"] if k != "text/plain") for o in second]
    # the question's PNG (not its SVG), the thinking, the text, the tool call, its result
    assert kinds == [
        "image/png",
        "text/html",
        "text/markdown",
        "text/html",
        "text/html",
        "text/markdown",
        "text/html",
    ]
    assert second[0]["data"]["image/png"] == PNG
    assert second[1]["data"]["text/html"].startswith("<details><summary>Thinking</summary>")
    assert "<summary>Tool call: zoom</summary>" in second[3]["data"]["text/html"]
    assert "&lt;b&gt;zoomed&lt;/b&gt;" in second[4]["data"]["text/html"]  # a tool's text is text
    assert cells[4]["outputs"][-1]["data"]["text/plain"] == "a4 · m · reply 1/2 · label 'best'"


def test_cell_ids_stay_unique_and_valid():
    tree = SessionTree()
    rows = [
        ("q1", None, "user", "one", {"cell_id": "same"}),
        ("a1", "q1", "assistant", "1", None),
        ("q2", "a1", "user", "two", {"cell_id": "same"}),  # the same cell asked twice
        ("a2", "q2", "assistant", "2", None),
        ("<bad id>", "a2", "user", "three", {"cell_id": "vscode-notebook-cell:/x#W1"}),
        ("a3", "<bad id>", "assistant", "3", None),
    ]
    for node_id, parent, role, content, meta in rows:
        tree.add(Node(node_id, parent, {"role": role, "content": content}, meta), check_roles=False)
    notebook = branch_notebook(tree, "a3", session_file="s.chat.jsonl")
    nbformat.validate(nbformat.from_dict(notebook))
    assert [c["id"] for c in notebook["cells"][2:]] == ["same", "q2", "tree-chat-4"]


def test_the_notebook_is_named_by_its_leaf_beside_the_session():
    assert notebook_path("/w/analysis.chat.jsonl", "3f2a9c1e77") == Path(
        "/w/analysis.branch-3f2a9c1.ipynb"
    )


# -- on a real kernel -------------------------------------------------------------------


def cell_sources(notebook: dict) -> list[tuple[str, str]]:
    return [(c["id"], c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@pytest.mark.kernel
def test_run_beside_its_session_the_cells_continue_it_and_an_edited_cell_forks(tmp_path):
    """A session made in analysis.ipynb (three questions; the last asked with `%chat
    edit`, so it has no cell id of its own), then a fork so the file's leaf is on another
    branch. The first branch is exported with `%chat export ipynb`; a kernel for that
    notebook runs its setup cell, then cell 3 with changed text (a fork beside question
    3), cell 2 unchanged (a retry: a new answer to question 2), and a new cell."""
    with Kernel(tmp_path) as kernel:
        kernel.chat("first question", "aaaa0001").check()
        kernel.chat("second question", "aaaa0002").check()
        kernel.run("%chat edit 2 second question, edited").check()
        kernel.chat("third question", "aaaa0003").check()
        exported = kernel.run("%chat export ipynb branch.ipynb").check()
        assert "branch.ipynb" in exported.stdout
        kernel.run("%chat switch " + first_answer_id(kernel.session_file())).check()
        kernel.chat("an unrelated fork", "aaaa0009", options="--continue").check()
    session_file = tmp_path / "analysis.chat.jsonl"
    notebook = json.loads((tmp_path / "branch.ipynb").read_text())
    nbformat.validate(nbformat.from_dict(notebook))
    before = load_file(session_file)
    branch_leaf = notebook["metadata"]["jupyter_tree_chat"]["leaf"]
    path = before.tree.path_nodes(branch_leaf)
    questions = [n for n in path if n.role == "user"]
    assert [q.text for q in questions] == [
        "first question",
        "second question, edited",
        "third question",
    ]
    (setup_id, setup), *question_cells = cell_sources(notebook)
    assert [cell_id for cell_id, _ in question_cells] == ["aaaa0001", questions[1].id, "aaaa0003"]
    assert before.tree.leaf != branch_leaf  # the file ended on the other branch

    with Kernel(tmp_path, notebook="branch.ipynb", load_extension=False) as kernel:
        kernel.run(setup, setup_id).check()
        third_id, third = question_cells[2]
        kernel.run(
            third.replace("third question", "third question, asked another way"), third_id
        ).check()
        after = load_file(session_file)
        forked = next(n for n in after.tree if n.text == "third question, asked another way")
        assert forked.parent_id == questions[2].parent_id  # beside question 3: a fork
        assert (forked.meta or {}).get("cell_id") == "aaaa0003"
        second_id, second = question_cells[1]
        kernel.run(second, second_id).check()  # bound by the node id: a retry
        after = load_file(session_file)
        answers = after.tree.children(questions[1].id)
        assert len(answers) == 2  # the old answer and the new one, beside it
        assert after.tree.leaf == answers[1].id
        kernel.chat("and one more", "bbbb0001").check()
        after = load_file(session_file)
        last = after.tree.get(after.tree.leaf)
        question = after.tree.get(last.parent_id)
        assert question.text == "and one more" and question.parent_id == answers[1].id
    assert parse_session(session_file.read_bytes()).problems == []


def first_answer_id(session_file: Path) -> str:
    tree = load_file(session_file).tree
    return tree.children(tree.roots()[0].id)[0].id


def test_a_question_with_chips_is_its_typed_text_with_its_fields():
    """A question that kept how it was typed (``meta.typed``) goes into its cell as typed,
    ``{df}`` and all, so running the cell substitutes it again; find names its branch by
    the typed line, with the chip."""
    from jupyter_tree_chat.share.find import Query, find

    sent = "What does | a | b |\n|---|---|\n| 1 | 2 | show?"
    chip = {"field": "df", "kind": "variable", "about": "DataFrame 1×2", "sent": [10, 38]}
    tree = SessionTree()
    question = {"role": "user", "content": sent}
    tree.add(Node("q1", None, question, {"typed": ["What does ", chip, " show?"]}))
    tree.add(Node("a1", "q1", {"role": "assistant", "content": "A table."}))
    notebook = branch_notebook(tree, "a1", session_file="s.chat.jsonl")
    assert notebook["cells"][2]["source"] == "%%chat\nWhat does {df} show?"
    (match,) = find(tree, Query("a table")).matches
    assert match.branch == "What does [df · DataFrame 1×2] show?"
