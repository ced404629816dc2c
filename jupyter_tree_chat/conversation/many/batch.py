"""``--batch``: many requests sent as a vendor batch at half price, answered later.

Where a fan-out or an experiment would stream its requests now, a batch cell writes its
questions and the batch's plan (history/batch_record.py) in one append with one fsync,
sends one batch per endpoint (split where a batch would pass the API's count or size
limit), records each batch's id, and returns: the answers come within 24 hours.

- **Checked first.** Every variant's endpoint must have a batch API
  (``providers.batches.batch_wire``): one without (a local server, the offline model)
  is one line naming it, before anything is written or sent.
- **Mapped.** Each request's ``custom_id`` is its question's id and its variant
  (``3f2a…-0``): 1–64 characters of ``[A-Za-z0-9_-]``, unique in its batch, and the
  plan maps it back to its question in any kernel.
- **Applied once.** Results are read as a stream and written ``CHUNK`` at a time, each
  chunk one append with one fsync, under the session's lock and the file's
  (``SessionHost.append_checked``): what another kernel already wrote is read first and
  skipped, so each result lands once however many kernels read it, however often.
- **In the tree.** A succeeded request becomes an answer under its own question,
  ``meta.batch`` naming the batch and the share of the standard price it costs (the
  footer, ``%chat usage`` and ``experiment_frame`` price it so). An errored, expired or
  canceled one is kept as a fact about its question (``batch_applied``'s ``failed``),
  never dropped. The current leaf does not move: a later cell continues from where the
  batch cell ran.

batch_poll.py looks at pending batches and calls ``collect`` when one has ended.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

import orjson

from ...errors import ChatError, ProviderError
from ...history.batch_record import (
    Batches,
    BatchPlan,
    applied_record,
    batch_record,
    sent_record,
)
from ...history.grade_record import Grades
from ...history.store import leaf_record
from ...history.tree import Node, tool_uses
from ...i18n import _
from ...measures.models import Price
from ...measures.usage import nodes_cost
from ...providers.base import ReplyRequest, route_of
from ...providers.batches import (
    CUSTOM_ID,
    BatchItem,
    BatchLimits,
    BatchResult,
    BatchWire,
    batch_wire,
)
from ..events import BatchProgress, Turn
from ..grading import AnswerRow
from ..judging import JUDGE, JudgingHost, failed_grade, graded, judge_questions
from ..replies import reply_meta, tool_names_meta
from ..settings import ChatSettings
from .variants import Variant
from .workers import FanoutHost

CHUNK = 1000
"""Results written per append (one fsync each): memory stays bounded, a kernel killed
mid-way loses no chunk it finished."""

_BYTES_MARGIN = 0.9
"""A split keeps each batch under this share of the API's byte limit (the wire's own
framing adds to each request's size)."""


class BatchHost(FanoutHost, Protocol):
    """What sending and applying a batch needs of the session (``Session`` is one)."""

    batches: Batches
    batch_poll: float
    settings: ChatSettings
    grades: Grades
    prices: dict[str, Price]

    def append_checked(self, decide: Any) -> list[Node]: ...

    def record_all(
        self, nodes: Iterable[Node], *, durable: bool = True, records: Iterable[dict[str, Any]] = ()
    ) -> None: ...

    def record_facts(self, records: Iterable[dict[str, Any]]) -> None: ...

    def continue_tools(self, reply: Node, settings: ChatSettings) -> Turn: ...


def wires_for(
    session: BatchHost, variants: Sequence[Variant]
) -> dict[str, tuple[BatchWire, list[int]]]:
    """Each endpoint's batch API and the variants it answers; ``EndpointRefuses`` (one
    line naming the endpoint) for one without, before anything is written or sent."""
    found: dict[str, tuple[BatchWire, list[int]]] = {}
    for index, variant in enumerate(variants):
        wire = batch_wire(session.provider, variant.model)
        found.setdefault(wire.name, (wire, []))[1].append(index)
    return found


