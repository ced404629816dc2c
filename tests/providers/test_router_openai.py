"""The second wire through the router: ``openai``, ``azure``, ``gemini``,
``openai-compatible`` and ``local-openai`` by name, keys read at request time, what each
lacks refused before anything is sent, ``n`` found missing once. The real ``openai`` SDK
over real HTTP against the fake Chat Completions server (its OpenAI and llama.cpp rules)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from fakes.fake_openai import ONE_CHOICE, FakeOpenAI
from helpers.content_blocks import pdf_block

from jupyter_tree_chat.errors import AuthenticationFailed, EndpointRefuses, FeatureMissing
from jupyter_tree_chat.providers.base import (
    Finished,
    ReplyRequest,
    Route,
    ToolSpec,
    cache_group,
    can_count,
    route_of,
    takes_n,
)
from jupyter_tree_chat.providers.endpoints.config import PRESETS
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.providers.offline.provider import OfflineProvider

OPENAI_KEY = "sk-proj-ROUTER-SENTINEL-0123456789"
ADD = ToolSpec("add", "Add two numbers.", {"type": "object", "properties": {}})


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key of any endpoint, whatever this machine's environment holds."""
    for endpoint in PRESETS.values():
        for variable in endpoint.key_env:
            monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def gpt() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=OPENAI_KEY) as server:
        yield server


def router_for(**entries: dict[str, Any]) -> Router:
    return Router(OfflineProvider(), endpoint_table(entries))


def ask(model: str, *messages: Any, **options: Any) -> ReplyRequest:
    sent = list(messages) or [{"role": "user", "content": "hello"}]
    return ReplyRequest(messages=sent, model=model, max_tokens=256, **options)


def finished(events: list[Any]) -> Finished:
    return next(e for e in events if isinstance(e, Finished))


def test_openai_names_go_to_chat_completions_with_the_key_read_now(gpt, monkeypatch):
    router = router_for(openai={"base_url": gpt.base_url})
    with pytest.raises(EndpointRefuses, match="openai needs its key: set OPENAI_API_KEY"):
        router.check(ask("openai:gpt-5-mini"))
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    router.check(ask("openai:gpt-5-mini"))
    reply = finished(list(router.stream(ask("openai:gpt-5-mini"))))
    assert reply.message["content"][0]["text"].startswith("Fake reply to 1 message(s)")
    assert gpt.last_request.body["model"] == "gpt-5-mini"
    assert gpt.last_request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another-key")  # the next request reads it again
    with pytest.raises(AuthenticationFailed, match=r"openai at .* refused the key \(401\)"):
        list(router.stream(ask("openai:gpt-5-mini")))
    assert gpt.last_request.headers["authorization"] == "Bearer sk-another-key"


def test_a_route_on_the_second_wire_names_it_and_what_the_endpoint_can_do():
    router = router_for()
    assert route_of(router, "openai:gpt-5-mini") == Route(
        "openai-chat", "openai", "gpt-5-mini", "openai:gpt-5-mini"
    )
    assert not can_count(router, "openai:gpt-5-mini")  # the wire has no count_tokens
    assert cache_group(router, "openai:gpt-5-mini") is None  # its caching is automatic
    assert takes_n(router, "openai:gpt-5-mini") and takes_n(router, "local-openai:smollm2")
    assert not takes_n(router, "gemini:gemini-2.5-flash") and not takes_n(router, "local:smollm2")


def test_azure_asks_the_configured_deployment_with_its_api_version_and_key(monkeypatch):
    with FakeOpenAI(api_key="azure-key") as fake:
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key")
        router = router_for(azure={"base_url": fake.origin, "deployment": "team-gpt"})
        router.check(ask("azure:gpt-5-mini"))
        finished(list(router.stream(ask("azure:gpt-5-mini"))))
        sent = fake.last_request
        assert sent.path == "/openai/deployments/team-gpt/chat/completions"
        assert sent.query["api-version"] == ["2024-10-21"]
        assert sent.headers["api-key"] == "azure-key"
        # without a deployment the model named is the deployment, at the version given
        router = router_for(azure={"base_url": fake.origin, "api_version": "2025-04-01-preview"})
        finished(list(router.stream(ask("azure:my-gpt"))))
        assert fake.last_request.path == "/openai/deployments/my-gpt/chat/completions"
        assert fake.last_request.query["api-version"] == ["2025-04-01-preview"]


