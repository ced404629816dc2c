"""Grades and preferences: append-only records that judge nodes (docs/format.md, "Grade"
and "Preference").

A grade is one more fact about an answer, kept beside it in the session file; regrading
appends another record and the latest one for the same answer and grader wins, so
nothing is ever rewritten. A preference says one answer beat another (or tied). This
module builds the records, says why a record is not the format's (``check`` and the
loader report it by its line, and it is skipped), and keeps what a file says in a
``Grades`` (the latest grade per answer and grader, every preference pair's latest
word). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..i18n import _

GRADE = "grade"
PREFERENCE = "preference"
HAND = "grade"
"""The grader name of grades given by a person (the frame's ``grade`` column)."""
BY = ("hand", "code", "model")
DEFAULT_SCALE = (1, 5)


def grade_record(
    node_id: str,
    score: float | bool | None,
    *,
    grader: str = HAND,
    by: str = "hand",
    scale: tuple[float, float] | None = None,
    note: str | None = None,
    error: str | None = None,
    judge: dict[str, Any] | None = None,
    time: int | None = None,
) -> dict[str, Any]:
    """A grade of ``node_id`` by ``grader`` (``score`` None only with an ``error``)."""
    record: dict[str, Any] = {"type": GRADE, "id": node_id, "grader": grader, "by": by}
    record["score"] = score
    if scale is not None:
        record["scale"] = list(scale)
    if note:
        record["note"] = note
    if error is not None:
        record["error"] = error
    if judge is not None:
        record["judge"] = judge
    if time is not None:
        record["time"] = time
    return record


def preference_record(
    better: str, worse: str, *, tie: bool = False, time: int | None = None
) -> dict[str, Any]:
    """``better`` beat ``worse`` (or, with ``tie``, neither did)."""
    record: dict[str, Any] = {"type": PREFERENCE, "better": better, "worse": worse}
    if tie:
        record["tie"] = True
    if time is not None:
        record["time"] = time
    return record


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def grade_problem(record: dict[str, Any], known: Callable[[str], bool]) -> str | None:
    """Why ``record`` is not a grade of a node ``known`` knows, or None if it is one."""
    target = record.get("id")
    if type(target) is not str or not known(target):
        return _("grade record for unknown node {node} (ignored)").format(node=repr(target))
    grader, by, score = record.get("grader"), record.get("by", "hand"), record.get("score")
    if type(grader) is not str or not grader:
        return _("grade of {node}: 'grader' is not a name (ignored)").format(node=repr(target))
    if by not in BY:
        return _("grade of {node}: 'by' is not one of hand, code, model (ignored)").format(
            node=repr(target)
        )
    if score is None and type(record.get("error")) is not str:
        return _("grade of {node}: no score and no error (ignored)").format(node=repr(target))
    if score is not None and type(score) is not bool and not _is_number(score):
        return _("grade of {node}: 'score' is not a number or a boolean (ignored)").format(
            node=repr(target)
        )
    scale = record.get("scale")
    if scale is not None and not (
        type(scale) is list and len(scale) == 2 and all(_is_number(v) for v in scale)
    ):
        return _("grade of {node}: 'scale' is not [low, high] (ignored)").format(node=repr(target))
    for name in ("note", "error"):
        if name in record and type(record[name]) is not str:
            return _("grade of {node}: '{field}' is not a string (ignored)").format(
                node=repr(target), field=name
            )
    if "judge" in record and type(record["judge"]) is not dict:
        return _("grade of {node}: 'judge' is not an object (ignored)").format(node=repr(target))
    return None


def preference_problem(record: dict[str, Any], known: Callable[[str], bool]) -> str | None:
    """Why ``record`` is not a preference between two known nodes, or None."""
    better, worse = record.get("better"), record.get("worse")
    for value in (better, worse):
        if type(value) is not str or not known(value):
            return _("preference record for unknown node {node} (ignored)").format(node=repr(value))
    if better == worse:
        return _("preference of {node} over itself (ignored)").format(node=repr(better))
    if type(record.get("tie", False)) is not bool:
        return _("preference of {node}: 'tie' is not a boolean (ignored)").format(node=repr(better))
    return None


@dataclass(frozen=True)
class Grade:
    """The latest grade of one answer by one grader."""

    node: str
    grader: str
    by: str
    score: float | bool | None
    scale: tuple[float, float] | None = None
    note: str | None = None
    error: str | None = None
    judge: dict[str, Any] | None = None

    @property
    def value(self) -> float | None:
        """The score as a number (a boolean as 1 or 0), None for an error."""
        if self.score is None:
            return None
        return float(self.score)

    @classmethod
    def of(cls, record: dict[str, Any]) -> Grade:
        scale = record.get("scale")
        return cls(
            record["id"],
            record["grader"],
            record.get("by", "hand"),
            record.get("score"),
            (scale[0], scale[1]) if scale else None,
            record.get("note"),
            record.get("error"),
            record.get("judge"),
        )

    def to_dict(self) -> dict[str, Any]:
        """What a view is sent: the record's fields, as the file has them."""
        return {
            k: v
            for k, v in {
                "grader": self.grader,
                "by": self.by,
                "score": self.score,
                "scale": list(self.scale) if self.scale else None,
                "note": self.note,
                "error": self.error,
            }.items()
            if v is not None
        }


@dataclass
class Grades:
    """What a file's grade and preference records say, the latest word of each."""

    #: answer id → grader → its latest grade
    latest: dict[str, dict[str, Grade]] = field(default_factory=dict)
    #: the unordered pair → (better, worse, tie) of its latest preference
    preferences: dict[frozenset[str], tuple[str, str, bool]] = field(default_factory=dict)
    #: how many grade records were read (every regrade counts)
    records: int = 0

    def take(self, record: dict[str, Any], known: Callable[[str], bool]) -> str | None:
        """Keep a ``grade`` or ``preference`` record, or say why it is skipped."""
        if record.get("type") == GRADE:
            why = grade_problem(record, known)
            if why is None:
                grade = Grade.of(record)
                self.latest.setdefault(grade.node, {})[grade.grader] = grade
                self.records += 1
            return why
        why = preference_problem(record, known)
        if why is None:
            pair = frozenset((record["better"], record["worse"]))
            self.preferences[pair] = (record["better"], record["worse"], bool(record.get("tie")))
        return why

    def of(self, node_id: str) -> dict[str, Grade]:
        return self.latest.get(node_id, {})

    def graders(self, nodes: Iterable[str] | None = None) -> list[str]:
        """Every grader's name (of ``nodes``' grades only, if given): hand grades first."""
        found: dict[str, None] = {}
        for node_id in self.latest if nodes is None else nodes:
            for name in self.latest.get(node_id, {}):
                found[name] = None
        return sorted(found, key=lambda name: (name != HAND, name))

    def wins(self, node_id: str) -> tuple[float, int]:
        """``node_id``'s preference wins (a tie half a win) and how many it took part in."""
        won, played = 0.0, 0
        for pair, (better, _worse, tie) in self.preferences.items():
            if node_id in pair:
                played += 1
                won += 0.5 if tie else float(better == node_id)
        return won, played


def latest_records(
    grades: Grades, keep: Callable[[str], bool] | None = None
) -> list[dict[str, Any]]:
    """The latest word of ``grades`` as records (an exported page's copy of them), only
    those whose nodes ``keep`` keeps."""
    found = []
    for node, by in grades.latest.items():
        if keep is not None and not keep(node):
            continue
        for grade in by.values():
            found.append(
                grade_record(
                    node,
                    grade.score,
                    grader=grade.grader,
                    by=grade.by,
                    scale=grade.scale,
                    note=grade.note,
                    error=grade.error,
                    judge=grade.judge,
                )
            )
    for better, worse, tie in grades.preferences.values():
        if keep is None or (keep(better) and keep(worse)):
            found.append(preference_record(better, worse, tie=tie))
    return found