def custom_id(question: str, variant: int) -> str:
    """The request's ``custom_id``: its question's id and variant (``3f2a…-0``), or, for an
    id the API would refuse (an imported session's ``msg.1``, a long one), a digest of it:
    the plan maps either back to the question."""
    made = f"{question}-{variant}"
    if CUSTOM_ID.match(made):
        return made
    return f"q{hashlib.sha256(question.encode()).hexdigest()[:24]}-{variant}"


def variant_record(variant: Variant) -> dict[str, Any]:
    """What a result needs of the settings it was asked with, in a later kernel too."""
    settings = variant.settings
    record: dict[str, Any] = {"model": variant.model, "max_tokens": settings.max_tokens}
    for name in ("temperature", "thinking", "system"):
        value = getattr(settings, name)
        if value is not None:
            record[name] = value
    if settings.tools is not None:
        record["tools"] = list(settings.tools)
    if variant.samples > 1:
        record.update(sample=variant.sample, samples=variant.samples)
    return record


def settings_of(base: ChatSettings, record: dict[str, Any]) -> ChatSettings:
    """The settings a variant of a plan was asked with (``variant_record``'s)."""
    tools = record.get("tools")
    return replace(
        base.merged(model=record.get("model"), max_tokens=record.get("max_tokens")),
        temperature=record.get("temperature"),
        thinking=record.get("thinking"),
        system=record.get("system"),
        tools=tuple(tools) if isinstance(tools, list) else base.tools,
    )


def send(
    session: BatchHost,
    questions: list[Node],
    new: list[Node],
    turn: Turn,
    variants: list[Variant],
    *,
    cell_id: str | None = None,
    wires: dict[str, tuple[BatchWire, list[int]]] | None = None,
) -> Turn:
    """Write ``new`` questions and the plans in one durable append, then send one batch
    per endpoint (see the module docstring); ``turn.batches`` names the plans."""
    wires = wires_for(session, variants) if wires is None else wires
    shown = [variant_record(v) for v in variants]
    plans: list[tuple[dict[str, Any], BatchWire]] = []
    for name, (wire, indexes) in wires.items():
        requests = [(custom_id(q.id, i), q.id, i) for q in questions for i in indexes]
        record = batch_record(
            session.new_id(),
            wire=name,
            model=variants[indexes[0]].model,
            variants=shown,
            requests=requests,
            price=getattr(wire, "price", None),
            time=session.now(),
            cell_id=cell_id,
        )
        plans.append((record, wire))
    records = [record for record, _wire in plans] + _leaf_stays(session)
    session.record_all(new, durable=True, records=records)
    for record, wire in plans:
        plan = session.batches.plans[record["key"]]
        turn.batches.append(plan.key)
        try:
            submit(session, plan, wire, questions, variants)
        except ChatError as error:
            turn.error = error
    return turn


def _leaf_stays(session: BatchHost) -> list[dict[str, Any]]:
    """A leaf record after nodes off the current path, so a reader of the file (a new
    kernel) finds the leaf where this session has it, not on the last node written."""
    leaf = session.tree.leaf
    return [] if leaf is None else [leaf_record(leaf)]


def requests_of(
    session: BatchHost, plan: BatchPlan, questions: list[Node], variants: list[Variant]
) -> Iterator[BatchItem]:
    """Each request of ``plan`` as it would be streamed (budget, tools, thinking)."""
    by_id = {q.id: q for q in questions}
    above: dict[str | None, list[Node]] = {}
    specs = {i: session.tool_specs(v.settings) for i, v in enumerate(variants)}
    for custom_id, question_id, index in plan.requests:
        question = by_id[question_id]
        parent = question.parent_id
        if parent not in above:
            above[parent] = session.tree.path_nodes(parent) if parent else []
        variant = variants[index]
        request = session.context_request(
            [*above[parent], question], variant.settings, specs[index], summarize=False
        )
        yield BatchItem(custom_id, replace(request, model=variant.model))


def split(items: Iterable[BatchItem], limits: BatchLimits) -> Iterator[list[BatchItem]]:
    """``items`` in batches the API takes: at most ``limits.requests`` each, and under
    its byte limit (each request's size estimated from its JSON)."""
    most = int(limits.bytes * _BYTES_MARGIN)
    chunk: list[BatchItem] = []
    size = 0
    for item in items:
        weight = _size(item.request)
        if chunk and (len(chunk) >= limits.requests or size + weight > most):
            yield chunk
            chunk, size = [], 0
        chunk.append(item)
        size += weight
    if chunk:
        yield chunk


