"""Named endpoints: where a model is asked, with which key, and what the server supports.

Nearly every model server now speaks the Messages API: llama.cpp, Ollama, vLLM and LM
Studio on your own machine, DeepSeek, Moonshot (Kimi), Zhipu (GLM), Alibaba (Qwen),
MiniMax, OpenRouter and a LiteLLM proxy hosted. GPT, Gemini and Azure OpenAI speak Chat
Completions instead, as does every OpenAI-compatible server. Each is an ``Endpoint``: a
base URL, the environment variable that holds its key, its wire (``api``:
``"anthropic-messages"``, or ``"openai-chat"`` for the second wire, ``openai/provider.py``)
and what it supports (``capabilities.Supports``). The Chat Completions presets are
``openai``, ``azure`` (its resource URL, ``deployment`` and ``api_version`` from
``TreeChat.endpoints``), ``gemini`` (Google's OpenAI-compatible URL),
``openai-compatible`` (any base URL the user gives) and ``local-openai``: the same
llama.cpp server as ``local``, on its ``/v1/chat/completions``. A model is named
``endpoint:model`` wherever a model is named: ``local:smollm2``, ``ollama:llama3.2:3b``,
``openai:gpt-5-mini``. The name is split at its first colon only when the part before
it is a configured endpoint, so a bare ``llama3.2:3b`` stays a name for Anthropic's
API, as every bare name does (``anthropic:`` may be written in front of one, and means
the same).

``PRESETS`` are the ones built in, with what their documentation says they lack
(docs/endpoints.md has the table and the sources). ``TreeChat.endpoints`` adds entries
and overrides a preset field by field (``entries.endpoint_table``): ``{"deepseek": {"base_url":
...}}`` keeps DeepSeek's key variable and capabilities, ``{"local": {"supports":
{"images": True}}}`` changes one capability.

Keys are read from the environment when a request is made (``Endpoint.key``), never
stored in a file, shown or logged. The servers on your own machine need none (they take
any); a key variable named for them is sent when it is set.

Prices and context windows: a preset lists the models it knows (``known``), and a
server on your own machine costs nothing (``free``). Hosted models carry a built-in price
only where the vendor's own model page gives it (``OPENAI_PRICES_SOURCE``: OpenAI's
``gpt-5-mini`` and ``gpt-5-nano``); every other hosted model is counted in tokens only,
never at a made-up price (add yours with ``TreeChat.endpoints`` ``known`` or
``TreeChat.prices``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...i18n import _
from ...measures.models import ANY_MODEL, Price
from .capabilities import THINKING_ALL, Supports

ANTHROPIC = "anthropic"
"""The reserved name of Anthropic's own API: ``anthropic:claude-...`` is a bare name."""
ANTHROPIC_MESSAGES = "anthropic-messages"
OPENAI_CHAT = "openai-chat"
APIS = (ANTHROPIC_MESSAGES, OPENAI_CHAT)
OPENAI_COMPATIBLE = "openai-compatible"
"""The preset for any Chat Completions server: its ``base_url`` comes from the user."""

ENTRY_KEYS = (
    "base_url",
    "key_env",
    "api",
    "supports",
    "known",
    "free",
    "start",
    "kind",
    "deployment",
    "api_version",
    "max_tokens_field",
    "concurrency",
    "batch",
    "batch_price",
)
MAX_TOKENS_FIELDS = ("max_completion_tokens", "max_tokens")
"""What a Chat Completions server calls the reply's limit: OpenAI's name, or the older one."""
AZURE_API_VERSION = "2024-10-21"
"""Azure OpenAI's generally available data-plane API version (``api_version`` changes it)."""
OPENAI_PRICES_SOURCE = "https://developers.openai.com/api/docs/models"
"""Where OpenAI's prices and windows were read, each model's own page (see ``TAKEN``)."""
TAKEN = "2026-12-01"
SERVE_LOCAL = "jupyter tree-chat serve-local"
SERVE_LOCAL_SLOTS = 4  # serve-local's llama-server slots (llama_process.DEFAULT_PARALLEL)


@dataclass(frozen=True)
class KnownModel:
    """What an endpoint's preset knows of one of its models."""

    window: int | None = None
    price: Price | None = None


