"""OpenAI's Files and Batch APIs, faked beside Chat Completions (``fake_openai``).

The real ``openai`` SDK uploads a JSONL file (``files.create(purpose="batch")``), makes
a batch of it (``batches.create``), polls it (``batches.retrieve``), cancels it, lists
batches, and reads the output and error files (``files.content``) from this fake, over
HTTP, as it would from OpenAI (``/v1/...``) or Azure (``/openai/...?api-version=``: a
batch made there keeps Azure's rules).

    with FakeOpenAI() as server:
        batches = server.batches            # this module's ``FakeBatches``
        batches.auto = False                # a slow batch: in_progress until told
        batches.run(batch_id, 3)            # three more of its requests answered
        batches.finish(batch_id)            # every request answered: completed (None: all)
        batches.expire(batch_id)            # the window closed: the rest expired (None: all)
        batches.fail(lambda body: ...)      # these requests fail (500), into the error file
        batches.silent_not_run = True       # what never ran gets no line in the error file
        batches.refused_uploads = [None, 500]  # the next taken, the one after refused
        server.enqueue(tool_calls=[...], when=lambda body: ...)  # an answer, scripted
        server.enqueue_error(400, when=...) # a request that fails: the error file
        batches.hold_after = 2              # file content stops after 2 lines ...
        batches.release.set()               # ... until released

With ``auto`` (the default) each ``retrieve`` moves a batch one step: validating →
in_progress (or failed) → finalizing → completed.

The rules it keeps (the API reference and the errors OpenAI returns):
- an upload is multipart with ``purpose`` (one of ``PURPOSES``) and ``file``; a batch
  file's name ends in ``.jsonl`` and it holds at most ``max_bytes`` (200 MB);
- ``batches.create`` takes an ``input_file_id`` of a file uploaded for ``batch``, an
  ``endpoint`` it supports and ``completion_window`` ``24h``; metadata is at most 16
  pairs of strings;
- validation (a batch that then ``failed``, with ``errors.data`` naming the line): the
  file is not empty; each line is JSON with ``custom_id`` (matching
  ``^[a-zA-Z0-9_-]{1,64}$``, unique in the file), ``method`` ``POST``, ``url`` equal to
  the batch's ``endpoint`` and a ``body`` with a ``model``, the same model on every
  line; at most ``max_requests`` lines (50,000; Azure 100,000);
- each request is then run as Chat Completions would answer it (its rules refuse a bad
  body with 400, ``stream`` is refused): a success goes to the output file, a refusal
  to the error file with its status and error; the output lines come in no particular
  order; a request never run ends in the error file with ``batch_expired`` or
  ``batch_cancelled``, counted neither completed nor failed;
- ``cancel`` works on a batch that has not ended (then ``cancelling``, and
  ``cancelled`` at the next look); Azure never expires a batch.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import random
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakes.fake_openai_rules import TOOL_NAME, validate

if TYPE_CHECKING:
    from fakes.fake_openai import FakeOpenAI

ROUTE = re.compile(r"/(?:v1|openai)/(files|batches)(?:/([^/]+))?(?:/(content|cancel))?")
PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
ENDPOINTS = ("/v1/responses", "/v1/chat/completions", "/v1/embeddings", "/v1/completions")
AZURE_ENDPOINTS = ("/chat/completions", "/v1/chat/completions")
CUSTOM_ID = TOOL_NAME
"""The same pattern as a tool's name: 1 to 64 letters, digits, ``_`` or ``-``."""
MAX_BYTES = 200_000_000
ENDED = ("completed", "failed", "expired", "cancelled")
EXPIRED = "This request could not be executed before the completion window expired."
CANCELLED = "This request was not executed because the batch was cancelled."
WINDOW = 24 * 3600


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    path: Path
    bytes: int
    created_at: int

    def object(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": self.bytes,
                "created_at": self.created_at, "filename": self.filename,
                "purpose": self.purpose, "status": "processed"}  # fmt: skip


@dataclass
class FakeBatch:
    id: str
    endpoint: str
    input_file_id: str
    metadata: dict[str, str] | None
    created_at: int
    azure: bool = False
    status: str = "validating"
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    done: int = 0  # how many requests have run
    outputs: list[str] = field(default_factory=list)
    errors_out: list[str] = field(default_factory=list)
    completed: int = 0
    failed: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    times: dict[str, int] = field(default_factory=dict)


