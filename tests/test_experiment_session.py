"""An experiment through the Session alone (conversation/experiment.py), with the offline
model: an edit of one row's question forks that row alone, and a fan-out reads as an
experiment of one row through the same frame code as ``compare_frame``."""

from __future__ import annotations

from jupyter_tree_chat.conversation.experiment import Plan, RowQuestion
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.variants import Fanout
from jupyter_tree_chat.history.experiment_record import experiment_of
from jupyter_tree_chat.measures.compare import (
    COLUMNS,
    experiment_questions,
    experiment_rows,
    rows,
    sibling_answers,
)
from jupyter_tree_chat.providers.offline import OfflineProvider

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
