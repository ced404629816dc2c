"""One provider for every endpoint: each request goes to its model's endpoint.

``Session`` keeps one provider; a fan-out over ``claude-sonnet-4-6``,
``deepseek:deepseek-chat`` and ``local:smollm2`` must still ask three servers, each as
it wants to be asked. ``Router`` is that one provider. A bare model name goes to the
``default`` provider (Anthropic's API, or the offline teaching model when no
``ANTHROPIC_API_KEY`` is set, as ever); ``endpoint:model`` goes to a provider made for
that endpoint on its wire (``endpoint.api``: ``"anthropic-messages"`` is
``anthropic/provider.py``; each wire is a module with an ``endpoint_provider`` function, imported
only when an endpoint needs it, so a second wire is one entry in ``WIRE_MODULES``).

What the router adds to what a provider does:

- **Keys at request time.** An endpoint's key is read from the environment for each
  request; the provider made with it is kept only while the key stays the same. A
  server on your own machine without a key set is sent a placeholder (it takes any),
  never ``ANTHROPIC_API_KEY``.
- **What it lacks, before anything is sent.** ``check`` refuses (``EndpointRefuses``,
  one line with the fix) a request its endpoint cannot take: an image or PDF to a
  server that reads none, a temperature outside its range, thinking it lacks, a hosted
  endpoint whose key is not set. The session asks this before it stores the question.
- **What it turns out to lack.** A 404 or 400 for a feature the preset claims (a
  llama-server without count_tokens, a proxy refusing ``cache_control``) becomes one
  line naming the endpoint and the feature, said once (``Degraded`` in the stream, or
  ``FeatureMissing``); the feature is treated as missing from then on (``EndpointPool``,
  shared by a kernel's routers), and the session keeps working: a refused
  ``cache_control`` is asked again without it, a missing count_tokens makes the meter
  estimate.
- **Which answers share a cache.** ``cache_group`` tells the fan-out which answers to
  stagger (those of one caching endpoint) and which to start at once.
- **Asking again.** A 429, an overload or a 5xx before any text arrived is asked again
  after the server's ``retry-after`` (``retry.retried``, its ``RetryRule``), a
  ``Retrying`` event (one line in the cell) before each new attempt; the SDKs' own
  silent retries of a streamed reply are off for every provider a router sends to,
  its default included, so a note is never a second wait on top of theirs.
- **How many at once.** ``limit`` is how many requests a model's endpoint takes at once
  (``Endpoint.concurrency``, a llama-server's slots), by ``slot_group``: a fan-out
  keeps to it per endpoint.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...errors import BadRequest, EndpointRefuses, FeatureMissing
from ...i18n import _
from ..base import (
    Degraded,
    Provider,
    ReplyEvent,
    ReplyRequest,
    Route,
    Service,
    TokenCounter,
    cache_group,
    can_count,
)
from ..batches import BatchItem, BatchLimits, BatchResult, BatchState, BatchWire, batch_wire
from ..retry import RetryRule, retried
from .capabilities import Supports, media_blocks, refusal
from .config import ANTHROPIC, ANTHROPIC_MESSAGES, OPENAI_CHAT, PRESETS, Endpoint, split_model

WIRE_MODULES: dict[str, str] = {
    ANTHROPIC_MESSAGES: "anthropic.provider",
    OPENAI_CHAT: "openai.provider",
}
"""Each wire (``Endpoint.api``) and the module of ``providers`` that speaks it; the module
has ``endpoint_provider(base_url, key, supports, service, **options) -> Provider``
(``options``: ``Endpoint.wire_options()``) and may have ``missing_package(endpoint)``,
the one line saying how to install what it needs (None: installed), asked before
anything is written."""

OFFLINE = "offline"
"""The offline teaching model's name (``OfflineProvider.name``): with no key it answers
every bare model name, and its replies are named and priced as itself."""

NO_KEY = "no-key-needed"
"""What a server on your own machine is sent when no key is set: it takes any."""

ANTHROPIC_API_SUPPORTS = Supports()
ASKED_AGAIN = ("cache_control",)
"""Features a request can do without: refused, the request is sent again without them."""
_REFUSED = (400, 404, 405, 422, 501)
_N = re.compile(r"(?<![\w-])['`\"]?n['`\"]?(?![\w-])")
"""``n`` as a word of an error message (not the n of "n-grams")."""
_NO_ROUTE = (404, 405, 501)
"""What a server without count_tokens answers there."""


def service_for(endpoint: Endpoint) -> Service:
    """``local at http://127.0.0.1:8080``, with the fixes its error lines give."""
    where = endpoint.where()
    if endpoint.key_env:
        key_fix = _("check {variables}").format(variables=" or ".join(endpoint.key_env))
    else:
        key_fix = _("give the server the key it expects in TreeChat.endpoints key_env")
    down = None
    if not endpoint.key_required and endpoint.start:
        down = _("{where} is not answering: start it with `{command}`").format(
            where=where, command=endpoint.start
        )
    reach_fix = _("check the network and its base_url, then retry")
    return Service(where, key_fix, reach_fix, down)


