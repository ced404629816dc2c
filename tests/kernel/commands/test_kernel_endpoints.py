"""Endpoints in a shell: ``TreeChat.endpoints``, ``%chat model``, ``%chat models``,
``%chat compare`` and ``%chat context`` naming the endpoint; the fake API's modes stand in
for each server (the real llama-server is in test_endpoint_local_model.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.kernel_harness import unwrapped
from IPython.core.error import UsageError

from jupyter_tree_chat.kernel import sessions as kernel_sessions
from jupyter_tree_chat.providers.endpoints.config import PRESETS


@pytest.fixture
def servers() -> Iterator[dict[str, FakeAnthropic]]:
    started = {
        "anthropic": FakeAnthropic().start(),
        "local": FakeAnthropic().start(),
        "ollama": FakeAnthropic(endpoint="ollama").start(),
        "deepseek": FakeAnthropic(endpoint="deepseek").start(),
    }
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def shell(ip, servers, monkeypatch) -> Any:
    """Claude on the fake API; local, ollama and deepseek on theirs; only DeepSeek's key."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", servers["anthropic"].base_url)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
    for endpoint in PRESETS.values():  # no other key, whatever this machine's environment holds
        for variable in endpoint.key_env:
            if variable != "DEEPSEEK_API_KEY":
                monkeypatch.delenv(variable, raising=False)
    urls = {name: {"base_url": servers[name].base_url} for name in ("local", "ollama", "deepseek")}
    urls["vllm"] = {"base_url": "http://127.0.0.1:9"}  # nothing answers there
    ip.run_line_magic("config", f"TreeChat.endpoints = {urls!r}")
    return ip


def test_a_cell_names_its_endpoint_and_the_answer_records_it(shell, servers, capsys):
    servers["local"].enqueue("Hi from the local server.", model="/m/SmolLM2.gguf")
    shell.run_cell_magic("chat", "--model local:smollm2", "Hello?")
    out = capsys.readouterr().out
    footer = out.strip().splitlines()[-1]
    assert "local:smollm2 (served as SmolLM2.gguf)" in footer and "$0" in footer
    session = kernel_sessions.current_session()
    meta = session.tree.get(session.leaf).meta
    assert (meta["endpoint"], meta["model"], meta["served_model"]) == (
        "local",
        "local:smollm2",
        "/m/SmolLM2.gguf",
    )
    assert servers["local"].last_request.body["model"] == "smollm2"
    assert not [r for r in servers["anthropic"].requests if r.method == "POST"]


def test_chat_model_sets_and_shows_where_a_model_goes(shell, capsys):
    shell.run_line_magic("chat", "model ollama:llama3.2:3b")
    out = capsys.readouterr().out
    assert "Model: ollama:llama3.2:3b (Ollama at http://127.0.0.1:" in out
    shell.run_line_magic("config", "TreeChat.model = None")
    shell.run_line_magic("chat", "model")
    assert "Model: claude-sonnet-4-6 (the provider's default)" in capsys.readouterr().out


