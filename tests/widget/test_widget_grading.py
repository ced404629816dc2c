"""The panel's grade and prefer actions (widget/grading.py): each appends one record and
the synced ``grades`` trait follows; a bad one is the ``done`` message's error line, and
nothing is written."""

from __future__ import annotations

from pathlib import Path

from helpers.widget_comm import recording_comms
from test_widget import Scripted, comm_of, file_records

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.widget.widgets import TreePanel


def test_grades_from_the_panel_are_records_and_reach_its_trait(tmp_path: Path):
    provider = Scripted()
    session = Session.open(tmp_path / "nb.chat.jsonl", provider)
    provider.enqueue("A1")
    first = session.ask("question one")
    provider.enqueue("A2")
    second = session.retry(first.user.id)
    one, two = first.replies[0].id, second.replies[0].id
    with recording_comms() as recorder:
        panel = TreePanel(session)
        comm = comm_of(recorder, panel)
        assert panel.grades == {"latest": {}, "preferences": []}

        comm.deliver({"a": "grade", "id": one, "score": 4, "scale": [1, 5], "req": 1})
        comm.deliver({"a": "grade", "id": two, "score": 0, "scale": [0, 1], "req": 2})
        comm.deliver({"a": "prefer", "id": one, "other": two, "tie": False, "req": 3})

        assert panel.grades == {
            "latest": {
                one: {"grade": {"grader": "grade", "by": "hand", "score": 4}},
                two: {"grade": {"grader": "grade", "by": "hand", "score": 0, "scale": [0, 1]}},
            },
            "preferences": [[one, two, False]],
        }
        kept = [r for r in file_records(session) if r.get("type") in ("grade", "preference")]
        assert [(r["type"], r.get("score")) for r in kept] == [
            ("grade", 4),
            ("grade", 0),
            ("preference", None),
        ]

        before = (tmp_path / "nb.chat.jsonl").read_bytes()
        recorder.clear()
        comm.deliver({"a": "grade", "id": one, "score": 9, "scale": [1, 5], "req": 4})
        comm.deliver({"a": "grade", "id": first.user.id, "score": 3, "scale": [1, 5], "req": 5})
        comm.deliver({"a": "grade", "id": one, "score": "3", "req": 6})
        comm.deliver({"a": "prefer", "id": one, "other": one, "req": 7})
        errors = [m["err"] for m in recorder.customs() if m["t"] == "done"]
        assert errors == [
            "score 9 is outside the scale 1–5",
            f"{first.user.id[:7]} is a question; grade one of its answers "
            f"(`%chat compare {first.user.id[:7]}`)",
            "a grade from the panel needs a number and its scale",
            f"{one[:7]} and {one[:7]} are the same answer; prefer one answer over another",
        ]
        assert (tmp_path / "nb.chat.jsonl").read_bytes() == before
