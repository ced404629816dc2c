"""conversation/budgeting.py: a Session builds each request to its context budget.

Against the local fake Messages API through the real SDK, so what is checked is what the
server received (and the fake refuses what the real API refuses: roles that do not
alternate, a tool call without its result). The session file only ever grows.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fakes.fake_anthropic import FakeAnthropic

from jupyter_tree_chat.conversation.many.variants import Fanout
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.errors import ContextWindowFull
from jupyter_tree_chat.history.store import FileStore
from jupyter_tree_chat.measures.budget import OVERFLOW, TRIMMED
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.tools.functions import ToolRegistry

WORDS = "word " * 100  # 125 tokens


def make_session(
    server: FakeAnthropic, path: Path, budget: Any = "window", ids: str = "id", **settings: Any
) -> Session:
    client = anthropic.Anthropic(api_key="sk-test", base_url=server.base_url)
    counter = itertools.count()
    return Session(
        FileStore(path),
        AnthropicProvider(client),
        settings=ChatSettings(context_budget=budget, **settings),
        clock=lambda: 1_700_000_000,
        new_id=lambda: f"{ids}{next(counter):04d}",
    )


def sent(server: FakeAnthropic, request: int = -1) -> list[dict[str, Any]]:
    return server.requests[request].body["messages"]


def texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


def message_requests(server: FakeAnthropic) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/messages"]


def long_conversation(session: Session, turns: int, server: FakeAnthropic) -> None:
    for k in range(turns):
        server.enqueue(f"answer {k}: " + WORDS)
        session.ask(f"question {k}: " + WORDS)


def test_under_the_budget_the_request_is_byte_for_byte_todays(fake_anthropic, tmp_path):
    bodies = []
    for name, budget in (("off", "off"), ("big", 100_000)):
        session = make_session(fake_anthropic, tmp_path / f"{name}.chat.jsonl", budget)
        long_conversation(session, 4, fake_anthropic)
        bodies.append(fake_anthropic.last_request.raw)
        assert "context" not in (session.path()[-1].meta or {})  # nothing was left out
    assert bodies[0] == bodies[1] and len(bodies[0]) > 2_000


def test_over_the_budget_the_server_gets_whole_exchanges_newest_first(fake_anthropic, tmp_path):
    file = tmp_path / "nb.chat.jsonl"
    session = make_session(fake_anthropic, file, 1_500)
    long_conversation(session, 12, fake_anthropic)
    messages = sent(fake_anthropic)
    first = texts(messages[0])
    dropped = 12 - (len(messages) + 1) // 2
    assert dropped > 0 and first[0] == f"[{dropped} earlier exchanges left out]"
    assert first[1].startswith(f"question {dropped}:")
    assert texts(messages[-1])[0].startswith("question 11:")
    answer = session.path()[-1]
    context = answer.meta["context"]
    assert context["dropped"] == dropped and context["exchanges"] == 12
    assert context["reason"] == TRIMMED and context["tokens"] <= 1_500
    assert session.tree.get(context["from"]).text.startswith(f"question {dropped}:")
    # the whole history is still there, in the file, as it was written
    reopened = Session(FileStore(file), session.provider)
    assert next(n.text for n in reopened.path()).startswith("question 0:")
    assert len(reopened.path()) == 24


def test_the_cut_moves_in_steps_so_consecutive_requests_read_the_cache(fake_anthropic, tmp_path):
    session = make_session(fake_anthropic, tmp_path / "nb.chat.jsonl", 3_000)
    long_conversation(session, 30, fake_anthropic)
    requests = message_requests(fake_anthropic)
    firsts = [json.dumps(r.body["messages"][0]["content"]) for r in requests]
    moves = sum(1 for a, b in itertools.pairwise(firsts) if a != b)
    trimmed = [r for r in requests if "left out" in firsts[requests.index(r)]]
    assert trimmed and moves <= 8  # a sliding cut would change the first message every turn
    reads = [r.usage["cache_read_input_tokens"] for r in trimmed]
    assert sum(1 for read in reads if read > 0) >= len(trimmed) - moves


def test_a_tool_round_over_the_budget_keeps_its_call_and_result_together(fake_anthropic, tmp_path):
    tools = ToolRegistry()

    @tools.register
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    session = make_session(fake_anthropic, tmp_path / "nb.chat.jsonl", 1_200)
    session.tools = tools
    long_conversation(session, 6, fake_anthropic)
    fake_anthropic.enqueue("Let me add.", tool_use={"name": "add", "input": {"a": 2, "b": 3}})
    fake_anthropic.enqueue("It is 5.")
    turn = session.ask("add 2 and 3, please")
    assert turn.error is None and turn.replies[-1].text == "It is 5."
    last = sent(fake_anthropic)  # accepted by the fake: every call answered, roles alternate
    assert last[-1]["content"][0]["type"] == "tool_result"
    assert any(b.get("type") == "tool_use" for b in last[-2]["content"])
    assert all("context" in reply.meta for reply in turn.replies)


def test_a_retry_sees_what_the_answer_it_retries_saw(fake_anthropic, tmp_path):
    session = make_session(fake_anthropic, tmp_path / "nb.chat.jsonl", 1_500)
    long_conversation(session, 10, fake_anthropic)
    original = fake_anthropic.last_request.body["messages"]
    answer = session.path()[-1]
    session.retry()
    assert fake_anthropic.last_request.body["messages"] == original
    again = session.path()[-1]
    assert again.id != answer.id and again.meta["context"] == answer.meta["context"]


def test_a_fork_from_before_the_cut_sees_its_own_path(fake_anthropic, tmp_path):
    session = make_session(fake_anthropic, tmp_path / "nb.chat.jsonl", 1_500)
    long_conversation(session, 10, fake_anthropic)
    early = session.path()[3]  # the second answer, long since left out of the requests
    fake_anthropic.enqueue("fork answer")
    turn = session.ask("another way", parent=early.id)
    assert [texts(m)[0][:11] for m in sent(fake_anthropic)] == [
        "question 0:",
        "answer 0: w",
        "question 1:",
        "answer 1: w",
        "another way",
    ]
    assert "context" not in turn.replies[0].meta  # its own path fits


def test_a_question_too_big_for_the_window_itself_is_refused_before_it_is_stored(
    fake_anthropic, tmp_path
):
    session = make_session(fake_anthropic, tmp_path / "nb.chat.jsonl", 1_000)
    session.context_windows = {"claude-sonnet-4-6": 8_000}
    long_conversation(session, 3, fake_anthropic)
    nodes = len(session.tree)
    fake_anthropic.enqueue("fine")
    turn = session.ask("a long one: " + "word " * 2_000)  # over the budget, within the window
    assert turn.replies[0].meta["context"]["reason"] == OVERFLOW
    assert len(sent(fake_anthropic)) == 1  # only the newest exchange, with the note
    with pytest.raises(ContextWindowFull, match="would not fit"):
        session.ask("too long: " + "word " * 8_000)
    assert len(session.tree) == nodes + 2  # the refused question was not stored


def test_summaries_of_what_is_left_out_are_written_once_and_kept(fake_anthropic, tmp_path):
    file = tmp_path / "nb.chat.jsonl"
    session = make_session(fake_anthropic, file, 2_000, summarize_dropped=True)
    long_conversation(session, 8, fake_anthropic)  # fits: no summary yet
    assert len(message_requests(fake_anthropic)) == 8
    assert "context" not in session.path()[-1].meta
    before = file.read_bytes()
    fake_anthropic.enqueue("SUMMARY-ONE of the early exchanges.")
    fake_anthropic.enqueue("answer 8")
    notices: list[str] = []
    session.subscribe(lambda event: notices.append(getattr(event, "message", "")))
    session.ask("question 8: " + WORDS)
    assert any(n.startswith("Summarising ") and "kept as a compaction" in n for n in notices)
    requests = message_requests(fake_anthropic)
    summary_request, answer_request = requests[-2], requests[-1]
    assert "Summarise our conversation" in json.dumps(summary_request.body)
    assert texts(answer_request.body["messages"][0])[0].startswith(
        "Summary of our conversation so far:\n\nSUMMARY-ONE"
    )
    assert file.read_bytes().startswith(before)  # new records only, nothing rewritten
    compaction = next(n for n in session.tree.roots() if "compacted_from" in (n.meta or {}))
    assert compaction.meta["budget"]["exchanges"] > 0
    assert session.leaf == session.path()[-1].id and session.path()[-1].text == "answer 8"
    assert session.path()[-1].meta["context"]["summary"] == compaction.id
    # the next request and a restarted session reuse it: no second summary
    fake_anthropic.enqueue("answer 9")
    session.ask("question 9: " + WORDS)
    assert len(message_requests(fake_anthropic)) == len(requests) + 1
    restarted = make_session(fake_anthropic, file, 2_000, "re", summarize_dropped=True)
    fake_anthropic.enqueue("answer 10")
    restarted.ask("question 10: " + WORDS)
    assert len(message_requests(fake_anthropic)) == len(requests) + 2
    assert "SUMMARY-ONE" in texts(sent(fake_anthropic)[0])[0]
    assert restarted.path()[-1].meta["context"]["summary"] == compaction.id


def test_each_answer_of_a_fan_out_records_what_its_request_kept(fake_anthropic, tmp_path):
    session = make_session(fake_anthropic, tmp_path / "nb.chat.jsonl", 1_500)
    long_conversation(session, 10, fake_anthropic)
    turn = session.ask("three at once", fanout=Fanout(n=3))
    assert len(turn.replies) == 3 and turn.error is None
    contexts = [reply.meta["context"] for reply in turn.replies]
    assert contexts[0]["dropped"] > 0 and contexts == [contexts[0]] * 3
    bodies = [r.body["messages"] for r in message_requests(fake_anthropic)[-3:]]
    assert bodies[0] == bodies[1] == bodies[2]
