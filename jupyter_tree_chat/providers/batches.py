"""A vendor's batch API as a session uses it: many requests sent as one, answered later.

Anthropic's Message Batches and OpenAI's Batch API do the same thing in two shapes: take
up to a limit of requests (each under a ``custom_id`` the caller picks), run them within
24 hours at half the price, and hand back one result per request, in any order, matched
by ``custom_id``. A ``BatchWire`` is that, once, for the session: ``submit`` the items,
ask for their ``state``, read the ``results`` of an ended batch (streamed: a 10,000-item
batch is never held whole), ``cancel``. Each wire module (``anthropic/``, ``openai/``)
makes one for an endpoint with ``endpoint_batches``; ``batch_wire`` asks any provider for
one and refuses, in one line naming the endpoint, where there is none (a local server,
the offline model).

Nothing here stores a node or knows the tree: the session writes the questions, maps
each ``custom_id`` to its node and applies the results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import EndpointRefuses
from ..i18n import _
from .base import Finished, ReplyRequest

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What both APIs accept as a ``custom_id`` (unique within its batch)."""

ENDED = "ended"
"""The one ``BatchState.status`` whose results can be read (Anthropic's word; OpenAI's
``completed``, ``failed``, ``expired`` and ``cancelled`` are read as it)."""

OUTCOMES = ("succeeded", "errored", "canceled", "expired")


@dataclass(frozen=True)
class BatchLimits:
    """How much one batch may hold: requests, and bytes of the whole request body
    (Anthropic: 100,000 and 256 MB; OpenAI: 50,000 and 200 MB). More is split."""

    requests: int
    bytes: int


@dataclass(frozen=True)
class BatchItem:
    """One request of a batch under the ``custom_id`` that finds its question again."""

    custom_id: str
    request: ReplyRequest


@dataclass(frozen=True)
class BatchCounts:
    """How many of a batch's requests are where."""

    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0

    @property
    def total(self) -> int:
        return self.processing + self.succeeded + self.errored + self.canceled + self.expired

    @property
    def done(self) -> int:
        return self.total - self.processing


@dataclass(frozen=True)
class BatchState:
    """A batch as its API last described it: ``status`` is ``in_progress``,
    ``canceling`` or ``ended``."""

    id: str
    status: str
    counts: BatchCounts
    expires_at: str | None = None

    @property
    def ended(self) -> bool:
        return self.status == ENDED


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome: ``succeeded`` with the reply as a stream would have
    finished it, or ``errored``/``canceled``/``expired`` with one line saying why."""

    custom_id: str
    outcome: str
    finished: Finished | None = None
    error: str | None = None


@runtime_checkable
class BatchWire(Protocol):
    """One endpoint's batch API (see the module docstring). ``name`` is the endpoint's
    (``anthropic``, ``openai``): it is stored with each batch, so a new kernel knows
    where to ask again."""

    @property
    def name(self) -> str: ...

    @property
    def limits(self) -> BatchLimits: ...

    def submit(self, items: Sequence[BatchItem]) -> BatchState: ...

    def state(self, batch_id: str) -> BatchState: ...

    def results(self, batch_id: str) -> Iterator[BatchResult]: ...

    def cancel(self, batch_id: str) -> BatchState: ...


def batch_wire(provider: object, model: str | None) -> BatchWire:
    """The batch API that answers ``model`` through ``provider``, or ``EndpointRefuses``
    naming the endpoint when it has none (checked before anything is written or sent)."""
    make = getattr(provider, "batch_wire", None)
    if callable(make):
        wire: BatchWire = make(model)
        return wire
    name = getattr(provider, "name", type(provider).__name__)
    raise EndpointRefuses(
        _("{endpoint} has no batch API: run the cell without --batch").format(endpoint=name)
    )
