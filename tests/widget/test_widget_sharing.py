"""The panel's search box and Export HTML, answered in the kernel (widget/sharing.py):
what the browser is sent back, what is written, and the one-line refusals."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.scripted_provider import ScriptedProvider
from helpers.widget_comm import Recorder, recording_comms

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.widget import TreePanel


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with recording_comms() as recorder:
        yield recorder


def opened(session: Session, recorder: Recorder):
    panel = TreePanel(session)
    comm = next(c for c in recorder.comms if c.comm_id == panel.comm.comm_id)
    recorder.clear()
    return panel, comm


def answers(recorder: Recorder, kind: str) -> list[dict]:
    return [m for m in recorder.customs() if m["t"] == kind]


def matched(panel: TreePanel, found: dict) -> list[str]:
    """The ids a ``found`` message's bitset names, as the browser reads it (panel/store.ts)."""
    bits = base64.b64decode(found["rows"])
    rows = [row[0] for row in panel.nodes]
    return [rows[i] for i in range(len(rows)) if bits[i >> 3] & (1 << (i & 7))]


def lesson(tmp_path: Path) -> tuple[Session, list[str]]:
    provider = ScriptedProvider()
    session = Session.open(tmp_path / "nb.chat.jsonl", provider)
    provider.enqueue("A needle, found.")
    first = session.ask("Where is the needle?")
    provider.enqueue("Hay, mostly.")
    second = session.ask("And the haystack?")
    provider.enqueue("会话树的答案")
    other = session.edit(first.user.id, "什么是会话树？")
    return session, [first.user.id, first.replies[0].id, second.user.id, other.user.id]


def test_find_answers_with_the_matching_ids_and_the_hidden_count(tmp_path, recorder):
    session, (needle_q, needle_a, _hay, cjk) = lesson(tmp_path)
    panel, comm = opened(session, recorder)
    comm.deliver({"a": "find", "q": "NEEDLE", "req": 7})
    (found,) = answers(recorder, "found")
    assert (found["req"], found["count"], found["hidden"]) == (7, 2, 0)
    assert matched(panel, found) == [needle_q, needle_a]
    assert len(base64.b64decode(found["rows"])) == (len(panel.nodes) + 7) // 8
    recorder.clear()
    session.hide(needle_q)  # off the current path (the edit made the CJK branch current)
    comm.deliver({"a": "find", "q": "needle", "req": 8})
    comm.deliver({"a": "find", "q": "needle", "all": True, "req": 9})
    comm.deliver({"a": "find", "q": "会话树", "role": "user", "req": 10})
    got = {m["req"]: (matched(panel, m), m["hidden"]) for m in answers(recorder, "found")}
    assert got == {8: ([], 2), 9: ([needle_q, needle_a], 0), 10: ([cjk], 0)}


def test_a_bad_query_is_answered_with_its_one_line(tmp_path, recorder):
    session, _ids = lesson(tmp_path)
    _panel, comm = opened(session, recorder)
    comm.deliver({"a": "find", "q": "(", "regex": True, "req": 3})
    (found,) = answers(recorder, "found")
    assert found["count"] == 0 and "is not a regular expression" in found["err"]


def test_export_writes_the_page_beside_the_session_and_says_where(tmp_path, recorder):
    session, _ids = lesson(tmp_path)
    before = Path(session.location).read_bytes()
    panel, comm = opened(session, recorder)
    comm.deliver({"a": "export", "format": "html", "req": 4})
    page = tmp_path / "nb.chat.html"
    (note,) = answers(recorder, "note")
    assert note == {
        "t": "note",
        "level": "info",
        "x": f"Wrote {page}: the session as one page that opens anywhere.",
    }
    assert page.read_text().startswith("<!DOCTYPE html>") and "什么是会话树" in page.read_text()
    assert Path(session.location).read_bytes() == before
    assert panel.error == ""


def test_export_of_a_session_without_a_file_is_refused_in_one_line(recorder):
    provider = ScriptedProvider()
    session = Session.in_memory(provider)
    provider.enqueue("ok")
    session.ask("in memory")
    panel, comm = opened(session, recorder)
    comm.deliver({"a": "export", "format": "html", "req": 5})
    (done,) = [m for m in recorder.customs() if m["t"] == "done"]
    assert "there is nowhere to write its page" in done["err"] and "\n" not in done["err"]
    assert panel.error == done["err"]


def test_the_text_index_is_sent_for_the_panel_to_search_itself(tmp_path, recorder, monkeypatch):
    session, (needle_q, needle_a, hay, cjk) = lesson(tmp_path)
    _panel, comm = opened(session, recorder)
    comm.deliver({"a": "find", "held": 0, "req": 4})
    (held,) = answers(recorder, "held")
    assert (held["req"], held["from"]) == (4, 0)
    texts = dict(zip(held["ids"], held["texts"], strict=True))
    assert held["ids"] == [node.id for node in session.tree]  # the tree's order
    assert texts[needle_q] == "where is the needle?"  # lowered, as find.py matches
    assert "needle" in texts[needle_a] and "needle" not in texts[hay]
    assert texts[cjk] == "什么是会话树？"
    recorder.clear()
    comm.deliver({"a": "find", "held": 3, "req": 5})  # what followed the first three
    (rest,) = answers(recorder, "held")
    assert (rest["from"], rest["ids"]) == (3, held["ids"][3:])
    recorder.clear()
    monkeypatch.setattr("jupyter_tree_chat.widget.sharing.HELD_LIMIT", 10)
    comm.deliver({"a": "find", "held": 0, "req": 6})
    assert answers(recorder, "held") == [{"t": "held", "req": 6, "over": 1}]