@dataclass(frozen=True)
class Endpoint:
    """One named endpoint (see the module docstring)."""

    name: str
    base_url: str | None
    key_env: tuple[str, ...] = ()
    """The environment variables its key may be in, first found wins."""
    key_required: bool = True
    """False for a server on your own machine: it takes any key, or none."""
    api: str = ANTHROPIC_MESSAGES
    supports: Supports = field(default_factory=Supports)
    known: Mapping[str, KnownModel] = field(default_factory=dict, hash=False, compare=False)
    free: bool = False
    """It runs on your own machine: its answers cost nothing."""
    start: str | None = None
    """How to start it, for the line that says it is not answering."""
    kind: str = ""
    """What it is ("llama.cpp", "DeepSeek"), for ``%chat models``."""
    deployment: str | None = None
    """Azure: the deployment every model name goes to (None: the model named is the
    deployment, ``azure:my-gpt``)."""
    api_version: str | None = None
    """Azure: the ``api-version`` each request carries."""
    max_tokens_field: str = "max_completion_tokens"
    """Chat Completions: the name of the reply's limit this server takes."""
    concurrency: int | None = None
    """How many requests it takes at once (a llama-server's slots); a fan-out or an
    experiment sends it no more than that. None: no limit of its own (a hosted API's
    limits are per minute: its 429s are waited out, providers/retry.py)."""
    batch: bool = False
    """It has its vendor's batch API on this wire (``--batch``: Message Batches on the
    Messages API, the Batch API on Chat Completions); most servers have none."""
    batch_price: float | None = None
    """The share of its standard price a batch answer costs (0.5: half, where the vendor
    documents it); None: not documented, a batch answer is priced as a standard one."""

    def wire_options(self) -> dict[str, Any]:
        """What its wire's ``endpoint_provider`` is given beyond the URL, key and
        capabilities (the Messages API: nothing)."""
        if self.api != OPENAI_CHAT:
            return {}
        options: dict[str, Any] = {"max_tokens_field": self.max_tokens_field}
        if self.api_version is not None:
            options.update(azure_api_version=self.api_version, azure_deployment=self.deployment)
        return options

    def models_url(self) -> str | None:
        """Where it lists its models (``GET``), or None without a base URL."""
        if not self.base_url:
            return None
        if self.api_version is not None:  # Azure: under /openai, with its version
            return f"{self.base_url}/openai/models?api-version={self.api_version}"
        if self.api == OPENAI_CHAT:  # the base URL already holds /v1 (or its equivalent)
            return f"{self.base_url}/models"
        return f"{self.base_url}/v1/models"

    def key(self) -> str | None:
        """Its key, read from the environment now (never kept)."""
        for variable in self.key_env:
            value = os.environ.get(variable)
            if value:
                return value
        return None

    def qualified(self, model: str) -> str:
        """``local:smollm2``: the name a model of this endpoint goes by everywhere."""
        return f"{self.name}:{model}"

    def where(self) -> str:
        """``local at http://127.0.0.1:8080``."""
        return _("{name} at {url}").format(name=self.name, url=self.base_url)


def local_supports(**changes: Any) -> Supports:
    """A server on your own machine: no adaptive thinking, temperatures 0 to 2."""
    return Supports(adaptive_thinking=False, temperature=(0.0, 2.0), **changes)


def _hosted(**changes: Any) -> Supports:
    return Supports(adaptive_thinking=False, **changes)


def _chat(**changes: Any) -> Supports:
    """A Chat Completions endpoint: no count_tokens (the wire has none), no cache
    breakpoints (its prompt caching is automatic), temperatures 0 to 2; thinking is a
    budget, asked as ``reasoning_effort`` (adaptive thinking is Claude's)."""
    return _hosted(count_tokens=False, cache_control=False, temperature=(0.0, 2.0), **changes)


def _text_api(**changes: Any) -> Supports:
    """A hosted API that documents text and tools only: no count_tokens, no cache
    breakpoints, no images or documents, no model list (each may be said otherwise)."""
    lacking: dict[str, Any] = dict.fromkeys(
        ("count_tokens", "cache_control", "images", "documents", "models_list"), False
    )
    return _hosted(**{**lacking, **changes})


