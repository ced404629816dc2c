"""The panel's grades: what it is sent of them, and its grade and prefer actions.

The panel shows each answer's latest grades (stars, thumbs) and lets a person grade by
click or key and pick the better of two answers side by side; it is sent the latest word
of each (a synced ``grades`` trait, small: a grade is a few numbers) and asks the kernel
with ``{"a": "grade", "id", "score", "scale"}`` or ``{"a": "prefer", "id", "other",
"tie"}``, which append records as ``%chat grade`` and ``%chat prefer`` do.
"""

from __future__ import annotations

from typing import Any

from ..conversation.grading import grade_by_hand, prefer
from ..conversation.session import Session
from ..errors import GradeError
from ..history.grade_record import DEFAULT_SCALE, Grades
from ..i18n import _

GRADE_ACTIONS = ("grade", "prefer")


def grades_payload(grades: Grades) -> dict[str, Any]:
    """``{"latest": {answer: {grader: {by, score, scale, note, error}}}, "preferences":
    [[better, worse, tie], ...]}``: what the panel's ``grades`` trait holds."""
    return {
        "latest": {
            node: {name: grade.to_dict() for name, grade in by.items()}
            for node, by in grades.latest.items()
        },
        "preferences": [list(found) for found in grades.preferences.values()],
    }


def grade_action(session: Session, action: str, content: dict[str, Any]) -> None:
    """Carry out a panel's ``grade`` or ``prefer`` (a bad one is a ``GradeError``)."""
    node_id = str(content.get("id", ""))
    if action == "prefer":
        prefer(session, node_id, str(content.get("other", "")), tie=content.get("tie") is True)
        return
    score = content.get("score")
    scale = content.get("scale") or DEFAULT_SCALE
    if not isinstance(score, (int, float)) or not (
        isinstance(scale, (list, tuple)) and len(scale) == 2
    ):
        raise GradeError(_("a grade from the panel needs a number and its scale"))
    grade_by_hand(session, node_id, float(score), scale=(float(scale[0]), float(scale[1])))
