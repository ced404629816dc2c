"""The one thing a model provider does: stream a reply to a path of messages.

A provider turns a ``ReplyRequest`` into an iterator of events: ``Began`` once the
response has begun (its first stream event arrived: from then on the prompt cache it
writes can be read, which is when a fan-out starts its other requests), ``ThinkingDelta``
as the model's thinking arrives and ``ThinkingReady`` as each thinking block completes
(signed), ``TextDelta`` as text arrives, ``ToolUseReady`` as each tool_use block
completes, and last a ``Finished`` holding the whole assistant message, its usage and
stop_reason (and the model name the server reported). ``Degraded`` says, once, that the
endpoint refused a feature its preset claims and the reply goes on without it.
``Retrying`` says the request was refused for now (a 429, an overload, before any text
arrived) and will be sent again after a wait (retry.py).
Failures are raised as ``ProviderError`` subclasses (see errors.py); the caller keeps
whatever arrived before. Building the request, running tools and storing nodes are not
the provider's job.

A provider that routes each model to an endpoint (``router.Router``) also says where a
model goes (``route``), whether it can count tokens there, which answers share a prompt
cache, whether it answers several choices in one request (``takes_n``,
``stream_choices``), and what that endpoint would refuse before anything is sent
(``check``). The
functions at the bottom ask any provider these questions, with the answers of a provider
that has one endpoint for every model.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from ..errors import ProviderError

Message = dict[str, Any]
Thinking = int | str | None
"""Extended thinking for a request: ``None``, a budget of tokens, or ``"adaptive"``."""
ADAPTIVE = "adaptive"


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the API sees it: a name, a description and a JSON schema for input.

    ``title`` is the name a person knows it by when that is not ``name`` (an MCP tool:
    ``git:git_log`` for the wire's ``git__git_log``); it is never sent."""

    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None

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
    known_tools: tuple[ToolSpec, ...] = ()
    """Definitions of tools the path may have used that ``tools`` does not offer (kept
    from when a call was made, then the registered ones): sent, marked not callable, for
    the tools the path used (``tools.wire.request_tools``)."""
    attempt: int = field(default=1, compare=False)
    """Which answer to its question this request asks for (1: the first; a retry's is
    one more than the answers already there). Never sent: a model sees only the path;
    the offline model says it, so a retry visibly adds a new sibling."""
    context: dict[str, Any] | None = field(default=None, compare=False)
    """What a context budget left out of the path (``{"from", "dropped", ...}``), for the
    answer's ``meta.context``; never sent. None: the whole path is sent."""


@dataclass(frozen=True)
class Began:
    """The response has begun: its first stream event arrived."""

    model: str


@dataclass(slots=True)
class TextDelta:
    """More of the answer's text (block ``index``). One is made per streamed token, so it
    is a plain slotted class: a frozen dataclass's ``__init__`` costs three times as much
    (``object.__setattr__`` per field), 2 ms of a 2,000-token reply. Nothing changes one."""

    text: str
    index: int = 0


@dataclass(slots=True)
class ThinkingDelta:
    """More of the model's thinking (block ``index``), before its answer (made per token,
    like ``TextDelta``)."""

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


@dataclass(frozen=True)
class Degraded:
    """The endpoint refused a feature its preset claims; the reply goes on without it.
    ``message`` is the one line that says so (naming the endpoint and the feature)."""

    message: str


@dataclass(frozen=True)
class Retrying:
    """The request was refused for now and is sent again, the same, after ``seconds``
    (retry.py). ``message`` is the one line that says so ("rate limited by local at
    ...: retrying in 2 s (attempt 2 of 5)"). A reader with a way to be cancelled may wait
    the ``seconds`` itself and close the stream instead of asking for more; the stream
    waits whatever of them is left when it is asked for its next event."""

    message: str
    seconds: float
    attempt: int
    attempts: int


ReplyEvent = (
    Began
    | TextDelta
    | ThinkingDelta
    | ThinkingReady
    | ToolUseReady
    | Finished
    | Degraded
    | Retrying
)


@runtime_checkable
class Provider(Protocol):
    """Streams one assistant reply. ``name`` is stored in each node's ``meta``."""

    @property
    def name(self) -> str: ...

    @property
    def default_model(self) -> str: ...

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]: ...


@runtime_checkable
class TokenCounter(Protocol):
    """A provider that can count a request's input tokens without running it."""

    def count_tokens(self, request: ReplyRequest) -> int: ...


@dataclass(frozen=True)
class Service:
    """Who a provider talks to, as its error lines name it: ``label`` ("the Anthropic
    API", "local at http://127.0.0.1:8080"), the fix for a refused key, the fix for an
    unreachable host, and ``down``: the whole line when a server on your own machine
    is not running (it says how to start it)."""

    label: str
    key_fix: str
    reach_fix: str
    down: str | None = None

    @property
    def subject(self) -> str:
        """The label at the start of a sentence ("The Anthropic API"); an endpoint's name
        stays as it is written ("openai at https://...")."""
        if not self.label.startswith("the "):
            return self.label
        return self.label[:1].upper() + self.label[1:]


