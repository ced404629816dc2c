"""A Session over the second wire, and one tree through both wires.

The real ``openai`` SDK against the fake Chat Completions server and the real
``anthropic`` SDK against the fake Messages API, each refusing what its real API
refuses. A branch begun on GPT (a tool loop, reasoning) is stored, reloaded and
continued on Claude (with thinking), then on GPT again: every request is accepted,
nothing on disk changes, and each wire is sent what it can take of the other's blocks.
"""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import FakeOpenAI

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import is_thinking
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider
from jupyter_tree_chat.providers.tools.functions import ToolRegistry

CLAUDE = ChatSettings(model="claude-sonnet-4-6")
GPT = ChatSettings(model="gpt-5-mini")
ADD_2_3 = {"name": "add", "arguments": {"a": 2, "b": 3}}


@pytest.fixture
def tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return registry


def on_gpt(path: Path, server: FakeOpenAI, tools: ToolRegistry) -> Session:
    provider = OpenAIChatProvider(api_key="sk-test", base_url=server.base_url)
    return Session.open(path, provider, tools=tools, settings=GPT)


def on_claude(path: Path, server: FakeAnthropic, tools: ToolRegistry) -> Session:
    client = anthropic.Anthropic(api_key="sk-test", base_url=server.base_url)
    return Session.open(path, AnthropicProvider(client), tools=tools, settings=CLAUDE)


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_a_tool_loop_on_gpt_is_stored_as_messages_api_blocks(tmp_path, fake_openai, tools):
    fake_openai.enqueue(reasoning="Use the tool.", tool_calls=[ADD_2_3])
    fake_openai.enqueue(text="2 + 3 = 5.")
    session = on_gpt(tmp_path / "nb.chat.jsonl", fake_openai, tools)
    turn = session.ask("What is 2 + 3?")
    assert turn.error is None
    call, results, answer = turn.replies[0], session.path()[2], turn.replies[-1]
    thinking, tool_use = call.message["content"]
    assert thinking["wire"] == "openai-chat" and thinking["signature"] == ""
    assert tool_use["type"] == "tool_use" and tool_use["id"].startswith("call_")
    assert results.message["content"][0] == {
        "type": "tool_result",
        "tool_use_id": tool_use["id"],
        "content": "5",
    }
    assert answer.text == "2 + 3 = 5."
    assert answer.meta["provider"] == "openai-chat" and answer.meta["model"] == "gpt-5-mini"
    assert answer.meta["usage"]["input_tokens"] > 0
    sent = fake_openai.last_request.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == tool_use["id"] == sent[2]["tool_call_id"]


def test_one_branch_goes_from_gpt_to_claude_and_back_and_nothing_is_lost(
    tmp_path, fake_openai, fake_anthropic, tools
):
    file = tmp_path / "nb.chat.jsonl"
    fake_openai.enqueue(reasoning="Add them.", tool_calls=[ADD_2_3])
    fake_openai.enqueue(text="It is 5.")
    on_gpt(file, fake_openai, tools).ask("What is 2 + 3?")
    written_by_gpt = lines(file)

    claude = on_claude(file, fake_anthropic, tools)  # reloaded from the file
    fake_anthropic.enqueue(thinking="Double 5.", text="Twice that is 10.")
    turn = claude.ask("And twice that?", settings=CLAUDE.merged(thinking=2048))
    assert turn.error is None, turn.error
    assert lines(file)[: len(written_by_gpt)] == written_by_gpt
    sent = fake_anthropic.last_request.body["messages"]
    gpt_call = sent[1]["content"]
    assert [b["type"] for b in gpt_call] == ["tool_use"]  # GPT's reasoning is not sent as thinking
    assert sent[2]["content"][0]["tool_use_id"] == gpt_call[0]["id"]
    claude_reply = turn.replies[0].message["content"]
    assert claude_reply[0]["type"] == "thinking" and claude_reply[0]["signature"]
    written_by_claude = lines(file)

    gpt = on_gpt(file, fake_openai, tools)
    fake_openai.enqueue(text="And half of 10 is 5.")
    turn = gpt.ask("Half of that?")
    assert turn.error is None, turn.error
    assert lines(file)[: len(written_by_claude)] == written_by_claude
    sent = fake_openai.last_request.body["messages"]
    assert [m["role"] for m in sent] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "user",
    ]  # fmt: skip
    assert sent[5] == {"role": "assistant", "content": "Twice that is 10."}  # no thinking

    reloaded = load_file(file)
    path = reloaded.tree.path_nodes(reloaded.tree.leaf)
    assert [n.meta.get("provider") for n in path if n.role == "assistant"] == [
        "openai-chat", "openai-chat", "anthropic", "openai-chat",
    ]  # fmt: skip
    blocks = [
        b for n in path if isinstance(n.message["content"], list) for b in n.message["content"]
    ]
    kept = [b for b in blocks if is_thinking(b)]
    assert [b.get("wire") for b in kept] == ["openai-chat", None]  # both thinkings kept