class EndpointPool:
    """The providers made for endpoints, and what each endpoint turned out to lack.

    One per kernel, shared by its routers: a feature found missing stays missing for
    every session, and a client (with its connections) is made once per endpoint and key.
    """

    def __init__(self) -> None:
        self._providers: dict[tuple[Any, ...], Provider] = {}
        self._missing: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def supports(self, endpoint: Endpoint) -> Supports:
        """What ``endpoint`` supports, less what it turned out to lack."""
        supports = endpoint.supports
        for feature in sorted(self._missing.get(endpoint.name, ())):
            supports = supports.without(feature)
        return supports

    def learn(self, endpoint: Endpoint, feature: str) -> bool:
        """Treat ``feature`` as missing at ``endpoint`` from now on; False if it was."""
        with self._lock:
            missing = self._missing.setdefault(endpoint.name, set())
            if feature in missing:
                return False
            missing.add(feature)
            return True

    def provider(self, endpoint: Endpoint) -> Provider:
        """The provider for ``endpoint`` with its key as the environment holds it now."""
        key = endpoint.key()
        if key is None:
            if endpoint.key_required:
                raise EndpointRefuses(missing_key(endpoint))
            key = NO_KEY
        supports = self.supports(endpoint)
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]  # to see a change, not the key
        identity = (endpoint.name, endpoint.base_url, endpoint.api, digest, supports)
        with self._lock:
            found = self._providers.get(identity)
            if found is None:
                found = _make(endpoint, key, supports)
                for old in [i for i in self._providers if i[0] == endpoint.name]:
                    del self._providers[old]  # a changed key or capability replaces it
                self._providers[identity] = found
            return found


def _make(endpoint: Endpoint, key: str, supports: Supports) -> Provider:
    module = wire_module(endpoint)
    provider: Provider = module.endpoint_provider(
        endpoint.base_url, key, supports, service_for(endpoint), **endpoint.wire_options()
    )
    return _without_sdk_retries(provider)


def _without_sdk_retries(provider: Provider) -> Provider:
    """``provider``, told that its caller asks again itself (retry.py)."""
    if hasattr(provider, "sdk_retries"):
        provider.sdk_retries = False
    return provider


def wire_module(endpoint: Endpoint) -> Any:
    """The module that speaks ``endpoint``'s wire, or ``EndpointRefuses`` (one line)."""
    module_name = WIRE_MODULES.get(endpoint.api)
    module = None
    if module_name is not None:
        try:
            module = importlib.import_module(f"..{module_name}", __package__)
        except ImportError:
            module = None
    if module is None or not hasattr(module, "endpoint_provider"):
        raise EndpointRefuses(
            _(
                "{endpoint} speaks {api}, which this installation cannot send: "
                "use an endpoint with api {default}, or install the wire for {api}"
            ).format(endpoint=endpoint.name, api=endpoint.api, default=ANTHROPIC_MESSAGES)
        )
    return module


def unusable(endpoint: Endpoint) -> str | None:
    """Why no request can go to ``endpoint`` whatever it holds (no base URL, its wire's
    package missing), with the fix; None if one can."""
    if not endpoint.base_url:
        example = (
            "{'azure': {'base_url': 'https://RESOURCE.openai.azure.com', "
            "'deployment': 'DEPLOYMENT'}}"
            if endpoint.api_version is not None
            else f"{{'{endpoint.name}': {{'base_url': 'http://HOST:PORT/v1'}}}}"
        )
        return _(
            "{endpoint} has no base_url yet: give it with %config TreeChat.endpoints = {example}"
        ).format(endpoint=endpoint.name, example=example)
    missing = getattr(wire_module(endpoint), "missing_package", None)
    return missing(endpoint.name) if callable(missing) else None


