"""``%chat grade --rubric TEXT [--model M] [--name NAME] [EXPERIMENT]``: a model judges
each of an experiment's answers (conversation/judging.py), the cell saying how it went.

Kept apart from grading.py so the judge's code loads only when a rubric is first used.
"""

from __future__ import annotations

from typing import Any

from ...conversation.grading import experiment_answers
from ...conversation.judging import JUDGE, judge_answers, question_texts
from ...i18n import _
from ...measures.grades import experiment_table
from ...measures.usage import dollars


def grade_with_rubric(commands: Any, options: dict[str, Any], node: str | None) -> None:
    """Judge the experiment of ``node`` (None: the current question's) by the rubric."""
    session = commands.session
    rows, _columns, _named = experiment_table(session.tree, session.grades, node, session.prices)
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
