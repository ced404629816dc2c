"""Message Batches on the fake Messages API (``FakeAnthropic.batches``), as the real API runs them.

Routes: ``POST /v1/messages/batches`` (create), ``GET /v1/messages/batches`` (list),
``GET /v1/messages/batches/{id}`` (retrieve), ``GET /v1/messages/batches/{id}/results``
(the JSONL the batch's ``results_url`` names, on this server's own host and port) and
``POST /v1/messages/batches/{id}/cancel``. The rules it keeps, each with a test in
test_fake_batches.py:

- a create holds 1 to 100,000 requests and at most 256 MB (413 above); each
  ``custom_id`` is 1–64 characters of ``[a-zA-Z0-9_-]`` and unique in its batch, each
  ``params`` a Messages request without ``stream`` (a 400 for the whole batch otherwise);
- ``params`` the Messages API would refuse (fake_rules.py) make that request
  ``errored`` (``invalid_request_error``) when the batch runs, not the create;
- ``processing_status`` is ``in_progress`` until the batch ends, ``canceling`` after a
  cancel, then ``ended``; ``request_counts`` has every request ``processing`` until the
  whole batch ends (as the API counts), then each in its outcome;
- ``results_url`` is null until it ended, and the results come in no fixed order
  (shuffled, seeded per batch): a client must match them by ``custom_id``;
- each request is answered as ``/v1/messages`` would answer it (the same script:
  ``enqueue`` and ``enqueue_error`` reach batch requests too, an error as ``errored``);
- a cancel ends it with every request not yet answered ``canceled``; ``expire`` ends
  it with them ``expired`` (the API's 24 hours, on the test's word).

How a test drives it:

    fake.batches.hold = True              # batches stay in_progress until ...
    fake.batches.finish(batch_id)         # ... this (or ``finish()`` for every one)
    fake.batches.seconds = 2.0            # or: each ends by itself 2 s after its create
    fake.batches.fail(lambda p: "Oslo" in str(p["messages"]))  # errored (api_error)
    fake.batches.expire(batch_id)         # ends with what was not answered expired
    fake.batches.created                  # each create's requests, as sent
    fake.batches.max_requests = 3         # the API's limits, lowered (a split, without 256 MB)
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fakes.fake_request_rules import BETA_FIELDS, MESSAGE_FIELDS
from fakes.fake_rules import RULES, validate

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024
OUTCOMES = ("succeeded", "errored", "canceled", "expired")


@dataclass
class FakeBatch:
    id: str
    requests: list[dict[str, Any]]
    version: str
    beta: bool
    created: float
    created_at: datetime
    status: str = "in_progress"
    ended_at: datetime | None = None
    cancel_at: datetime | None = None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    """custom_id → its result object, once answered."""

    def counts(self) -> dict[str, int]:
        found = dict.fromkeys(("processing", *OUTCOMES), 0)
        if self.status != "ended":
            found["processing"] = len(self.requests)
            return found
        for result in self.results.values():
            found[result["type"]] += 1
        return found


class FakeBatches:
    """The batches of one ``FakeAnthropic`` (see the module docstring)."""

    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.hold = False
        """While True, a batch stays in progress until ``finish`` (or ``expire``)."""
        self.seconds = 0.0
        """Without ``hold``, a batch ends this many seconds after its create."""
        self.max_requests = MAX_REQUESTS
        self.max_bytes = MAX_BYTES
        """The API's limits (a test may lower them to see a split without 256 MB)."""
        self.batches: dict[str, FakeBatch] = {}
        self.created: list[list[dict[str, Any]]] = []
        self._failing: list[tuple[Callable[[dict[str, Any]], bool], str, str]] = []
        self._lock = threading.Lock()

    # -- what a test does ------------------------------------------------------------
    def fail(
        self,
        when: Callable[[dict[str, Any]], bool],
        kind: str = "api_error",
        message: str = "fake: this request failed",
    ) -> None:
        """Every request whose params ``when`` accepts ends ``errored`` with ``kind``."""
        self._failing.append((when, kind, message))

    def finish(self, batch_id: str | None = None) -> None:
        """End ``batch_id`` (every batch, if None) now: each request answered."""
        for batch in self._chosen(batch_id):
            self._end(batch)

    def expire(self, batch_id: str | None = None) -> None:
        """End ``batch_id`` as its 24 hours run out: unanswered requests ``expired``."""
        for batch in self._chosen(batch_id):
            self._end(batch, rest="expired")

    def reset(self) -> None:
        self.batches.clear()
        self.created.clear()
        self._failing.clear()
        self.hold, self.seconds = False, 0.0
        self.max_requests, self.max_bytes = MAX_REQUESTS, MAX_BYTES

    def _chosen(self, batch_id: str | None) -> list[FakeBatch]:
        return [b for b in self.batches.values() if batch_id is None or b.id == batch_id]

    # -- the API -----------------------------------------------------------------------
    def handle(
        self, handler: Any, method: str, route: str, raw: bytes, headers: dict[str, str]
    ) -> None:
        parts = route.rstrip("/").split("/")[4:]  # after /v1/messages/batches
        if method == "POST" and not parts:
            return self._create(handler, raw, headers)
        if method == "GET" and not parts:
            page = [self._object(b, handler) for b in reversed(self.batches.values())]
            return handler._send_json(
                200, {"data": page, "has_more": False, "first_id": None, "last_id": None}
            )
        batch = self.batches.get(parts[0]) if parts else None
        if batch is None:
            return handler._send_error(
                404, "not_found_error", f"no batch {parts[0] if parts else ''}"
            )
        self._tick(batch)
        if method == "GET" and len(parts) == 1:
            return handler._send_json(200, self._object(batch, handler))
        if method == "GET" and parts[1:] == ["results"]:
            if batch.status != "ended":
                return handler._send_error(400, "invalid_request_error", "batch has not ended")
            return self._send_results(handler, batch)
        if method == "POST" and parts[1:] == ["cancel"]:
            if batch.status == "in_progress":  # it ends at the next look, the rest canceled
                batch.status = "canceling"
                batch.cancel_at = datetime.now(UTC)
            return handler._send_json(200, self._object(batch, handler))
        return handler._send_error(404, "not_found_error", f"no route {route}")

    def _create(self, handler: Any, raw: bytes, headers: dict[str, str]) -> None:
        if len(raw) > self.max_bytes:
            return handler._send_error(413, "request_too_large", "Batch exceeds 256 MB.")
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return handler._send_error(400, "invalid_request_error", "body is not JSON")
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return handler._send_error(400, "invalid_request_error", "requests: at least 1 request")
        if len(requests) > self.max_requests:
            return handler._send_error(
                400, "invalid_request_error", f"requests: at most {self.max_requests} in a batch"
            )
        seen: set[str] = set()
        for position, request in enumerate(requests):
            cid = request.get("custom_id") if isinstance(request, dict) else None
            if not isinstance(cid, str) or not CUSTOM_ID.match(cid):
                return handler._send_error(
                    400,
                    "invalid_request_error",
                    f"requests.{position}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$",
                )
            if cid in seen:
                return handler._send_error(
                    400,
                    "invalid_request_error",
                    f"requests.{position}.custom_id: {cid} is not unique",
                )
            seen.add(cid)
            params = request.get("params")
            if not isinstance(params, dict):
                return handler._send_error(
                    400, "invalid_request_error", f"requests.{position}.params: required"
                )
            if "stream" in params:
                return handler._send_error(
                    400,
                    "invalid_request_error",
                    f"requests.{position}.params.stream: not allowed in a batch",
                )
        version = headers.get("anthropic-version")
        if not version:
            return handler._send_error(
                400, "invalid_request_error", "anthropic-version header is required"
            )
        now = datetime.now(UTC)
        batch = FakeBatch(
            f"msgbatch_fake{uuid.uuid4().hex[:20]}",
            requests,
            version,
            bool(headers.get("anthropic-beta")),
            time.monotonic(),
            now,
        )
        with self._lock:
            self.batches[batch.id] = batch
            self.created.append(requests)
        handler._send_json(200, self._object(batch, handler))

    def _tick(self, batch: FakeBatch) -> None:
        """A batch ends by itself ``seconds`` after its create, unless held; a canceled one
        at the first look after its cancel."""
        if batch.status == "canceling":
            self._end(batch, rest="canceled")
        elif batch.status == "in_progress" and not self.hold and self._due(batch):
            self._end(batch)

    def _due(self, batch: FakeBatch) -> bool:
        return time.monotonic() - batch.created >= self.seconds

    def _end(self, batch: FakeBatch, rest: str | None = None) -> None:
        with self._lock:
            if batch.ended_at is not None:
                return
            for request in batch.requests:
                cid = request["custom_id"]
                if cid in batch.results:
                    continue
                batch.results[cid] = (
                    self._answer(request["params"], batch) if rest is None else {"type": rest}
                )
            batch.status = "ended"
            batch.ended_at = datetime.now(UTC)

    def _answer(self, params: dict[str, Any], batch: FakeBatch) -> dict[str, Any]:
        """One request answered as ``/v1/messages`` would answer it."""
        for when, kind, message in self._failing:
            if when(params):
                return _errored(kind, message)
        mode = self.fake.endpoint
        fields = MESSAGE_FIELDS | (BETA_FIELDS if batch.beta else frozenset())
        problem = validate(params, mode.rules(RULES), batch.version, fields=fields)
        if problem:
            return _errored("invalid_request_error", problem)
        from fakes.fake_anthropic import ScriptedError, message_from_events

        item = self.fake._next(params)
        if isinstance(item, ScriptedError):
            return _errored(item.error_type, item.message)
        pending: list[str] = []
        message = message_from_events(self.fake.events_for(item, params, pending))
        self.fake.cache.publish(pending)
        return {"type": "succeeded", "message": message}

    def _object(self, batch: FakeBatch, handler: Any) -> dict[str, Any]:
        host, port = handler.server.server_address[:2]
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": batch.counts(),
            "created_at": _stamp(batch.created_at),
            "expires_at": _stamp(batch.created_at + timedelta(hours=24)),
            "ended_at": _stamp(batch.ended_at) if batch.ended_at else None,
            "cancel_initiated_at": _stamp(batch.cancel_at) if batch.cancel_at else None,
            "archived_at": None,
            "results_url": (
                f"http://{host}:{port}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }

    def _send_results(self, handler: Any, batch: FakeBatch) -> None:
        order = [r["custom_id"] for r in batch.requests]
        random.Random(batch.id).shuffle(order)  # any order: match by custom_id
        handler.send_response(200)
        handler.send_header("content-type", "application/binary")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        piece: list[bytes] = []
        for cid in order:
            line = {"custom_id": cid, "result": batch.results[cid]}
            piece.append(json.dumps(line, separators=(",", ":")).encode() + b"\n")
            if len(piece) == 500:
                handler._write_chunk(b"".join(piece))
                piece = []
        if piece:
            handler._write_chunk(b"".join(piece))
        handler._end_chunks()


def _errored(kind: str, message: str) -> dict[str, Any]:
    return {
        "type": "errored",
        "error": {"type": "error", "error": {"type": kind, "message": message}},
    }


def _stamp(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")
