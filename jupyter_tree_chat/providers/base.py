"""The one thing a model provider does: stream a reply to a path of messages.

A provider turns a ``ReplyRequest`` into an iterator of events: ``Began`` once the
response has begun (its first stream event arrived: from then on the prompt cache it
writes can be read, which is when a fan-out starts its other requests), ``ThinkingDelta``
as the model's thinking arrives and ``ThinkingReady`` as each thinking block completes
(signed), ``TextDelta`` as text arrives, ``ToolUseReady`` as each tool_use block
completes, and last a ``Finished`` holding the whole assistant message, its usage and
stop_reason. Failures are raised as
``ProviderError`` subclasses (see errors.py); the caller keeps whatever arrived before.
Building the request, running tools and storing nodes are not the provider's job.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
Thinking = int | str | None
"""Extended thinking for a request: ``None``, a budget of tokens, or ``"adaptive"``."""
ADAPTIVE = "adaptive"


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the API sees it: a name, a description and a JSON schema for input."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_api(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@dataclass(frozen=True)
class ReplyRequest:
    """Everything one model call needs. ``messages`` is the active path, as stored."""

    messages: list[Message]
    model: str
    max_tokens: int = 4096
    system: str | None = None
    temperature: float | None = None
    tools: tuple[ToolSpec, ...] = ()
    thinking: Thinking = None
    """``None`` (no thinking), a budget of tokens, or ``"adaptive"`` (the model decides)."""


@dataclass(frozen=True)
class Began:
    """The response has begun: its first stream event arrived."""

    model: str


@dataclass(frozen=True)
class TextDelta:
    text: str
    index: int = 0


@dataclass(frozen=True)
class ThinkingDelta:
    """More of the model's thinking (block ``index``), before its answer."""

    text: str
    index: int = 0


@dataclass(frozen=True)
class ThinkingReady:
    """A complete ``thinking`` block with its signature, or a ``redacted_thinking`` block."""

    block: dict[str, Any]
    index: int = 0


@dataclass(frozen=True)
class ToolUseReady:
    """A complete tool_use block: ``{"type": "tool_use", "id", "name", "input"}``."""

    block: dict[str, Any]


@dataclass(frozen=True)
class Finished:
    """The end of a reply: the full assistant message and what the API said about it."""

    message: Message
    model: str
    stop_reason: str | None
    usage: dict[str, Any] = field(default_factory=dict)


ReplyEvent = Began | TextDelta | ThinkingDelta | ThinkingReady | ToolUseReady | Finished


@runtime_checkable
class Provider(Protocol):
    """Streams one assistant reply. ``name`` is stored in each node's ``meta``."""

    name: str
    default_model: str

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]: ...


@runtime_checkable
class TokenCounter(Protocol):
    """A provider that can count a request's input tokens without running it."""

    def count_tokens(self, request: ReplyRequest) -> int: ...


def transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP library's network errors (the SDKs' ``httpx2``, or ``httpx``), which a
    stream that breaks mid-read raises raw, not as the SDK's connection error."""
    found: list[type[BaseException]] = []
    for module_name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(module_name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)
