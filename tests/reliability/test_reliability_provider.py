"""Provider faults against the local fake Messages API: the file stays right.

The promises (docs/design.md): "A user message is on disk before the request is sent. A reply
cut short (network, error event, KeyboardInterrupt) is kept, marked interrupted." Retries
(the SDK's own, for 429/529/5xx) must never write the question twice.

Each scenario runs the real ``anthropic`` SDK through ``AnthropicProvider`` against
``FakeAnthropic`` (real HTTP and server-sent events), with a ``Session`` over a real
session file, and then reads the JSONL back and checks: the question is there exactly
once; a complete reply is complete; a cut reply is kept with exactly the text that
arrived and ``meta.interrupted``; nothing arrived means no reply node and the question
waits at the leaf; the file loads without problems; a retry afterwards works and still
does not duplicate the question.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from fakes.fake_anthropic import FakeAnthropic, ScriptedReply
from fakes.scripted_provider import ScriptedProvider

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider

QUESTION = "What does the model see on this branch?"
TEXT = "The model sees one path: the root down to the current leaf, nothing else."
CHUNK = 16  # the fake's default characters per text delta
TOOL = {"name": "get_weather", "input": {"city": "Paris", "days": 3, "units": "metric"}}
#: the API key used throughout; test_security_secrets checks it never lands anywhere
SENTINEL_KEY = "sk-ant-api03-SENTINEL-9f8e7d6c5b4a-DO-NOT-LEAK-0123456789abcdef"


def first_json_delta_event(server: FakeAnthropic, reply: ScriptedReply) -> int:
    """1-based number of the event carrying the first non-empty tool input JSON piece."""
    events = server.events_for(reply, {"model": "m", "messages": []})
    for number, event in enumerate(events, 1):
        if orjson.loads(event.data).get("delta", {}).get("partial_json"):
            return number
    raise AssertionError("no input_json_delta in the scripted stream")


@dataclass(frozen=True)
class Fault:
    """One provider fault: how to script it, and what the session must end up with."""

    name: str
    script: Callable[[FakeAnthropic], None]
    outcome: str  # "complete" | "cut" | "nothing"
    kept_text: str = ""  # for "cut": exactly the text that arrived
    error_kind: str | None = None
    requests: int = 1


def _tool_drop(server: FakeAnthropic) -> None:
    reply = ScriptedReply(text="Let me look that up.", tool_uses=[TOOL])
    after = first_json_delta_event(server, reply) + 1  # inside the JSON, one piece sent
    server.enqueue("Let me look that up.", tool_use=TOOL, drop_after=after)


FAULTS = [
    Fault(
        "429 then success",
        lambda s: (s.enqueue_error(429, retry_after_ms=1), s.enqueue(TEXT)),
        "complete",
        requests=2,
    ),
    Fault(
        "529 twice then success",
        lambda s: (s.enqueue_error(529, times=2, retry_after_ms=1), s.enqueue(TEXT)),
        "complete",
        requests=3,
    ),
    Fault(
        "529 three times (past the SDK's retries)",
        lambda s: s.enqueue_error(529, times=3, retry_after_ms=1),
        "nothing",
        error_kind="overloaded",
        requests=3,
    ),
    Fault(
        "500 then success",
        lambda s: (s.enqueue_error(500, retry_after_ms=1), s.enqueue(TEXT)),
        "complete",
        requests=2,
    ),
    Fault(
        "500 three times",
        lambda s: s.enqueue_error(500, times=3, retry_after_ms=1),
        "nothing",
        error_kind="server_error",
        requests=3,
    ),
    Fault(
        "drop before any text",
        lambda s: s.enqueue(TEXT, drop_after=3),  # message_start, block_start, ping
        "nothing",
        error_kind="connection_failed",
    ),
    Fault(
        "drop mid-text",
        lambda s: s.enqueue(TEXT, drop_after=5),  # ... and two text deltas
        "cut",
        kept_text=TEXT[: 2 * CHUNK],
        error_kind="connection_failed",
    ),
    Fault(
        "drop mid tool-use JSON",
        _tool_drop,
        "cut",
        kept_text="Let me look that up.",
        error_kind="connection_failed",
    ),
    Fault(
        "error event before any text",
        lambda s: s.enqueue(TEXT, error_event_after=3),
        "nothing",
        error_kind="overloaded",
    ),
    Fault(
        "error event mid-text",
        lambda s: s.enqueue(TEXT, error_event_after=6),
        "cut",
        kept_text=TEXT[: 3 * CHUNK],
        error_kind="overloaded",
    ),
    Fault(
        "malformed data: line mid-text",
        lambda s: s.enqueue(TEXT, malformed_after=4),
        "cut",
        kept_text=TEXT[:CHUNK],
        error_kind="stream_error",
    ),
]


def node_lines(path: Path) -> list[dict[str, Any]]:
    """The node records in the file, independent of the loader."""
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return [r for r in records if "type" not in r]


def text_of(record: dict[str, Any]) -> str:
    content = record["message"]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def questions_on_disk(path: Path, question: str = QUESTION) -> int:
    return sum(
        1 for r in node_lines(path) if r["message"]["role"] == "user" and text_of(r) == question
    )


def run_fault(tmp_path: Path, server: FakeAnthropic, fault: Fault) -> tuple[Session, Path]:
    """Script the fault, ask once, check the file; return the session for more turns."""
    path = tmp_path / "nb.chat.jsonl"
    provider = AnthropicProvider(api_key=SENTINEL_KEY, base_url=server.base_url)
    session = Session.open(path, provider)
    fault.script(server)

    turn = session.ask(QUESTION)

    assert len(server.requests) == fault.requests, [r.path for r in server.requests]
    assert questions_on_disk(path) == 1, "the question must be on disk exactly once"
    replies = [r for r in node_lines(path) if r["message"]["role"] == "assistant"]
    if fault.outcome == "complete":
        assert turn.error is None
        assert len(replies) == 1 and text_of(replies[0]) == TEXT
        assert not (replies[0].get("meta") or {}).get("interrupted")
    elif fault.outcome == "cut":
        assert turn.error is not None and turn.error.kind == fault.error_kind
        assert len(replies) == 1
        assert text_of(replies[0]) == fault.kept_text, "the cut reply must keep what arrived"
        assert replies[0]["meta"]["interrupted"] is True
        assert replies[0]["meta"]["error"] == fault.error_kind
        blocks = replies[0]["message"]["content"]
        assert all(b["type"] == "text" for b in blocks), "a half tool_use must not be stored"
    else:
        assert turn.error is not None and turn.error.kind == fault.error_kind
        assert replies == []
        assert session.leaf == turn.user.id  # the question waits, unanswered
    loaded = load_file(path)
    assert loaded.problems == []
    return session, path


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_provider_fault_keeps_the_file_right(tmp_path: Path, fault: Fault) -> None:
    """Every fault: the question once, the reply complete / cut-and-marked / absent."""
    with FakeAnthropic() as server:
        session, path = run_fault(tmp_path, server, fault)

        # afterwards the user retries; the model answers; still one question on disk
        server.enqueue("A fresh, complete answer.")
        retry = session.retry()
        assert retry.error is None and retry.text == "A fresh, complete answer."
        assert questions_on_disk(path) == 1
        sent = server.last_request.body["messages"]
        assert [m["role"] for m in sent] == ["user"], "the cut reply must not be sent on"
        loaded = load_file(path)
        assert loaded.problems == []
        kept = 1 if fault.outcome in ("complete", "cut") else 0
        assert len(loaded.tree.children(turn_user(loaded))) == kept + 1


def turn_user(loaded: Any) -> str:
    return loaded.tree.roots()[0].id


def test_the_question_is_on_disk_before_the_request_is_sent(tmp_path: Path) -> None:
    """At the moment the provider is called, the file already holds the question."""
    path = tmp_path / "nb.chat.jsonl"
    seen: list[int] = []
    provider = ScriptedProvider(on_request=lambda _: seen.append(questions_on_disk(path)))
    Session.open(path, provider).ask(QUESTION)
    assert seen == [1]


def test_a_follow_up_after_a_cut_reply_does_not_repeat_the_question(tmp_path: Path) -> None:
    """After a cut, the next question goes under the kept partial reply; the first
    question is still there once, and the model is sent the partial text."""
    with FakeAnthropic() as server:
        session, path = run_fault(tmp_path, server, FAULTS[6])  # drop mid-text
        server.enqueue("Yes.")
        turn = session.ask("Go on?")
        assert turn.error is None
        assert questions_on_disk(path) == 1
        assert questions_on_disk(path, "Go on?") == 1
        roles = [m["role"] for m in server.last_request.body["messages"]]
        assert roles == ["user", "assistant", "user"]
