"""Judging answers: grades by hand and by code, and preferences, kept as records.

A grade is one more fact about an answer (history/grade_record.py): these functions check
what a person or a function says, then append the record, so a bad grade is refused
whole with nothing written. Every grade lands on an answer's first node (``head``), the
node an experiment's frame and grid name; regrading appends, the latest wins.

``grade_by_code`` runs a function over an experiment's answers: one that raises or
returns something that is not a bool or a number is that answer's error (kept as its
grade), never the run's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import GradeError
from ..history.experiment_record import experiment_of
from ..history.grade_record import (
    DEFAULT_SCALE,
    HAND,
    Grade,
    Grades,
    grade_record,
    preference_record,
)
from ..history.tree import Node, SessionTree, is_real_user_message
from ..i18n import _


class GradingHost(Protocol):
    """What grading needs of the session (``Session`` is one)."""

    tree: SessionTree
    grades: Grades

    def resolve(self, ref: str) -> Node: ...

    def now(self) -> int: ...

    def record_facts(self, records: Iterable[dict[str, Any]]) -> None: ...


def answer_head(tree: SessionTree, node: Node) -> Node:
    """The first node of the answer ``node`` belongs to (a tool round's reply counts as
    its answer's); a question is refused."""
    if is_real_user_message(node.message):
        raise GradeError(
            _("{node} is a question; grade one of its answers (`%chat compare {node}`)").format(
                node=node.id[:7]
            )
        )
    head = node
    while head.parent_id is not None:
        parent = tree.get(head.parent_id)
        if is_real_user_message(parent.message):
            return head
        head = parent
    return head


def keep_grades(host: GradingHost, records: list[dict[str, Any]]) -> None:
    """Append ``records`` and read them into the session's grades (its own appends are
    not read back from the file)."""
    host.record_facts(records)
    for record in records:
        host.grades.take(record, host.tree.__contains__)


def grade_by_hand(
    host: GradingHost,
    ref: str,
    score: float,
    *,
    note: str | None = None,
    scale: tuple[float, float] = DEFAULT_SCALE,
) -> Grade:
    """A person's grade of answer ``ref``: ``score`` within ``scale`` (1–5 by default)."""
    low, high = scale
    if not (low < high and all(math.isfinite(v) for v in scale)):
        raise GradeError(_("a scale goes from a low number to a higher one, e.g. 1-5"))
    if isinstance(score, bool) or not math.isfinite(score) or not low <= score <= high:
        raise GradeError(
            _("score {score} is outside the scale {low}–{high}").format(
                score=_number(score), low=_number(low), high=_number(high)
            )
        )
    head = answer_head(host.tree, host.resolve(ref))
    record = grade_record(
        head.id,
        _whole(score),
        scale=None if scale == DEFAULT_SCALE else (_whole(low), _whole(high)),
        note=note or None,
        time=host.now(),
    )
    keep_grades(host, [record])
    return host.grades.of(head.id)[HAND]


def prefer(host: GradingHost, better_ref: str, worse_ref: str, *, tie: bool = False) -> None:
    """Answer ``better_ref`` beat ``worse_ref`` (``tie``: neither did)."""
    better = answer_head(host.tree, host.resolve(better_ref))
    worse = answer_head(host.tree, host.resolve(worse_ref))
    if better.id == worse.id:
        raise GradeError(
            _("{a} and {b} are the same answer; prefer one answer over another").format(
                a=better.id[:7], b=worse.id[:7]
            )
        )
    keep_grades(host, [preference_record(better.id, worse.id, tie=tie, time=host.now())])


@dataclass(frozen=True)
class Graded:
    """What a run of a grader did: how many answers it graded, and which failed."""

    grader: str
    graded: int
    errors: list[tuple[str, str]]


def grader_name(func: Any) -> str:
    """The column a function's grades go in: its name (a lambda's is ``lambda``)."""
    if not callable(func):
        raise GradeError(
            _("{value} is not callable; --by takes a function of (answer_text, row)").format(
                value=_short(repr(func))
            )
        )
    name = str(getattr(func, "__name__", "") or type(func).__name__)
    return "lambda" if name == "<lambda>" else name


def grade_by_code(
    host: GradingHost, func: Callable[[str, dict[str, Any]], Any], answers: Sequence[AnswerRow]
) -> Graded:
    """Run ``func(answer_text, row)`` over ``answers``; a bool or a number is a grade,
    anything else (or an exception) that answer's error. One append for them all."""
    name = grader_name(func)
    records, errors = [], []
    for answer in answers:
        score: float | bool | None = None
        error = None
        try:
            found = func(answer.text, dict(answer.row))
        except Exception as exc:  # the function's failure is this answer's, not the run's
            error = _short(f"{type(exc).__name__}: {exc}")
        else:
            if isinstance(found, bool) or _is_number(found):
                score = found if isinstance(found, bool) else _whole(float(found))
            else:
                error = _("returned {kind}, not a bool or a number").format(
                    kind=type(found).__name__
                )
        if error is not None:
            errors.append((answer.id, error))
        records.append(grade_record(answer.id, score, grader=name, by="code", error=error))
    if records:
        keep_grades(host, records)
    return Graded(name, len(records), errors)


@dataclass(frozen=True)
class AnswerRow:
    """One answer to grade: its id (the answer's head), its text, the row it answers."""

    id: str
    text: str
    row: dict[str, Any]


def experiment_answers(rows: Iterable[dict[str, Any]], tree: SessionTree) -> list[AnswerRow]:
    """The answers of an experiment frame's rows (compare.experiment_rows), with the
    row each was asked from."""
    found = []
    for line in rows:
        question = tree.get(line["question"])
        about = experiment_of(question) or {}
        found.append(AnswerRow(line["id"], line["text"] or "", dict(about.get("row") or {})))
    return found


def _is_number(value: Any) -> bool:
    try:
        return math.isfinite(float(value)) and not isinstance(value, (str, bytes))
    except (TypeError, ValueError):
        return False


def _whole(value: float) -> float:
    """4.0 as 4, so the file says what was typed."""
    return int(value) if float(value).is_integer() else value


def _number(value: float) -> str:
    return str(_whole(value)) if math.isfinite(value) else str(value)


def _short(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