PRESETS: dict[str, Endpoint] = {
    endpoint.name: endpoint
    for endpoint in (
        Endpoint(
            "local",
            "http://127.0.0.1:8080",
            key_env=("LLAMA_API_KEY",),
            key_required=False,
            # llama-server reads images only with a multimodal projector (--mmproj), and
            # SmolLM2, the model `serve-local` runs, reads none; no thinking, no documents
            supports=local_supports(images=False, documents=False, thinking=False),
            # serve-local runs it with an 8192-token context any one request may fill
            known={"smollm2": KnownModel(window=8192)},
            free=True,
            start=SERVE_LOCAL,
            kind="llama.cpp",
            concurrency=SERVE_LOCAL_SLOTS,
        ),
        Endpoint(
            "ollama",
            "http://localhost:11434",
            key_required=False,
            supports=local_supports(count_tokens=False, cache_control=False, documents=False),
            free=True,
            start="ollama serve",
            kind="Ollama",
        ),
        Endpoint(
            "vllm",
            "http://localhost:8000",
            key_env=("VLLM_API_KEY",),
            key_required=False,
            supports=local_supports(cache_control=False, documents=False),
            free=True,
            start="vllm serve MODEL",
            kind="vLLM",
        ),
        Endpoint(
            "lmstudio",
            "http://localhost:1234",
            key_env=("LM_API_TOKEN",),
            key_required=False,
            supports=local_supports(
                count_tokens=False,
                cache_control=False,
                images=False,
                documents=False,
                thinking=False,
            ),
            free=True,
            start="lms server start",
            kind="LM Studio",
        ),
        Endpoint(
            "litellm",
            "http://localhost:4000",
            key_env=("LITELLM_API_KEY",),
            key_required=False,
            supports=local_supports(),
            start="litellm --config config.yaml",
            kind="LiteLLM proxy",
        ),
        Endpoint(
            "openrouter",
            "https://openrouter.ai/api",
            key_env=("OPENROUTER_API_KEY",),
            supports=_hosted(count_tokens=False, temperature=(0.0, 2.0)),
            kind="OpenRouter",
        ),
        Endpoint(
            "deepseek",
            "https://api.deepseek.com/anthropic",
            key_env=("DEEPSEEK_API_KEY",),
            # its prefix caching is automatic: no cache_control
            supports=_text_api(
                thinking_replay=THINKING_ALL, thinking_off=True, temperature=(0.0, 2.0)
            ),
            known={"deepseek-chat": KnownModel(), "deepseek-reasoner": KnownModel()},
            kind="DeepSeek",
        ),
        Endpoint(
            "moonshot",
            "https://api.moonshot.ai/anthropic",
            key_env=("MOONSHOT_API_KEY",),
            supports=_text_api(thinking=False),  # no field matrix published
            kind="Moonshot (Kimi)",
        ),
        Endpoint(
            "zhipu",
            "https://api.z.ai/api/anthropic",
            key_env=("ZAI_API_KEY", "ZHIPUAI_API_KEY"),
            supports=_text_api(thinking=False),  # no field matrix published
            kind="Zhipu / Z.ai (GLM)",
        ),
        Endpoint(
            "dashscope",
            "https://dashscope-intl.aliyuncs.com/apps/anthropic",
            key_env=("DASHSCOPE_API_KEY",),
            supports=_text_api(cache_control=True, temperature=(0.0, 2.0)),
            kind="Alibaba DashScope (Qwen)",
        ),
        Endpoint(
            "minimax",
            "https://api.minimax.io/anthropic",
            key_env=("MINIMAX_API_KEY",),
            supports=_text_api(
                thinking_replay=THINKING_ALL, temperature=(0.0, 1.0), temperature_above_low=True
            ),
            kind="MiniMax",
        ),
        # -- the second wire: Chat Completions ------------------------------------------
        Endpoint(
            "openai",
            "https://api.openai.com/v1",
            key_env=("OPENAI_API_KEY",),
            api=OPENAI_CHAT,
            # its reasoning models (o-series, gpt-5 but its chat models) take temperature 1 only
            supports=_chat(n=True, default_temperature_only=r"(o\d|gpt-5(?!.*chat))"),
            # OPENAI_PRICES_SOURCE (each model's page), as read on TAKEN; cache writes cost
            # nothing extra there, so they are priced as input
            known={
                "gpt-5-mini": KnownModel(400_000, Price(0.25, 2.00, 0.25, 0.025)),
                "gpt-5-nano": KnownModel(400_000, Price(0.05, 0.40, 0.05, 0.005)),
            },
            kind="OpenAI",
            batch=True,
            batch_price=0.5,  # the Batch API: "a 50% discount" (its batch guide)
        ),
        Endpoint(
            "azure",
            None,  # https://RESOURCE.openai.azure.com, from TreeChat.endpoints
            key_env=("AZURE_OPENAI_API_KEY",),
            api=OPENAI_CHAT,
            supports=_chat(n=True, documents=False),  # PDFs: not documented there
            api_version=AZURE_API_VERSION,
            kind="Azure OpenAI",
            batch=True,
            batch_price=0.5,  # a Global-Batch deployment: "50% less cost"
        ),
        Endpoint(
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            key_env=("GEMINI_API_KEY",),
            api=OPENAI_CHAT,
            # n and PDFs are not documented for its OpenAI compatibility
            supports=_chat(documents=False),
            max_tokens_field="max_tokens",
            kind="Google Gemini",
        ),
        Endpoint(
            "openai-compatible",
            None,  # any server's, from TreeChat.endpoints
            key_required=False,  # a key_env given with its base_url is then required
            api=OPENAI_CHAT,
            # what every such server takes: text and tools; say what yours does besides
            supports=_chat(images=False, documents=False, thinking=False, models_list=False),
            kind="OpenAI-compatible",
        ),
        Endpoint(
            "local-openai",
            "http://127.0.0.1:8080/v1",  # serve-local's llama-server, its other wire
            key_env=("LLAMA_API_KEY",),
            key_required=False,
            api=OPENAI_CHAT,
            # as ``local``; and llama.cpp answers n choices and takes reasoning_content back
            supports=_chat(
                images=False, documents=False, thinking=False, n=True, send_reasoning=True
            ),
            known={"smollm2": KnownModel(window=8192)},
            free=True,
            start=SERVE_LOCAL,
            kind="llama.cpp, Chat Completions",
            concurrency=SERVE_LOCAL_SLOTS,
        ),
    )
}