def missing_key(endpoint: Endpoint) -> str:
    variables = " or ".join(endpoint.key_env)
    return _(
        "{endpoint} needs its key: set {variables} in the environment Jupyter starts in "
        "(it is read when a request is sent, never stored)"
    ).format(endpoint=endpoint.name, variables=variables)


class Router:
    """A ``Provider`` that sends each request to its model's endpoint (see the module
    docstring). ``endpoints`` may be replaced at any time (``%config TreeChat.endpoints``)."""

    def __init__(
        self,
        default: Provider,
        endpoints: Mapping[str, Endpoint] | None = None,
        *,
        pool: EndpointPool | None = None,
    ) -> None:
        self.default = _without_sdk_retries(default)
        self.endpoints: Mapping[str, Endpoint] = PRESETS if endpoints is None else endpoints
        self.pool = pool or EndpointPool()
        self.retry_rule = RetryRule()
        """When a refused request is asked again, and how often (retry.py)."""

    def __repr__(self) -> str:  # never a key
        return f"Router(default={self.default!r}, endpoints={sorted(self.endpoints)})"

    @property
    def name(self) -> str:
        return self.default.name

    @property
    def default_model(self) -> str:
        return self.default.default_model

    def prepare(self) -> None:
        prepare = getattr(self.default, "prepare", None)
        if callable(prepare):
            prepare()

    # -- where a model goes -------------------------------------------------------------

    def split(self, model: str | None) -> tuple[Endpoint | None, str]:
        return split_model(model or self.default_model, self.endpoints)

    def route(self, model: str | None) -> Route:
        endpoint, bare = self.split(model)
        if endpoint is None:
            if self.default.name == OFFLINE:  # the offline model answers any bare name
                answers = self.default.default_model
                asked = bare if bare != answers else None
                return Route(self.default.name, None, bare, answers, asked)
            return Route(self.default.name, ANTHROPIC, bare, bare)
        return Route(_wire_name(endpoint), endpoint.name, bare, endpoint.qualified(bare))

    def supports(self, model: str | None) -> Supports:
        """What the endpoint of ``model`` supports now (Anthropic's API: everything)."""
        endpoint, _bare = self.split(model)
        return ANTHROPIC_API_SUPPORTS if endpoint is None else self.pool.supports(endpoint)

    def cache_group(self, model: str | None) -> str | None:
        endpoint, bare = self.split(model)
        if endpoint is None:
            return cache_group(self.default, bare)
        return endpoint.name if self.pool.supports(endpoint).cache_control else None

    def counts_tokens(self, model: str | None) -> bool:
        endpoint, bare = self.split(model)
        if endpoint is None:
            return can_count(self.default, bare)
        return self.pool.supports(endpoint).count_tokens

    def slot_group(self, model: str | None) -> str:
        """The endpoint whose requests ``model``'s share a limit with (its name)."""
        endpoint, _bare = self.split(model)
        return ANTHROPIC if endpoint is None else endpoint.name

    def limit(self, model: str | None) -> tuple[str, int] | None:
        """``(where, how many requests at once)`` for ``model``'s endpoint, where it has a
        limit of its own (``Endpoint.concurrency``); None: it has none."""
        endpoint, _bare = self.split(model)
        if endpoint is None or endpoint.concurrency is None:
            return None
        return endpoint.where(), endpoint.concurrency

    def takes_n(self, model: str | None) -> bool:
        """Whether ``model``'s endpoint answers several choices in one request (``n``)."""
        endpoint, _bare = self.split(model)
        return endpoint is not None and self.pool.supports(endpoint).n

    # -- before anything is sent ------------------------------------------------------

    def check(self, request: ReplyRequest) -> None:
        """Raise ``EndpointRefuses`` if the request's endpoint cannot take it."""
        endpoint, bare = self.split(request.model)
        if endpoint is None:
            problem = refusal(request, ANTHROPIC_API_SUPPORTS, _("Anthropic's API"))
        else:
            problem = unusable(endpoint)
            if problem:
                raise EndpointRefuses(problem)
            if endpoint.key_required and endpoint.key() is None:
                raise EndpointRefuses(missing_key(endpoint))
            asked = replace(request, model=bare)  # its rules name the endpoint's own models
            problem = refusal(asked, self.pool.supports(endpoint), endpoint.name)
        if problem:
            raise EndpointRefuses(problem)

    def takes_temperature(self, model: str | None, value: float) -> bool:
        """Whether ``model``'s endpoint takes ``value`` as ``model``'s temperature."""
        endpoint, bare = self.split(model)
        return self.supports(model).takes_temperature(value, bare if endpoint else None)

    # -- the provider's calls -----------------------------------------------------------

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]:
        """The reply to ``request`` from its endpoint, asked again as retry.py says (the
        retrying iterator itself, not a generator around it: one layer less per token)."""
        endpoint, bare = self.split(request.model)
        sent = replace(request, model=bare)
        return retried(
            lambda: self._stream_once(endpoint, sent), self._who(endpoint), self.retry_rule
        )

    def _who(self, endpoint: Endpoint | None) -> str:
        """Who a retry's line names: ``local at http://...``, or the default's service."""
        if endpoint is not None:
            return endpoint.where()
        service = getattr(self.default, "service", None)
        return service.label if isinstance(service, Service) else self.default.name

    def _stream_once(self, endpoint: Endpoint | None, sent: ReplyRequest) -> Iterator[ReplyEvent]:
        if endpoint is None:
            yield from self.default.stream(sent)
            return
        for attempt in range(len(ASKED_AGAIN) + 1):
            provider = self.pool.provider(endpoint)
            supports = self.pool.supports(endpoint)
            events = provider.stream(sent)
            began = False
            try:
                for event in events:  # the first: from here on, nothing is asked again
                    began = True
                    yield event
                    break
                yield from events  # the rest, delegated: no loop of ours per token
                return
            except BadRequest as error:
                feature = None if began else refused_feature(error, sent, supports)
                if feature is None or attempt == len(ASKED_AGAIN):
                    raise
                line = self._lacks(endpoint, feature, error)
                if feature not in ASKED_AGAIN:
                    raise FeatureMissing(line) from error
                yield Degraded(line)
            finally:
                close = getattr(events, "close", None)
                if close is not None:
                    close()

    def stream_choices(self, request: ReplyRequest, n: int) -> Iterator[tuple[int, ReplyEvent]]:
        """``n`` answers to ``request`` in one request, as ``(choice, event)`` pairs, where
        ``takes_n`` says the endpoint can. A server that refuses ``n`` (llama.cpp builds
        that answer "Only one completion choice is allowed") raises ``FeatureMissing``
        before any event, in the one line that says so, and ``n`` is missing from then on:
        the caller asks once per answer instead."""
        endpoint, bare = self.split(request.model)
        if endpoint is None:
            raise FeatureMissing(_("{model} takes no n").format(model=request.model))
        yield from retried(
            lambda: self._choices_once(endpoint, replace(request, model=bare), n),
            self._who(endpoint),
            self.retry_rule,
            event_of=lambda pair: pair[1],
            wrap=lambda note: (0, note),
        )

    def _choices_once(
        self, endpoint: Endpoint, sent: ReplyRequest, n: int
    ) -> Iterator[tuple[int, ReplyEvent]]:
        provider = self.pool.provider(endpoint)
        stream_choices = getattr(provider, "stream_choices", None)
        if not callable(stream_choices):
            named = endpoint.qualified(sent.model)
            raise FeatureMissing(_("{model} takes no n").format(model=named))
        began = False
        try:
            for pair in stream_choices(sent, n):
                began = True
                yield pair
        except BadRequest as error:
            if began or error.status not in _REFUSED or not refuses_n(error.detail):
                raise
            raise FeatureMissing(self._lacks(endpoint, "n", error)) from error

    def count_tokens(self, request: ReplyRequest) -> int:
        endpoint, bare = self.split(request.model)
        sent = replace(request, model=bare)
        if endpoint is None:
            if not isinstance(self.default, TokenCounter):
                raise FeatureMissing(
                    _("the {name} provider cannot count tokens").format(name=self.default.name)
                )
            return self.default.count_tokens(sent)
        provider = self.pool.provider(endpoint)
        if not isinstance(provider, TokenCounter):
            raise FeatureMissing(self._lacks(endpoint, "count_tokens", None))
        try:
            return provider.count_tokens(sent)
        except BadRequest as error:
            if error.status not in _NO_ROUTE:
                raise
            raise FeatureMissing(self._lacks(endpoint, "count_tokens", error)) from error

    def batch_wire(self, model: str | None) -> BatchWire:
        """The batch API that answers ``model`` (its endpoint's, with the endpoint's key
        and what it turned out to lack), or ``EndpointRefuses`` naming the endpoint where
        there is none: checked before anything is written or sent."""
        endpoint, bare = self.split(model)
        if endpoint is None:
            return batch_wire(self.default, bare)
        if not endpoint.batch:
            raise no_batch_api(endpoint)
        problem = unusable(endpoint)
        if problem:
            raise EndpointRefuses(problem)
        provider = self.pool.provider(endpoint)  # its key now, its client made once
        made = getattr(provider, "batch_wire", None)
        if callable(made):
            wire: BatchWire = made(bare)
        else:  # the wire module makes it: endpoint_batches(base_url, key, ...)
            make = getattr(wire_module(endpoint), "endpoint_batches", None)
            if not callable(make):
                raise no_batch_api(endpoint)
            wire = make(
                endpoint.base_url,
                endpoint.key() or NO_KEY,
                self.pool.supports(endpoint),
                service_for(endpoint),
                **endpoint.wire_options(),
            )
        return EndpointBatches(wire, endpoint)

    def _lacks(self, endpoint: Endpoint, feature: str, error: BadRequest | None) -> str:
        """Learn that ``endpoint`` lacks ``feature``; the one line that says so."""
        self.pool.learn(endpoint, feature)
        status = error.status if error is not None and error.status else None
        how = _("it answered {status}").format(status=status) if status else _("it has none")
        then = {
            "count_tokens": _("the context meter estimates (≈) from now on"),
            "cache_control": _("asked again without cache breakpoints, and from now on"),
            "n": _("each answer is asked in a request of its own, now and from now on"),
        }.get(feature, _("it is left out from now on; ask again without it"))
        return _("{endpoint} lacks {feature} ({how}), which its preset claims: {then}").format(
            endpoint=endpoint.where(), feature=feature, how=how, then=then
        )


