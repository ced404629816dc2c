"""providers/endpoints/config.py: the presets, names split by endpoint, TreeChat.endpoints
merged."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.measures.models import CONTEXT_WINDOWS, Price, by_model
from jupyter_tree_chat.providers.endpoints.capabilities import THINKING_ALL
from jupyter_tree_chat.providers.endpoints.config import (
    PRESETS,
    SERVE_LOCAL,
    known_prices,
    known_windows,
    split_model,
)
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table

PRESET_NAMES = {
    "local",
    "ollama",
    "vllm",
    "lmstudio",
    "openrouter",
    "deepseek",
    "moonshot",
    "zhipu",
    "dashscope",
    "minimax",
    "litellm",
}
#: the second wire's presets (issue 24): Chat Completions
CHAT_PRESET_NAMES = {"openai", "azure", "gemini", "openai-compatible", "local-openai"}


def test_every_preset_the_issue_names_is_there_with_a_url_and_a_wire():
    assert set(PRESETS) >= PRESET_NAMES | CHAT_PRESET_NAMES
    assert PRESETS["local"].base_url == "http://127.0.0.1:8080"
    assert PRESETS["ollama"].base_url == "http://localhost:11434"
    assert PRESETS["deepseek"].base_url == "https://api.deepseek.com/anthropic"
    assert all(PRESETS[name].api == "anthropic-messages" for name in PRESET_NAMES)
    assert all(PRESETS[name].api == "openai-chat" for name in CHAT_PRESET_NAMES)
    given = set(PRESETS) - {"azure", "openai-compatible"}  # their URL is the user's own
    assert all(str(PRESETS[name].base_url).startswith("http") for name in given)
    assert PRESETS["azure"].base_url is None and PRESETS["openai-compatible"].base_url is None


def test_the_chat_completions_presets_as_their_vendors_document_them():
    openai, gemini, azure, local = (
        PRESETS[name] for name in ("openai", "gemini", "azure", "local-openai")
    )
    assert openai.base_url == "https://api.openai.com/v1" and openai.key_env == ("OPENAI_API_KEY",)
    assert gemini.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert gemini.key_env == ("GEMINI_API_KEY",) and gemini.max_tokens_field == "max_tokens"
    assert azure.key_env == ("AZURE_OPENAI_API_KEY",) and azure.api_version == "2024-10-21"
    assert all(p.key_required for p in (openai, gemini, azure))
    # the llama.cpp server of ``local``, reached on its other wire
    assert local.base_url == PRESETS["local"].base_url + "/v1" and not local.key_required
    assert local.start == SERVE_LOCAL and local.free and local.known["smollm2"].window == 8192
    for endpoint in (openai, gemini, azure, local, PRESETS["openai-compatible"]):
        # no count_tokens on this wire; no cache breakpoints (caching is automatic)
        assert not endpoint.supports.count_tokens and not endpoint.supports.cache_control
    assert openai.supports.n and local.supports.n and not gemini.supports.n
    assert local.supports.send_reasoning and not openai.supports.send_reasoning


def test_an_azure_entry_takes_its_deployment_and_version_and_a_compatible_one_its_url():
    table = endpoint_table(
        {
            "azure": {"base_url": "https://team.openai.azure.com", "deployment": "gpt5m"},
            "qwen": {"base_url": "https://qwen.example.org/v1", "api": "openai-chat",
                     "key_env": "QWEN_KEY"},
            "local": {"api": "openai-chat"},  # the same llama-server, the other wire
        }
    )  # fmt: skip
    azure, qwen, local = table["azure"], table["qwen"], table["local"]
    assert azure.wire_options() == {
        "max_tokens_field": "max_completion_tokens",
        "azure_api_version": "2024-10-21",
        "azure_deployment": "gpt5m",
    }
    assert (
        azure.models_url() == "https://team.openai.azure.com/openai/models?api-version=2024-10-21"
    )
    assert qwen.api == "openai-chat" and qwen.key_required  # a key named for a server elsewhere
    assert not qwen.supports.count_tokens and not qwen.supports.images  # what any such takes
    assert qwen.models_url() == "https://qwen.example.org/v1/models"
    assert not local.supports.count_tokens and not local.supports.cache_control
    assert PRESETS["local"].wire_options() == {}  # the Messages API takes none


def test_hosted_presets_need_their_key_and_local_servers_need_none():
    for name in ("openrouter", "deepseek", "moonshot", "zhipu", "dashscope", "minimax"):
        assert PRESETS[name].key_required and PRESETS[name].key_env, name
    for name in ("local", "ollama", "vllm", "lmstudio", "litellm"):
        assert not PRESETS[name].key_required, name
    assert PRESETS["deepseek"].key_env == ("DEEPSEEK_API_KEY",)
    assert PRESETS["zhipu"].key_env == ("ZAI_API_KEY", "ZHIPUAI_API_KEY")
    assert PRESETS["local"].start == SERVE_LOCAL


def test_what_each_preset_lacks_follows_its_documentation():
    assert not PRESETS["ollama"].supports.count_tokens
    assert not PRESETS["ollama"].supports.cache_control
    assert not PRESETS["ollama"].supports.documents
    assert PRESETS["local"].supports.count_tokens and not PRESETS["local"].supports.images
    deepseek = PRESETS["deepseek"].supports
    assert deepseek.thinking_replay == THINKING_ALL and deepseek.thinking_off
    assert deepseek.temperature == (0.0, 2.0) and not deepseek.cache_control
    minimax = PRESETS["minimax"].supports
    assert not minimax.images and not minimax.documents
    assert not minimax.takes_temperature(0) and minimax.takes_temperature(1)
    assert not minimax.takes_temperature(1.01)
    assert not any(e.supports.adaptive_thinking for e in PRESETS.values())


@pytest.mark.parametrize(
    ("name", "endpoint", "model"),
    [
        ("local:smollm2", "local", "smollm2"),
        ("ollama:llama3.2:3b", "ollama", "llama3.2:3b"),  # split at the first colon only
        ("llama3.2:3b", None, "llama3.2:3b"),  # no endpoint 'llama3.2': Anthropic's name
        ("claude-sonnet-4-6", None, "claude-sonnet-4-6"),
        ("anthropic:claude-sonnet-4-6", None, "claude-sonnet-4-6"),
        ("local:", None, "local:"),  # nothing after the colon: not a model of local
    ],
)
def test_a_name_is_split_only_where_the_prefix_is_an_endpoint(name, endpoint, model):
    found, bare = split_model(name, PRESETS)
    assert (found.name if found else None, bare) == (endpoint, model)


def test_an_override_changes_only_the_fields_it_names():
    table = endpoint_table({"deepseek": {"base_url": "http://127.0.0.1:9999/"}})
    deepseek = table["deepseek"]
    assert deepseek.base_url == "http://127.0.0.1:9999"
    assert deepseek.key_env == PRESETS["deepseek"].key_env
    assert deepseek.supports == PRESETS["deepseek"].supports
    assert deepseek.key_required
    images = endpoint_table({"local": {"supports": {"images": True}}})["local"].supports
    assert images.images and images.count_tokens == PRESETS["local"].supports.count_tokens
    assert PRESETS["local"].supports.images is False  # the preset itself is untouched


def test_a_new_entry_adds_an_endpoint_with_its_own_key_and_capabilities():
    table = endpoint_table(
        {
            "lab": {
                "base_url": "https://lab.example.org/anthropic",
                "key_env": "LAB_API_KEY",
                "supports": {"count_tokens": False, "temperature": [0, 1.5]},
                "known": {"big": {"window": 131072, "price": {"input": 1, "output": 2}}},
            },
            "box": {"base_url": "http://127.0.0.1:8081", "key_env": "BOX_KEY", "free": True},
        }
    )
    lab, box = table["lab"], table["box"]
    assert lab.key_required and lab.key_env == ("LAB_API_KEY",)
    assert not lab.supports.count_tokens and lab.supports.takes_temperature(1.5)
    assert not box.key_required  # a server on this machine takes any key
    assert known_windows(table)["lab:big"] == 131072
    prices = known_prices(table)
    assert prices["lab:big"] == Price.from_mapping({"input": 1, "output": 2})
    assert prices["box:*"] == Price(0, 0, 0, 0)
    assert split_model("lab:big", table)[0] is lab


def test_how_many_requests_an_endpoint_takes_at_once():
    from jupyter_tree_chat.cli.llama_process import DEFAULT_PARALLEL

    # serve-local's llama-server has DEFAULT_PARALLEL slots; hosted APIs no limit at once
    assert PRESETS["local"].concurrency == PRESETS["local-openai"].concurrency
    assert PRESETS["local"].concurrency == DEFAULT_PARALLEL
    assert all(PRESETS[name].concurrency is None for name in ("openai", "deepseek", "ollama"))
    table = endpoint_table(
        {"local": {"concurrency": 1}, "lab": {"base_url": "http://h", "concurrency": 3}}
    )
    assert (table["local"].concurrency, table["lab"].concurrency) == (1, 3)
    assert table["local"].base_url == PRESETS["local"].base_url  # the rest kept
    assert endpoint_table({"local": {"concurrency": None}})["local"].concurrency is None


@pytest.mark.parametrize(
    ("config", "fix"),
    [
        ({"lab": {"key_env": "X"}}, "needs a base_url"),
        ({"lab": {"base_url": "127.0.0.1:8081"}}, "must be an http(s) URL"),
        ({"lab": {"base_url": "http://h", "colour": "red"}}, "unknown field 'colour'"),
        ({"lab": {"base_url": "http://h", "api": "grpc"}}, "api must be one of"),
        ({"lab": {"base_url": "http://h", "key_env": "sk-ant-123 456"}}, "never the key itself"),
        ({"lab": {"base_url": "http://h", "supports": {"vision": True}}}, "unknown capability"),
        ({"lab": {"base_url": "http://h", "supports": {"images": "yes"}}}, "true or false"),
        ({"lab": {"base_url": "http://h", "supports": {"temperature": 2}}}, "[LOW, HIGH]"),
        ({"a:b": {"base_url": "http://h"}}, "no ':'"),
        ({"anthropic": {"base_url": "http://h"}}, "ANTHROPIC_BASE_URL"),
        ({"lab": "http://h"}, "must be a dict"),
        ({"azure": {"deployment": "https://x/y"}}, "deployment must be a name"),
        ({"azure": {"api_version": 2024}}, "api_version must be a name like '2024-10-21'"),
        ({"lab": {"base_url": "http://h", "max_tokens_field": "limit"}}, "max_tokens_field"),
        ({"local": {"concurrency": 0}}, "a whole number from 1 (its slots) or None, not 0"),
        ({"local": {"concurrency": "4"}}, "concurrency is how many requests it takes at once"),
        ({"local": {"concurrency": True}}, "not True"),
    ],
)
def test_a_bad_entry_is_one_line_that_says_the_fix(config, fix):
    with pytest.raises(ValueError) as caught:
        endpoint_table(config)
    assert fix in str(caught.value) and "\n" not in str(caught.value)


def test_the_key_is_read_from_the_environment_each_time(monkeypatch):
    zhipu = PRESETS["zhipu"]
    monkeypatch.delenv("ZAI_API_KEY", raising=False)
    monkeypatch.delenv("ZHIPUAI_API_KEY", raising=False)
    assert zhipu.key() is None
    monkeypatch.setenv("ZHIPUAI_API_KEY", "second")
    assert zhipu.key() == "second"
    monkeypatch.setenv("ZAI_API_KEY", "first")
    assert zhipu.key() == "first"  # the first variable set wins
    assert "first" not in repr(zhipu)


def test_windows_and_prices_are_found_by_endpoint_model():
    windows = {**CONTEXT_WINDOWS, **known_windows(PRESETS)}
    prices = known_prices(PRESETS)
    assert by_model(windows, "local:smollm2") == 8192
    assert by_model(windows, "ollama:llama3.2:3b") is None  # not known: the meter shows tokens
    assert by_model(prices, "local:anything") == Price(0, 0, 0, 0)  # your own machine
    assert by_model(prices, "deepseek:deepseek-chat") is None  # never a made-up price
    # OpenAI's prices and windows as its model pages give them; other hosted ones: none
    assert by_model(prices, "openai:gpt-5-mini") == Price(0.25, 2.00, 0.25, 0.025)
    assert by_model(windows, "openai:gpt-5-mini") == 400_000
    assert by_model(prices, "openai:gpt-5-nano") == Price(0.05, 0.40, 0.05, 0.005)
    assert by_model(prices, "openai:gpt-5") is None and by_model(prices, "gemini:x") is None
    assert by_model(prices, "azure:gpt-5-mini") is None  # a deployment's price is its own
    assert by_model(prices, "local-openai:smollm2") == Price(0, 0, 0, 0)
    assert by_model(prices, "smollm2") is None
