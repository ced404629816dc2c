"""The real provider: the active path, streamed through the official ``anthropic`` SDK.

It exists to keep three things in one place: turning stored messages into the request
the Messages API accepts (``build_kwargs``, pure, testable without a network), sending it
and reading its stream into the project's events (events.py reads the lines the SDK
hands over), and translating SDK failures into the project's errors. ``count_tokens`` asks the API's
``/v1/messages/count_tokens`` what a request would hold.

Extended thinking: ``ReplyRequest.thinking`` of N asks for ``{"type": "enabled",
"budget_tokens": N}`` (the models that take a budget), ``"adaptive"`` for ``{"type":
"adaptive", "display": "summarized"}`` (the models that decide for themselves; without
``display`` the newer ones send their thinking empty). Thinking blocks on the path are
sent back as ``wire.sends_thinking`` says; the API's constraints (budget at least
1024 and below max_tokens, no temperature but 1) are checked before any request, in
``preflight.py``. Thinking is a request parameter of every API version, the one a
temperature is sent with included.

Defaults:
    model           ``DEFAULT_MODEL`` ("claude-sonnet-4-6"; this SDK flags 4-5 as
                    deprecated) when a request names none
    max_tokens      ``ReplyRequest.max_tokens`` (4096)
    retries         the SDK's (2 retries of 408/409/429/5xx, honouring retry-after);
                    with ``sdk_retries=False`` (the router's: it asks again itself, a
                    line in the cell per retry, retry.py) a streamed reply gets none
    client          ``anthropic.Anthropic()``: ``ANTHROPIC_API_KEY`` (or any credential
                    the SDK resolves) and ``ANTHROPIC_BASE_URL``; pass any client,
                    e.g. ``AnthropicBedrock``/``AnthropicVertex``, to use it as is.

Prompt caching: branches share prefixes, so a retry or a fork should read the prefix
from the cache. ``build_kwargs`` marks ``cache_control`` on the last tool, on the system
prompt, and on the last two messages of the path (the new one, and the one before it,
so a later retry or edit of the newest message still hits the prefix before it). That
is at most 4 breakpoints, the API's limit; ``cache_control`` already present in stored
messages is dropped so the count stays within it.

Temperature: API version 2026-10-21 (the one this SDK sends) refuses ``temperature``
with a 400, even at its default, and the SDK no longer takes it as an argument; version
2023-06-01 still accepts it. So a request that sets a temperature (``--temperature``,
a fan-out over ``--temperatures``) is sent as that version (``SAMPLING_API_VERSION``),
with ``temperature`` in the body; every other request goes as the SDK's own version.

Other endpoints: the same wire serves every server that speaks the Messages API
(endpoints/router.py picks the endpoint). ``supports`` says what the server takes
(endpoints/capabilities.py): without ``cache_control`` no breakpoint is placed, without tools none
is offered, thinking blocks go back as it requires, and ``thinking: disabled`` is said
where a server thinks unless told not to. ``service`` names the server in every error
line (``local at http://127.0.0.1:8080 is not answering: start it with ...``).

Stop reasons are data, not errors: ``max_tokens`` and ``refusal`` arrive in
``Finished.stop_reason`` and the session turns them into notices.

Error mapping (each message one line that says what to do; the key never appears):
    AuthenticationError 401, PermissionDeniedError 403   → AuthenticationFailed
    RateLimitError 429                                    → RateLimited
    OverloadedError 529, or an ``overloaded_error`` event → Overloaded
    (each with ``retry_after`` from the response's headers, for retry.py)
    other 5xx                                             → ServerError
    APIConnectionError, APITimeoutError, a dropped stream → ConnectionFailed
    any other ``error`` event, a malformed event          → StreamError
    400 "prompt is too long: N tokens > M maximum"        → PromptTooLong (the session
                                                            says the path's size)
    400/404/413/422 and other 4xx                         → BadRequest
An ``overloaded_error`` event mid-stream becomes ``Overloaded`` rather than
``StreamError`` because the fix is the same as for a 529: wait and retry.
"""

from __future__ import annotations

import contextlib
import importlib
import json
from collections.abc import Iterator
from typing import Any

import anthropic

from ...errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    MissingApiKey,
    Overloaded,
    PromptTooLong,
    ProviderError,
    RateLimited,
    ServerError,
    StreamError,
)
from ...i18n import _
from ..base import (
    ADAPTIVE,
    Message,
    ReplyEvent,
    ReplyRequest,
    Service,
    Thinking,
    refused_connection,
    transport_errors,
    without_key,
)
from ..endpoints.capabilities import Supports, fitted_messages
from ..redirects import guarded_http_client
from ..retry import heeded, passing, retry_after, shown_seconds
from ..tools.wire import request_tools
from .batches import AnthropicBatches
from .events import decoded_events, read_events, stream_event_error
from .wire import api_messages

