"""An experiment through the Session alone (conversation/many/experiment.py), with
the offline
model: an edit of one row's question forks that row alone, and a fan-out reads as an
experiment of one row through the same frame code as ``compare_frame``; the rows stream
on a pool of ``concurrency`` threads and their answers are appended a batch at a time."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from jupyter_tree_chat.conversation.events import Event, ExperimentProgress, NodeAdded
from jupyter_tree_chat.conversation.many.experiment import Plan, RowQuestion
from jupyter_tree_chat.conversation.many.variants import Fanout
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.history.experiment_record import experiment_of
from jupyter_tree_chat.measures.compare import (
    COLUMNS,
    experiment_questions,
    experiment_rows,
    rows,
    sibling_answers,
)
from jupyter_tree_chat.providers.offline.provider import OfflineProvider

CITIES = [{"city": "Paris"}, {"city": "Oslo"}]


def asked(session: Session) -> None:
    rows_asked = [RowQuestion(f"Describe {r['city']}.", None, r) for r in CITIES]
    session.run_experiment(Plan("Describe {city}.", rows_asked), cell_id="c1")


def test_editing_one_rows_question_forks_that_row_alone():
    session = Session.in_memory(OfflineProvider(delay=0))
    asked(session)
    paris, oslo = [n for n in session.tree if experiment_of(n) is not None]

    turn = session.edit(oslo.id, "Describe Oslo in winter.")

    edited = turn.user
    assert edited is not None and edited.parent_id == oslo.parent_id
    assert edited.meta == {"edited_from": oslo.id}  # a plain question: not a row any more
    assert [q.id for q in experiment_questions(session.tree, paris.id)] == [paris.id, oslo.id]
    assert len(session.tree.children(paris.id)) == 1  # the other row is untouched
    assert session.leaf == turn.replies[-1].id


def test_a_fan_out_is_an_experiment_of_one_row_read_by_the_same_code():
    session = Session.in_memory(OfflineProvider(delay=0))
    turn = session.ask("Name a colour.", fanout=Fanout(n=3))
    question = turn.user
    assert question is not None

    questions = experiment_questions(session.tree, question.id)
    found, columns = experiment_rows(session.tree, questions, session.prices)

    assert questions == [question]
    answers = sibling_answers(session.tree, question.id, session.prices)
    assert [line["id"] for line in found] == [a.head.id for a in answers]
    for line, same in zip(found, rows(answers), strict=True):  # compare_frame's own rows
        assert {k: line[k] for k in COLUMNS if k != "id"} == {
            k: v for k, v in same.items() if k != "id"
        }
        assert line["experiment"] is None and line["version"] is None
    assert columns[:6] == ["id", "question", "experiment", "version", "row", "template"]


def numbered_rows(count: int) -> list[RowQuestion]:
    return [RowQuestion(f"Describe row {n}.", None, {"n": n}) for n in range(count)]


def test_the_rows_stream_on_as_many_threads_as_run_at_once(tmp_path: Path):
    """12 rows, 3 at a time: the answers stream on 3 threads (a pool), not one per row."""
    session = Session.open(tmp_path / "nb.chat.jsonl", OfflineProvider(delay=0.002))
    names: set[str] = set()

    def look(event: Event) -> None:  # on the owning thread, while the answers stream
        if isinstance(event, ExperimentProgress):
            alive = (t.name for t in threading.enumerate())
            names.update(name for name in alive if name.startswith("tree-chat-answer-"))

    session.subscribe(look)
    turn = session.run_experiment(
        Plan("Describe row {n}.", numbered_rows(12), concurrency=3), cell_id=None
    )

    assert names and names <= {f"tree-chat-answer-{k}" for k in (1, 2, 3)}
    assert len(turn.replies) == 12 and turn.error is None
    records = [json.loads(line) for line in Path(session.location).read_text().splitlines()]
    index = {
        r["id"]: r["meta"]["experiment"]["index"]
        for r in records
        if "experiment" in r.get("meta", {})
    }
    answered = [index[r["parentId"]] for r in records if r.get("parentId") in index]
    assert answered == list(range(12))  # each row answered once, in the rows' order


def test_the_answers_are_appended_a_batch_at_a_time_not_one_write_each(tmp_path: Path):
    """The questions are one append before any is sent; the answers that have arrived are
    appended together (each append's nodes announced with ``more`` but its last)."""
    session = Session.open(tmp_path / "nb.chat.jsonl", OfflineProvider(delay=0))
    appends: list[list[NodeAdded]] = [[]]

    def count(event: Event) -> None:
        if isinstance(event, NodeAdded):
            appends[-1].append(event)
            if not event.more:
                appends.append([])

    session.subscribe(count)
    session.run_experiment(
        Plan("Describe row {n}.", numbered_rows(20), concurrency=4), cell_id=None
    )

    appends.pop()  # the one opened after the last
    questions, *answers = appends
    assert [e.node.role for e in questions] == ["user"] * 20
    assert sum(len(batch) for batch in answers) == 20
    assert 1 <= len(answers) < 20
    assert all(e.node.role == "assistant" for batch in answers for e in batch)
