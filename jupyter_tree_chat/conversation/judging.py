"""A model as a grader: one judge request per answer, by a rubric, kept in the tree.

``%chat grade --rubric TEXT [--model M]`` asks a judge (any endpoint: Claude, a hosted
model, a local llama-server) to grade each of an experiment's answers. Each request is a
conversation of its own, a new root holding the rubric, the question and the answer
(``meta.judge`` names the answer it judges), so the judge's nodes are a side branch of
the session, never on the experiment's paths. Its reply's last ``Score: N`` line is the
verdict (1–5); the grade record keeps the score, the judge's reasoning, its reply's id,
its model and its cost. A reply without a score is that answer's error, not the run's.

The offline teaching model only repeats what it was given, so it cannot judge: asking it
is refused before anything is written, with the way to a real model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..errors import ChatError, GradeError
from ..history.grade_record import grade_record
from ..history.tree import Node, SessionTree
from ..i18n import _
from ..measures.models import Price
from ..measures.usage import nodes_cost
from ..providers.base import Provider, route_of, takes_temperature
from .events import Turn
from .grading import AnswerRow, GradingHost, keep_grades
from .settings import ChatSettings

JUDGE = "judge"
"""The default name of a rubric's grader (its column in the frame)."""
SCALE = (1, 5)
_SCORE = re.compile(r"score\s*[:=]\s*\**\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)

PROMPT = """\
You are grading an answer by a rubric.

Rubric:
{rubric}

Question:
{question}

Answer:
{answer}

Explain your reasoning in a few sentences, then end with one line `Score: N`, where N is \
a whole number from 1 (fails the rubric) to 5 (meets it fully)."""


class JudgingHost(GradingHost, Protocol):
    """What judging needs of the session (``Session`` is one)."""

    provider: Provider
    settings: ChatSettings
    prices: dict[str, Price]

    @property
    def leaf(self) -> str | None: ...

    def new_id(self) -> str: ...

    def ask(
        self, content: str, *, new_root: bool = ..., meta: Any = ..., settings: Any = ...
    ) -> Turn: ...

    def switch(self, node_ref: str, *, deepest: bool = ...) -> str: ...


@dataclass(frozen=True)
class Judged:
    """What a judging run did: the grader's name, the answers judged, which failed, and
    what the judge cost (None: a model without a price)."""

    grader: str
    judged: int
    errors: list[tuple[str, str]]
    cost: float | None


def verdict(text: str) -> float | None:
    """The judge's score: its last ``Score: N`` within 1–5, else None."""
    found = _SCORE.findall(text)
    if not found:
        return None
    score = float(found[-1])
    if not SCALE[0] <= score <= SCALE[1]:
        return None
    return int(score) if score.is_integer() else score


def check_judge(host: JudgingHost, model: str | None) -> str:
    """The judge's model name, or a refusal when it would be the offline model."""
    name = model or host.settings.model or host.provider.default_model
    if route_of(host.provider, name).provider == "offline":
        raise GradeError(
            _(
                "a judge needs a real model, and the offline one only repeats its input; set "
                "ANTHROPIC_API_KEY, or run a local one (`jupyter tree-chat serve-local`) and "
                "add --model local:smollm2"
            )
        )
    return name


def judge_answers(
    host: JudgingHost,
    rubric: str,
    answers: Iterable[AnswerRow],
    questions: Mapping[str, str],
    *,
    model: str | None = None,
    grader: str = JUDGE,
) -> Judged:
    """Ask the judge once per answer (``questions``: answer id → its question's text);
    each verdict is a grade record as soon as it comes. The current leaf stays where it
    was."""
    name, settings = _judge_settings(host, rubric, model)
    leaf = host.leaf
    errors: list[tuple[str, str]] = []
    costs: list[float | None] = []
    judged = 0
    try:
        for answer in answers:
            prompt, meta = _judge_request(rubric, questions, answer, grader)
            try:
                turn = host.ask(prompt, new_root=True, meta=meta, settings=settings)
            except ChatError as error:
                record, why = failed_grade(answer.id, grader, name, str(error)), str(error)
                keep_grades(host, [record])
                errors.append((answer.id, why))
                judged += 1
                continue
            record, cost = _judgement(host, answer.id, grader, name, turn)
            costs.append(cost)
            if record.get("error"):
                errors.append((answer.id, record["error"]))
            keep_grades(host, [record])
            judged += 1
    finally:
        if leaf is not None and host.leaf != leaf:
            host.switch(leaf, deepest=False)
    total = None if not costs or any(c is None for c in costs) else sum(c or 0 for c in costs)
    return Judged(grader, judged, errors, total)


def _judgement(
    host: JudgingHost, answer_id: str, grader: str, model: str, turn: Turn
) -> tuple[dict[str, Any], float | None]:
    """The grade record of one judge's reply, and what it cost."""
    reply = turn.last
    replies = [n for n in turn.replies]
    cost = nodes_cost(replies, host.prices) if replies else None
    reply_id = reply.id if reply is not None and reply.role == "assistant" else None
    error = str(turn.error) if turn.error is not None else None
    return graded(answer_id, grader, model, turn.text, reply_id, cost, error), cost


def graded(
    answer_id: str,
    grader: str,
    model: str,
    text: str,
    reply_id: str | None,
    cost: float | None,
    error: str | None = None,
) -> dict[str, Any]:
    """The grade record of a judge's reply ``text`` (its last ``Score: N``), or of its
    ``error``; a batch's judge replies are read by this too (many/batch.py)."""
    judge: dict[str, Any] = {"model": model, "reasoning": text}
    if reply_id is not None:
        judge["node"] = reply_id
    if cost is not None:
        judge["cost"] = cost
    score = verdict(text)
    if error is None and score is None:
        error = _("the judge's reply has no Score: 1-5 line")
    if score is not None:
        judge["verdict"] = score
    return grade_record(
        answer_id, score, grader=grader, by="model", scale=SCALE, error=error, judge=judge
    )


def judge_questions(
    host: JudgingHost,
    rubric: str,
    answers: Iterable[AnswerRow],
    questions: Mapping[str, str],
    *,
    model: str | None = None,
    grader: str = JUDGE,
) -> tuple[ChatSettings, str, list[Node]]:
    """The judge's settings, model and questions for ``--batch``: one new root per answer,
    as ``judge_answers`` asks them, not stored yet (many/batch.py sends them)."""
    name, settings = _judge_settings(host, rubric, model)
    made = []
    for answer in answers:
        prompt, meta = _judge_request(rubric, questions, answer, grader)
        message = {"role": "user", "content": prompt, "timestamp": host.now()}
        made.append(Node(host.new_id(), None, message, meta))
    return settings, name, made


def _judge_settings(host: JudgingHost, rubric: str, model: str | None) -> tuple[str, ChatSettings]:
    """The judge's model and settings (no tools; temperature 0, or none where the judge
    takes no 0: OpenAI's reasoning models take only their default, MiniMax more than 0),
    or ``GradeError`` for an empty rubric or a judge that cannot judge: one check for
    streamed and batched judging."""
    if not rubric.strip():
        raise GradeError(_("--rubric needs the rubric's text, e.g. --rubric 'Is it correct?'"))
    name = check_judge(host, model)
    temperature = 0.0 if takes_temperature(host.provider, name, 0.0) else None
    return name, replace(host.settings.merged(model=name, tools=()), temperature=temperature)


def _judge_request(
    rubric: str, questions: Mapping[str, str], answer: AnswerRow, grader: str
) -> tuple[str, dict[str, Any]]:
    """The judge's question about ``answer`` and the meta that ties it to the answer."""
    prompt = PROMPT.format(rubric=rubric, question=questions[answer.id], answer=answer.text)
    return prompt, {"judge": {"of": answer.id, "grader": grader}}


def failed_grade(answer_id: str, grader: str, model: str, why: str) -> dict[str, Any]:
    """The grade record of a judge's request that got no reply (refused, or a batch's
    errored one)."""
    return grade_record(
        answer_id, None, grader=grader, by="model", scale=SCALE, error=why, judge={"model": model}
    )


def question_texts(tree: SessionTree, rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each frame row's answer id → the text of the question it answers."""
    found: dict[str, str] = {}
    for row in rows:
        question: Node = tree.get(row["question"])
        found[row["id"]] = question.text
    return found
