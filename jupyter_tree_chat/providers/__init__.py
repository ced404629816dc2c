"""Model providers: one streaming method each, by wire and by role.

- ``base``: what a provider is (``Provider.stream``, ``ReplyRequest``, the reply events);
- ``redirects``: the HTTP clients' redirect rule (a key never follows one off its host);
- ``retry``: asking again after a 429 or an overload (the wait, the loop, the line);
- ``sse``: server-sent events split as the spec says (both wires read their streams so);
- ``batches``: what a vendor's batch API is to a session (``BatchWire``, items, results);
- ``anthropic/``: the Messages API wire (Claude and compatible servers);
- ``openai/``: the Chat Completions wire (GPT, Gemini, Azure, compatible servers);
- ``offline/``: the deterministic offline teaching model (no key, no network);
- ``endpoints/``: named endpoints, what each supports, probing, and the ``Router``;
- ``tools/``: the user's functions, the session's toolbox, the tools' wire rules;
- ``mcp/``: tools from MCP servers, through the official ``mcp`` SDK.

May import the core below it (``history``, ``measures.models``, ``language``, ``errors``)
and nothing of the session, the views or Jupyter; inside, ``base`` ← ``tools/`` ← ``mcp/``,
``base`` ← ``batches`` ← the wires, and ``base`` ← ``redirects``, ``retry``, ``sse`` ← the wires ←
``endpoints.router`` (tests/test_layers.py).
``choose_provider`` picks one by name, or by whether an API key is set, and says why
when it falls back to the offline teaching model.
"""

from __future__ import annotations

import os

from .base import Began, Finished, Provider, ReplyRequest, TextDelta, ToolSpec, ToolUseReady

PROVIDER_NAMES = ("anthropic", "offline")

__all__ = [
    "PROVIDER_NAMES",
    "Began",
    "Finished",
    "Provider",
    "ReplyRequest",
    "TextDelta",
    "ToolSpec",
    "ToolUseReady",
    "choose_provider",
]


def choose_provider(
    name: str | None = None, *, prepare: bool = False
) -> tuple[Provider, str | None]:
    """The provider called ``name``, or the best available one, and a notice if any.

    With no name: ``anthropic`` when ``ANTHROPIC_API_KEY`` is set, else ``offline``
    (and the notice says so, once, so nobody mistakes its replies for Claude's).
    ``prepare`` also loads what the first request would load (no network).
    """
    if name not in (None, *PROVIDER_NAMES):
        from ..errors import ChatError
        from ..i18n import _

        why = _("unknown provider {name}; choose one of: {names}")
        raise ChatError(why.format(name=repr(name), names=", ".join(PROVIDER_NAMES)))
    if name == "anthropic" or (name is None and os.environ.get("ANTHROPIC_API_KEY")):
        from .anthropic.provider import AnthropicProvider

        provider = AnthropicProvider()
        if prepare:
            provider.prepare()
        return provider, None
    from .offline.provider import OfflineProvider, offline_notice

    return OfflineProvider(), (offline_notice() if name is None else None)
