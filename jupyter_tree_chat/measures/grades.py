"""An experiment's grades as columns, and its summary per version and model.

``experiment_frame`` and the grid read the same rows (compare.experiment_rows); this
adds what the grade and preference records say of each answer (history/grade_record.py):
the hand grade in ``grade`` and its ``note``, one column per other grader (a function's
name, a rubric's), the errors a grader met, and the preference ``wins`` (a tie half a win)
out of ``preferences``, and what judging it by a model cost (``judging_cost``).
``summary`` is what ``%chat experiment`` prints: per version and
model, each grade's mean with its count and spread, the preference win rate, the cost.
Pure: it reads rows and grades.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..history.grade_record import HAND, Grade, Grades
from ..history.tree import SessionTree
from .compare import experiment_questions, experiment_rows
from .models import Price


def grade_columns(
    rows: list[dict[str, Any]], columns: list[str], grades: Grades
) -> tuple[list[dict[str, Any]], list[str], dict[str, str]]:
    """``rows`` and ``columns`` with the grades added, and grader → its column (a
    grader named like a column already there is ``grade.NAME``)."""
    ids = [row["id"] for row in rows]
    named = {HAND: HAND}
    taken = set(columns) | {HAND, "note", "wins", "preferences"}
    for grader in grades.graders(ids):
        if grader != HAND:
            named[grader] = f"grade.{grader}" if grader in taken else grader
    erring = {
        grader
        for node in ids
        for grader, grade in grades.of(node).items()
        if grade.error is not None and grader != HAND
    }
    added = [HAND, "note"]
    for grader, column in named.items():
        if grader == HAND:
            continue
        added.append(column)
        if grader in erring:
            added.append(f"{column}.error")
    added += ["wins", "preferences"]
    judged = any(grade.judge for node in ids for grade in grades.of(node).values())
    if judged:
        added.append(JUDGING_COST)
    for row in rows:
        found = grades.of(row["id"])
        hand = found.get(HAND)
        row[HAND] = None if hand is None else hand.score
        row["note"] = None if hand is None else hand.note
        for grader, column in named.items():
            if grader == HAND:
                continue
            grade = found.get(grader)
            row[column] = None if grade is None else grade.score
            if grader in erring:
                row[f"{column}.error"] = None if grade is None else grade.error
        won, played = grades.wins(row["id"])
        row["wins"], row["preferences"] = won, played
        if judged:
            row[JUDGING_COST] = _judging_cost(found.values())
    return rows, [*columns, *added], named


JUDGING_COST = "judging_cost"
"""What the model graders' judge requests for an answer cost (a column where any judged)."""


def _judging_cost(found: Iterable[Grade]) -> float:
    costs = [g.judge.get("cost") for g in found if g.judge]
    return sum(c for c in costs if isinstance(c, (int, float)))


@dataclass
class Measure:
    """One grade's numbers over a group of answers."""

    values: list[float] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return sum(self.values) / len(self.values) if self.values else None

    @property
    def spread(self) -> float | None:
        """The sample standard deviation (None under two values)."""
        if len(self.values) < 2:
            return None
        mean = sum(self.values) / len(self.values)
        return math.sqrt(sum((v - mean) ** 2 for v in self.values) / (len(self.values) - 1))


@dataclass
class Group:
    """The answers of one version and model."""

    version: Any
    model: Any
    answers: int = 0
    measures: dict[str, Measure] = field(default_factory=dict)
    wins: float = 0.0
    preferences: int = 0
    cost: float = 0.0
    priced: bool = True
    judging: float | None = None

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.preferences if self.preferences else None


def summary(rows: Sequence[dict[str, Any]], named: dict[str, str]) -> list[Group]:
    """Per version and model (in the order met): each grader's numbers, wins, cost."""
    groups: dict[tuple[Any, Any], Group] = {}
    for row in rows:
        key = (row.get("version"), row.get("model"))
        group = groups.setdefault(key, Group(*key))
        group.answers += 1
        for grader, column in named.items():
            value = row.get(column)
            measure = group.measures.setdefault(grader, Measure())
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                measure.values.append(float(value))
        group.wins += row.get("wins") or 0
        group.preferences += row.get("preferences") or 0
        judging = row.get(JUDGING_COST)
        if isinstance(judging, (int, float)) and not math.isnan(judging):
            group.judging = (group.judging or 0.0) + judging
        cost = row.get("cost")
        if isinstance(cost, (int, float)) and not math.isnan(cost):
            group.cost += cost
        else:
            group.priced = False
    return list(groups.values())


def experiment_table(
    tree: SessionTree,
    grades: Grades,
    node_id: str | None,
    prices: Mapping[str, Price] | None,
    failed: Mapping[str, list[tuple[str, str]]] | None = None,
) -> tuple[list[dict[str, Any]], list[str], dict[str, str]]:
    """Every answer of the experiment ``node_id`` belongs to (default: the current
    question's), one dict each, its grades beside it: the frame's rows and columns;
    ``failed`` batch requests a line each (``experiment_rows``)."""
    questions = experiment_questions(tree, node_id)
    found, columns = experiment_rows(tree, questions, prices, failed)
    return grade_columns(found, columns, grades)