# -- names ----------------------------------------------------------------------------------


def split_model(name: str, endpoints: Mapping[str, Endpoint]) -> tuple[Endpoint | None, str]:
    """``(endpoint, its model name)`` for ``name``; ``(None, name)`` for Anthropic's API.

    Split at the first colon only when the part before it is a configured endpoint:
    ``ollama:llama3.2:3b`` is Ollama's ``llama3.2:3b``, a bare ``llama3.2:3b`` is
    Anthropic's, and so is ``anthropic:claude-sonnet-4-6``."""
    prefix, colon, rest = name.partition(":")
    if colon and rest:
        if prefix == ANTHROPIC:
            return None, rest
        found = endpoints.get(prefix)
        if found is not None:
            return found, rest
    return None, name


# -- the user's entries ----------------------------------------------------------------------


def known_windows(endpoints: Mapping[str, Endpoint]) -> dict[str, int]:
    """Context windows by ``endpoint:model``, for the session's table."""
    return {
        endpoint.qualified(model): facts.window
        for endpoint in endpoints.values()
        for model, facts in endpoint.known.items()
        if facts.window is not None
    }


def known_prices(endpoints: Mapping[str, Endpoint]) -> dict[str, Price]:
    """Prices by ``endpoint:model`` (``endpoint:*`` for a free endpoint's every model)."""
    prices: dict[str, Price] = {}
    for endpoint in endpoints.values():
        if endpoint.free:
            prices[endpoint.qualified(ANY_MODEL)] = Price(0, 0, 0, 0)
        for model, facts in endpoint.known.items():
            if facts.price is not None:
                prices[endpoint.qualified(model)] = facts.price
    return prices
