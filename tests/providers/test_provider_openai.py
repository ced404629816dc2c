"""OpenAIChatProvider: the real ``openai`` SDK, over real HTTP, against the fake Chat
Completions server (tests/fakes/fake_openai.py), which refuses what OpenAI refuses."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from typing import Any

import openai
import pytest
from fakes.fake_openai import ONE_CHOICE, FakeOpenAI

from jupyter_tree_chat.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    MissingApiKey,
    Overloaded,
    RateLimited,
    ServerError,
    StreamError,
)
from jupyter_tree_chat.providers.base import (
    Began,
    Finished,
    Provider,
    ReplyEvent,
    ReplyRequest,
    TextDelta,
    ThinkingReady,
    TokenCounter,
    ToolSpec,
    ToolUseReady,
)
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import service_for
from jupyter_tree_chat.providers.openai.provider import (
    OpenAIChatProvider,
    endpoint_provider,
    make_client,
)

SENTINEL_KEY = "sk-proj-SENTINEL-never-show-me-0123456789"
ADD = ToolSpec(
    "add",
    "Add two numbers.",
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI(api_key=SENTINEL_KEY) as fake:
        yield fake


def provider_for(fake: FakeOpenAI, **options: Any) -> OpenAIChatProvider:
    options.setdefault("api_key", SENTINEL_KEY)
    return OpenAIChatProvider(base_url=fake.base_url, **options)


def ask(text: str = "hello", **options: Any) -> ReplyRequest:
    return ReplyRequest(messages=[{"role": "user", "content": text}], model="gpt-5-mini", **options)


def collect(provider: OpenAIChatProvider, request: ReplyRequest) -> list[ReplyEvent]:
    return list(provider.stream(request))


def finished(events: list[ReplyEvent]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def test_it_is_a_provider_that_cannot_count_tokens(server):
    provider = provider_for(server)
    assert isinstance(provider, Provider)
    assert not isinstance(provider, TokenCounter)  # the meter estimates instead


def test_a_reply_streams_and_usage_is_asked_for(server):
    server.enqueue(text="Hello from the fake, in pieces.")
    events = collect(provider_for(server), ask(system="Be brief."))
    assert events[0] == Began("gpt-5-mini")
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == "Hello from the fake, in pieces."
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    done = finished(events)
    assert done.stop_reason == "end_turn" and done.usage["output_tokens"] > 0
    body = server.last_request.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert server.last_request.headers["authorization"] == f"Bearer {SENTINEL_KEY}"


def test_a_long_shared_prefix_is_read_from_the_cache_the_second_time(server):
    history = [{"role": "user", "content": "x" * 6000}, {"role": "assistant", "content": "ok"}]
    provider = provider_for(server)
    first = ReplyRequest(messages=[*history, {"role": "user", "content": "a"}], model="gpt-5")
    second = ReplyRequest(messages=[*history, {"role": "user", "content": "b"}], model="gpt-5")
    assert finished(collect(provider, first)).usage["cache_read_input_tokens"] == 0
    usage = finished(collect(provider, second)).usage
    assert usage["cache_read_input_tokens"] >= 1024
    assert usage["cache_read_input_tokens"] % 128 == 0
    assert usage["input_tokens"] > 0  # the new tail is not cached


@pytest.mark.parametrize("style", ["fragments", "whole", "repeat_names", "stuck_index"])
def test_tool_calls_arrive_whole_however_the_server_streams_them(style):
    with FakeOpenAI(tool_call_style=style) as fake:
        fake.enqueue(
            text="Let me add.",
            tool_calls=[
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "add", "arguments": {"a": 40, "b": 2}},
            ],
        )
        events = collect(provider_for(fake, api_key="k"), ask(tools=(ADD,)))
    uses = [e.block for e in events if isinstance(e, ToolUseReady)]
    assert [(u["name"], u["input"]) for u in uses] == [
        ("add", {"a": 2, "b": 3}),
        ("add", {"a": 40, "b": 2}),
    ]
    assert len({u["id"] for u in uses}) == 2
    assert finished(events).stop_reason == "tool_use"
    assert fake.last_request.body["tools"][0]["function"]["name"] == "add"


def test_a_tool_loop_goes_back_in_a_shape_openai_accepts(server):
    server.enqueue(tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 3}}])
    provider = provider_for(server)
    question = {"role": "user", "content": "2 + 3?"}
    events = collect(provider, ReplyRequest(messages=[question], model="gpt-5", tools=(ADD,)))
    reply = finished(events).message
    (call,) = [b for b in reply["content"] if b["type"] == "tool_use"]
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"],
                                            "content": "5"}]}  # fmt: skip
    server.enqueue(text="It is 5.")
    path = [question, reply, results]
    events = collect(provider, ReplyRequest(messages=path, model="gpt-5", tools=(ADD,)))
    assert finished(events).message["content"] == [{"type": "text", "text": "It is 5."}]
    sent = server.last_request.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == call["id"] == sent[2]["tool_call_id"]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_details"])
def test_reasoning_in_any_of_its_three_fields_is_stored_as_this_wires_thinking(field):
    with FakeOpenAI(reasoning_field=field) as fake:
        fake.enqueue(reasoning="First, add the units.", text="5")
        events = collect(provider_for(fake, api_key="k"), ask())
    (ready,) = [e for e in events if isinstance(e, ThinkingReady)]
    assert ready.block["thinking"] == "First, add the units."
    assert ready.block["signature"] == "" and ready.block["wire"] == "openai-chat"
    assert finished(events).message["content"][1] == {"type": "text", "text": "5"}


def test_a_reasoning_model_is_asked_with_max_completion_tokens(server):
    collect(provider_for(server), ask(thinking=8000))
    body = server.last_request.body
    assert body["max_completion_tokens"] == 4096 and body["reasoning_effort"] == "medium"
    with pytest.raises(BadRequest, match="max_completion_tokens"):
        collect(provider_for(server, max_tokens_field="max_tokens"), ask())


def test_n_answers_in_one_request_where_the_server_takes_n(server):
    pairs = list(provider_for(server).stream_choices(ask(), 3))
    texts = {i: "" for i in range(3)}
    for choice, event in pairs:
        if isinstance(event, TextDelta):
            texts[choice] += event.text
    assert len(set(texts.values())) == 3
    assert server.last_request.body["n"] == 3
    assert len(server.requests) == 1


def test_a_server_like_llama_cpp_refuses_n_in_one_line():
    with (
        FakeOpenAI(dialect="llama.cpp") as fake,
        pytest.raises(BadRequest, match=ONE_CHOICE) as caught,
    ):
        list(provider_for(fake, api_key="k").stream_choices(ask(), 2))
    assert "\n" not in str(caught.value)


# -- errors -------------------------------------------------------------------------------


def test_a_refused_key_says_which_variable_and_never_shows_the_key(server):
    provider = provider_for(server, api_key="sk-wrong-key-0123456789")
    with pytest.raises(AuthenticationFailed) as caught:
        collect(provider, ask())
    assert "OPENAI_API_KEY" in str(caught.value)
    assert "sk-wrong-key" not in str(caught.value) and "\n" not in str(caught.value)


def test_a_key_echoed_back_by_a_server_is_blanked_out(server):
    server.enqueue_error(400, message=f"bad request from key {SENTINEL_KEY}")
    with pytest.raises(BadRequest) as caught:
        collect(provider_for(server), ask())
    assert SENTINEL_KEY not in str(caught.value) and "[redacted]" in str(caught.value)


def test_a_429_is_retried_as_retry_after_says_then_reported(server):
    server.enqueue_error(429, retry_after=0.01)
    server.enqueue(text="after the wait")
    events = collect(provider_for(server, max_retries=2), ask())
    assert finished(events).message["content"][0]["text"] == "after the wait"
    assert len(server.requests) == 2
    server.enqueue_error(429, retry_after=0.01, times=3)
    with pytest.raises(RateLimited, match=r"after 2 retries: retry in 0\.01 s"):
        collect(provider_for(server, max_retries=2), ask())


@pytest.mark.parametrize(("status", "error"), [(500, ServerError), (503, Overloaded)])
def test_server_failures_after_the_retries(server, status, error):
    server.enqueue_error(status, times=2)
    with pytest.raises(error, match="after 1 retries"):
        collect(provider_for(server, max_retries=1), ask())


def test_a_request_openai_refuses_says_why(server):
    request = ReplyRequest(messages=[{"role": "user", "content": "hi"}], model="gpt-5",
                           temperature=0.2)  # fmt: skip
    with pytest.raises(BadRequest, match="Only the default \\(1\\) value is supported"):
        collect(provider_for(server), request)


def test_a_base_url_without_v1_is_a_404_that_says_so(server):
    provider = OpenAIChatProvider(api_key=SENTINEL_KEY, base_url=server.origin)
    with pytest.raises(BadRequest, match="/v1"):
        collect(provider, ask())


def test_a_dropped_stream_keeps_what_arrived_and_says_retry(server):
    server.enqueue(text="a long answer cut short somewhere", drop_after=3)
    events: list[ReplyEvent] = []
    with pytest.raises(ConnectionFailed):
        for event in provider_for(server, max_retries=0).stream(ask()):
            events.append(event)
    assert any(isinstance(e, TextDelta) for e in events)


def test_an_error_inside_the_stream_and_a_bad_chunk_are_stream_errors(server):
    server.enqueue(text="partial answer", error_after=2)
    with pytest.raises(StreamError, match="mid-reply"):
        collect(provider_for(server), ask())
    server.enqueue(text="partial answer", malformed_after=2)
    with pytest.raises(StreamError):
        collect(provider_for(server), ask())


def test_an_endpoint_that_is_not_running_says_where_it_looked_and_how_to_start_it():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    endpoint = endpoint_table({"local-openai": {"base_url": url}})["local-openai"]
    provider = endpoint_provider(url, "k", endpoint.supports, service_for(endpoint))
    provider.client = provider.client.with_options(max_retries=0)
    with pytest.raises(ConnectionFailed) as caught:
        collect(provider, ask())
    assert str(caught.value) == (
        f"local-openai at {url} is not answering: start it with `jupyter tree-chat serve-local`"
    )


def test_a_hosted_endpoint_not_reached_names_it_and_its_base_url():
    entry = {"base_url": "http://127.0.0.1:9/v1", "api": "openai-chat", "key_env": "LAB_KEY"}
    endpoint = endpoint_table({"lab": entry})["lab"]
    provider = endpoint_provider(endpoint.base_url, "k", endpoint.supports, service_for(endpoint))
    provider.client = provider.client.with_options(max_retries=0)
    with pytest.raises(ConnectionFailed, match=r"^Could not reach lab at http://127\.0\.0\.1:9/v1"):
        collect(provider, ask())


def test_no_key_names_the_variable_to_set(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="check OPENAI_API_KEY"):
        make_client()


def test_azure_goes_to_the_deployment_with_its_api_version_and_key():
    with FakeOpenAI(api_key="azure-key") as fake:
        client = make_client(
            base_url=fake.origin, api_key="azure-key", azure_api_version="2024-10-21"
        )
        assert isinstance(client, openai.AzureOpenAI)
        provider = OpenAIChatProvider(client)
        fake.enqueue(text="from Azure")
        request = ReplyRequest(messages=[{"role": "user", "content": "hi"}], model="my-gpt")
        assert finished(collect(provider, request)).message["content"][0]["text"] == "from Azure"
    sent = fake.last_request
    assert sent.path == "/openai/deployments/my-gpt/chat/completions"
    assert sent.query["api-version"] == ["2024-10-21"] and sent.headers["api-key"] == "azure-key"


def test_without_the_openai_package_naming_the_wire_says_how_to_get_it():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["openai"] = None
        from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider
        try:
            OpenAIChatProvider(api_key="k")
        except ImportError as error:
            print(type(error).__name__, error)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == (
        "MissingExtra OpenAI's API speaks Chat Completions, which needs the openai "
        "package: pip install 'jupyter-tree-chat[openai]'"
    )


def test_importing_the_providers_does_not_import_openai():
    code = (
        "import sys, jupyter_tree_chat, jupyter_tree_chat.providers.openai.provider, "
        "jupyter_tree_chat.kernel.magics; print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
