"""providers/endpoints/router.py: each request to its model's endpoint, keys at request time,
what an endpoint lacks found out once. The real SDK over real HTTP, against the fake API's modes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.content_blocks import image_block, tiny_png

from jupyter_tree_chat.errors import EndpointRefuses, FeatureMissing
from jupyter_tree_chat.providers.base import (
    Degraded,
    Finished,
    ReplyRequest,
    Route,
    ToolSpec,
    cache_group,
    can_count,
    route_of,
)
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import WIRE_MODULES, Router
from jupyter_tree_chat.providers.offline.provider import OfflineProvider

ANTHROPIC_SENTINEL = "sk-ant-sentinel-never-sent-elsewhere"


@pytest.fixture
def servers() -> Iterator[dict[str, FakeAnthropic]]:
    started = {
        "local": FakeAnthropic().start(),  # llama-server speaks the Anthropic rules
        "ollama": FakeAnthropic(endpoint="ollama").start(),
        "deepseek": FakeAnthropic(endpoint="deepseek").start(),
    }
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def router(servers, monkeypatch) -> Router:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SENTINEL)
    monkeypatch.delenv("LLAMA_API_KEY", raising=False)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-1")
    table = endpoint_table({name: {"base_url": s.base_url} for name, s in servers.items()})
    return Router(OfflineProvider(), table)


def ask(model: str, *messages: Any, **options: Any) -> ReplyRequest:
    sent = list(messages) or [{"role": "user", "content": "hello"}]
    return ReplyRequest(messages=sent, model=model, max_tokens=2048, **options)


def finished(events: list[Any]) -> Finished:
    return next(e for e in events if isinstance(e, Finished))


def test_bare_names_go_to_the_default_and_named_ones_to_their_endpoint(router, servers):
    offline = finished(list(router.stream(ask("claude-sonnet-4-6"))))  # no key: offline
    assert offline.message["content"] and offline.usage["input_tokens"] > 0
    assert all(not s.requests for s in servers.values())
    reply = finished(list(router.stream(ask("local:smollm2"))))
    assert servers["local"].last_request.body["model"] == "smollm2"  # the bare name is sent
    assert reply.message["content"][0]["type"] == "text"
    finished(list(router.stream(ask("ollama:llama3.2:3b"))))
    assert servers["ollama"].last_request.body["model"] == "llama3.2:3b"


def test_a_route_says_the_wire_the_endpoint_and_the_name_it_goes_by(router):
    assert router.route("local:smollm2") == Route("anthropic", "local", "smollm2", "local:smollm2")
    assert router.route("claude-haiku-4-5") == Route(  # no key: the offline model answers
        "offline", None, "claude-haiku-4-5", "offline-teacher", asked="claude-haiku-4-5"
    )
    assert router.route(None) == Route("offline", None, "offline-teacher", "offline-teacher")
    assert router.route("anthropic:claude-haiku-4-5").asked == "claude-haiku-4-5"
    assert route_of(OfflineProvider(), "m") == Route("offline", None, "m", "m")


def test_an_endpoint_never_receives_the_anthropic_key(router, servers):
    finished(list(router.stream(ask("local:smollm2"))))
    finished(list(router.stream(ask("deepseek:deepseek-chat"))))
    for name in ("local", "deepseek"):
        assert ANTHROPIC_SENTINEL not in json.dumps(servers[name].last_request.headers)
    assert "sk-deepseek-1" in servers["deepseek"].last_request.headers.get("authorization", "")


def test_the_key_is_read_when_each_request_is_made(router, servers, monkeypatch):
    finished(list(router.stream(ask("deepseek:deepseek-chat"))))
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-2")
    finished(list(router.stream(ask("deepseek:deepseek-chat"))))
    seen = [r.headers.get("authorization") for r in servers["deepseek"].requests]
    assert seen == ["Bearer sk-deepseek-1", "Bearer sk-deepseek-2"]
    assert "sk-deepseek" not in repr(router)


def test_a_hosted_endpoint_without_its_key_is_refused_before_any_request(
    router, servers, monkeypatch
):
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    with pytest.raises(EndpointRefuses) as caught:
        router.check(ask("deepseek:deepseek-chat"))
    assert "set DEEPSEEK_API_KEY" in str(caught.value)
    assert not servers["deepseek"].requests
    router.check(ask("local:smollm2"))  # a server on this machine needs none


def test_what_the_endpoint_lacks_is_refused_by_check(router):
    picture = {
        "role": "user",
        "content": [{"type": "text", "text": "what?"}, image_block(tiny_png())],
    }
    with pytest.raises(EndpointRefuses, match="local reads no image blocks"):
        router.check(ask("local:smollm2", picture))
    router.check(ask("ollama:llava", picture))  # Ollama reads base64 images
    with pytest.raises(EndpointRefuses, match="outside what Anthropic's API takes"):
        router.check(ask("claude-sonnet-4-6", temperature=1.5))
    router.check(ask("deepseek:deepseek-chat", temperature=1.5))


def test_each_endpoint_is_sent_only_what_it_takes(router, servers):
    system = {"system": "Be brief."}
    finished(list(router.stream(ask("local:smollm2", **system))))
    finished(list(router.stream(ask("ollama:llama3.2:3b", **system))))
    assert "cache_control" in json.dumps(servers["local"].last_request.body)
    assert "cache_control" not in json.dumps(servers["ollama"].last_request.body)
    finished(list(router.stream(ask("deepseek:deepseek-chat"))))
    assert servers["deepseek"].last_request.body["thinking"] == {"type": "disabled"}


def test_deepseeks_thinking_goes_back_in_its_tool_loop(router, servers):
    tools = [{"name": "add", "description": "add", "input_schema": {"type": "object"}}]
    servers["deepseek"].enqueue(thinking="I will add.", tool_use={"name": "add", "input": {}})
    spec = (ToolSpec("add", "add", tools[0]["input_schema"]),)
    first = finished(list(router.stream(ask("deepseek:deepseek-chat", thinking=1024, tools=spec))))
    assert first.message["content"][0]["type"] == "thinking"
    use = next(b for b in first.message["content"] if b["type"] == "tool_use")
    path = [
        {"role": "user", "content": "hello"},
        first.message,
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "3"}],
        },
    ]
    second = finished(
        list(router.stream(ask("deepseek:deepseek-chat", *path, thinking=1024, tools=spec)))
    )
    assert second.stop_reason == "end_turn"
    sent = servers["deepseek"].last_request.body["messages"][1]["content"]
    assert sent[0]["type"] == "thinking" and sent[0]["thinking"] == "I will add."


def test_count_tokens_is_asked_only_where_it_exists(router, servers):
    assert can_count(router, "local:smollm2")
    assert router.count_tokens(ask("local:smollm2")) > 0
    assert not can_count(router, "ollama:llama3.2:3b")
    assert not can_count(router, "claude-sonnet-4-6")  # the offline model cannot count


def test_a_count_tokens_the_preset_claims_but_the_server_lacks_is_said_once(servers, monkeypatch):
    # a custom endpoint claiming count_tokens, served by a server without it (Ollama's mode)
    table = endpoint_table({"lab": {"base_url": servers["ollama"].base_url}})
    router = Router(OfflineProvider(), table)
    assert can_count(router, "lab:m")
    with pytest.raises(FeatureMissing) as caught:
        router.count_tokens(ask("lab:m"))
    line = str(caught.value)
    assert line.startswith("lab at http://127.0.0.1") and "count_tokens" in line
    assert "404" in line and "estimates" in line and "\n" not in line
    assert not can_count(router, "lab:m")  # treated as missing from now on
    assert not router.supports("lab:m").count_tokens


def test_a_refused_cache_control_is_said_once_and_asked_again_without(servers):
    table = endpoint_table({"lab": {"base_url": servers["ollama"].base_url}})
    router = Router(OfflineProvider(), table)
    assert cache_group(router, "lab:m") == "lab"
    events = list(router.stream(ask("lab:m", system="Be brief.")))
    notes = [e.message for e in events if isinstance(e, Degraded)]
    assert len(notes) == 1 and "cache_control" in notes[0] and "400" in notes[0]
    assert finished(events).message["content"]
    bodies = [r.body for r in servers["ollama"].requests]
    assert len(bodies) == 2 and "cache_control" not in json.dumps(bodies[1])
    again = list(router.stream(ask("lab:m", system="Be brief.")))
    assert not [e for e in again if isinstance(e, Degraded)]  # once
    assert len(servers["ollama"].requests) == 3
    assert cache_group(router, "lab:m") is None  # no cache to stagger for any more


def test_a_refused_feature_is_read_even_when_the_refusal_echoed_the_key(servers, monkeypatch):
    """A Messages API refusal whose words held the key is read for its feature like any
    other (the redacted error keeps its status and detail), and the key is in no line."""
    key = "sk-lab-sentinel-echoed-back-0123456789"
    monkeypatch.setenv("LAB_API_KEY", key)
    table = endpoint_table(
        {"lab": {"base_url": servers["local"].base_url, "key_env": ["LAB_API_KEY"]}}
    )
    router = Router(OfflineProvider(), table)
    servers["local"].enqueue_error(
        400,
        message=f"cache_control is not supported for the key {key}",
        error_type="invalid_request_error",
    )
    events = list(router.stream(ask("lab:m", system="Be brief.")))
    notes = [e.message for e in events if isinstance(e, Degraded)]
    assert len(notes) == 1 and "cache_control" in notes[0] and "400" in notes[0]
    assert key not in notes[0]
    assert finished(events).message["content"]
    bodies = [r.body for r in servers["local"].requests]
    assert len(bodies) == 2 and "cache_control" not in json.dumps(bodies[1])


def test_a_server_that_is_not_running_is_one_line_saying_how_to_start_it():
    table = endpoint_table({"local": {"base_url": "http://127.0.0.1:9"}})
    router = Router(OfflineProvider(), table)
    with pytest.raises(Exception) as caught:
        list(router.stream(ask("local:smollm2")))
    assert str(caught.value) == (
        "local at http://127.0.0.1:9 is not answering: start it with "
        "`jupyter tree-chat serve-local`"
    )


def test_a_wire_this_installation_lacks_is_refused_in_one_line(monkeypatch):
    monkeypatch.delitem(WIRE_MODULES, "openai-chat")  # as an installation without that module
    table = endpoint_table({"gpt": {"base_url": "http://127.0.0.1:9/v1", "api": "openai-chat"}})
    router = Router(OfflineProvider(), table)
    with pytest.raises(EndpointRefuses, match="speaks openai-chat"):
        router.check(ask("gpt:gpt-5-mini"))


def test_the_server_reported_model_name_comes_back_in_finished(router, servers):
    servers["local"].enqueue("hi", model="/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    reply = finished(list(router.stream(ask("local:smollm2"))))
    assert reply.model == "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
