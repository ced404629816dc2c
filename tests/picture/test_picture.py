"""``draw``: a tree, a session or a loaded file becomes a picture that shows and saves."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fakes.scripted_provider import ScriptedProvider

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.errors import StoreError
from jupyter_tree_chat.history.store import FileStore, load_file
from jupyter_tree_chat.picture import TreePicture, draw

SVG = "{http://www.w3.org/2000/svg}"


def drawn_ids(picture: TreePicture) -> list[str]:
    root = ET.fromstring(picture.svg)
    return [
        t.text or ""
        for t in root.iter(f"{SVG}text")
        if t.get("class") == "caption"  # each node's caption is its short id
    ]


def test_a_session_brings_its_labels_hidden_branches_and_leaf(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    session = Session(FileStore(path), ScriptedProvider())
    first = session.ask("first question")
    second = session.ask("second question", new_root=True)
    session.label(second.user.id, "keep")
    session.hide(first.user.id)

    picture = draw(session)
    assert (picture.shown, picture.total, picture.hidden) == (2, 4, 1)
    assert [t.text for t in ET.fromstring(picture.svg).iter(f"{SVG}text")].count("keep") == 1
    from_file = draw(load_file(path))  # the file says the same as the session
    assert drawn_ids(from_file) == drawn_ids(picture)
    assert (from_file.shown, from_file.hidden) == (2, 1)
    assert draw(session, show_hidden=True).shown == 4


def test_the_leaf_given_decides_the_bold_path(tmp_path: Path) -> None:
    session = Session.in_memory(ScriptedProvider())
    first = session.ask("one")
    session.ask("two", new_root=True)
    root = ET.fromstring(draw(session, leaf=first.replies[0].id).svg)
    current = [g for g in root.iter(f"{SVG}g") if "current" in (g.get("class") or "").split()]
    assert len(current) == 1 and first.replies[0].id in current[0].find(f"{SVG}title").text


def test_a_picture_shows_itself_in_a_notebook_and_saves_to_a_file(tmp_path: Path) -> None:
    session = Session.in_memory(ScriptedProvider())
    session.ask("hello")
    picture = draw(session.tree)
    assert picture._repr_svg_() == picture.svg  # what IPython shows for a cell's value
    saved = picture.save(tmp_path / "tree.svg")
    assert ET.parse(saved).getroot().tag == f"{SVG}svg"
    session_file = tmp_path / "tree.chat.jsonl"
    session_file.write_bytes(b'{"type":"session","version":1}\n')
    with pytest.raises(StoreError, match="is a session file, which is never overwritten"):
        picture.save(session_file)
    assert session_file.read_bytes() == b'{"type":"session","version":1}\n'
