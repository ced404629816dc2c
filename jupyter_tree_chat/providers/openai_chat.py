"""The second wire's provider: a path streamed through the official ``openai`` SDK.

GPT, Gemini, Azure OpenAI and most local servers speak Chat Completions, not the
Messages API. This provider sends the same stored path there: ``openai_wire.py`` builds
the request (pure), the SDK makes the call, ``openai_stream.py`` reads the chunks into
the project's events, and SDK failures become the project's errors here. The ``openai``
package is an optional extra (``pip install 'jupyter-tree-chat[openai]'``), imported
only when such an endpoint is used: ``%load_ext`` never pays for it, and without it
naming such an endpoint says in one line how to get it (``load_openai``).

Every request streams with ``stream_options: {"include_usage": true}``, the only way
most servers report usage in a stream. Chat Completions has no count-tokens endpoint,
so this provider is no ``TokenCounter``: the context meter estimates what the last
reply's usage does not cover.

Clients (``make_client``): ``openai.OpenAI(base_url=..., api_key=...)`` for OpenAI,
Gemini's OpenAI-compatible URL and any compatible server (``base_url`` as the SDK takes
it, for most servers ending in ``/v1``); ``openai.AzureOpenAI(azure_endpoint=...,
api_version=..., azure_deployment=...)`` for Azure, where the model named is the
deployment. A server that takes no key (a local one) is sent a placeholder. Retries are
the SDK's (2 retries of 408/409/429/5xx, honouring ``retry-after``).

Error mapping (each message one line that says what to do; the key never appears):
    AuthenticationError 401, PermissionDeniedError 403   → AuthenticationFailed
    RateLimitError 429 (after the SDK's retries)          → RateLimited
    503                                                   → Overloaded
    other 5xx                                             → ServerError
    APIConnectionError, APITimeoutError, a dropped stream → ConnectionFailed
    an ``error`` object inside the stream, a bad chunk    → StreamError
    400/404/422 and other 4xx                             → BadRequest
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

from ..errors import (
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
from ..i18n import _
from .base import ReplyEvent, ReplyRequest, transport_errors
from .openai_stream import read_choices, read_chunks
from .openai_wire import build_params

DEFAULT_MODEL = "gpt-5-mini"
NO_KEY = "no-key-needed"
"""What a server that takes no key is sent (the SDK refuses to build a client without)."""
STREAM_OPTIONS = {"include_usage": True}
EXTRA = "pip install 'jupyter-tree-chat[openai]'"
T = TypeVar("T")


def load_openai(endpoint: str) -> ModuleType:
    """The ``openai`` package, or a one-line ``MissingExtra`` saying how to get it."""
    try:
        return importlib.import_module("openai")
    except ImportError:
        raise MissingExtra(
            _(
                "The endpoint {endpoint} speaks Chat Completions, which needs the openai "
                "package: {command}"
            ).format(endpoint=endpoint, command=EXTRA)
        ) from None


def make_client(
    *,
    endpoint: str = "openai",
    base_url: str | None = None,
    api_key: str | None = None,
    key_env: str | None = "OPENAI_API_KEY",
    azure_api_version: str | None = None,
    azure_deployment: str | None = None,
    max_retries: int | None = None,
) -> Any:
    """A client of the ``openai`` SDK for one endpoint (see the module docstring).

    ``key_env`` names the variable the key comes from (for the messages; the key itself
    is passed in ``api_key``, or read from that variable); None: the server takes none."""
    openai = load_openai(endpoint)
    if api_key is None and key_env is None:
        api_key = NO_KEY
    options: dict[str, Any] = {"api_key": api_key}
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
            _("No key for the endpoint {endpoint}: set {variable}.").format(
                endpoint=endpoint, variable=key_env or "api_key"
            )
        ) from None


class OpenAIChatProvider:
    """Streams replies from a Chat Completions endpoint (see the module docstring)."""

    name = "openai-chat"

    def __init__(
        self,
        client: Any = None,
        *,
        endpoint: str = "openai",
        default_model: str = DEFAULT_MODEL,
        key_env: str | None = "OPENAI_API_KEY",
        max_tokens_field: str = "max_completion_tokens",
        send_reasoning: bool = False,
        **client_options: Any,
    ) -> None:
        if client is None:
            client = make_client(endpoint=endpoint, key_env=key_env, **client_options)
        self.client = client
        self.endpoint = endpoint
        self.default_model = default_model
        self.key_env = key_env
        self.max_tokens_field = max_tokens_field
        self.send_reasoning = send_reasoning

    def __repr__(self) -> str:  # never the key
        base_url = str(getattr(self.client, "base_url", ""))
        return f"OpenAIChatProvider(endpoint={self.endpoint!r}, base_url={base_url!r})"

    def prepare(self) -> None:
        """Load what the first request would otherwise load on the way (no network)."""
        importlib.import_module("openai.types.chat")
        assert self.client.chat.completions is not None

    def params(self, request: ReplyRequest) -> dict[str, Any]:
        """What ``chat.completions.create`` is given for ``request`` (and ``stream``)."""
        params = build_params(
            request, max_tokens_field=self.max_tokens_field, send_reasoning=self.send_reasoning
        )
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
        """What ``read`` makes of the response's chunks, SDK failures made the project's."""
        started = False
        try:
            chunks = self.client.chat.completions.create(**params)
            try:
                for item in read(chunks):
                    started = True
                    yield item
            finally:  # a caller that stops early (KeyboardInterrupt) frees the connection
                chunks.close()
        except ProviderError as error:
            raise self._redacted(error) from error.__cause__
        except Exception as error:
            mapped = self.provider_error(error, mid_reply=started)
            if mapped is None:
                raise
            raise self._redacted(mapped) from error

    def provider_error(
        self, error: BaseException, *, mid_reply: bool = False
    ) -> ProviderError | None:
        """The project error for an SDK or network error, or None if it is not one."""
        openai = load_openai(self.endpoint)
        retries = getattr(self.client, "max_retries", None)
        after = _(" after {count} retries").format(count=retries) if retries else ""
        endpoint = self.endpoint
        if isinstance(error, openai.APIStatusError):
            return self._status_error(error, after)
        if isinstance(error, openai.APITimeoutError):
            return ConnectionFailed(
                _(
                    "The endpoint {endpoint} did not answer in time{after}: check the network "
                    "and retry."
                ).format(endpoint=endpoint, after=after)
            )
        if isinstance(error, (openai.APIConnectionError, *transport_errors())):
            if mid_reply:
                return ConnectionFailed(
                    _("The connection to the endpoint {endpoint} dropped mid-reply: retry.").format(
                        endpoint=endpoint
                    )
                )
            return ConnectionFailed(
                _(
                    "Could not reach the endpoint {endpoint} at {url}: check that it is running "
                    "and its base_url, then retry."
                ).format(endpoint=endpoint, url=self._url())
            )
        if isinstance(error, openai.APIError):  # an ``error`` object inside the stream
            return StreamError(
                _("The endpoint {endpoint} failed mid-reply{detail}: retry.").format(
                    endpoint=endpoint, detail=_detail(error)
                )
            )
        if isinstance(error, json.JSONDecodeError):
            return StreamError(
                _("The endpoint {endpoint} sent a chunk that is not JSON: retry.").format(
                    endpoint=endpoint
                )
            )
        return None

    def _status_error(self, error: Any, after: str) -> ProviderError:
        status, detail, endpoint = error.status_code, _detail(error), self.endpoint
        if status in (401, 403):
            return AuthenticationFailed(
                _(
                    "The endpoint {endpoint} refused the key ({status}){detail}: check {variable}."
                ).format(
                    endpoint=endpoint,
                    status=status,
                    detail=detail,
                    variable=self.key_env or "its key",
                )
            )
        if status == 429:
            wait = error.response.headers.get("retry-after")
            if wait:
                when = _("retry in {seconds} s").format(seconds=wait)
            else:
                when = _("retry in a minute")
            return RateLimited(
                _("Rate limited by the endpoint {endpoint} (429){after}: {when}.").format(
                    endpoint=endpoint, after=after, when=when
                )
            )
        if status == 503:
            return Overloaded(
                _("The endpoint {endpoint} is overloaded (503){after}: retry in a minute.").format(
                    endpoint=endpoint, after=after
                )
            )
        if status >= 500:
            return ServerError(
                _("The endpoint {endpoint} failed ({status}){after}{detail}: retry later.").format(
                    endpoint=endpoint, status=status, after=after, detail=detail
                )
            )
        if status == 404:
            return BadRequest(
                _(
                    "The endpoint {endpoint} has no such model or route (404){detail}: check the "
                    "model name, and that base_url {url} is the one its docs give (most end in "
                    "/v1)."
                ).format(endpoint=endpoint, detail=detail, url=self._url())
            )
        return BadRequest(
            _(
                "The endpoint {endpoint} refused the request ({status}){detail}: fix it and retry."
            ).format(endpoint=endpoint, status=status, detail=detail)
        )

    def _url(self) -> str:
        return str(getattr(self.client, "base_url", ""))

    def _redacted(self, error: ProviderError) -> ProviderError:
        """The error with the key blanked out, should a server ever echo it back."""
        key = getattr(self.client, "api_key", None)
        if not key or key == NO_KEY or key not in str(error):
            return error
        return type(error)(str(error).replace(key, "[redacted]"))


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
