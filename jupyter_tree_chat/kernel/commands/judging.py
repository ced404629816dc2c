"""``%chat grade --rubric TEXT [--model M] [--name NAME] [EXPERIMENT]``: a model judges
each of an experiment's answers (conversation/judging.py), the cell saying how it went.

Kept apart from grading.py so the judge's code loads only when a rubric is first used.
"""

from __future__ import annotations

from typing import Any

from ...conversation.grading import experiment_answers
from ...conversation.judging import JUDGE, judge_answers, question_texts
from ...conversation.many.batch import judge
from ...conversation.many.batch_poll import holding, watch
from ...errors import ChatError
from ...i18n import _
from ...measures.grades import experiment_table
from ...measures.usage import dollars
from ..display.batch_view import show_batches


def grade_with_rubric(commands: Any, options: dict[str, Any], node: str | None) -> None:
    """Judge the experiment of ``node`` (None: the current question's) by the rubric."""
    session = commands.session
    rows, _columns, _named = experiment_table(session.tree, session.grades, node, session.prices)
    if options.get("--batch"):  # the judge's requests as one batch, graded as they come
        with holding(session):
            turn = judge(
                session,
                options["--rubric"],
                experiment_answers(rows, session.tree),
                question_texts(session.tree, rows),
                model=options.get("--model"),
                grader=options.get("--name") or JUDGE,
            )
        show_batches(session, turn.batches, commands.shell)
        watch(session)
        if turn.error is not None:
            raise ChatError(str(turn.error))
        return
    judged = judge_answers(
        session,
        options["--rubric"],
        experiment_answers(rows, session.tree),
        question_texts(session.tree, rows),
        model=options.get("--model"),
        grader=options.get("--name") or JUDGE,
    )
    cost = "-" if judged.cost is None else dollars(judged.cost)
    print(
        _("Judged {count} answer(s) as {grader}; {failed} without a score; cost {cost}").format(
            count=judged.judged, grader=judged.grader, failed=len(judged.errors), cost=cost
        )
    )
    for answer, error in judged.errors[:5]:
        print(f"  {answer[:7]}: {error}")
