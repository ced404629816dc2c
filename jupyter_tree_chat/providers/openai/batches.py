"""OpenAI's Batch API as a ``BatchWire``: a fan-out's requests in a file, answered later.

The Batch API takes a JSONL file of whole Chat Completions requests, one a line
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``), uploaded
with ``files.create(purpose="batch")``, and runs it within 24 hours at half the price:
``batches.create(input_file_id, endpoint, completion_window="24h")``. Each body is built
exactly as the streaming provider builds it (``wire.build_params``), without ``stream``.
The answers come back as two files read line by line, never whole (10,000 answers are
tens of megabytes): the output file (one ``chat.completion`` per line, in any order,
matched by ``custom_id``) and the error file (a request the API refused, with its
status and error, or one it never ran: ``batch_expired``, ``batch_cancelled``). A
success becomes the ``Finished`` a stream would have ended with: it is read by the same
``ChoiceReader`` (text, tool calls as tool_use blocks, the stop reason mapped as the
stream maps it, usage by ``wire.tree_usage``).

What the API says, as the contract (``providers/batches.py``) says it:

    status       validating, in_progress, finalizing  → in_progress
                 cancelling                            → canceling
                 completed, failed, expired, cancelled → ended
    counts       request_counts.completed → succeeded, .failed → errored; the rest is
                 processing while the batch runs, expired or canceled once it expired
                 or was cancelled (OpenAI counts a request it never ran in neither).
                 The number of requests is kept in the batch's ``metadata``, since
                 ``request_counts.total`` is 0 until validation ends
    a failed     validation refused the file (``errors.data``: a line, a code, a
    batch        message): every request is ``errored`` with that line

**One file, one model, limits.** A file holds 50,000 requests and 200 MB at most
(Azure: 100,000), and one model. ``submit`` splits what it is given into as many files
as that takes and makes one batch of each; the ``BatchState`` it returns names them
all, their ids joined by ``+``, and ``state``, ``results`` and ``cancel`` take that id
as one batch: a new kernel reading it from the session file asks all of them again.

**Azure** speaks the same API under its resource (``/openai/files``,
``/openai/batches``, with its ``api-version``): the endpoint and each line's ``url``
are ``/chat/completions``, each line's ``model`` is a deployment of type Global-Batch
(``deployment``, or the model named), a file holds up to 100,000 requests, and a batch
past 24 hours is not expired but keeps running until cancelled. Its ids of files not
made yet may come back as ``""``: read as none.

Nothing here imports the ``openai`` package: the client is made by ``provider.py``
(``endpoint_batches``), with its key handling and redirect rule, and SDK errors become
the project's by the provider's own mapping (``errors``), the key blanked out.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial
from itertools import pairwise
from typing import IO, Any, NoReturn, TypeVar

from ...errors import BadRequest, ProviderError
from ...i18n import _
from ..base import REDACTED, Finished, Service, without_key
from ..batches import CUSTOM_ID, ENDED, BatchCounts, BatchItem, BatchLimits, BatchResult, BatchState
from ..endpoints.capabilities import Supports
from .stream import ChoiceReader
from .wire import CHAT_SUPPORTS, build_params, field_of, tree_usage

OPENAI_LIMITS = BatchLimits(requests=50_000, bytes=200_000_000)
AZURE_LIMITS = BatchLimits(requests=100_000, bytes=200_000_000)
"""A file's limits (Azure's "Max requests per file" is 100,000; both take 200 MB)."""
OPENAI_URL = "/v1/chat/completions"
AZURE_URL = "/chat/completions"
COMPLETION_WINDOW = "24h"
PARTS = "+"
"""What joins the ids of a batch split across files (no batch id holds it)."""
REQUESTS = "requests"
"""The batch metadata key holding how many requests its file has."""
STATUSES = {
    "validating": "in_progress",
    "in_progress": "in_progress",
    "finalizing": "in_progress",
    "cancelling": "canceling",
    "completed": ENDED,
    "failed": ENDED,
    "expired": ENDED,
    "cancelled": ENDED,
}
NOT_RUN = {"batch_expired": "expired", "batch_cancelled": "canceled"}
"""The error codes of a request the API never ran, and the outcome each is."""
T = TypeVar("T")
ErrorMap = Callable[[BaseException], ProviderError | None]


class OpenAIBatches:
    """OpenAI's (or Azure's) Batch API for one endpoint (see the module docstring).

    ``client`` is an ``openai.OpenAI`` or ``openai.AzureOpenAI``; ``errors`` maps an SDK
    error to the project's (``OpenAIChatProvider.provider_error``); ``key`` is blanked out
    of every error and result line, should a server echo it; ``limits`` are a file's
    (OpenAI's or Azure's unless given)."""

    def __init__(
        self,
        client: Any,
        *,
        name: str = "openai",
        service: Service,
        errors: ErrorMap,
        key: str | None = None,
        supports: Supports = CHAT_SUPPORTS,
        default_model: str = "gpt-5-mini",
        max_tokens_field: str = "max_completion_tokens",
        azure: bool = False,
        deployment: str | None = None,
        limits: BatchLimits | None = None,
    ) -> None:
        self.client = client
        self._name = name
        self.service = service
        self._errors = errors
        self._key = key
        self.supports = supports
        self.default_model = default_model
        self.max_tokens_field = max_tokens_field
        self.url = AZURE_URL if azure else OPENAI_URL
        self._limits = limits or (AZURE_LIMITS if azure else OPENAI_LIMITS)
        self.deployment = deployment

    def __repr__(self) -> str:  # never the key
        return f"OpenAIBatches(name={self._name!r}, base_url={str(self.client.base_url)!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def limits(self) -> BatchLimits:
        return self._limits

    # -- the file ---------------------------------------------------------------------

    def body(self, item: BatchItem) -> dict[str, Any]:
        """What the request of ``item`` is on the wire: the streaming provider's
        parameters, not streamed; the model is the deployment on Azure."""
        params = build_params(item.request, self.supports, max_tokens_field=self.max_tokens_field)
        params["model"] = self.deployment or params["model"] or self.default_model
        return params

    def line(self, item: BatchItem) -> bytes:
        """One line of the input file."""
        record: dict[str, Any] = {"custom_id": item.custom_id, "method": "POST", "url": self.url}
        record["body"] = self.body(item)
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    def files(self, items: Sequence[BatchItem]) -> Iterator[tuple[IO[bytes], int]]:
        """The input files ``items`` make, each within the limits and of one model, as
        ``(file, number of requests)``, written one at a time to a temporary file (gone
        once the next is asked)."""
        check_ids(items)
        lines = self._lines(items)
        carry = next(lines, None)
        while carry is not None:
            with tempfile.TemporaryFile() as file:
                count = size = 0
                model = carry[1]
                while (
                    carry is not None
                    and carry[1] == model
                    and count < self.limits.requests
                    and size + len(carry[0]) <= self.limits.bytes
                ):
                    file.write(carry[0])
                    count, size = count + 1, size + len(carry[0])
                    carry = next(lines, None)
                file.seek(0)
                yield file, count

    def _lines(self, items: Sequence[BatchItem]) -> Iterator[tuple[bytes, str]]:
        """Each item's line and the model it asks."""
        for item in items:
            line = self.line(item)
            if len(line) > self.limits.bytes:
                raise BadRequest(
                    _("The request {id} alone is larger than a batch file may be").format(
                        id=item.custom_id
                    )
                )
            yield line, self.deployment or item.request.model or self.default_model

    # -- the calls --------------------------------------------------------------------

    def submit(self, items: Sequence[BatchItem]) -> BatchState:
        """Upload ``items`` and make their batch (several, past one file's limits); if
        one cannot be made, those already made are cancelled and the error raised."""
        if not items:
            raise ValueError(_("A batch needs at least one request"))
        made: list[Any] = []
        try:
            for file, count in self.files(items):
                upload = partial(
                    self.client.files.create,
                    file=("batch.jsonl", file, "application/jsonl"),
                    purpose="batch",
                )
                uploaded = self._call(upload)
                create = partial(
                    self.client.batches.create,
                    input_file_id=uploaded.id,
                    endpoint=self.url,
                    completion_window=COMPLETION_WINDOW,
                    metadata={REQUESTS: str(count)},
                )
                made.append(self._call(create))
        except BaseException:
            for batch in made:
                try:
                    self.client.batches.cancel(batch.id)
                except Exception:  # the first error is the one to say
                    continue
            raise
        return joined([self._state(batch) for batch in made])

    def state(self, batch_id: str) -> BatchState:
        """The batch as the API describes it now (every part of a split one)."""
        return joined([self._state(self._retrieve(part)) for part in parts_of(batch_id)])

    def cancel(self, batch_id: str) -> BatchState:
        """Ask the API to stop the batch; what already ran is kept, the rest becomes
        ``canceled`` (it says ``canceling`` until it has ended)."""
        states = []
        for part in parts_of(batch_id):
            batch = self._retrieve(part)
            if STATUSES.get(batch.status) == "in_progress":
                batch = self._call(partial(self.client.batches.cancel, part))
            states.append(self._state(batch))
        return joined(states)

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """One result per request of an ended batch, in the order the files hold them,
        read line by line: nothing grows with the batch, but where a request has no line
        in either file (then the ids that had one are gathered, and the input file read
        for the others)."""
        for part in parts_of(batch_id):
            yield from self._part_results(self._retrieve(part))

    # -- reading ----------------------------------------------------------------------

    def _part_results(self, batch: Any) -> Iterator[BatchResult]:
        if STATUSES.get(batch.status) != ENDED:
            raise BadRequest(
                _("Batch {id} has not ended yet ({status}): read its results once it has").format(
                    id=batch.id, status=batch.status
                )
            )
        files = [file_id for file_id in (batch.output_file_id, batch.error_file_id) if file_id]
        count = 0
        for file_id in files:
            for record in self._records(file_id):
                count += 1
                yield self.result(record)
        if count < _expected(batch):  # requests no file answered: their lines say which
            seen = {str(r.get("custom_id")) for f in files for r in self._records(f)}
            why = self._not_run(batch)
            for record in self._records(batch.input_file_id):
                custom_id = str(record.get("custom_id", ""))
                if custom_id and custom_id not in seen:
                    seen.add(custom_id)
                    line = why.get(record.get("line"), why[None])
                    yield BatchResult(custom_id, line[0], error=line[1])

    def _not_run(self, batch: Any) -> dict[Any, tuple[str, str]]:
        """What a request without a result is, by its line (None: any line)."""
        if batch.status == "expired":
            return {None: ("expired", _("The batch expired before this request ran"))}
        if batch.status == "cancelled":
            return {None: ("canceled", _("The batch was cancelled before this request ran"))}
        if batch.status == "failed":
            errors = field_of(field_of(batch, "errors"), "data") or []
            lines = {
                field_of(error, "line"): (
                    "errored",
                    _("{who} refused the batch file: {detail}").format(
                        who=self.service.subject, detail=_one_line(field_of(error, "message"))
                    ),
                )
                for error in errors
            }
            first = next(iter(lines.values()), None)
            lines[None] = first or (
                "errored",
                _("{who} refused the batch file").format(who=self.service.subject),
            )
            return lines
        return {None: ("errored", _("{who} returned no result for this request").format(
            who=self.service.subject
        ))}  # fmt: skip

    def _records(self, file_id: str) -> Iterator[dict[str, Any]]:
        """A file's JSON lines as they arrive (the input file's with their line number)."""
        number = 0
        try:
            with self.client.files.with_streaming_response.content(file_id) as response:
                for line in response.iter_lines():
                    number += 1
                    if line.strip():
                        record = json.loads(line)
                        if isinstance(record, dict):
                            yield {**record, "line": number}
        except json.JSONDecodeError:
            raise BadRequest(
                _("{who} sent a result file whose line {line} is not JSON: retry.").format(
                    who=self.service.subject, line=number
                )
            ) from None
        except Exception as error:
            self._raise_project_error(error)

    def result(self, record: dict[str, Any]) -> BatchResult:
        """One line of the output or error file as a ``BatchResult``."""
        result = self._result(record)
        if result.error and self._key and self._key in result.error:
            return replace(result, error=result.error.replace(self._key, REDACTED))
        return result

    def _result(self, record: dict[str, Any]) -> BatchResult:
        custom_id = str(record.get("custom_id", ""))
        error = record.get("error")
        response = record.get("response") or {}
        if error:
            outcome = NOT_RUN.get(str(field_of(error, "code")), "errored")
            return BatchResult(custom_id, outcome, error=_one_line(field_of(error, "message")))
        status = response.get("status_code")
        body = response.get("body") or {}
        if status == 200 and body.get("choices"):
            return BatchResult(custom_id, "succeeded", finished=self.finished(body))
        detail = body.get("error") if isinstance(body, dict) else None
        message = field_of(detail, "message") if isinstance(detail, dict) else None
        why = _("{who} refused this request ({status}): {detail}").format(
            who=self.service.subject, status=status, detail=_one_line(message or body)
        )
        return BatchResult(custom_id, "errored", error=why)

    def finished(self, body: dict[str, Any]) -> Finished:
        """A ``chat.completion`` as the stream reader would have finished it."""
        choice = body["choices"][0]
        reader = ChoiceReader()
        reader.add(
            {"delta": choice.get("message") or {}, "finish_reason": choice.get("finish_reason")}
        )
        events = reader.finish(
            str(body.get("model") or self.default_model), tree_usage(body.get("usage"))
        )
        finished = events[-1]
        assert isinstance(finished, Finished)
        return finished

    # -- the SDK ----------------------------------------------------------------------

    def _retrieve(self, part: str) -> Any:
        return self._call(partial(self.client.batches.retrieve, part))

    def _state(self, batch: Any) -> BatchState:
        return BatchState(batch.id, STATUSES.get(batch.status, "in_progress"), counts(batch),
                          _when(field_of(batch, "expires_at")))  # fmt: skip

    def _call(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except Exception as error:
            self._raise_project_error(error)

    def _raise_project_error(self, error: Exception) -> NoReturn:
        """Raise the project's error for what the SDK raised, the key blanked out (an
        error that is no SDK or network error is raised as it is)."""
        if isinstance(error, ProviderError):
            raise without_key(error, self._key) from error.__cause__
        mapped = self._errors(error)
        if mapped is None:
            raise error
        raise without_key(mapped, self._key) from error


# -- what a batch is, in the contract's words ---------------------------------------------


def counts(batch: Any) -> BatchCounts:
    """``request_counts`` as the contract counts (see the module docstring)."""
    reported = field_of(batch, "request_counts")
    completed = _int(field_of(reported, "completed"))
    failed = _int(field_of(reported, "failed"))
    rest = max(_expected(batch) - completed - failed, 0)
    status = batch.status
    if status == "expired":
        return BatchCounts(succeeded=completed, errored=failed, expired=rest)
    if status == "cancelled":
        return BatchCounts(succeeded=completed, errored=failed, canceled=rest)
    if status in ("completed", "failed"):
        return BatchCounts(succeeded=completed, errored=failed + rest)
    return BatchCounts(processing=rest, succeeded=completed, errored=failed)


def joined(states: Sequence[BatchState]) -> BatchState:
    """The parts of a split batch as one: ended when all have, canceling while any is."""
    if len(states) == 1:
        return states[0]
    statuses = {state.status for state in states}
    if statuses == {ENDED}:
        status = ENDED
    elif "canceling" in statuses:
        status = "canceling"
    else:
        status = "in_progress"
    total = BatchCounts(
        *(sum(getattr(state.counts, name) for state in states) for name in _COUNT_FIELDS)
    )
    expires = max((state.expires_at for state in states if state.expires_at), default=None)
    return BatchState(PARTS.join(state.id for state in states), status, total, expires)


_COUNT_FIELDS = ("processing", "succeeded", "errored", "canceled", "expired")


def parts_of(batch_id: str) -> list[str]:
    return [part for part in batch_id.split(PARTS) if part]


def check_ids(items: Iterable[BatchItem]) -> None:
    """Each ``custom_id`` is what the API takes, and unique (``ValueError`` otherwise).
    Duplicates are found in the ids sorted (a list of references: a set of 10,000 ids
    would hold eight times the memory)."""
    ids = []
    for item in items:
        if not CUSTOM_ID.match(item.custom_id):
            raise ValueError(
                _("custom_id {id!r} must be 1 to 64 letters, digits, '_' or '-'").format(
                    id=item.custom_id
                )
            )
        ids.append(item.custom_id)
    ids.sort()
    for before, after in pairwise(ids):
        if before == after:
            raise ValueError(_("custom_id {id!r} is used twice").format(id=after))


def _expected(batch: Any) -> int:
    """How many requests the batch holds: its metadata's count, else the API's total."""
    metadata = field_of(batch, "metadata") or {}
    kept = metadata.get(REQUESTS) if isinstance(metadata, dict) else None
    total = _int(field_of(field_of(batch, "request_counts"), "total"))
    return max(int(kept) if isinstance(kept, str) and kept.isdigit() else 0, total)


def _when(timestamp: Any) -> str | None:
    if not isinstance(timestamp, int) or isinstance(timestamp, bool) or timestamp <= 0:
        return None
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _one_line(text: Any) -> str:
    said = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return " ".join(said.split())[:300]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
