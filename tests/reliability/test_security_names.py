"""Session names cannot escape the notebook's folder or make strange file names.

A session name becomes part of a file name (``analysis.NAME.chat.jsonl``), and it comes
from a user typing ``%%chat --session NAME`` or from a notebook someone else wrote. So a
name that is a path (``../x``, ``/etc/passwd``, ``a/b``), a NUL, a newline, an empty
string or a huge string must be refused *before* any file is touched, with one line
that says what is allowed. These tests check the refusal, the message, and that no file
appeared anywhere.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_tree_chat.errors import SessionNameError, StoreError
from jupyter_tree_chat.history.store import (
    SESSION_SUFFIX,
    FileStore,
    session_path,
    validate_session_name,
)

#: (name, a word the message must contain so the user knows *why*)
HOSTILE_NAMES = [
    ("../x", "separator"),
    ("/etc/passwd", "separator"),
    ("a/b", "separator"),
    ("a\\b", "separator"),
    ("..", ".."),
    ("x/../../y", "separator"),
    ("x..y", ".."),
    ("bad\0name", "NUL"),
    ("\0", "NUL"),
    ("x" * 300, "300 characters"),
    ("", "empty"),
    (".", "not allowed"),
    (".hidden", "not allowed"),
    ("-rf", "not allowed"),
    ("a b", "not allowed"),
    ("name\n", "not allowed"),  # a trailing newline must not slip past a `$` anchor
    ("na\nme", "not allowed"),
    ("name\r", "not allowed"),
    ("tab\there", "not allowed"),
    ("a:b", "not allowed"),
    ("~root", "not allowed"),
    ("$HOME", "not allowed"),
    ("*", "not allowed"),
    ("a\u2028b", "not allowed"),
    ("\uff0e\uff0e", "not allowed"),  # fullwidth dots
    ("\u202etxt.exe", "not allowed"),  # right-to-left override
]

GOOD_NAMES = ["draft", "run-2", "v1.2", "a_b", "x" * 100, "Überblick"]


@pytest.mark.parametrize(("name", "why"), HOSTILE_NAMES, ids=lambda v: repr(v)[:30])
def test_hostile_name_is_refused_with_a_clear_message(name: str, why: str) -> None:
    """Each hostile name raises SessionNameError, a one-line message naming the rule."""
    with pytest.raises(SessionNameError) as caught:
        validate_session_name(name)
    message = str(caught.value)
    assert why in message
    assert "\n" not in message, "the message must be one line even if the name has a newline"
    assert "letters, digits" in message, "the message must say what IS allowed"
    # a SessionNameError is also a ValueError and a StoreError, so any view can catch it
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, StoreError)


@pytest.mark.parametrize(("name", "why"), HOSTILE_NAMES, ids=lambda v: repr(v)[:30])
def test_session_path_refuses_before_touching_the_disk(tmp_path: Path, name: str, why: str) -> None:
    """session_path() validates; nothing is created in or above the notebook's folder."""
    folder = tmp_path / "nb"
    folder.mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(SessionNameError):
        session_path(folder / "analysis.ipynb", name)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_plain_names_are_accepted_and_stay_beside_the_notebook(tmp_path: Path, name: str) -> None:
    """The rule is not so strict that ordinary names fail."""
    path = session_path(tmp_path / "analysis.ipynb", name)
    assert path.parent == tmp_path
    assert path.name == f"analysis.{name}{SESSION_SUFFIX}"


def test_non_string_names_are_refused() -> None:
    """A name from a notebook's metadata might be any JSON value."""
    for value in (None, 3, b"bytes", ["a"]):
        with pytest.raises(SessionNameError):
            validate_session_name(value)  # type: ignore[arg-type]


@settings(max_examples=2000, deadline=None)
@given(st.text(min_size=0, max_size=120))
def test_any_accepted_name_is_one_plain_file_name(name: str) -> None:
    """Property: a refused name makes no file anywhere; an accepted one makes exactly
    one file, directly beside the notebook, whose name has no separator, NUL, control
    character or '..'. Each name goes the way a session is opened: its path, then a
    first append (which creates the file)."""
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        folder = top / "nb"
        folder.mkdir()
        try:
            path = session_path(folder / "analysis.ipynb", name)
        except SessionNameError:
            assert sorted(top.rglob("*")) == [folder], f"a refused name {name!r} made a file"
            return
        FileStore(path).append([{"type": "label", "id": "x", "label": "y"}], durable=True)
        assert sorted(top.rglob("*")) == [folder, path], f"{name!r} made other files"
    assert path.parent == folder
    assert os.path.normpath(str(path)) == str(path)
    assert "/" not in name and "\\" not in name and "\0" not in name
    assert not any(ord(c) < 32 or c == "\x7f" for c in name)
    assert ".." not in name
    assert 0 < len(name) <= 100
