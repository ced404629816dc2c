"""The second wire's provider: a path streamed through the official ``openai`` SDK.

GPT, Gemini, Azure OpenAI and most local servers speak Chat Completions, not the
Messages API. This provider sends the same stored path there: ``openai/wire.py`` builds
the request (pure), the SDK makes the call, ``openai/stream.py`` reads the chunks into
the project's events, and SDK failures become the project's errors here. The ``openai``
package is an optional extra (``pip install 'jupyter-tree-chat[openai]'``), imported
only when such an endpoint is used: ``%load_ext`` never pays for it, and without it
naming such an endpoint says in one line how to get it, before anything is written
(``missing_package``, asked by ``Router.check``).

The router makes one per endpoint (``endpoint_provider``), with what the endpoint
supports (``capabilities.Supports``: tools, ``send_reasoning``, ``n``) and a ``Service``
that names it in every error line ("local-openai at http://127.0.0.1:8080/v1 is not
answering: start it with ..."). Every request streams with ``stream_options:
{"include_usage": true}``, the only way most servers report usage in a stream. Chat
Completions has no count-tokens endpoint, so this provider is no ``TokenCounter``: the
context meter estimates what the last reply's usage does not cover.

Clients (``make_client``): ``openai.OpenAI(base_url=..., api_key=...)`` for OpenAI,
Gemini's OpenAI-compatible URL and any compatible server (``base_url`` as the SDK takes
it, for most servers ending in ``/v1``); ``openai.AzureOpenAI(azure_endpoint=...,
api_version=..., azure_deployment=...)`` for Azure, where the model named is the
deployment unless one is configured. A server that takes no key (a local one) is sent a
placeholder. Retries are the SDK's (2 retries of 408/409/429/5xx, honouring
``retry-after``), except for a streamed reply of a provider made with ``sdk_retries=False``
(the router's: it asks again itself, a line in the cell per retry, ``providers/retry.py``).

Error mapping (each message one line that says what to do; the key never appears):
    AuthenticationError 401, PermissionDeniedError 403   → AuthenticationFailed
    RateLimitError 429                                    → RateLimited
    503                                                   → Overloaded
    (each with ``retry_after`` from the response's headers, for retry.py)
    other 5xx                                             → ServerError
    APIConnectionError, APITimeoutError, a dropped stream → ConnectionFailed
    an ``error`` object inside the stream, a bad chunk    → StreamError
    400/404/422 and other 4xx                             → BadRequest (``status`` and
                                                            ``detail`` kept, so the
                                                            router can tell a refused
                                                            feature such as ``n``)
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any, TypeVar

import msgspec

from ...errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    MissingApiKey,
    MissingExtra,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
    StreamError,
)
from ...i18n import _
from ..base import (
    ReplyEvent,
    ReplyRequest,
    Service,
    refused_connection,
    transport_errors,
    without_key,
)
from ..endpoints.capabilities import Supports
from ..redirects import guarded_http_client
from ..retry import heeded, passing, retry_after, shown_seconds
from ..sse import sse_events
from .batches import OpenAIBatches
from .stream import read_choices, read_chunks
from .wire import CHAT_SUPPORTS, build_params

DEFAULT_MODEL = "gpt-5-mini"
_decode = msgspec.json.Decoder().decode
NO_KEY = "no-key-needed"
"""What a server that takes no key is sent (the SDK refuses to build a client without)."""
STREAM_OPTIONS = {"include_usage": True}
EXTRA = "pip install 'jupyter-tree-chat[openai]'"


def openai_service() -> Service:
    """Who a provider made without a router talks to, as its error lines name it."""
    return Service(
        _("OpenAI's API"),
        key_fix=_("check OPENAI_API_KEY"),
        reach_fix=_("check the network and its base_url, then retry"),
    )


T = TypeVar("T")


def missing_package(endpoint: str) -> str | None:
    """The one line saying how to get the ``openai`` package, or None if it is there
    (found without importing it: the cell that needs it imports it)."""
    try:
        found = importlib.util.find_spec("openai") is not None
    except (ImportError, ValueError):  # ``sys.modules["openai"] = None`` and the like
        found = False
    return None if found else _extra_line(endpoint)


def _extra_line(endpoint: str) -> str:
    return _(
        "{endpoint} speaks Chat Completions, which needs the openai package: {command}"
    ).format(endpoint=endpoint, command=EXTRA)


def load_openai(endpoint: str) -> ModuleType:
    """The ``openai`` package, or a one-line ``MissingExtra`` saying how to get it."""
    try:
        return importlib.import_module("openai")
    except ImportError:
        raise MissingExtra(_extra_line(endpoint)) from None


def make_client(
    *,
    service: Service | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    azure_api_version: str | None = None,
    azure_deployment: str | None = None,
    max_retries: int | None = None,
) -> Any:
    """A client of the ``openai`` SDK for one endpoint (see the module docstring).

    Without ``api_key`` the SDK reads its own variable (``OPENAI_API_KEY``,
    ``AZURE_OPENAI_API_KEY``); none set is a one-line ``MissingApiKey``."""
    service = service or openai_service()
    openai = load_openai(service.label)
    # the key never follows a redirect to another host (redirects.py)
    http_client = guarded_http_client(openai, openai.OpenAIError)
    options: dict[str, Any] = {"api_key": api_key, "http_client": http_client}
    if max_retries is not None:
        options["max_retries"] = max_retries
    try:
        if azure_api_version is not None:
            return openai.AzureOpenAI(
                azure_endpoint=base_url,
                azure_deployment=azure_deployment,
                api_version=azure_api_version,
                **options,
            )
        return openai.OpenAI(base_url=base_url, **options)
    except openai.OpenAIError:
        raise MissingApiKey(
            _("No key for {who}: {fix}.").format(who=service.label, fix=service.key_fix)
        ) from None


class OpenAIChatProvider:
    """Streams replies from a Chat Completions endpoint (see the module docstring)."""

    name = "openai-chat"

    def __init__(
        self,
        client: Any = None,
        *,
        default_model: str = DEFAULT_MODEL,
        supports: Supports = CHAT_SUPPORTS,
        service: Service | None = None,
        max_tokens_field: str = "max_completion_tokens",
        sdk_retries: bool = True,
        **client_options: Any,
    ) -> None:
        if client is None:
            client = make_client(service=service, **client_options)
        self.client = client
        self.sdk_retries = sdk_retries
        """Whether the SDK retries a streamed reply itself (False where the caller asks
        again: retry.py)."""
        self.default_model = default_model
        self.supports = supports
        self._service = service
        self.max_tokens_field = max_tokens_field
        self.azure_deployment: str | None = client_options.get("azure_deployment")
        """Azure: the deployment every model name goes to (a batch's lines name it)."""

    @property
    def service(self) -> Service:
        """Who this provider talks to, as its error lines name it."""
        return self._service or openai_service()

    def __repr__(self) -> str:  # never the key
        return f"OpenAIChatProvider(base_url={self._url()!r})"

    def prepare(self) -> None:
        """Load what the first request would otherwise load on the way (no network)."""
        importlib.import_module("openai.types.chat")
        assert self.client.chat.completions is not None

    def params(self, request: ReplyRequest) -> dict[str, Any]:
        """What ``chat.completions.create`` is given for ``request`` (and ``stream``)."""
        params = build_params(request, self.supports, max_tokens_field=self.max_tokens_field)
        params["model"] = params["model"] or self.default_model
        return {**params, "stream": True, "stream_options": STREAM_OPTIONS}

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]:
        """Yield thinking and text as they arrive, then the tool calls and ``Finished``."""
        params = self.params(request)
        yield from self._streamed(
            params, lambda chunks: read_chunks(chunks, fallback_model=params["model"])
        )

    def stream_choices(self, request: ReplyRequest, n: int) -> Iterator[tuple[int, ReplyEvent]]:
        """``n`` answers in one request (``n`` sent), as ``(choice, event)`` pairs; a
        server that refuses ``n`` answers ``BadRequest`` before any event."""
        params = self.params(request)
        if n > 1:
            params["n"] = n
        yield from self._streamed(
            params, lambda chunks: read_choices(chunks, fallback_model=params["model"], n=n)
        )

    def _streamed(self, params: dict[str, Any], read: Callable[[Any], Iterator[T]]) -> Iterator[T]:
        """What ``read`` makes of the response's chunks, SDK failures made the project's.

        The SDK sends the request (auth, headers, status errors as its own); the chunks
        are read from the response's lines (``_chunks``), not made typed objects one per
        token. A client of another kind keeps the SDK's reading (the reader takes both)."""
        started = False
        client = self.client if self.sdk_retries else self.client.with_options(max_retries=0)
        openai = load_openai(self.service.label)
        try:
            with contextlib.ExitStack() as opened:  # closed however the caller stops
                chunks: Iterable[Any]
                if isinstance(client, openai.OpenAI):  # AzureOpenAI is one too
                    response = client.chat.completions.with_streaming_response.create(**params)
                    raw = opened.enter_context(response)
                    chunks = self._chunks(raw.iter_lines(), raw.http_request)
                else:
                    typed = client.chat.completions.create(**params)
                    opened.callback(typed.close)
                    chunks = typed
                items = read(chunks)
                for item in items:  # the first: from here on, a failure is mid-reply
                    started = True
                    yield item
                    break
                yield from items  # the rest, delegated: no loop of ours per token
        except ProviderError as error:
            raise self._redacted(error) from error.__cause__
        except Exception as error:
            mapped = self.provider_error(error, mid_reply=started, client=client)
            if mapped is None:
                raise
            raise self._redacted(mapped) from error

    def _chunks(self, lines: Iterable[str], request: Any) -> Iterator[dict[str, Any]]:
        """Each chunk's JSON in a stream's lines, read as the SDK reads them: up to
        ``[DONE]``; an ``error`` object inside the stream is the SDK's ``APIError`` (mapped
        as it always was), data that is not JSON a ``StreamError``."""
        for _name, data in sse_events(lines):
            if data.startswith("[DONE]"):
                return
            try:
                chunk = _decode(data)
            except msgspec.DecodeError:
                raise StreamError(
                    _("{who} sent a chunk that is not JSON: retry.").format(
                        who=self.service.subject
                    )
                ) from None
            if isinstance(chunk, dict) and chunk.get("error"):
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else None
                if not message or not isinstance(message, str):
                    message = "An error occurred during streaming"  # the SDK's words
                openai = load_openai(self.service.label)
                raise openai.APIError(message=message, request=request, body=error)
            yield chunk

    def provider_error(
        self, error: BaseException, *, mid_reply: bool = False, client: Any = None
    ) -> ProviderError | None:
        """The project error for an SDK or network error, or None if it is not one
        (``client``: the one that asked, whose retries it says)."""
        openai = load_openai(self.service.label)
        retries = getattr(client or self.client, "max_retries", None)
        after = _(" after {count} retries").format(count=retries) if retries else ""
        service = self.service
        if isinstance(error, openai.APIStatusError):
            mapped = self._status_error(error, after)
            mapped.status = error.status_code
            return heeded(mapped, error.response.headers)
        if isinstance(error, openai.APITimeoutError):
            return passing(
                ConnectionFailed(
                    _("{who} did not answer in time{after}: check the network and retry.").format(
                        who=service.subject, after=after
                    )
                )
            )
        if isinstance(error, (openai.APIConnectionError, *transport_errors())):
            if mid_reply:
                return ConnectionFailed(
                    _("The connection to {who} dropped mid-reply: retry.").format(who=service.label)
                )
            if service.down is not None and refused_connection(error):  # yours, not running
                return ConnectionFailed(service.down)
            return passing(
                ConnectionFailed(
                    _("Could not reach {who} ({url}): {fix}.").format(
                        who=service.label, url=self._url(), fix=service.reach_fix
                    )
                )
            )
        if isinstance(error, openai.APIError):  # an ``error`` object inside the stream
            return StreamError(
                _("{who} failed mid-reply{detail}: retry.").format(
                    who=service.subject, detail=_detail(error)
                )
            )
        if isinstance(error, json.JSONDecodeError):
            return StreamError(
                _("{who} sent a chunk that is not JSON: retry.").format(who=service.subject)
            )
        return None

    def _status_error(self, error: Any, after: str) -> ProviderError:
        status, detail, who = error.status_code, _detail(error), self.service.subject
        if status in (401, 403):
            return AuthenticationFailed(
                _("{who} refused the key ({status}){detail}: {fix}.").format(
                    who=who, status=status, detail=detail, fix=self.service.key_fix
                )
            )
        if status == 429:
            seconds = retry_after(error.response.headers)
            if seconds is not None:
                when = _("retry in {seconds} s").format(seconds=shown_seconds(seconds))
            else:
                when = _("retry in a minute")
            return RateLimited(
                _("Rate limited by {who} (429){after}: {when}.").format(
                    who=self.service.label, after=after, when=when
                )
            )
        if status == 503:
            return Overloaded(
                _("{who} is overloaded (503){after}: retry in a minute.").format(
                    who=who, after=after
                )
            )
        if status >= 500:
            return ServerError(
                _("{who} failed ({status}){after}{detail}: retry later.").format(
                    who=who, status=status, after=after, detail=detail
                )
            )
        if status == 404:
            refused = BadRequest(
                _(
                    "{who} has no such model or route (404){detail}: check the model name, "
                    "and that base_url {url} is the one its docs give (most end in /v1)."
                ).format(who=who, detail=detail, url=self._url())
            )
        else:
            refused = BadRequest(
                _("{who} refused the request ({status}){detail}: fix it and retry.").format(
                    who=who, status=status, detail=detail
                )
            )
        refused.status = status
        refused.detail = detail.removeprefix(": ")
        return refused

    def batch_wire(
        self, model: str | None = None, *, name: str | None = None, deployment: str | None = None
    ) -> OpenAIBatches:
        """This endpoint's Batch API (``openai/batches.py``), on this provider's client,
        its errors mapped as this provider maps them; on Azure each line names the
        deployment (``deployment``, else the one this provider was made with)."""
        key = getattr(self.client, "api_key", None)
        azure = isinstance(self.client, load_openai(self.service.label).AzureOpenAI)
        return OpenAIBatches(
            self.client,
            name=name or ("azure" if azure else "openai"),
            service=self.service,
            errors=self.provider_error,
            key=None if key == NO_KEY else key,
            supports=self.supports,
            default_model=model or self.default_model,
            max_tokens_field=self.max_tokens_field,
            azure=azure,
            deployment=deployment or self.azure_deployment,
        )

    def _url(self) -> str:
        return str(getattr(self.client, "base_url", ""))

    def _redacted(self, error: ProviderError) -> ProviderError:
        """The error with the key blanked out, should a server ever echo it back."""
        key = getattr(self.client, "api_key", None)
        return without_key(error, None if key == NO_KEY else key)


