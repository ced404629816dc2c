"""pi sessions read into a faithful tree (formats/pi.py).

A v3 session written from pi's docs/session.md (tests/helpers/import_samples.py), a v1 file
with damage, and the first lines of a real v1 session from pi's own test fixtures.
"""

from __future__ import annotations

from typing import Any

from helpers.import_samples import DATA, jsonl, pi_session, pi_v1_with_damage, pieces_of_content

from jupyter_tree_chat import formats
from jupyter_tree_chat.formats import Imported, Source
from jupyter_tree_chat.formats.pi import BRANCH_PREFIX, COMPACTION_PREFIX


def read(data: bytes, name: str = "p.jsonl") -> Imported:
    return formats.read([Source(name, data)])


def nodes(imported: Imported) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in imported.records if "type" not in r}


def labels(imported: Imported) -> dict[str, str]:
    return {r["id"]: r["label"] for r in imported.records if r.get("type") == "label"}


def test_entries_keep_pi_ids_and_tool_calls_become_tool_use_and_tool_result():
    imported = read(jsonl(pi_session()))
    assert imported.format == "pi"
    assistant = nodes(imported)["aa000003"]
    assert assistant["parentId"] == "aa000001"  # the model_change entry is bridged over
    assert assistant["message"]["content"][-1] == {
        "type": "tool_use",
        "id": "call_abc|fc_123",  # kept as written; mapped only in what is sent
        "name": "read",
        "input": {"path": "notes.md"},
    }
    result = nodes(imported)["aa000004"]["message"]["content"]
    assert result == [
        {
            "type": "tool_result",
            "tool_use_id": "call_abc|fc_123",
            "content": [{"type": "text", "text": "remember the milk"}],
        }
    ]


def test_another_providers_reasoning_is_kept_as_unsigned_thinking():
    imported = read(jsonl(pi_session()))
    thinking = nodes(imported)["aa000003"]["message"]["content"][0]
    assert thinking == {"type": "thinking", "thinking": "Reading it.", "signature": ""}
    meta = nodes(imported)["aa000003"]["meta"]
    assert meta["usage"] == {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    assert meta["stop_reason"] == "tool_use"


def test_branch_summary_and_compaction_are_nodes_holding_their_summary_text():
    imported = read(jsonl(pi_session()))
    summary = nodes(imported)["aa00000a"]
    assert summary["parentId"] == "aa000005"  # beside the abandoned branch
    assert summary["message"]["content"][0]["text"].startswith(BRANCH_PREFIX)
    assert "Listed the folder: one file." in summary["message"]["content"][0]["text"]
    assert summary["meta"]["merged"][0]["id"] == "aa00000b"  # the prompt after it
    compaction = nodes(imported)["aa00000d"]
    assert compaction["message"]["content"][0]["text"].startswith(COMPACTION_PREFIX)
    assert compaction["meta"]["first_kept"] == "aa00000b"


def test_labels_follow_pi_last_one_wins_and_an_absent_label_clears():
    imported = read(jsonl(pi_session()))
    # "answer" was set on aa000005, then cleared; "latest" is on aa00000f, merged into
    # the compaction node before it (a user message after a user message)
    assert labels(imported) == {"aa000001": "start", "aa00000d": "latest"}


def test_the_current_leaf_is_the_last_entry_bridged_to_its_message():
    imported = read(jsonl(pi_session()))
    assert imported.leaf == "aa00000d"
    assert imported.records[0]["title"] == "Milk notes"  # session_info


def test_a_bash_execution_is_user_text_as_pi_sends_it():
    imported = read(jsonl(pi_session()))
    bash = nodes(imported)["aa000008"]
    assert bash["message"]["content"] == [{"type": "text", "text": "Ran `ls`\n```\nnotes.md\n```"}]
    assert bash["meta"]["pi"] == "bashExecution"


def test_a_v1_file_is_chained_in_order_and_its_damage_reported():
    imported = read(pi_v1_with_damage(), "old.jsonl")
    assert [(p.line, p.message) for p in imported.problems] == [
        (7, "2 records glued on one line (each read)"),
        (8, "torn last line: an incomplete record of 47 bytes (ignored)"),
    ]
    texts = [
        t for r in nodes(imported).values() for t in pieces_of_content(r["message"]["content"])
    ]
    assert texts[:3] == ["one", "two", "three"]
    assert texts[-2:] == ["four", "five"]  # both glued records
    compaction = next(
        r
        for r in nodes(imported).values()
        if any(m["id"] == "0a0b0c0d-6" for m in r["meta"].get("merged", []))
    )
    assert compaction["id"] == "0a0b0c0d-5"  # the compaction after "three", merged into it


def test_the_public_v1_session_head_imports_its_parallel_results_as_one_message():
    imported = formats.read([formats.open_source(DATA / "pi-v1-large-session-head.jsonl")])
    assert imported.problems == []
    by_id = nodes(imported)
    aborted = by_id["d703a1a9-3"]
    assert aborted["message"]["content"] == [] and aborted["meta"]["interrupted"] is True
    results = by_id["d703a1a9-7"]["message"]["content"]
    assert [r["type"] for r in results] == ["tool_result"] * 3
    calls = [b["id"] for b in by_id["d703a1a9-6"]["message"]["content"] if b["type"] == "tool_use"]
    assert [r["tool_use_id"] for r in results] == calls