def test_azure_and_openai_compatible_without_a_base_url_say_how_to_give_one(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key")
    router = router_for()
    with pytest.raises(EndpointRefuses) as caught:
        router.check(ask("azure:gpt-5-mini"))
    assert str(caught.value) == (
        "azure has no base_url yet: give it with %config TreeChat.endpoints = {'azure': "
        "{'base_url': 'https://RESOURCE.openai.azure.com', 'deployment': 'DEPLOYMENT'}}"
    )
    with pytest.raises(EndpointRefuses, match=r"openai-compatible has no base_url yet: .*/v1'"):
        router.check(ask("openai-compatible:qwen3"))


def test_gemini_is_asked_at_its_openai_path_with_max_tokens(monkeypatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
        router = router_for(gemini={"base_url": fake.origin + "/v1beta/openai"})
        finished(list(router.stream(ask("gemini:gemini-2.5-flash"))))
        sent = fake.last_request
    assert sent.path == "/v1beta/openai/chat/completions"
    assert sent.body["max_tokens"] == 256 and "max_completion_tokens" not in sent.body
    assert sent.headers["authorization"] == "Bearer gemini-key"


def test_any_compatible_server_by_its_base_url_and_the_local_one_without_a_key():
    with FakeOpenAI(dialect="llama.cpp") as fake:
        at_fake = {"base_url": fake.base_url}
        router = router_for(**{"openai-compatible": at_fake, "local-openai": at_fake})
        finished(list(router.stream(ask("openai-compatible:qwen3"))))
        finished(list(router.stream(ask("local-openai:smollm2"))))
    # neither takes a key: each is sent a placeholder, never another endpoint's key
    assert [r.headers["authorization"] for r in fake.requests] == ["Bearer no-key-needed"] * 2


def test_what_an_endpoint_of_this_wire_lacks_is_refused_before_sending():
    router = router_for()
    pdf = {"role": "user", "content": [pdf_block(b"%PDF-1.4 x", "a.pdf")]}
    with pytest.raises(EndpointRefuses, match="local-openai reads no document blocks"):
        router.check(ask("local-openai:smollm2", pdf))
    with pytest.raises(EndpointRefuses, match="local-openai has no extended thinking"):
        router.check(ask("local-openai:smollm2", thinking=2048))
    with pytest.raises(EndpointRefuses, match=r"outside what local-openai takes \(0 to 2\)"):
        router.check(ask("local-openai:smollm2", temperature=2.5))


def test_a_server_refusing_n_is_found_out_once_and_asked_once_per_answer_after():
    with FakeOpenAI(dialect="llama.cpp") as fake:  # as llama.cpp builds that refuse n
        router = router_for(**{"local-openai": {"base_url": fake.base_url}})
        assert takes_n(router, "local-openai:smollm2")
        with pytest.raises(FeatureMissing) as caught:
            list(router.stream_choices(ask("local-openai:smollm2"), 3))
        assert str(caught.value) == (
            f"local-openai at {fake.base_url} lacks n (it answered 400), which its preset "
            "claims: each answer is asked in a request of its own, now and from now on"
        )
        assert fake.last_request.body["n"] == 3
        assert not takes_n(router, "local-openai:smollm2")  # found missing: never sent again
    assert ONE_CHOICE  # the words the fake answered with are llama.cpp's


def test_n_answers_in_one_request_where_the_endpoint_takes_it(gpt, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    router = router_for(openai={"base_url": gpt.base_url})
    pairs = list(router.stream_choices(ask("openai:gpt-5-mini"), 2))
    ends = {choice: e for choice, e in pairs if isinstance(e, Finished)}
    assert sorted(ends) == [0, 1] and len(gpt.requests) == 1 and gpt.last_request.body["n"] == 2
    assert ends[0].usage["output_tokens"] > 0 and ends[1].usage == {}  # one usage a request


def test_a_tool_history_is_sent_with_its_tools_defined_on_this_wire_too(gpt, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    router = router_for(openai={"base_url": gpt.base_url})
    call = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}
    path = [
        {"role": "user", "content": "2 + 3?"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": "5."},
        {"role": "user", "content": "And now?"},
    ]
    mul = ToolSpec("mul", "Multiply.", {"type": "object"})
    finished(list(router.stream(ask("openai:gpt-5-mini", *path, known_tools=(ADD,), tools=(mul,)))))
    tools = {t["function"]["name"]: t["function"] for t in gpt.last_request.body["tools"]}
    assert sorted(tools) == ["add", "mul"]
    assert tools["add"]["description"].startswith("NOT CALLABLE")  # used, not offered
    finished(list(router.stream(ask("openai:gpt-5-mini", *path))))  # no tool offered
    sent = gpt.last_request.body
    assert "tools" not in sent and not any(m["role"] == "tool" for m in sent["messages"])
    assert '[tool call: add {"a": 2, "b": 3}]' in sent["messages"][1]["content"]


def test_without_the_openai_package_naming_such_an_endpoint_is_one_line_before_sending():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["openai"] = None
        from jupyter_tree_chat.errors import EndpointRefuses
        from jupyter_tree_chat.providers.base import ReplyRequest
        from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
        from jupyter_tree_chat.providers.offline.provider import OfflineProvider
        from jupyter_tree_chat.providers.endpoints.router import Router
        router = Router(OfflineProvider(), endpoint_table({}))
        try:
            router.check(ReplyRequest([{"role": "user", "content": "hi"}], "local-openai:smollm2"))
        except EndpointRefuses as error:
            print(error)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == (
        "local-openai speaks Chat Completions, which needs the openai package: "
        "pip install 'jupyter-tree-chat[openai]'"
    )


def test_a_temperature_a_reasoning_model_refuses_is_refused_before_anything_is_sent(
    gpt, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    router = router_for(openai={"base_url": gpt.base_url})
    with pytest.raises(EndpointRefuses, match=r"^gpt-5-mini at openai takes no temperature but"):
        router.check(ask("openai:gpt-5-mini", temperature=0.2))
    assert not router.takes_temperature("openai:gpt-5-mini", 0.0)
    assert router.takes_temperature("openai:gpt-4.1-mini", 0.0)
    router.check(ask("openai:gpt-4.1-mini", temperature=0.2))
    assert gpt.requests == []