DEFAULT_MODEL = "claude-sonnet-4-6"
PROMPT_TOO_LONG = "prompt is too long"
"""How the API begins its 400 for a prompt over the model's window."""
SAMPLING_API_VERSION = "2023-06-01"
"""The newest API version that still accepts ``temperature`` (see the module docstring)."""
CACHE_CONTROL = {"type": "ephemeral"}
# What count_tokens takes of a request.
_COUNTED_KEYS = ("model", "messages", "system", "tools", "thinking")
# Block types the API lets carry cache_control (thinking blocks cannot).
_CACHEABLE_BLOCK_TYPES = {"text", "image", "document", "tool_use", "tool_result", "search_result"}
ANTHROPIC_SUPPORTS = Supports()
"""What Anthropic's own API takes: everything (the defaults)."""
THINKING_OFF = {"type": "disabled"}


def anthropic_service() -> Service:
    """Anthropic's own API, as its error lines name it (in the reader's language now)."""
    return Service(
        _("the Anthropic API"),
        key_fix=_("check ANTHROPIC_API_KEY or use the offline provider"),
        reach_fix=_("check the network or ANTHROPIC_BASE_URL and retry"),
    )


# -- building the request (pure) ------------------------------------------------------


def build_kwargs(request: ReplyRequest, supports: Supports = ANTHROPIC_SUPPORTS) -> dict[str, Any]:
    """The keyword arguments for ``messages.create`` / ``messages.stream``.

    Stored messages are copied, never changed: ``wire.api_messages`` makes the path what
    the API accepts (only ``role`` and ``content``, no ``None``-valued keys or empty text
    blocks, unsigned thinking left out, tool-use ids it refuses mapped, ...),
    ``tools.wire.request_tools`` defines every tool the path used (or, with no tool
    offered, turns the tool blocks into text), ``capabilities.fitted_messages`` makes it
    what the endpoint takes back of thinking, and cache breakpoints are placed as the
    module docstring says, where ``supports`` has them.
    """
    thinking_on = request.thinking is not None
    offered = [tool.to_api() for tool in request.tools] if supports.tools else []
    messages, tools = request_tools(
        api_messages(request.messages),
        offered,
        [tool.to_api() for tool in request.known_tools],
    )
    messages = fitted_messages(messages, request.messages, supports, thinking_on)
    caching = supports.cache_control
    if caching:
        for position in range(len(messages) - 1, max(-1, len(messages) - 3), -1):
            messages[position] = _with_breakpoint(messages[position])
    kwargs: dict[str, Any] = {
        "model": request.model or DEFAULT_MODEL,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if request.system:
        system: dict[str, Any] = {"type": "text", "text": request.system}
        kwargs["system"] = [{**system, "cache_control": CACHE_CONTROL} if caching else system]
    if tools:
        if caching:
            tools[-1] = {**tools[-1], "cache_control": CACHE_CONTROL}
        kwargs["tools"] = tools
    if request.temperature is not None:
        kwargs["extra_body"] = {"temperature": request.temperature}
        kwargs["extra_headers"] = {"anthropic-version": SAMPLING_API_VERSION}
    if thinking_on:
        kwargs["thinking"] = thinking_param(request.thinking)
    elif supports.thinking_off and supports.thinking:
        kwargs["thinking"] = THINKING_OFF
    return kwargs


def thinking_param(thinking: Thinking) -> dict[str, Any]:
    """The request's ``thinking`` object for a budget of tokens or ``"adaptive"``."""
    if thinking == ADAPTIVE:
        return {"type": "adaptive", "display": "summarized"}
    return {"type": "enabled", "budget_tokens": thinking}


def _with_breakpoint(message: Message) -> Message:
    """The message with ``cache_control`` on its last cacheable block, if it has one."""
    content = message["content"]
    if isinstance(content, str):
        if not content:
            return message
        return {
            **message,
            "content": [{"type": "text", "text": content, "cache_control": CACHE_CONTROL}],
        }
    for position in range(len(content) - 1, -1, -1):
        block = content[position]
        if _is_cacheable(block):
            marked = [*content]
            marked[position] = {**block, "cache_control": CACHE_CONTROL}
            return {**message, "content": marked}
    return message


def _is_cacheable(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") not in _CACHEABLE_BLOCK_TYPES:
        return False
    return block.get("type") != "text" or bool(block.get("text"))


# -- the provider ---------------------------------------------------------------------


class AnthropicProvider:
    """Streams replies from the Anthropic Messages API (see the module docstring)."""

    name = "anthropic"
    default_model = DEFAULT_MODEL

    def __init__(
        self,
        client: Any = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        supports: Supports = ANTHROPIC_SUPPORTS,
        service: Service | None = None,
        sdk_retries: bool = True,
    ) -> None:
        self.supports = supports
        self._service = service
        self.sdk_retries = sdk_retries
        """Whether the SDK retries a streamed reply itself (False where the caller asks
        again: retry.py); count_tokens keeps the SDK's retries either way."""
        if client is None:
            options: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
            # the key never follows a redirect to another host (redirects.py)
            options["http_client"] = guarded_http_client(anthropic, anthropic.AnthropicError)
            if max_retries is not None:
                options["max_retries"] = max_retries
            try:
                client = anthropic.Anthropic(**options)
            except anthropic.AnthropicError as error:  # e.g. a broken credentials profile
                first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise MissingApiKey(
                    _(
                        "No usable Anthropic credentials ({error}): "
                        "set ANTHROPIC_API_KEY or use the offline provider."
                    ).format(error=first_line)
                ) from None
            if not (client.api_key or client.auth_token or getattr(client, "credentials", None)):
                raise MissingApiKey(
                    _("No Anthropic API key: set ANTHROPIC_API_KEY or use the offline provider.")
                )
        self.client = client

    @property
    def service(self) -> Service:
        """Who this provider talks to, as its error lines name it."""
        return self._service or anthropic_service()

    def prepare(self) -> None:
        """Load what the first request would otherwise load on the way (no network):
        the client's resources and the SDK's streaming and event types."""
        importlib.import_module("anthropic.lib.streaming")
        importlib.import_module("anthropic.types")
        _ = self.client.messages

    def __repr__(self) -> str:  # never the key
        return f"AnthropicProvider(base_url={str(getattr(self.client, 'base_url', ''))!r})"

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]:
        """Yield text as it arrives, each tool_use as it completes, then ``Finished``.

        The SDK sends the request (auth, headers, status errors as its own); the events
        are read by events.py, not made typed objects one per token. A client of another
        kind (Bedrock's binary event stream, Vertex) keeps the SDK's reading."""
        kwargs = build_kwargs(request, self.supports)
        started = False
        client = self.client if self.sdk_retries else self.client.with_options(max_retries=0)
        service = self.service
        try:
            with contextlib.ExitStack() as opened:  # closed however the caller stops
                if isinstance(client, anthropic.Anthropic):
                    response = client.messages.with_streaming_response.create(**kwargs, stream=True)
                    lines = opened.enter_context(response).iter_lines()
                    decoded: Iterator[dict[str, Any]] = decoded_events(lines, service)
                else:
                    typed = client.messages.create(**kwargs, stream=True)
                    opened.callback(typed.close)
                    decoded = (event.model_dump() for event in typed)
                replies = read_events(decoded, fallback_model=kwargs["model"], service=service)
                for event in replies:  # the first: from here on, a failure is mid-reply
                    started = True
                    yield event
                    break
                yield from replies  # the rest, delegated: no loop of ours per token
        except ProviderError as error:
            raise self._redacted(error) from error.__cause__
        except Exception as error:
            retries = getattr(client, "max_retries", None)
            mapped = provider_error(error, max_retries=retries, mid_reply=started, service=service)
            if mapped is None:
                raise
            raise self._redacted(mapped) from error

    def count_tokens(self, request: ReplyRequest) -> int:
        """The input tokens the API counts for ``request`` (its system, tools, messages)."""
        built = build_kwargs(request, self.supports)  # no max_tokens nor temperature
        kwargs = {key: built[key] for key in _COUNTED_KEYS if key in built}
        try:
            counted = self.client.messages.count_tokens(**kwargs)
        except Exception as error:
            mapped = provider_error(
                error, max_retries=getattr(self.client, "max_retries", None), service=self.service
            )
            if mapped is None:
                raise
            raise self._redacted(mapped) from error
        return int(counted.input_tokens)

    def batch_wire(self, model: str | None = None) -> AnthropicBatches:
        """Message Batches through this provider's client (anthropic/batches.py): each
        request built as a stream's, each failure mapped as a stream's."""
        return AnthropicBatches(
            self.client,
            build=lambda request: build_kwargs(request, self.supports),
            mapped=self._mapped,
            sampling_version=SAMPLING_API_VERSION,
            name=self.name,
        )

    def _mapped(self, error: Exception) -> ProviderError | None:
        retries = getattr(self.client, "max_retries", None)
        mapped = provider_error(error, max_retries=retries, service=self.service)
        return None if mapped is None else self._redacted(mapped)

    def _redacted(self, error: ProviderError) -> ProviderError:
        """The error with the API key blanked out, should a server ever echo it back."""
        return without_key(error, getattr(self.client, "api_key", None))


# -- errors ---------------------------------------------------------------------------


TRANSPORT_ERRORS = transport_errors()


def provider_error(
    error: BaseException,
    *,
    max_retries: int | None = None,
    mid_reply: bool = False,
    service: Service | None = None,
) -> ProviderError | None:
    """The project error for an SDK or network error, or None if it is not one.

    ``mid_reply`` says events had already arrived (a dropped stream, not an unreachable
    host); ``service`` names who answered (or did not)."""
    service = service or anthropic_service()
    retries = _(" after {count} retries").format(count=max_retries) if max_retries else ""
    who = service.subject
    if isinstance(error, anthropic.APIStatusError):
        return _status_error(error, retries, service)
    if isinstance(error, anthropic.APITimeoutError):
        return passing(
            ConnectionFailed(
                _("{who} did not answer in time{retries}: check the network and retry.").format(
                    who=who, retries=retries
                )
            )
        )
    if isinstance(error, (anthropic.APIConnectionError, *TRANSPORT_ERRORS)):
        if mid_reply:
            return ConnectionFailed(
                _("The connection to {who} dropped mid-reply: retry.").format(who=service.label)
            )
        if service.down is not None and refused_connection(error):  # yours, not running: say so
            return ConnectionFailed(service.down)
        return passing(
            ConnectionFailed(
                _("Could not reach {who} ({error}): {fix}.").format(
                    who=service.label, error=type(error).__name__, fix=service.reach_fix
                )
            )
        )
    if isinstance(error, json.JSONDecodeError):
        return StreamError(_("{who} sent a malformed stream event: retry.").format(who=who))
    return None


def _status_error(
    error: anthropic.APIStatusError, retries: str, service: Service | None = None
) -> ProviderError:
    mapped = _mapped_status(error, retries, service)
    if error.status_code != 200:  # 200: an ``error`` event inside the stream
        mapped.status = error.status_code
        heeded(mapped, error.response.headers)
    return mapped


def _mapped_status(
    error: anthropic.APIStatusError, retries: str, service: Service | None = None
) -> ProviderError:
    service = service or anthropic_service()
    status = error.status_code
    detail = _api_detail(error)
    who = service.subject
    if status == 200:  # an ``error`` event inside the stream, as the SDK read it
        return stream_event_error(error.body, service)
    if status in (401, 403):
        return AuthenticationFailed(
            _("{who} refused the key ({status}){detail}: {fix}.").format(
                who=who, status=status, detail=detail, fix=service.key_fix
            )
        )
    if status == 429:
        seconds = retry_after(error.response.headers)
        wait = shown_seconds(seconds) if seconds is not None else None
        if wait:
            limited = _("Rate limited by {who} (429){retries}: retry in {wait} s.")
        else:
            limited = _("Rate limited by {who} (429){retries}: retry in a minute.")
        return RateLimited(limited.format(who=service.label, retries=retries, wait=wait))
    if status == 529 or error.type == "overloaded_error":
        return Overloaded(
            _("{who} is overloaded ({status}){retries}: retry in a minute.").format(
                who=who, status=status, retries=retries
            )
        )
    if status >= 500:
        return ServerError(
            _("{who} failed ({status}){retries}{detail}: retry later.").format(
                who=who, status=status, retries=retries, detail=detail
            )
        )
    if PROMPT_TOO_LONG in detail:
        return PromptTooLong(
            _("{who} refused the request ({status}){detail}: shorten the path.").format(
                who=who, status=status, detail=detail
            ),
            detail.removeprefix(": "),
        )
    refused = BadRequest(
        _("{who} refused the request ({status}){detail}: fix it and retry.").format(
            who=who, status=status, detail=detail
        )
    )

    refused.status = status
    refused.detail = detail.removeprefix(": ")
    return refused


def _api_detail(error: anthropic.APIStatusError) -> str:
    message = getattr(error, "api_message", None) or _body_message(error.body)
    if not message:
        return ""
    return ": " + " ".join(str(message).split())[:300]


def _body_message(body: object) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        return str(message) if message else None
    return None


def endpoint_provider(
    base_url: str | None, key: str, supports: Supports, service: Service
) -> AnthropicProvider:
    """The provider for an endpoint that speaks the Messages API (endpoints/router.py makes
    it, and asks again itself: no SDK retries of a streamed reply)."""
    return AnthropicProvider(
        api_key=key, base_url=base_url, supports=supports, service=service, sdk_retries=False
    )


def endpoint_batches(
    base_url: str | None, key: str, supports: Supports, service: Service
) -> AnthropicBatches:
    """Message Batches at an endpoint that has them (``Endpoint.batch``; router.py asks).
    Its client keeps the SDK's retries: a batch's calls are not streamed replies."""
    provider = AnthropicProvider(api_key=key, base_url=base_url, supports=supports, service=service)
    return provider.batch_wire()
