"""A session over the router: mixed fan-outs, what answers record, refusals before writing.

The real SDK over real HTTP against three fake servers at once: the Anthropic API, a
llama-server stand-in (``local``) and DeepSeek's mode. The server's own log says when each
request arrived and began, so the tests show from its side which answers overlap and which
waited for a cache to be written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.content_blocks import image_block, tiny_png

from jupyter_tree_chat.conversation.many.variants import Fanout
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.errors import EndpointRefuses
from jupyter_tree_chat.measures.compare import rows, sibling_answers
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.providers.tools.functions import ToolRegistry
from jupyter_tree_chat.providers.tools.toolbox import Toolbox

#: long enough (about 2,400 tokens) for the prefix to be cached
QUESTION = "Explain prompt caching in two sentences. Context: " + "lorem ipsum " * 799 + "lorem."
MIXED = Fanout(models=("claude-sonnet-4-6", "deepseek:deepseek-chat", "local:smollm2"))


@pytest.fixture
def servers() -> Iterator[dict[str, FakeAnthropic]]:
    started = {
        "anthropic": FakeAnthropic(tokens_per_second=200).start(),
        "local": FakeAnthropic(tokens_per_second=200).start(),
        "deepseek": FakeAnthropic(endpoint="deepseek", tokens_per_second=200).start(),
    }
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def session(servers, tmp_path: Path, monkeypatch) -> Session:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-test")
    claude = AnthropicProvider(api_key="sk-test", base_url=servers["anthropic"].base_url)
    table = endpoint_table(
        {name: {"base_url": servers[name].base_url} for name in ("local", "deepseek")}
    )
    return Session.open(tmp_path / "nb.chat.jsonl", Router(claude, table), tools=ToolRegistry())


def messages_calls(server: FakeAnthropic) -> list[Any]:
    return [r for r in server.requests if r.path.startswith("/v1/messages")]


def file_lines(session: Session) -> list[str]:
    path = Path(session.location)
    return path.read_text().splitlines() if path.exists() else []


def test_a_mixed_fan_out_asks_each_endpoint_at_once_and_records_where_each_came_from(
    session, servers
):
    servers["anthropic"].first_event_delay = 0.3  # the first answer is slow to begin
    servers["anthropic"].enqueue(tokens=60)
    servers["local"].enqueue(tokens=60, model="/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    servers["deepseek"].enqueue(tokens=60)
    turn = session.ask(QUESTION, fanout=MIXED)
    assert turn.error is None and len(turn.answers) == 3
    firsts = {name: messages_calls(s)[0] for name, s in servers.items()}
    # three endpoints share no cache: none waited for the first answer's first event
    claude_began = firsts["anthropic"].first_event
    assert claude_began is not None
    assert firsts["local"].received < claude_began and firsts["deepseek"].received < claude_began
    metas = [a.head.meta for a in turn.answers]
    assert [(m["endpoint"], m["model"]) for m in metas] == [
        ("anthropic", "claude-sonnet-4-6"),
        ("deepseek", "deepseek:deepseek-chat"),
        ("local", "local:smollm2"),
    ]
    assert [m.get("served_model") for m in metas] == [
        None,
        None,
        "/models/SmolLM2-135M-Instruct.Q4_1.gguf",
    ]
    assert [m["provider"] for m in metas] == ["anthropic"] * 3
    table = rows(sibling_answers(session.tree, turn.user.id, session.prices))
    assert [r["endpoint"] for r in table] == ["anthropic", "deepseek", "local"]
    assert [r["cost"] is not None for r in table] == [True, False, True]  # deepseek: tokens only
    assert table[2]["cost"] == 0  # a model on your own machine
    stored = [json.loads(line) for line in file_lines(session)]
    assert [
        r["meta"].get("endpoint") for r in stored if r.get("message", {}).get("role") == "assistant"
    ] == ["anthropic", "deepseek", "local"]


def test_the_cache_stagger_holds_within_one_caching_endpoint_only(session, servers):
    servers["anthropic"].first_event_delay = 0.3  # slow to begin: the others must not wait
    for name in ("anthropic", "local"):
        servers[name].enqueue(tokens=40)
        servers[name].enqueue(tokens=40)
    fanout = Fanout(n=2, models=("claude-sonnet-4-6", "local:smollm2"))
    turn = session.ask(QUESTION, fanout=fanout)
    assert turn.error is None and len(turn.answers) == 4
    for name in ("anthropic", "local"):
        first, second = messages_calls(servers[name])
        assert second.received >= first.first_event  # waited for the cache to be written
        assert second.usage["cache_read_input_tokens"] > 0  # and read it
    a_first, _a_second = messages_calls(servers["anthropic"])
    l_first, _l_second = messages_calls(servers["local"])
    assert a_first.first_event is not None
    assert l_first.received < a_first.first_event  # local's first did not wait for Claude's


def test_an_endpoint_without_caching_starts_all_its_answers_at_once(session, servers):
    servers["deepseek"].first_event_delay = 0.3
    servers["deepseek"].enqueue(tokens=40)
    servers["deepseek"].enqueue(tokens=40)
    turn = session.ask(QUESTION, fanout=Fanout(n=2, models=("deepseek:deepseek-chat",)))
    assert turn.error is None
    first, second = messages_calls(servers["deepseek"])
    assert first.first_event is not None and second.received < first.first_event
    assert "cache_control" not in json.dumps(first.body)


def test_an_image_to_a_text_only_endpoint_is_refused_before_anything_is_written(session):
    session.ask("hello", settings=ChatSettings(model="local:smollm2"))
    before = file_lines(session)
    question = [{"type": "text", "text": "what is this?"}, image_block(tiny_png())]
    with pytest.raises(EndpointRefuses) as caught:
        session.ask(question, settings=ChatSettings(model="local:smollm2"))
    assert "local reads no image blocks" in str(caught.value)
    assert file_lines(session) == before
    with pytest.raises(EndpointRefuses):  # in a fan-out, each answer is checked
        session.ask(question, fanout=Fanout(models=("claude-sonnet-4-6", "local:smollm2")))
    assert file_lines(session) == before


def test_a_temperature_outside_an_endpoints_range_is_refused_before_anything_is_written(
    session, servers
):
    with pytest.raises(EndpointRefuses, match="outside what Anthropic's API takes"):
        session.ask("hi", fanout=Fanout(models=("claude-sonnet-4-6",), temperatures=(0.5, 1.5)))
    assert file_lines(session) == []
    turn = session.ask("hi", fanout=Fanout(models=("deepseek:deepseek-chat",), temperatures=(1.5,)))
    assert turn.error is None
    assert messages_calls(servers["deepseek"])[-1].body["temperature"] == 1.5


def test_count_tokens_comes_from_the_endpoint_where_it_has_one_and_is_estimated_where_not(
    session, servers
):
    local = ChatSettings(model="local:smollm2")
    session.ask("hello", settings=local)
    counted = session.count_tokens("and again?", settings=local)
    assert counted is not None and counted.exact and counted.window == 8192
    assert any(r.path == "/v1/messages/count_tokens" for r in servers["local"].requests)
    assert (
        session.count_tokens("and again?", settings=ChatSettings(model="deepseek:deepseek-chat"))
        is None
    )
    assert not any(r.path.endswith("count_tokens") for r in servers["deepseek"].requests)


def test_a_claimed_feature_the_server_lacks_is_one_notice_and_the_session_goes_on(
    tmp_path, monkeypatch
):
    with FakeAnthropic(endpoint="ollama") as ollama:  # refuses cache_control, no count_tokens
        table = endpoint_table({"lab": {"base_url": ollama.base_url}})  # claims both
        session = Session.open(
            tmp_path / "s.chat.jsonl",
            Router(AnthropicProvider(api_key="k", base_url=ollama.base_url), table),
        )
        notices: list[str] = []
        session.subscribe(lambda e: notices.append(e.message) if hasattr(e, "level") else None)
        lab = ChatSettings(model="lab:llama3.2:3b", system="Be brief.")
        turn = session.ask("hello", settings=lab)
        assert turn.error is None and turn.replies
        assert len(turn.notices) == 1 and "lacks cache_control (it answered 400)" in turn.notices[0]
        assert session.count_tokens("more?", settings=lab) is None
        said = [n for n in notices if "count_tokens" in n]
        assert len(said) == 1 and "estimates" in said[0]
        again = session.ask("more?", settings=lab)
        assert again.error is None and again.notices == []
        assert session.count_tokens("more?", settings=lab) is None
        assert len([n for n in notices if "count_tokens" in n]) == 1  # said once


def test_deepseek_continues_a_tool_loop_with_its_thinking_sent_back(session, servers):
    tools = ToolRegistry()

    @tools.register
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    session.tools = Toolbox.of(tools)
    servers["deepseek"].enqueue(
        thinking="Call add.", tool_use={"name": "add", "input": {"a": 1, "b": 2}}
    )
    servers["deepseek"].enqueue("It is 3.")
    turn = session.ask(
        "1 + 2?", settings=ChatSettings(model="deepseek:deepseek-chat", thinking=1024)
    )
    assert turn.error is None, turn.error
    assert session.tree.get(session.leaf).text == "It is 3."
    loop = messages_calls(servers["deepseek"])[-1].body["messages"]
    assert loop[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Call add.",
        "signature": loop[1]["content"][0]["signature"],
    }


def test_a_dropped_endpoint_stream_keeps_the_partial_answer_with_its_endpoint(session, servers):
    servers["local"].enqueue(tokens=50, drop_after=20)
    turn = session.ask("hello", settings=ChatSettings(model="local:smollm2"))
    assert turn.error is not None and "local at http://127.0.0.1" in str(turn.error)
    kept = turn.replies[0]
    assert kept.meta["interrupted"] and kept.meta["endpoint"] == "local"
    assert kept.meta["model"] == "local:smollm2" and kept.text
