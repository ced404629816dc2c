"""``%chat … ?``: a question's trailing ``?`` is the user's text, not a help request.

First IPython's own transformer (``TransformerManager``, as the kernel runs it) with the
project's cleanup transform added; then a real kernel: ``%chat edit 1 Why is that?`` asks
"Why is that?", ``%chat find`` and ``%chat compact`` get their text with its ``?``, and
``%chat?`` and ``%%chat?`` still show the magics' help.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import Kernel
from IPython.core.inputtransformer2 import TransformerManager

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.kernel.question_mark import keep_question_marks


def transformed(cell: str) -> str:
    manager = TransformerManager()
    manager.cleanup_transforms.append(keep_question_marks)
    return manager.transform_cell(cell)


@pytest.mark.parametrize(
    ("cell", "becomes"),
    [
        (
            "%chat edit 1 Why is that?",
            "get_ipython().run_line_magic('chat', 'edit 1 Why is that?')",
        ),
        ("%chat find why?", "get_ipython().run_line_magic('chat', 'find why?')"),
        ("x = %chat find why?", "x = get_ipython().run_line_magic('chat', 'find why?')"),
        ("if 1:\n    %chat find a?", "if 1:\n    get_ipython().run_line_magic('chat', 'find a?')"),
        ("%chat?", "get_ipython().run_line_magic('pinfo', '%chat')"),
        ("%chat??", "get_ipython().run_line_magic('pinfo2', '%chat')"),
        ("%%chat?", "get_ipython().run_line_magic('pinfo', '%%chat')"),
        ("%%chat\nIs %chat find x? a question?", "get_ipython().run_cell_magic("),
        ("len?", "get_ipython().run_line_magic('pinfo', 'len')"),  # others' help as before
    ],
)
def test_only_chat_lines_with_text_keep_their_question_mark(cell, becomes):
    assert transformed(cell).startswith(becomes)


def test_a_cell_magic_body_is_left_whole():
    cell = "%%chat\n%chat find x?\n"

    assert transformed(cell) == "get_ipython().run_cell_magic('chat', '', '%chat find x?\\n')\n"


# -- in a real kernel ------------------------------------------------------------------------


@pytest.fixture
def claude(tmp_path: Path, fake_anthropic: Any) -> Iterator[Kernel]:
    env = {"ANTHROPIC_API_KEY": "sk-test-dummy", "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    with Kernel(tmp_path, env=env) as kernel:
        yield kernel


def last_question(fake_anthropic: Any) -> str:
    sent = [r for r in fake_anthropic.requests if r.path == "/v1/messages"]
    content = sent[-1].body["messages"][-1]["content"]
    return content if isinstance(content, str) else content[-1]["text"]


@pytest.mark.kernel
def test_edit_find_and_compact_take_a_question_as_typed(claude, fake_anthropic):
    fake_anthropic.enqueue("A node with no children.")
    claude.chat("What is a leaf?", "c1").check()
    fake_anthropic.enqueue("Because it ends a branch.")

    edited = claude.run("%chat edit 1 Why is that?").check()

    assert "not found" not in edited.visible_text
    assert last_question(fake_anthropic) == "Why is that?"
    tree = load_file(claude.session_file()).tree
    assert [n.text for n in tree.roots()] == ["What is a leaf?", "Why is that?"]

    found = claude.run("%chat find is that?").check()

    assert "Why is that?" in found.stdout and "not found" not in found.visible_text

    fake_anthropic.enqueue("Summary: leaves end branches.")
    compacted = claude.run("%chat compact Keep what matters most?").check()

    assert "not found" not in compacted.visible_text
    assert last_question(fake_anthropic).endswith(" Keep what matters most?")


@pytest.mark.kernel
def test_chat_and_cell_chat_with_a_question_mark_still_show_help(claude):
    line = claude.run("%chat?").check()
    cell = claude.run("%%chat?").check()

    def page(run: Any) -> str:
        (shown,) = [p for p in run.payload if p.get("source") == "page"]
        return str(shown["data"]["text/plain"])

    assert "%chat COMMAND — the session tree behind %%chat" in page(line)
    assert "%%chat [-s NAME] [-m MODEL]" in page(cell)
