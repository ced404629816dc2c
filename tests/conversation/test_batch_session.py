"""``--batch`` through the Session alone (conversation/many/batch.py): the real provider
and SDK against the fake Message Batches, the session file on disk. A batch split by the
API's limits, results written a chunk at a time, and two sessions on one file (two
kernels) writing the same results at once: each lands once."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic

from jupyter_tree_chat.conversation.many import batch
from jupyter_tree_chat.conversation.many.batch_poll import holding, look, poller
from jupyter_tree_chat.conversation.many.experiment import Plan, RowQuestion
from jupyter_tree_chat.conversation.many.variants import Variant
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.history.batch_record import batch_record
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.batches import CUSTOM_ID, BatchLimits
from jupyter_tree_chat.providers.endpoints.router import Router

KEY = "sk-ant-batch-session"


class Limited(AnthropicProvider):
    """Anthropic's API with a batch API whose limits are smaller (as a test sets them)."""

    limits = BatchLimits(requests=3, bytes=10**9)

    def batch_wire(self, model: str | None = None) -> Any:
        wire = super().batch_wire(model)
        wire.limits = self.limits
        return wire


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        server.batches.hold = True
        yield server


def session_on(path: Path, fake: FakeAnthropic, provider: type = AnthropicProvider) -> Session:
    return Session.open(path, Router(provider(api_key=KEY, base_url=fake.base_url)))


def rows(count: int) -> Plan:
    return Plan(
        "Row {n}", [RowQuestion(f"Row {n}: say something.", None, {"n": n}) for n in range(count)]
    )


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_batch_over_the_api_s_count_is_split_and_every_part_recorded(tmp_path, fake):
    fake.batches.max_requests = 3  # the API's limit, lowered with the wire's
    path = tmp_path / "s.chat.jsonl"
    session = session_on(path, fake, Limited)
    turn = session.run_experiment(rows(7), cell_id="c1", batch=True)
    assert turn.error is None
    assert [len(r) for r in fake.batches.created] == [3, 3, 1]
    sent = [r for r in records(path) if r.get("type") == "batch_sent"]
    assert [len(r["requests"]) for r in sent] == [3, 3, 1]
    (plan,) = session.batches.plans.values()
    assert sorted(c for r in sent for c in r["requests"]) == sorted(
        c for c, _q, _v in plan.requests
    )

    fake.batches.finish()
    with holding(session):
        look(session, plan)
    assert not plan.pending
    answers = [r for r in records(path) if "batch" in (r.get("meta") or {})]
    assert len(answers) == 7
    assert {a["meta"]["batch"]["id"] for a in answers} == set(plan.sent)


def test_a_batch_over_the_api_s_bytes_is_split_too(tmp_path, fake):
    class Tight(Limited):
        limits = BatchLimits(requests=100, bytes=1200)

    session = session_on(tmp_path / "s.chat.jsonl", fake, Tight)
    session.run_experiment(rows(6), cell_id="c1", batch=True)
    assert len(fake.batches.created) > 1
    assert sum(len(r) for r in fake.batches.created) == 6
    for created in fake.batches.created:
        assert len(json.dumps({"requests": created})) <= 1200
    fake.batches.finish()
    (plan,) = session.batches.plans.values()
    with holding(session):
        look(session, plan)
    assert not plan.pending  # every part's results, each under its question