def _size(request: ReplyRequest) -> int:
    return len(orjson.dumps(request.messages)) + len(request.system or "") + 256


def submit(
    session: BatchHost,
    plan: BatchPlan,
    wire: BatchWire,
    questions: list[Node],
    variants: list[Variant],
) -> None:
    """Send ``plan``'s requests (split by the wire's limits), each batch's id recorded as
    the API takes it. A refused batch marks its requests errored, with the API's line."""
    chunks = list(split(requests_of(session, plan, questions, variants), wire.limits))
    for number, chunk in enumerate(chunks):
        ids = [item.custom_id for item in chunk]
        try:
            state = wire.submit(chunk)
        except ProviderError as error:
            rest = [item.custom_id for later in chunks[number:] for item in later]
            why = _("the batch was not sent: {error}").format(error=error)
            session.append_checked(
                lambda rest=rest, why=why: (
                    [],
                    [applied_record(plan.key, [], {c: ("errored", why) for c in rest})],
                )
            )
            progress(session, plan)
            raise
        session.record_facts([sent_record(plan.key, state.id, ids if len(chunks) > 1 else None)])
        plan.sent.setdefault(state.id, ids if len(chunks) > 1 else None)
    progress(session, plan)


def progress(
    session: BatchHost, plan: BatchPlan, status: str | None = None, counts: Any = None
) -> None:
    """Announce where ``plan`` stands (``BatchProgress``)."""
    failed: dict[str, int] = {"errored": 0, "expired": 0, "canceled": 0}
    for outcome, _why in plan.failed.values():
        failed[outcome] = failed.get(outcome, 0) + 1
    if status is None:
        status = "applied" if not plan.pending else ("in_progress" if plan.sent else "sending")
    done = plan.applied
    succeeded = len(plan.done)
    if counts is not None:  # the API's word on what has ended so far
        done = max(done, counts.done)
        succeeded = max(succeeded, counts.succeeded)
        for name in failed:
            failed[name] = max(failed[name], getattr(counts, name))
    session.emit(
        BatchProgress(
            plan.key,
            tuple(plan.sent),
            status,
            plan.total,
            done,
            succeeded,
            failed["errored"],
            failed["expired"],
            failed["canceled"],
            plan.applied,
        )
    )


# -- results into the tree ---------------------------------------------------------------


def collect(session: BatchHost, plan: BatchPlan, batch_id: str, wire: BatchWire) -> int:
    """Write the results of ended batch ``batch_id`` into the tree, ``CHUNK`` at a time
    (see the module docstring); returns how many this call wrote."""
    questions = plan.question_of()
    written = 0
    chunk: list[BatchResult] = []
    for result in wire.results(batch_id):
        chunk.append(result)
        if len(chunk) >= CHUNK:
            written += apply(session, plan.key, chunk, questions, batch_id)
            chunk = []
            progress(session, plan, "ended")
    if chunk:
        written += apply(session, plan.key, chunk, questions, batch_id)
    progress(session, plan)
    return written