def refused_feature(error: BadRequest, request: ReplyRequest, supports: Supports) -> str | None:
    """The feature an endpoint's 400/404 names, if the request used it and the endpoint
    was thought to have it; None for any other refusal."""
    if error.status not in _REFUSED:
        return None
    said = error.detail.lower()
    used = {
        "cache_control": supports.cache_control,
        "thinking": request.thinking is not None and supports.thinking,
        "images": supports.images and any(media_blocks(request.messages, "image")),
        "documents": supports.documents and any(media_blocks(request.messages, "document")),
        "tools": supports.tools and bool(request.tools),
    }
    words = {
        "cache_control": ("cache_control",),
        "thinking": ("thinking",),
        "images": ("image",),
        "documents": ("document", "pdf"),
        "tools": ("tool",),
    }
    for feature, in_use in used.items():
        if in_use and any(word in said for word in words[feature]):
            return feature
    return None


def refuses_n(detail: str) -> bool:
    """Whether a server's 400 is about ``n`` ("Only one completion choice is allowed",
    "Unrecognized request argument supplied: n", "n must be 1")."""
    return "choice" in detail.lower() or _N.search(detail) is not None


def _wire_name(endpoint: Endpoint) -> str:
    """``meta.provider`` of an endpoint's answers: the wire's provider name."""
    return ANTHROPIC if endpoint.api == ANTHROPIC_MESSAGES else endpoint.api


