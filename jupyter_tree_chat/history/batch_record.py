"""A vendor batch's records in the session file (docs/format.md, "Batch").

A batch is asked now and answered hours later, maybe in another kernel: what it asked
and where each answer goes must be in the file, not in a process. Three records:

- ``batch``: the plan, written in the same append as its questions (one fsync, before
  anything is sent): its ``key`` (ours), the ``wire`` and ``model`` to ask again, the
  settings of each variant asked, and each request as ``[custom_id, question, variant]``;
- ``batch_sent``: the vendor's batch ``id`` for a ``key``, once the API took it (one
  plan split by the API's limits has several);
- ``batch_applied``: results written, in the same append as their answer nodes:
  the ``custom_id`` of each answered request, and each errored, expired or canceled
  one with its line. A request is applied once: whoever appends checks, under the
  file's lock, what the file already holds (``Batches.applied``).

``Batches`` keeps what a file says (pure: no I/O, no clock); a batch is pending while a
request of its plan is not applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..i18n import _

BATCH = "batch"
BATCH_SENT = "batch_sent"
BATCH_APPLIED = "batch_applied"
RECORD_TYPES = (BATCH, BATCH_SENT, BATCH_APPLIED)
FAILED_OUTCOMES = ("errored", "canceled", "expired")


def batch_record(
    key: str,
    *,
    wire: str,
    model: str,
    variants: list[dict[str, Any]],
    requests: list[tuple[str, str, int]],
    price: float | None,
    time: int | None = None,
    cell_id: str | None = None,
) -> dict[str, Any]:
    """The plan of batch ``key`` (see the module docstring); ``price`` is the share of
    the standard price a batch answer costs (0.5: half), None where unknown."""
    record: dict[str, Any] = {"type": BATCH, "key": key, "wire": wire, "model": model}
    record["variants"] = variants
    record["requests"] = [list(r) for r in requests]
    if price is not None:
        record["price"] = price
    if time is not None:
        record["time"] = time
    if cell_id:
        record["cell_id"] = cell_id
    return record


def sent_record(key: str, batch_id: str, custom_ids: list[str] | None = None) -> dict[str, Any]:
    """``key`` went to the API as ``batch_id`` (``custom_ids``: the part of a split plan
    it holds; None: all of it)."""
    record: dict[str, Any] = {"type": BATCH_SENT, "key": key, "id": batch_id}
    if custom_ids is not None:
        record["requests"] = custom_ids
    return record


def applied_record(
    key: str, done: list[str], failed: dict[str, tuple[str, str]] | None = None
) -> dict[str, Any]:
    """Requests of ``key`` whose results are written: ``done`` answered (their nodes in the
    same append), ``failed`` ``custom_id → (outcome, why)``."""
    record: dict[str, Any] = {"type": BATCH_APPLIED, "key": key, "done": done}
    if failed:
        record["failed"] = {cid: list(pair) for cid, pair in failed.items()}
    return record


@dataclass
class BatchPlan:
    """One ``batch`` record, and what the file says of it since."""

    key: str
    wire: str
    model: str
    variants: list[dict[str, Any]]
    requests: list[tuple[str, str, int]]
    price: float | None = None
    time: int | None = None
    cell_id: str | None = None
    #: the vendor's batch ids, each with the custom ids it holds (None: all)
    sent: dict[str, list[str] | None] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    failed: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def applied(self) -> int:
        return len(self.done) + len(self.failed)

    @property
    def pending(self) -> bool:
        return self.applied < self.total

    def is_applied(self, custom_id: str) -> bool:
        return custom_id in self.done or custom_id in self.failed

    def question_of(self) -> dict[str, tuple[str, int]]:
        """``custom_id → (question id, variant)``."""
        return {cid: (question, variant) for cid, question, variant in self.requests}

    def custom_ids(self, batch_id: str) -> list[str]:
        """The custom ids that went in vendor batch ``batch_id``."""
        held = self.sent.get(batch_id)
        return [cid for cid, _q, _v in self.requests] if held is None else list(held)

    def unsent(self) -> list[str]:
        """Custom ids in no vendor batch (the kernel stopped before sending them)."""
        if any(held is None for held in self.sent.values()):
            return []
        sent = {cid for held in self.sent.values() for cid in held or ()}
        return [cid for cid, _q, _v in self.requests if cid not in sent]


def _problem(record: dict[str, Any], plans: dict[str, BatchPlan]) -> str | None:
    kind, key = record.get("type"), record.get("key")
    if type(key) is not str or not key:
        return _("{kind} record without a key (ignored)").format(kind=kind)
    if kind == BATCH:
        if key in plans:
            return _("a second batch record for {key} (ignored)").format(key=repr(key))
        requests = record.get("requests")
        fits = (
            type(record.get("wire")) is str
            and type(record.get("model")) is str
            and type(record.get("variants")) is list
            and type(requests) is list
            and all(
                type(r) is list
                and len(r) == 3
                and type(r[0]) is str
                and type(r[1]) is str
                and type(r[2]) is int
                for r in requests
            )
        )
        return (
            None
            if fits
            else _("batch record {key} is not the format's (ignored)").format(key=repr(key))
        )
    if key not in plans:
        return _("{kind} record for unknown batch {key} (ignored)").format(kind=kind, key=repr(key))
    if kind == BATCH_SENT:
        held = record.get("requests")
        if type(record.get("id")) is not str or (held is not None and type(held) is not list):
            return _("batch_sent record for {key} is not the format's (ignored)").format(
                key=repr(key)
            )
        return None
    failed = record.get("failed", {})
    if type(record.get("done")) is not list or type(failed) is not dict:
        return _("batch_applied record for {key} is not the format's (ignored)").format(
            key=repr(key)
        )
    return None


@dataclass
class Batches:
    """What a file's batch records say (see the module docstring)."""

    plans: dict[str, BatchPlan] = field(default_factory=dict)

    def take(
        self, record: dict[str, Any], known: Callable[[str], bool] | None = None
    ) -> str | None:
        """Keep a batch record, or say why it is skipped."""
        why = _problem(record, self.plans)
        if why is not None:
            return why
        kind, key = record["type"], record["key"]
        if kind == BATCH:
            self.plans[key] = BatchPlan(
                key,
                record["wire"],
                record["model"],
                record["variants"],
                [(r[0], r[1], r[2]) for r in record["requests"]],
                record.get("price"),
                record.get("time"),
                record.get("cell_id"),
            )
        elif kind == BATCH_SENT:
            held = record.get("requests")
            self.plans[key].sent[record["id"]] = None if held is None else list(held)
        else:
            plan = self.plans[key]
            plan.done.update(str(cid) for cid in record["done"])
            for cid, pair in record.get("failed", {}).items():
                if type(pair) is list and len(pair) == 2:
                    plan.failed[str(cid)] = (str(pair[0]), str(pair[1]))
        return None

    def pending(self) -> list[BatchPlan]:
        """The plans with a request not applied yet, oldest first."""
        return [plan for plan in self.plans.values() if plan.pending]

    def by_batch_id(self, batch_id: str) -> BatchPlan | None:
        return next((p for p in self.plans.values() if batch_id in p.sent), None)

    def pending_questions(self) -> dict[str, str]:
        """Question id → the vendor batch id (or key) it waits on, for pending requests."""
        found: dict[str, str] = {}
        for plan in self.pending():
            where = {cid: bid for bid in plan.sent for cid in plan.custom_ids(bid)}
            for cid, question, _variant in plan.requests:
                if not plan.is_applied(cid):
                    found[question] = where.get(cid, plan.key)
        return found

    def outcomes(self) -> dict[str, list[tuple[str, str]]]:
        """Question id → the (outcome, why) of each failed request asked of it."""
        found: dict[str, list[tuple[str, str]]] = {}
        for plan in self.plans.values():
            questions = plan.question_of()
            for cid, pair in plan.failed.items():
                question = questions.get(cid)
                if question is not None:
                    found.setdefault(question[0], []).append(pair)
        return found


def take_all(batches: Batches, records: Iterable[dict[str, Any]]) -> None:
    """Keep records appended by this process (their lines are not read back)."""
    for record in records:
        if record.get("type") in RECORD_TYPES:
            batches.take(record)