class FakeBatches:
    """The Files and Batch APIs of one ``FakeOpenAI`` (see the module docstring)."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.max_requests: int | None = None
        """Requests a file may hold (None: OpenAI's 50,000, Azure's 100,000)."""
        self.max_bytes = MAX_BYTES
        self.auto = True
        self.failing: list[tuple[Callable[[dict[str, Any]], bool], int]] = []
        self.silent_not_run = False
        """A request never run gets no line in the error file (a server that says
        nothing of them: the client must find them in the input file)."""
        self.refused_uploads: list[int | None] = []
        """What the next uploads get, one each: a status they are refused with (500: a
        server error), or None: taken."""
        self.hold_after: int | None = None
        self.release = threading.Event()
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.served_lines = 0  # lines of file content sent, for the streaming tests
        self._folder = tempfile.TemporaryDirectory(prefix="fake-openai-files-")
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._shuffle = random.Random(41)

    def close(self) -> None:
        self.release.set()
        self._folder.cleanup()

    # -- what tests do ----------------------------------------------------------------
    def run(self, batch_id: str, count: int | None = None) -> None:
        """Answer ``count`` more of the batch's requests (all that are left: None)."""
        with self._lock:
            batch = self.batches[batch_id]
            if batch.status == "validating":
                self._validate(batch)
            if batch.status != "in_progress":
                return
            stop = len(batch.requests) if count is None else batch.done + count
            while batch.done < min(stop, len(batch.requests)):
                self._answer(batch, *batch.requests[batch.done])
                batch.done += 1

    def finish(self, batch_id: str | None = None) -> None:
        """Answer every request left and end the batch ``completed`` (None: every batch
        that has not ended)."""
        with self._lock:
            for batch in self._chosen(batch_id):
                self.run(batch.id)
                if batch.status == "in_progress":
                    self._end(batch, "completed", None)

    def expire(self, batch_id: str | None = None) -> None:
        """The 24 hours are over: what ran is kept, the rest is ``batch_expired`` (None:
        every batch that has not ended)."""
        with self._lock:
            for batch in self._chosen(batch_id):
                assert not batch.azure, "Azure does not expire a batch: it runs until cancelled"
                if batch.status == "validating":
                    self._validate(batch)
                self._end(batch, "expired", ("batch_expired", EXPIRED))

    def fail(self, when: Callable[[dict[str, Any]], bool], status: int = 500) -> None:
        """Every request whose body ``when`` picks fails with ``status`` (a server error,
        unless told), into the error file."""
        self.failing.append((when, status))

    def _chosen(self, batch_id: str | None) -> list[FakeBatch]:
        if batch_id is not None:
            return [self.batches[batch_id]]
        return [b for b in self.batches.values() if b.status not in ENDED]

    def last(self) -> FakeBatch:
        with self._lock:
            return list(self.batches.values())[-1]

    def input_lines(self, batch_id: str) -> list[dict[str, Any]]:
        """The lines of a batch's input file, as uploaded."""
        batch = self.batches[batch_id]
        text = self.files[batch.input_file_id].path.read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- the running ------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}fake"

    def _validate(self, batch: FakeBatch) -> None:
        """validating → in_progress, or failed with the first broken rule's line."""
        stored = self.files[batch.input_file_id]
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        model = None
        problem: tuple[str, str, int | None] | None = None
        with stored.path.open("rb") as lines:
            for number, raw in enumerate(lines, 1):
                if not raw.strip():
                    continue
                problem = self._line_problem(raw, batch.endpoint, seen, model, number)
                if problem:
                    break
                line = json.loads(raw)
                model = line["body"]["model"]
                seen.add(line["custom_id"])
                requests.append((line["custom_id"], line["body"]))
                most = self.max_requests or (100_000 if batch.azure else 50_000)
                if len(requests) > most:
                    problem = ("too_many_tasks", f"The batch input file is larger than the "
                               f"{most} maximum number of requests.", None)  # fmt: skip
                    break
        if problem is None and not requests:
            problem = ("empty_file", "The batch input file is empty.", None)
        now = int(time.time())
        if problem is not None:
            code, message, line_number = problem
            batch.errors = [{"code": code, "message": message, "param": None, "line": line_number}]
            batch.status = "failed"
            batch.times["failed_at"] = now
            return
        batch.requests = requests
        batch.status = "in_progress"
        batch.times["in_progress_at"] = now

    def _line_problem(self, raw: bytes, endpoint: str, seen: set[str], model: str | None,
                      number: int) -> tuple[str, str, int] | None:  # fmt: skip
        try:
            line = json.loads(raw)
        except ValueError:
            return ("invalid_json_line", "This line is not parseable as valid JSON.", number)
        if not isinstance(line, dict):
            return ("invalid_json_line", "This line is not a JSON object.", number)
        for name in ("custom_id", "method", "url", "body"):
            if name not in line:
                return ("missing_required_parameter", f"Missing required parameter: '{name}'.",
                        number)  # fmt: skip
        custom_id = line["custom_id"]
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            return ("invalid_custom_id", "custom_id must be 1 to 64 characters of letters, "
                    "digits, '_' or '-'.", number)  # fmt: skip
        if custom_id in seen:
            return ("duplicate_custom_id", "The custom_id for this request is a duplicate of "
                    "another request. The custom_id parameter must be unique for each "
                    "request in a batch.", number)  # fmt: skip
        if line["method"] != "POST":
            return ("invalid_method", "The method for this request must be POST.", number)
        if line["url"] != endpoint:
            return ("mismatched_url", f"The url for this request does not match the batch "
                    f"endpoint '{endpoint}'.", number)  # fmt: skip
        body = line["body"]
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return ("missing_required_parameter", "Missing required parameter: 'body.model'.",
                    number)  # fmt: skip
        if model is not None and body["model"] != model:
            return ("mismatched_model", f"The provided model '{body['model']}' does not match "
                    f"the model '{model}' of the other requests in the file.", number)  # fmt: skip
        return None

    def _answer(self, batch: FakeBatch, custom_id: str, body: dict[str, Any]) -> None:
        """Run one request as Chat Completions would, into the output or error lines."""
        from fakes.fake_openai import ScriptedError

        request_id = f"req_{self._new_id('')}"
        line_id = self._new_id("batch_req_")
        problem = "Streaming is not supported in batch requests." if body.get("stream") else None
        problem = problem or validate(body, "openai")
        failing = next((status for when, status in self.failing if when(body)), None)
        if failing is not None and not problem:
            item: Any = ScriptedError(failing, "The server had an error processing your "
                                      "request.", {})  # fmt: skip
        else:
            item = None if problem else self.fake._next(body)
        if problem or isinstance(item, ScriptedError):
            status = 400 if problem else item.status  # type: ignore[union-attr]
            message = problem or item.message  # type: ignore[union-attr]
            error = {"message": message, "type": "invalid_request_error", "param": None,
                     "code": None}  # fmt: skip
            response = {"status_code": status, "request_id": request_id,
                        "body": {"error": error}}  # fmt: skip
            batch.errors_out.append(json.dumps({"id": line_id, "custom_id": custom_id,
                                                "response": response, "error": None}))  # fmt: skip
            batch.failed += 1
            return
        completion = self.fake.completion_for(item, body, cached=False)  # type: ignore[arg-type]
        response = {"status_code": 200, "request_id": request_id, "body": completion}
        batch.outputs.append(json.dumps({"id": line_id, "custom_id": custom_id,
                                         "response": response, "error": None}))  # fmt: skip
        batch.completed += 1

    def _end(self, batch: FakeBatch, status: str, not_run: tuple[str, str] | None) -> None:
        """End the batch: its output and error files written, what never ran in the
        error file under ``not_run``'s code."""
        if batch.status in ENDED:
            return
        if not_run is not None and not self.silent_not_run:
            code, message = not_run
            for custom_id, _body in batch.requests[batch.done :]:
                error = {"code": code, "message": message}
                batch.errors_out.append(json.dumps({"id": self._new_id("batch_req_"),
                                                    "custom_id": custom_id, "response": None,
                                                    "error": error}))  # fmt: skip
            batch.done = len(batch.requests)
        self._shuffle.shuffle(batch.outputs)  # the output comes in any order
        if batch.outputs:
            batch.output_file_id = self._store("batch_output.jsonl", "batch_output",
                                               batch.outputs).id  # fmt: skip
        if batch.errors_out:
            batch.error_file_id = self._store("batch_error.jsonl", "batch_output",
                                              batch.errors_out).id  # fmt: skip
        batch.outputs, batch.errors_out = [], []
        batch.status = status
        batch.times[f"{status}_at"] = int(time.time())

    def _store(self, filename: str, purpose: str, lines: list[str]) -> StoredFile:
        file_id = self._new_id("file-")
        path = Path(self._folder.name) / file_id
        with path.open("w") as out:
            for line in lines:
                out.write(line + "\n")
        stored = StoredFile(file_id, filename, purpose, path, path.stat().st_size, int(time.time()))
        self.files[file_id] = stored
        return stored

    def _step(self, batch: FakeBatch) -> None:
        """What time does to a batch between two looks at it."""
        if batch.status == "validating":
            self._validate(batch)
        elif batch.status == "cancelling":
            self._end(batch, "cancelled", ("batch_cancelled", CANCELLED))
        elif batch.status == "in_progress" and self.auto:
            self.run(batch.id)
            batch.status = "finalizing"
            batch.times["finalizing_at"] = int(time.time())
        elif batch.status == "finalizing":
            self._end(batch, "completed", None)

    def object(self, batch: FakeBatch) -> dict[str, Any]:
        none = "" if batch.azure else None  # Azure says "" for a file not made yet
        times = {name: batch.times.get(name) for name in (
            "in_progress_at", "finalizing_at", "completed_at", "failed_at", "expired_at",
            "cancelling_at", "cancelled_at")}  # fmt: skip
        total = len(batch.requests)
        errors = {"object": "list", "data": batch.errors} if batch.errors else None
        return {
            "id": batch.id, "object": "batch", "endpoint": batch.endpoint, "errors": errors,
            "input_file_id": batch.input_file_id, "completion_window": "24h",
            "status": batch.status, "output_file_id": batch.output_file_id or none,
            "error_file_id": batch.error_file_id or none, "created_at": batch.created_at,
            "expires_at": batch.created_at + WINDOW, **times,
            "request_counts": {"total": total, "completed": batch.completed,
                               "failed": batch.failed},
            "metadata": batch.metadata,
        }  # fmt: skip

    # -- HTTP -------------------------------------------------------------------------
    def serve(self, handler: Any, method: str, path: str, query: dict[str, list[str]],
              raw: bytes) -> None:  # fmt: skip
        """Answer one request to ``/v1/files...`` or ``/v1/batches...``."""
        found = ROUTE.fullmatch(path)
        azure = path.startswith("/openai/")
        if found is None:
            return handler._error(404, f"Invalid URL ({method} {path})")
        if azure and not query.get("api-version"):
            return handler._error(404, "Resource not found")
        kind, object_id, action = found.groups()
        with self._lock:
            if kind == "files":
                return self._files(handler, method, object_id, action, raw)
            return self._batches(handler, method, object_id, action, raw, query, azure)

    def _files(self, handler: Any, method: str, file_id: str | None, action: str | None,
               raw: bytes) -> None:  # fmt: skip
        if method == "POST" and file_id is None:
            return self._upload(handler, raw)
        stored = self.files.get(file_id or "")
        if stored is None:
            return handler._error(404, f"No such File object: {file_id}")
        if method == "GET" and action is None:
            return handler._json(200, stored.object())
        if method == "GET" and action == "content":
            return self._content(handler, stored)
        return handler._error(404, f"Invalid URL ({method})")

    def _upload(self, handler: Any, raw: bytes) -> None:
        status = self.refused_uploads.pop(0) if self.refused_uploads else None
        if status is not None:
            return handler._error(status, f"fake upload error {status}")
        kind = handler.headers.get("content-type", "")
        if not kind.startswith("multipart/form-data"):
            return handler._error(400, "Expected a multipart/form-data upload.")
        form = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"content-type: " + kind.encode() + b"\r\n\r\n" + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in form.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if "file" not in fields:
            return handler._error(400, "Missing required parameter: 'file'.")
        if purpose not in PURPOSES:
            return handler._error(400, f"'{purpose}' is not one of {list(PURPOSES)} - 'purpose'")
        filename, content = fields["file"]
        if purpose == "batch" and not (filename or "").endswith(".jsonl"):
            return handler._error(400, "Invalid file format for Batch API. Must be .jsonl")
        if purpose == "batch" and len(content) > self.max_bytes:
            return handler._error(400, f"File is too large for the Batch API: {len(content)} "
                                  f"bytes, at most {self.max_bytes}.")  # fmt: skip
        file_id = self._new_id("file-")
        path = Path(self._folder.name) / file_id
        path.write_bytes(content)
        stored = StoredFile(file_id, filename or "upload", purpose, path, len(content),
                            int(time.time()))  # fmt: skip
        self.files[file_id] = stored
        handler._json(200, stored.object())

    def _content(self, handler: Any, stored: StoredFile) -> None:
        """The file's bytes, streamed in chunks (held after ``hold_after`` lines)."""
        handler.send_response(200)
        handler.send_header("content-type", "application/octet-stream")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        self._lock.release()  # a held file must not stop the API answering
        try:
            sent = 0
            with stored.path.open("rb") as lines:
                for chunk in iter(lambda: lines.readlines(64 * 1024), []):
                    if self.hold_after is None:
                        handler._write(b"".join(chunk))
                        self.served_lines += len(chunk)
                        continue
                    for line in chunk:
                        if self.hold_after is not None and sent == self.hold_after:
                            handler.wfile.flush()
                            self.release.wait(30)
                        handler._write(line)
                        sent += 1
                        self.served_lines += 1
            handler._end()
        finally:
            self._lock.acquire()

    def _batches(self, handler: Any, method: str, batch_id: str | None, action: str | None,
                 raw: bytes, query: dict[str, list[str]], azure: bool) -> None:  # fmt: skip
        if method == "POST" and batch_id is None:
            return self._create(handler, raw, azure)
        if method == "GET" and batch_id is None:
            return self._list(handler, query)
        batch = self.batches.get(batch_id or "")
        if batch is None:
            return handler._error(404, f"No batch found with id '{batch_id}'.")
        if method == "GET" and action is None:
            self._step(batch)
            return handler._json(200, self.object(batch))
        if method == "POST" and action == "cancel":
            if batch.status not in ("validating", "in_progress", "finalizing"):
                return handler._error(400, f"Cannot cancel a batch with status '{batch.status}'.")
            batch.status = "cancelling"
            batch.times["cancelling_at"] = int(time.time())
            return handler._json(200, self.object(batch))
        return handler._error(404, f"Invalid URL ({method})")

    def _create(self, handler: Any, raw: bytes, azure: bool) -> None:
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return handler._error(400, "We could not parse the JSON body of your request.")
        unknown = sorted(set(body) - {"input_file_id", "endpoint", "completion_window",
                                      "metadata", "output_expires_after"})  # fmt: skip
        if unknown:
            return handler._error(400, f"Unrecognized request argument supplied: {unknown[0]}")
        stored = self.files.get(str(body.get("input_file_id")))
        if stored is None:
            return handler._error(400, f"No such File object: {body.get('input_file_id')}")
        if stored.purpose != "batch":
            return handler._error(400, "The input file must be uploaded with purpose 'batch'.")
        endpoints = AZURE_ENDPOINTS if azure else ENDPOINTS
        if body.get("endpoint") not in endpoints:
            return handler._error(400, f"Invalid value for 'endpoint': {body.get('endpoint')!r}.")
        if body.get("completion_window") != "24h":
            return handler._error(400, "Invalid value for 'completion_window': must be '24h'.")
        metadata = body.get("metadata")
        if metadata is not None and not (
            isinstance(metadata, dict) and len(metadata) <= 16
            and all(isinstance(v, str) and len(v) <= 512 for v in metadata.values())
        ):  # fmt: skip
            return handler._error(400, "Invalid 'metadata': at most 16 pairs of strings.")
        batch = FakeBatch(self._new_id("batch_"), body["endpoint"], stored.id, metadata,
                          int(time.time()), azure)  # fmt: skip
        self.batches[batch.id] = batch
        handler._json(200, self.object(batch))

    def _list(self, handler: Any, query: dict[str, list[str]]) -> None:
        limit = int((query.get("limit") or ["20"])[0])
        after = (query.get("after") or [None])[0]
        newest = list(reversed(self.batches.values()))
        if after is not None:
            ids = [batch.id for batch in newest]
            newest = newest[ids.index(after) + 1 :] if after in ids else []
        page = newest[:limit]
        handler._json(200, {"object": "list", "data": [self.object(b) for b in page],
                            "first_id": page[0].id if page else None,
                            "last_id": page[-1].id if page else None,
                            "has_more": len(newest) > limit})  # fmt: skip