def test_results_are_written_a_chunk_at_a_time_each_one_append(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(batch, "CHUNK", 3)
    path = tmp_path / "s.chat.jsonl"
    session = session_on(path, fake)
    session.run_experiment(rows(8), cell_id="c1", batch=True)
    (plan,) = session.batches.plans.values()
    fake.batches.finish()
    with holding(session):
        look(session, plan)
    applied = [r for r in records(path) if r.get("type") == "batch_applied"]
    assert [len(r["done"]) for r in applied] == [3, 3, 2]
    assert load_file(path).problems == []


def test_two_sessions_on_one_file_write_each_result_once(tmp_path, fake):
    path = tmp_path / "s.chat.jsonl"
    first = session_on(path, fake)
    first.run_experiment(rows(40), cell_id="c1", batch=True)
    second = session_on(path, fake)  # another kernel, opening the same file
    fake.batches.finish()
    plans = [next(iter(s.batches.plans.values())) for s in (first, second)]
    errors: list[BaseException] = []

    def apply(session: Session, plan: Any) -> None:
        try:
            with holding(session):
                look(session, plan)
        except BaseException as error:  # pragma: no cover - shown by the assert below
            errors.append(error)

    threads = [
        threading.Thread(target=apply, args=pair)
        for pair in zip((first, second), plans, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    written = records(path)
    answers = [r for r in written if "batch" in (r.get("meta") or {})]
    assert len(answers) == 40
    done = [c for r in written if r.get("type") == "batch_applied" for c in r["done"]]
    assert len(done) == len(set(done)) == 40
    assert load_file(path).problems == []
    for session in (first, second):  # each sees every answer, once
        session.refresh()
        (plan,) = session.batches.plans.values()
        assert not plan.pending
        assert sum(1 for n in session.tree if "batch" in (n.meta or {})) == 40


def test_a_question_id_the_api_would_refuse_gets_a_custom_id_it_takes(tmp_path, fake):
    assert batch.custom_id("3f2a9c1e0b7d4e21", 2) == "3f2a9c1e0b7d4e21-2"
    made = batch.custom_id("msg.001:imported", 0)
    assert CUSTOM_ID.match(made) and made != batch.custom_id("msg.001:other", 0)
    assert CUSTOM_ID.match(batch.custom_id("x" * 200, 11))


def test_a_batch_the_api_refuses_marks_its_requests_errored_and_says_why(tmp_path, fake):
    fake.api_key = "another-key"  # the API refuses ours: a 401 on the create
    path = tmp_path / "s.chat.jsonl"
    session = session_on(path, fake)
    turn = session.run_experiment(rows(2), cell_id="c1", batch=True)
    assert turn.error is not None and "refused the key" in str(turn.error)
    assert KEY not in str(turn.error)
    (plan,) = session.batches.plans.values()
    assert not plan.pending and plan.sent == {}
    assert {outcome for outcome, _why in plan.failed.values()} == {"errored"}
    assert load_file(path).problems == []


def test_a_plan_never_sent_is_canceled_by_hand(tmp_path, fake):
    path = tmp_path / "s.chat.jsonl"
    first = session_on(path, fake)
    questions = [first.tree.get(first.ask("Hi").user.id)]  # type: ignore[union-attr]
    variants = [Variant(first.settings, first.provider.default_model)] * 2
    record_wires = batch.wires_for(first, variants)
    plan = batch_record(
        "k-unsent",
        wire="anthropic",
        model=variants[0].model,
        variants=[batch.variant_record(v) for v in variants],
        requests=[(batch.custom_id(questions[0].id, i), questions[0].id, i) for i in range(2)],
        price=0.5,
    )
    first.record_facts([plan])  # as a kernel stopped before sending leaves it
    second = session_on(path, fake)
    (found,) = second.batches.pending()
    assert found.sent == {} and found.unsent() == [c for c, _q, _v in found.requests]
    wire = next(iter(record_wires.values()))[0]
    with holding(second):
        batch.cancel(second, found, wire)
    assert not found.pending
    assert {outcome for outcome, _why in found.failed.values()} == {"canceled"}
    assert fake.batches.created == []  # nothing was ever sent


def test_the_watch_backs_off_while_nothing_changes_and_ends_with_the_batch(tmp_path, fake):
    path = tmp_path / "s.chat.jsonl"
    session = session_on(path, fake)
    session.batch_poll = 0.1
    session.run_experiment(rows(2), cell_id="c1", batch=True)  # its watch starts here
    time.sleep(3.0)
    looks = [r for r in fake.requests if r.method == "GET" and "/v1/messages/batches/" in r.path]
    # a look at once, then 0.1 s, 0.15 s, 0.225 s, ... apart: about 8 in 3 s, never a loop
    assert 2 <= len(looks) <= 12
    fake.batches.finish()
    deadline = time.monotonic() + 30
    while any(p.pending for p in session.batches.plans.values()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    watcher = poller(session)._thread
    deadline = time.monotonic() + 30
    while watcher is not None and watcher.is_alive():  # nothing pending: the thread ends
        assert time.monotonic() < deadline
        time.sleep(0.05)