@dataclass(frozen=True)
class Route:
    """Where a model is asked: ``provider`` (the wire's name, ``meta.provider``),
    ``endpoint`` (its name, ``meta.endpoint``; None for a provider without endpoints),
    ``model`` (what the endpoint is asked for) and ``name`` (what the model is called
    everywhere: ``local:smollm2``, or a bare name for Anthropic's API). ``asked`` is the
    name the request asked for where another model answers it (the offline model asked
    for ``claude-sonnet-4-6`` when no key is set): the reply is named and priced as
    ``name``, and says what was asked."""

    provider: str
    endpoint: str | None
    model: str
    name: str
    asked: str | None = None


def route_of(provider: Provider, model: str) -> Route:
    """Where ``provider`` sends ``model``."""
    route = getattr(provider, "route", None)
    if callable(route):
        found = route(model)
        if isinstance(found, Route):
            return found
    return Route(provider.name, None, model, model)


def can_count(provider: Provider, model: str) -> bool:
    """Whether ``provider`` can count a request's tokens for ``model`` (count_tokens)."""
    if not isinstance(provider, TokenCounter):
        return False
    counts = getattr(provider, "counts_tokens", None)
    return bool(counts(model)) if callable(counts) else True


def takes_n(provider: Provider, model: str) -> bool:
    """Whether ``provider`` answers several choices for ``model`` in one request
    (``stream_choices``: Chat Completions' ``n``, where the endpoint takes it)."""
    takes = getattr(provider, "takes_n", None)
    return bool(takes(model)) if callable(takes) and hasattr(provider, "stream_choices") else False


def cache_group(provider: Provider, model: str) -> str | None:
    """The prompt cache ``model``'s requests share (answers of one group are staggered,
    so the others read what the first writes); None: it has none."""
    group = getattr(provider, "cache_group", None)
    return group(model) if callable(group) else ""


def slot_group(provider: Provider, model: str) -> str:
    """Which endpoint's requests ``model``'s share a limit with (``Router.slot_group``);
    a provider without endpoints has one."""
    group = getattr(provider, "slot_group", None)
    return str(group(model)) if callable(group) else provider.name


def takes_temperature(provider: Provider, model: str, value: float) -> bool:
    """Whether ``model``'s endpoint takes ``value`` as its temperature
    (``Router.takes_temperature``); a provider without endpoints takes 0 to 1."""
    takes = getattr(provider, "takes_temperature", None)
    return bool(takes(model, value)) if callable(takes) else 0.0 <= value <= 1.0


def endpoint_limit(provider: Provider, model: str) -> tuple[str, int] | None:
    """``(where, how many requests at once)`` for ``model``'s endpoint, where it has a
    limit of its own (a llama-server's slots: ``Router.limit``); None: it has none."""
    limit = getattr(provider, "limit", None)
    found = limit(model) if callable(limit) else None
    return found if isinstance(found, tuple) else None


def check_request(provider: Provider, request: ReplyRequest) -> None:
    """Raise ``EndpointRefuses`` (one line, with the fix) if the request's endpoint would
    refuse it; providers without endpoints take what the Messages API takes."""
    check = getattr(provider, "check", None)
    if callable(check):
        check(request)


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


def refused_connection(error: BaseException) -> bool:
    """Whether a network error is a connection nobody took (nothing listens there: the
    server is not running), not one that broke once made. A kept-alive connection the
    server closed just as it was reused fails with "disconnected without sending a
    response": the server runs, and asking again on a new connection is answered."""
    seen: BaseException | None = error
    for _depth in range(8):  # the SDK's error, httpx's, httpcore's, the OS's
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or type(seen).__name__ == "ConnectError":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


REDACTED = "[redacted]"
_Error = TypeVar("_Error", bound="ProviderError")


def without_key(error: _Error, key: str | None) -> _Error:
    """``error`` with ``key`` blanked out of its message and the server's words, should a
    server ever echo the key back: the one redaction every provider uses. The error
    stays what it was (its type, ``status``, ``detail``, ``api_message``), so what reads
    them still can (``router.refused_feature`` telling a refused feature by its detail)."""
    texts = [str(error), getattr(error, "detail", ""), getattr(error, "api_message", "")]
    if not key or not any(key in text for text in texts):
        return error
    redacted = copy.copy(error)  # the same type, with its attributes
    redacted.args = tuple(
        arg.replace(key, REDACTED) if isinstance(arg, str) else arg for arg in error.args
    )
    for name in ("detail", "api_message"):
        value = getattr(error, name, None)
        if isinstance(value, str):
            setattr(redacted, name, value.replace(key, REDACTED))
    return redacted