def apply(
    session: BatchHost,
    key: str,
    results: list[BatchResult],
    questions: dict[str, tuple[str, int]],
    batch_id: str,
) -> int:
    """Write ``results`` of plan ``key`` not written yet by anyone: one append, one fsync."""
    count = 0

    grades: list[dict[str, Any]] = []

    def decide() -> tuple[list[Node], list[dict[str, Any]]]:
        nonlocal count
        grades.clear()
        plan = session.batches.plans[key]  # as the file says now, under its lock
        nodes: list[Node] = []
        done: list[str] = []
        failed: dict[str, tuple[str, str]] = {}
        for result in results:
            cid = result.custom_id
            if cid not in questions or plan.is_applied(cid) or cid in failed or cid in done:
                continue
            question, index = questions[cid]
            judging = _judged(session, question)
            if result.outcome == "succeeded" and result.finished is not None:
                node = answer_node(session, plan, result, question, index, batch_id)
                nodes.append(node)
                done.append(cid)
                if judging is not None:  # a judge's verdict is a grade (judging.py)
                    cost = nodes_cost([node], session.prices)
                    grades.append(graded(*judging, plan.model, node.text, node.id, cost))
            else:
                failed[cid] = (result.outcome, result.error or result.outcome)
                if judging is not None:
                    grades.append(failed_grade(*judging, plan.model, failed[cid][1]))
        count = len(done) + len(failed)
        if not count:
            return [], []
        return nodes, [*grades, applied_record(key, done, failed), *_leaf_stays(session)]

    written = session.append_checked(decide)
    for record in grades:  # this process's own grade records are not read back
        session.grades.take(record, session.tree.__contains__)
    for node in written:  # a tool call: the loop goes on outside the batch, by who wrote it
        meta = node.meta or {}
        if meta.get("stop_reason") == "tool_use" and tool_uses(node.message):
            plan = session.batches.plans[key]
            index = questions[meta["batch"]["custom_id"]][1]
            asked = plan.variants[index] if index < len(plan.variants) else {}
            turn = session.continue_tools(node, settings_of(session.settings, asked))
            if turn.error is not None:
                session.notice(str(turn.error), "warning")
    return count


def _judged(session: BatchHost, question: str) -> tuple[str, str] | None:
    """``(answer judged, grader)`` when ``question`` is a judge's (``meta.judge``)."""
    about = (
        (session.tree.get(question).meta or {}).get("judge") if question in session.tree else None
    )
    if isinstance(about, dict) and isinstance(about.get("of"), str):
        return about["of"], str(about.get("grader") or JUDGE)
    return None


class JudgeHost(BatchHost, JudgingHost, Protocol):
    """What judging in a batch needs: a batch's host that can judge (``Session``)."""


def judge(
    session: JudgeHost,
    rubric: str,
    answers: Iterable[AnswerRow],
    questions: Mapping[str, str],
    *,
    model: str | None = None,
    grader: str = JUDGE,
) -> Turn:
    """``%chat grade --rubric TEXT --batch``: the judge's requests as one batch; each
    verdict becomes a grade record when its result is written (``apply``)."""
    settings, name, asked = judge_questions(
        session, rubric, answers, questions, model=model, grader=grader
    )
    variants = [Variant(settings, name)]
    wires = wires_for(session, variants)  # refused before anything is written
    turn = Turn(None)
    return send(session, asked, asked, turn, variants, wires=wires)


def answer_node(
    session: BatchHost,
    plan: BatchPlan,
    result: BatchResult,
    question: str,
    index: int,
    batch_id: str,
) -> Node:
    """A succeeded request's answer under its question, marked as a batch answer."""
    finished = result.finished
    assert finished is not None
    asked = plan.variants[index] if index < len(plan.variants) else {"model": plan.model}
    settings = settings_of(ChatSettings(), asked)
    model = str(asked.get("model") or plan.model)
    meta = reply_meta(route_of(session.provider, model), finished, settings, 0.0)
    meta.pop("duration_ms", None)  # a batch answer's time is the batch's, not its own
    meta["batch"] = {"id": batch_id, "key": plan.key, "custom_id": result.custom_id}
    if plan.price is not None:
        meta["batch"]["price"] = plan.price
    if "sample" in asked:
        meta["sample"] = {"index": asked["sample"], "of": asked.get("samples")}
    meta = tool_names_meta(session.tools, finished.message, meta)
    message = {**finished.message, "timestamp": session.now()}
    return Node(session.new_id(), question, message, meta)


def cancel(session: BatchHost, plan: BatchPlan, wire: BatchWire) -> list[str]:
    """Ask the API to cancel ``plan``'s batches still running; the requests it had not
    asked come back ``canceled`` and are marked so when its results are read."""
    said = []
    for batch_id in plan.sent:
        state = wire.cancel(batch_id)
        said.append(f"{batch_id}: {state.status}")
    unsent = plan.unsent()
    if unsent:
        why = _("canceled before it was sent")
        session.append_checked(
            lambda: ([], [applied_record(plan.key, [], {c: ("canceled", why) for c in unsent})])
        )
    return said
