"""Anthropic's Message Batches as a ``BatchWire`` (providers/batches.py), through the SDK.

``client.messages.batches``: ``create(requests=[{custom_id, params}])``, ``retrieve``,
``results`` (the JSONL at the batch's ``results_url``, read a line at a time: a batch of
100,000 is never held whole) and ``cancel``. Each request's ``params`` are what
``build_kwargs`` makes for a streamed request, less streaming: the same path, tools,
thinking and cache breakpoints (caching in a batch is best effort). A temperature goes
in the params, and the batch is sent as the API version that still takes one
(``SAMPLING_API_VERSION``), as a single request with a temperature is.

The create goes through the same client's ``post`` to the same route with the body
serialized once (orjson): ``batches.create`` first deep-copies its whole argument, which
took about 2 s of a 10,000-request batch's 5 s budget here (benchmarks/bench_batch.py);
the client's headers, key, retries and error types are the same.

A result is the non-streamed ``Message``: its content blocks are stored as a streamed
reply's are (text, tool_use, thinking with its signature), its usage with the four
counts, ``errored``/``canceled``/``expired`` as one line each. SDK failures are the
provider's errors (its ``provider_error``, handed in), so a 401 or an unreachable host
reads as it does for a single request. provider.py makes these (``batch_wire``,
``endpoint_batches``) with its own request builder and error mapping.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson
from anthropic.types.messages import MessageBatch

from ...errors import ProviderError
from ...i18n import _
from ..base import Finished, ReplyRequest
from ..batches import BatchCounts, BatchItem, BatchLimits, BatchResult, BatchState

LIMITS = BatchLimits(requests=100_000, bytes=256 * 1024 * 1024)
"""Anthropic's: 100,000 requests or 256 MB a batch, whichever comes first."""
USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
PRICE = 0.5
"""A batch answer costs half the standard price (Anthropic's pricing page)."""


def batch_params(kwargs: dict[str, Any]) -> dict[str, Any]:
    """One request's ``params`` from what ``build_kwargs`` made for a stream, without the
    stream's extras (a temperature moves into the body; the version header goes on the
    batch)."""
    kwargs = dict(kwargs)
    extra = kwargs.pop("extra_body", None) or {}
    kwargs.pop("extra_headers", None)
    return {**kwargs, **extra}


class AnthropicBatches:
    """Message Batches for one endpoint's client (see the module docstring)."""

    limits = LIMITS
    price: float | None = PRICE

    def __init__(
        self,
        client: Any,
        *,
        build: Callable[[ReplyRequest], dict[str, Any]],
        mapped: Callable[[Exception], ProviderError | None],
        sampling_version: str,
        name: str = "anthropic",
    ) -> None:
        self.client = client
        self._build = build
        """``build_kwargs`` for this endpoint (provider.py: the request a stream sends)."""
        self._mapped = mapped
        """An SDK error as the provider's (one line, the key blanked), or None."""
        self._sampling = sampling_version
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:  # never the key
        return f"AnthropicBatches({self._name!r})"

    def submit(self, items: Sequence[BatchItem]) -> BatchState:
        requests = [
            {"custom_id": i.custom_id, "params": batch_params(self._build(i.request))}
            for i in items
        ]
        headers = {"content-type": "application/json"}
        if any(i.request.temperature is not None for i in items):
            headers["anthropic-version"] = self._sampling
        with self._errors():  # the body serialized once (the module docstring says why)
            batch = self.client.post(
                "/v1/messages/batches",
                content=orjson.dumps({"requests": requests}),
                cast_to=MessageBatch,
                options={"headers": headers},
            )
        return batch_state(batch)

    def state(self, batch_id: str) -> BatchState:
        with self._errors():
            return batch_state(self.client.messages.batches.retrieve(batch_id))

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        with self._errors():
            lines = self.client.messages.batches.results(batch_id)
        try:
            with self._errors():
                for line in lines:
                    yield batch_result(line)
        finally:
            close = getattr(getattr(lines, "_response", None), "close", None)
            if callable(close):
                close()

    def cancel(self, batch_id: str) -> BatchState:
        with self._errors():
            return batch_state(self.client.messages.batches.cancel(batch_id))

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """SDK errors as the provider's (one line, the key blanked)."""
        try:
            yield
        except ProviderError:
            raise
        except Exception as error:
            mapped = self._mapped(error)
            if mapped is None:
                raise
            raise mapped from error


def batch_state(batch: Any) -> BatchState:
    counts = batch.request_counts
    expires = getattr(batch, "expires_at", None)
    return BatchState(
        batch.id,
        batch.processing_status,
        BatchCounts(
            processing=counts.processing,
            succeeded=counts.succeeded,
            errored=counts.errored,
            canceled=counts.canceled,
            expired=counts.expired,
        ),
        expires.isoformat() if expires is not None else None,
    )


def batch_result(line: Any) -> BatchResult:
    """One line of the results file as the session stores it."""
    result = line.result
    kind = result.type
    if kind == "succeeded":
        message = result.message
        content = [_block(block) for block in message.content]
        usage = {
            key: value for key in USAGE if (value := getattr(message.usage, key, None)) is not None
        }
        finished = Finished(
            message={"role": "assistant", "content": content},
            model=message.model,
            stop_reason=message.stop_reason,
            usage=usage,
        )
        return BatchResult(line.custom_id, "succeeded", finished)
    if kind == "errored":
        error = result.error.error
        why = _("{kind}: {message}").format(
            kind=getattr(error, "type", "error"), message=getattr(error, "message", "")
        )
        return BatchResult(line.custom_id, "errored", error=why)
    if kind == "canceled":
        return BatchResult(line.custom_id, "canceled", error=_("canceled before it was asked"))
    return BatchResult(
        line.custom_id, "expired", error=_("expired: not answered within the batch's 24 hours")
    )


def _block(block: Any) -> dict[str, Any]:
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return dict(block.model_dump(exclude_none=True))
