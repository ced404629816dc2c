"""``%chat grade``, ``%chat prefer`` and ``%chat experiment``: judging an experiment's
answers from a notebook, and its summary per version and model.

The commands read the line, check every part of it before anything is written (a score
out of the scale, an unknown id, a grader that is not callable are one-line errors), then
call conversation/grading.py (or judging.py for ``--rubric``), which appends the records.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ...conversation.grading import experiment_answers, grade_by_code, grade_by_hand, prefer
from ...conversation.session import Session
from ...errors import NodeNotFound
from ...history.grade_record import DEFAULT_SCALE, HAND
from ...history.tree import Node
from ...i18n import _
from ...measures.compare import find_experiment
from ...measures.grades import Group, Measure, experiment_table, summary
from ...measures.usage import dollars

THUMBS = {"up": 1, "down": 0, "👍": 1, "👎": 0}
"""Scores a thumb stands for, on the scale 0–1."""

GRADE_USAGE = (
    "grade ID SCORE [--note TEXT] [--scale LOW-HIGH] | grade --by FUNC [EXPERIMENT] | "
    "grade --rubric TEXT [--model M] [--name NAME] [--batch] [EXPERIMENT]"
)


def experiment_node(session: Session, ref: str | None) -> str | None:
    """The node an experiment is named by: ``ref`` as the start of an experiment's id or
    as a node (None: the current question's experiment)."""
    if ref is None:
        return None
    node = find_experiment(session.tree, ref)
    if node is not None:
        return node.id
    try:
        return session.resolve(ref).id
    except NodeNotFound:
        raise NodeNotFound(
            _("no node and no experiment id starts with {ref}").format(ref=repr(ref))
        ) from None


def _options(
    args: list[str], valued: tuple[str, ...], flags: tuple[str, ...], usage: str
) -> tuple[list[str], dict[str, Any]]:
    """``args`` split into plain words and options (``--name VALUE`` or a flag)."""
    words: list[str] = []
    found: dict[str, Any] = {}
    at = 0
    while at < len(args):
        word = args[at]
        if word in valued:
            if at + 1 >= len(args):
                raise UsageError(
                    _("%chat: {option} needs a value; usage: %chat {usage}").format(
                        option=word, usage=usage
                    )
                )
            found[word] = args[at + 1]
            at += 2
            continue
        if word in flags:
            found[word] = True
        elif word.startswith("--"):
            raise UsageError(
                _("%chat: unknown option {option}; usage: %chat {usage}").format(
                    option=repr(word), usage=usage
                )
            )
        else:
            words.append(word)
        at += 1
    return words, found


def parse_score(text: str, scale: tuple[float, float]) -> tuple[float, tuple[float, float]]:
    """A typed score (a number, or up/down/👍/👎 on the scale 0–1) and its scale."""
    if text.lower() in THUMBS:
        return THUMBS[text.lower()], (0, 1)
    try:
        return float(text), scale
    except ValueError:
        raise UsageError(
            _("%chat grade: {score} is not a number (or up, down, 👍, 👎)").format(score=repr(text))
        ) from None


def parse_scale(text: str) -> tuple[float, float]:
    low, sep, high = text.partition("-")
    try:
        if sep:
            return float(low), float(high)
    except ValueError:
        pass
    raise UsageError(
        _("%chat grade: --scale {scale} is not LOW-HIGH, e.g. 1-5 or 0-10").format(scale=repr(text))
    )


class GradeCommands:
    """The judging commands, mixed into ``Commands`` (which provides ``session``)."""

    shell: Any

    @property
    def session(self) -> Session:  # Commands' own: the kernel's current session
        raise NotImplementedError

    def node(self, ref: str) -> Node:  # Commands' own: a node, or a one-line UsageError
        raise NotImplementedError

    def do_grade(self, args: list[str]) -> None:
        words, found = _options(
            args,
            ("--note", "--scale", "--by", "--rubric", "--model", "--name"),
            ("--batch",),
            GRADE_USAGE,
        )
        if "--batch" in found and "--rubric" not in found:
            raise UsageError(_("%chat grade --batch goes with --rubric TEXT: a judge's requests"))
        if "--rubric" in found:
            from .judging import grade_with_rubric  # the judge loads when first used

            self._at_most(words, 1)
            grade_with_rubric(self, found, experiment_node(self.session, _first(words)))
            return
        if "--by" in found:
            self._at_most(words, 1)
            self._grade_by_code(found["--by"], _first(words))
            return
        if len(words) != 2:
            raise UsageError(_("usage: %chat {usage}").format(usage=GRADE_USAGE))
        scale = parse_scale(found["--scale"]) if "--scale" in found else DEFAULT_SCALE
        score, scale = parse_score(words[1], scale)
        grade = grade_by_hand(
            self.session, self.node(words[0]).id, score, note=found.get("--note"), scale=scale
        )
        low, high = grade.scale or DEFAULT_SCALE
        print(
            _("Graded {node}: {score} of {low}–{high}").format(
                node=grade.node[:7], score=grade.score, low=low, high=high
            )
        )

    def _at_most(self, words: list[str], count: int) -> None:
        if len(words) > count:
            raise UsageError(_("usage: %chat {usage}").format(usage=GRADE_USAGE))

    def _grade_by_code(self, name: str, ref: str | None) -> None:
        namespace = self.shell.user_ns if self.shell is not None else {}
        if name not in namespace:
            raise UsageError(
                _("%chat grade --by: no kernel variable {name}; define the function first").format(
                    name=repr(name)
                )
            )
        session = self.session
        rows, _columns, _named = experiment_table(
            session.tree, session.grades, experiment_node(session, ref), session.prices
        )
        graded = grade_by_code(session, namespace[name], experiment_answers(rows, session.tree))
        print(
            _("Graded {count} answer(s) by {grader}; {failed} failed").format(
                count=graded.graded, grader=graded.grader, failed=len(graded.errors)
            )
        )
        for node, error in graded.errors[:5]:
            print(f"  {node[:7]}: {error}")

    def do_prefer(self, args: list[str]) -> None:
        usage = "prefer A B [--tie]"
        words, found = _options(args, (), ("--tie",), usage)
        if len(words) != 2:
            raise UsageError(_("usage: %chat {usage}").format(usage=usage))
        session = self.session
        tie = bool(found.get("--tie"))
        prefer(session, self.node(words[0]).id, self.node(words[1]).id, tie=tie)
        said = _("{a} and {b}: a tie") if tie else _("{a} is better than {b}")
        print(said.format(a=words[0], b=words[1]))

    def do_experiment(self, args: list[str]) -> None:
        usage = "experiment [EXPERIMENT]"
        words, _found = _options(args, (), (), usage)
        if len(words) > 1:
            raise UsageError(_("usage: %chat {usage}").format(usage=usage))
        session = self.session
        if session.leaf is None and not words:
            raise UsageError(_("the session is empty; run a %%chat cell first"))
        rows, _columns, named = experiment_table(
            session.tree, session.grades, experiment_node(session, _first(words)), session.prices
        )
        print(summary_text(rows, named))


def _first(words: list[str]) -> str | None:
    return words[0] if words else None


def summary_text(rows: list[dict[str, Any]], named: dict[str, str]) -> str:
    """The summary as a plain table, a line per version and model."""
    groups = summary(rows, named)
    experiment = next((r["experiment"] for r in rows if r.get("experiment")), None)
    head = _("Experiment {id}: {answers} answer(s)").format(
        id=(experiment or "-")[:8], answers=len(rows)
    )
    graders = list(named)
    titles = [_("version"), _("model"), _("answers")]
    titles += [_("grade") if g == HAND else g for g in graders]
    titles += [_("wins"), _("cost")]
    judged = any(group.judging is not None for group in groups)
    if judged:
        titles.append(_("judging"))
    table = [titles] + [_group_cells(group, graders, judged) for group in groups]
    widths = [max(len(line[i]) for line in table) for i in range(len(titles))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    note = _("a grade: mean ±spread (count); wins: preference win rate (count)")
    return "\n".join([head, *lines, note])


def _group_cells(group: Group, graders: list[str], judged: bool) -> list[str]:
    cells = [str(group.version or "-"), str(group.model or "-"), str(group.answers)]
    cells += [_measure(group.measures.get(g, Measure())) for g in graders]
    rate = group.win_rate
    cells.append("-" if rate is None else f"{rate:.0%} ({group.preferences})")
    cells.append(dollars(group.cost) if group.priced else "-")
    if judged:
        cells.append("-" if group.judging is None else dollars(group.judging))
    return cells


def _measure(measure: Measure) -> str:
    mean, spread = measure.mean, measure.spread
    if mean is None:
        return "-"
    shown = f"{mean:.2f}"
    if spread is not None:
        shown += f" ±{spread:.2f}"
    return f"{shown} ({measure.count})"