def _detail(error: Any) -> str:
    """The server's own words about an error, on one line (none: empty)."""
    body = getattr(error, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    message = message or getattr(error, "message", None)
    if not message:
        return ""
    return ": " + " ".join(str(message).split())[:300]


def endpoint_provider(
    base_url: str | None,
    key: str,
    supports: Supports,
    service: Service,
    *,
    max_tokens_field: str = "max_completion_tokens",
    azure_api_version: str | None = None,
    azure_deployment: str | None = None,
) -> OpenAIChatProvider:
    """The provider for an endpoint that speaks Chat Completions (endpoints/router.py makes it,
    with the endpoint's ``wire_options``, and asks again itself: no SDK retries of a
    streamed reply)."""
    return OpenAIChatProvider(
        supports=supports,
        service=service,
        max_tokens_field=max_tokens_field,
        sdk_retries=False,
        base_url=base_url,
        api_key=key,
        azure_api_version=azure_api_version,
        azure_deployment=azure_deployment,
    )


def endpoint_batches(
    base_url: str | None,
    key: str,
    supports: Supports,
    service: Service,
    *,
    name: str | None = None,
    max_tokens_field: str = "max_completion_tokens",
    azure_api_version: str | None = None,
    azure_deployment: str | None = None,
) -> OpenAIBatches:
    """The Batch API of an endpoint that speaks Chat Completions (the router asks, as it
    asks ``endpoint_provider``): its client made the same way, with the same key and
    redirect rule. ``name`` is the endpoint's, kept with each batch."""
    provider = endpoint_provider(
        base_url,
        key,
        supports,
        service,
        max_tokens_field=max_tokens_field,
        azure_api_version=azure_api_version,
        azure_deployment=azure_deployment,
    )
    return provider.batch_wire(name=name)