def test_fork_before_tool_use_on_gpt_asks_again_without_the_old_call(tmp_path, fake_openai, tools):
    fake_openai.enqueue(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 1}}])
    fake_openai.enqueue(text="2")
    session = on_gpt(tmp_path / "nb.chat.jsonl", fake_openai, tools)
    session.ask("1 + 1?")
    fake_openai.enqueue(text="Two, without a tool.")
    turn = session.fork_before_tool_use("1 + 1? Answer without tools.")
    assert turn.replies[0].text == "Two, without a tool."
    sent = fake_openai.last_request.body["messages"]
    assert sent == [{"role": "user", "content": "1 + 1? Answer without tools."}]


def test_compaction_on_gpt_summarises_the_path(tmp_path, fake_openai, tools):
    session = on_gpt(tmp_path / "nb.chat.jsonl", fake_openai, tools)
    session.ask("Tell me about trees.")
    fake_openai.enqueue(text="We talked about trees.")
    turn = session.compact()
    assert turn.error is None
    assert "We talked about trees." in turn.user.text
    assert session.path()[0].id == turn.user.id


def test_the_meter_counts_from_gpt_usage_and_estimates_the_rest(tmp_path, fake_openai, tools):
    session = on_gpt(tmp_path / "nb.chat.jsonl", fake_openai, tools)
    session.ask("Hello there")
    reading = session.meter(extra=[{"role": "user", "content": "x" * 400}])
    usage = session.path()[-1].meta["usage"]
    assert reading.counted == usage["input_tokens"] + usage["output_tokens"]
    assert reading.estimated == 100
    assert session.count_tokens("next") is None  # Chat Completions cannot count


def routed_session(path: Path, server: FakeOpenAI, tools: ToolRegistry) -> Session:
    from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
    from jupyter_tree_chat.providers.endpoints.router import Router
    from jupyter_tree_chat.providers.offline.provider import OfflineProvider

    table = endpoint_table({"local-openai": {"base_url": server.base_url}})
    router = Router(OfflineProvider(), table)
    return Session.open(path, router, tools=tools, settings=ChatSettings(model="local-openai:m"))


def test_a_request_of_n_dropped_mid_stream_keeps_each_answers_part_marked(tmp_path, tools):
    from jupyter_tree_chat.conversation.many.variants import Fanout

    with FakeOpenAI() as server:  # the local server takes n; this stream breaks
        server.enqueue(text="A long answer that the connection cuts.", drop_after=9)
        session = routed_session(tmp_path / "nb.chat.jsonl", server, tools)
        turn = session.ask("Two answers, please.", fanout=Fanout(n=2))
    assert [r.body["n"] for r in server.requests] == [2]  # one request, no second try
    answers = [a.head for a in turn.answers]
    assert all(a is not None and a.meta["interrupted"] for a in answers)
    assert all(a.meta["error"] == "connection_failed" for a in answers if a is not None)
    assert all(a.text for a in answers if a is not None)  # what each choice had received


def test_a_tool_round_after_a_shared_request_is_each_answers_own(tmp_path, tools):
    from jupyter_tree_chat.conversation.many.variants import Fanout

    with FakeOpenAI() as server:
        server.enqueue(tool_calls=[ADD_2_3])  # both choices call the tool
        server.enqueue(text="Five, says one.")
        server.enqueue(text="Five, says the other.")
        session = routed_session(tmp_path / "nb.chat.jsonl", server, tools)
        turn = session.ask("2 + 3 with the tool, twice.", fanout=Fanout(n=2))
    assert [r.body.get("n") for r in server.requests] == [2, None, None]
    finals = sorted(a.final.text for a in turn.answers if a.final is not None)
    assert finals == ["Five, says one.", "Five, says the other."]
    for answer in turn.answers:
        roles = [n.role for n in answer.nodes]
        assert roles == ["assistant", "user", "assistant"]  # its own call, result, answer
    assert [a.head.meta["choice"] for a in turn.answers if a.head] == [
        {"index": 1, "of": 2},
        {"index": 2, "of": 2},
    ]