def test_chat_models_lists_each_endpoint_in_a_line_or_a_few(shell, servers, capsys):
    shell.run_line_magic("chat", "models")
    out = capsys.readouterr().out
    assert all(len(line) <= 79 for line in out.splitlines())  # wrapped at spaces
    lines = unwrapped(out)
    assert lines[0].startswith("Models by endpoint")
    anthropic = f"anthropic at {servers['anthropic'].base_url}: answering, ANTHROPIC_API_KEY set"
    assert anthropic in lines
    at = lines.index(anthropic)
    assert lines[at + 1].startswith("  claude-sonnet-4-6 (default) · window 1M · $3 in, $15 out")
    after = lines[at + 1 :]
    said = next(line for line in after if not line.startswith("  claude"))
    assert said.endswith("; batch at half price")  # Message Batches (docs/batch.md)
    ollama = next(line for line in lines if line.startswith("ollama at "))
    assert ollama.endswith("(Ollama): answering")
    at = lines.index(ollama)
    assert (
        lines[at + 1] == "  ollama:llama3.2:3b · window unknown (TreeChat.context_windows) · free"
    )
    assert "lacks count_tokens, cache_control, documents" in lines[at + 3]
    assert lines[at + 3].endswith(", batch")  # no batch API (docs/batch.md)
    deepseek = next(line for line in lines if line.startswith("deepseek at "))
    assert deepseek.endswith(
        "(DeepSeek): answering, DEEPSEEK_API_KEY set (it lists no models (404))"
    )
    at = lines.index(deepseek)
    assert (
        lines[at + 1] == "  deepseek:deepseek-chat · window unknown (TreeChat.context_windows) · "
        "tokens only (no price known)"
    )
    assert "vllm at http://127.0.0.1:9 is not answering: start it with `vllm serve MODEL`" in lines
    assert lines[-2].startswith("Not asked, no key set: openrouter (OPENROUTER_API_KEY)")
    assert "openai-compatible" not in lines[-2]  # no empty "openai-compatible ()"
    assert lines[-1].startswith("Not asked, no base_url: azure, openai-compatible; give it one")
    assert "sk-deepseek" not in "\n".join(lines)
    listed = [r for r in servers["ollama"].requests if r.method == "GET"]
    assert [r.path.split("?")[0] for r in listed] == ["/v1/models"]


def test_chat_models_of_one_endpoint_and_of_an_unknown_one(shell, capsys):
    shell.run_line_magic("chat", "models local")
    out = capsys.readouterr().out
    assert (
        "local at http://127.0.0.1:" in out
        and "ollama" not in out
        and "anthropic" not in out.lower().split("\n", 1)[1]
    )
    with pytest.raises(UsageError, match="no endpoint named 'nowhere'; known: anthropic, local"):
        shell.run_line_magic("chat", "models nowhere")


def test_a_mixed_fan_out_and_compare_name_each_endpoint(shell, servers, capsys):
    servers["anthropic"].enqueue("Claude's answer.")
    servers["deepseek"].enqueue("DeepSeek's answer.")
    servers["ollama"].enqueue("Llama's answer.")
    shell.run_cell_magic(
        "chat", "--models claude-sonnet-4-6,deepseek:deepseek-chat,ollama:llama3.2:3b", "Why?"
    )
    capsys.readouterr()
    shell.run_line_magic("chat", "compare")
    out = capsys.readouterr().out
    for name in ("claude-sonnet-4-6", "deepseek:deepseek-chat", "ollama:llama3.2:3b"):
        assert name in out
    import pandas

    import jupyter_tree_chat

    frame = jupyter_tree_chat.compare_frame()
    assert list(frame["endpoint"]) == ["anthropic", "deepseek", "ollama"]
    assert list(frame["model"]) == [
        "claude-sonnet-4-6",
        "deepseek:deepseek-chat",
        "ollama:llama3.2:3b",
    ]
    costs = list(frame["cost"])
    assert costs[0] > 0 and pandas.isna(costs[1]) and costs[2] == 0  # deepseek: tokens only


def test_context_estimates_with_the_endpoint_named_where_it_cannot_count(shell, servers, capsys):
    shell.run_line_magic("config", "TreeChat.model = 'ollama:llama3.2:3b'")
    shell.run_cell_magic("chat", "", "Hello?")
    capsys.readouterr()
    shell.run_line_magic("chat", "context and this question")
    out = capsys.readouterr().out
    assert "With the question: ≈" in out and "(estimated: ollama cannot count tokens)" in out
    assert not [r for r in servers["ollama"].requests if r.path.endswith("count_tokens")]


def test_a_bad_endpoints_setting_is_refused_with_the_fix(ip):
    config = kernel_sessions.registry().config
    with pytest.raises(ValueError, match="needs a base_url"):
        config.endpoints = {"lab": {"key_env": "LAB_KEY"}}
    with pytest.raises(ValueError, match="never the key itself"):
        config.endpoints = {"lab": {"base_url": "http://h", "key_env": "sk ant 1"}}
    assert config.endpoints == {}
