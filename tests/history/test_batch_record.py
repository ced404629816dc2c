"""A batch's records in the session file (batch_record.py): what the loader keeps of them,
what it reports, and what is pending."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_tree_chat.history.batch_record import (
    Batches,
    applied_record,
    batch_record,
    sent_record,
)
from jupyter_tree_chat.history.store import FileStore, NewRecords, load_file, parse_session


def question(node_id: str, text: str) -> dict:
    return {"id": node_id, "parentId": None, "message": {"role": "user", "content": text}}


def plan(key: str = "k1", requests: int = 3) -> dict:
    return batch_record(
        key,
        wire="anthropic",
        model="claude-sonnet-4-6",
        variants=[{"model": "claude-sonnet-4-6", "max_tokens": 100}],
        requests=[(f"q{i}-0", f"q{i}", 0) for i in range(requests)],
        price=0.5,
        time=1,
    )


def lines(*records: dict) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_a_plan_is_pending_until_each_request_is_applied():
    data = lines(
        *(question(f"q{i}", f"row {i}") for i in range(3)),
        plan(),
        sent_record("k1", "msgbatch_1"),
        applied_record("k1", ["q0-0"], {"q1-0": ("errored", "api_error: boom")}),
    )
    loaded = parse_session(data)
    assert loaded.problems == []
    (found,) = loaded.batches.pending()
    assert found.sent == {"msgbatch_1": None}
    assert found.applied == 2 and found.total == 3
    assert loaded.batches.pending_questions() == {"q2": "msgbatch_1"}
    assert loaded.batches.outcomes() == {"q1": [("errored", "api_error: boom")]}

    done = parse_session(data + lines(applied_record("k1", ["q2-0"])))
    assert done.batches.pending() == []
    assert done.batches.pending_questions() == {}


def test_a_split_plan_knows_which_requests_each_batch_holds():
    loaded = parse_session(
        lines(
            plan(requests=3),
            sent_record("k1", "b1", ["q0-0", "q1-0"]),
            sent_record("k1", "b2", ["q2-0"]),
        )
    )
    found = loaded.batches.plans["k1"]
    assert found.custom_ids("b1") == ["q0-0", "q1-0"]
    assert found.custom_ids("b2") == ["q2-0"]
    assert found.unsent() == []
    assert loaded.batches.by_batch_id("b2") is found


def test_a_plan_never_sent_says_so():
    found = parse_session(lines(plan(requests=2))).batches.plans["k1"]
    assert found.pending and found.sent == {}
    assert found.unsent() == ["q0-0", "q1-0"]


def test_damaged_batch_records_are_reported_by_line_and_skipped():
    loaded = parse_session(
        lines(
            plan(),
            plan(),
            {"type": "batch", "key": "k2", "wire": "anthropic"},
            sent_record("nope", "b1"),
            {"type": "batch_applied", "key": "k1", "done": "q0-0"},
            {"type": "batch_sent"},
        )
    )
    assert [(p.line, str(p.message)) for p in loaded.problems] == [
        (2, "a second batch record for 'k1' (ignored)"),
        (3, "batch record 'k2' is not the format's (ignored)"),
        (4, "batch_sent record for unknown batch 'nope' (ignored)"),
        (5, "batch_applied record for 'k1' is not the format's (ignored)"),
        (6, "batch_sent record without a key (ignored)"),
    ]
    assert list(loaded.batches.plans) == ["k1"]


def test_a_locked_append_sees_what_another_process_wrote_first(tmp_path: Path):
    """Two kernels deciding from the same file: the second sees the first's records."""
    path = tmp_path / "s.chat.jsonl"
    first, second = FileStore(path), FileStore(path)
    first.load()
    first.append([question("q0", "row"), plan(requests=1)], durable=True)
    second_loaded = second.load()
    first.load()

    def apply_once(store_batches: Batches):
        def decide(found: NewRecords) -> list[dict]:
            if store_batches.plans["k1"].is_applied("q0-0"):
                return []
            return [applied_record("k1", ["q0-0"])]

        return decide

    first_batches = first._reader.result.batches  # type: ignore[union-attr]
    first.append_checked(apply_once(first_batches))
    first_batches.take(applied_record("k1", ["q0-0"]))  # a process keeps its own records
    found = second.append_checked(apply_once(second_loaded.batches))
    assert found.nodes == []
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r.get("type") for r in written].count("batch_applied") == 1
    assert load_file(path).problems == []