def no_batch_api(endpoint: Endpoint) -> EndpointRefuses:
    """The one line that refuses ``--batch`` at ``endpoint`` (as ``batches.batch_wire``
    says it for a provider without one)."""
    return EndpointRefuses(
        _("{endpoint} has no batch API: run the cell without --batch").format(
            endpoint=endpoint.name
        )
    )


class EndpointBatches:
    """An endpoint's batch API as the session sees it: named and priced as the endpoint,
    each request's model sent by its name there (``deepseek:x`` goes as ``x``)."""

    def __init__(self, wire: BatchWire, endpoint: Endpoint) -> None:
        self.wire = wire
        self.endpoint = endpoint
        self.price = endpoint.batch_price

    @property
    def name(self) -> str:
        return self.endpoint.name

    @property
    def limits(self) -> BatchLimits:
        return self.wire.limits

    def submit(self, items: Sequence[BatchItem]) -> BatchState:
        bare = [
            BatchItem(
                i.custom_id,
                replace(
                    i.request,
                    model=split_model(i.request.model, {self.endpoint.name: self.endpoint})[1],
                ),
            )
            for i in items
        ]
        return self.wire.submit(bare)

    def state(self, batch_id: str) -> BatchState:
        return self.wire.state(batch_id)

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        return self.wire.results(batch_id)

    def cancel(self, batch_id: str) -> BatchState:
        return self.wire.cancel(batch_id)
