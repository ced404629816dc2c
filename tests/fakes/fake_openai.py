"""A local fake of a Chat Completions server, so tests run the real ``openai`` SDK over HTTP.

Like ``fake_anthropic.py`` for the Messages API: the official client does its own HTTP,
server-sent-event parsing, retries and error mapping against it, offline. It serves
``POST .../chat/completions`` (under ``/v1``, Gemini's ``/v1beta/openai``, or Azure's
``/openai/deployments/{name}`` with its ``api-version`` query), streaming and not, with
scripted replies and injected faults, and records every request.

    with FakeOpenAI() as server:                          # or the ``fake_openai`` fixture
        server.enqueue(text="Hi there")                   # next reply
        server.enqueue(tool_calls=[{"name": "add", "arguments": {"a": 1}}], text="Let me")
        server.enqueue(reasoning="Hmm...", text="Hi")      # in ``server.reasoning_field``
        server.enqueue(finish_reason="length")             # or refusal="I can't"
        server.enqueue(tokens=200)                         # a long reply, one token a chunk
        server.enqueue(text="cut", drop_after=3)           # connection dropped after 3 chunks
        server.enqueue(error_after=2)                      # ``data: {"error": ...}`` mid-stream
        server.enqueue(malformed_after=2)                  # a ``data:`` line that is not JSON
        server.enqueue(usage={"prompt_tokens": 90_000})    # the usage reported, scripted
        server.enqueue_error(429, retry_after=0, times=3)  # an HTTP error instead
        server.enqueue_hang_up()                           # the connection closed, no response
        server.enqueue(text="B", when=lambda body: body["model"] == "b")
        client = openai.OpenAI(api_key="k", base_url=server.base_url)   # ends in /v1
        server.requests[-1].body                           # the parsed JSON body sent
        server.most_in_flight                              # the most answered at once

With nothing enqueued the reply is deterministic and says how many messages it got (and,
for ``n`` choices, which choice it is).

``GET .../models`` lists ``models`` (``gpt-5-mini`` and ``gpt-5-nano`` unless told).

It behaves as the servers do (docs/chat-completions.md): usage only with
``stream_options.include_usage`` (``usage_always`` for servers that always send it),
tool-call arguments in fragments (``tool_call_style``: ``"fragments"`` as OpenAI,
``"whole"`` as Ollama, ``"repeat_names"`` as vLLM, ``"stuck_index"`` as older Ollama with
several calls at index 0), reasoning in the field ``reasoning_field`` names, cached
prompt tokens in ``prompt_tokens_details.cached_tokens`` by OpenAI's rule (a prefix of
1,024 tokens or more seen before, in steps of 128), ``n`` choices interleaved (refused in
the ``llama.cpp`` dialect), 429 with ``retry-after``, 401 for a wrong key. It refuses
(400) what the real API refuses (``fake_openai_rules.py``).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fakes.fake_load import InFlight
from fakes.fake_openai_batches import FakeBatches
from fakes.fake_openai_rules import ONE_CHOICE, validate

ROUTE = re.compile(r"/(v1|v1beta/openai|openai/deployments/[^/]+)/chat/completions")
BATCH_ROUTE = re.compile(r"/(v1|openai)/(files|batches)(/|$)")
"""The Files and Batch APIs (``fake_openai_batches``), OpenAI's and Azure's."""
MODELS_ROUTE = re.compile(r"/(v1|v1beta/openai|openai)/models")
"""Where the model list is (``GET``): under the base URL, Azure's under ``/openai``."""
"""OpenAI's, Gemini's and Azure's paths (llama.cpp also serves it without ``/v1``)."""
CHARS_PER_TOKEN = 4
MIN_CACHED = 1024
CACHE_STEP = 128
_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
    500: "server_error",
    503: "server_error",
}


@dataclass
class RecordedRequest:
    """One request as the server received it; header names are lower case."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    received: float = 0.0
    first_chunk: float | None = None


@dataclass
class ScriptedReply:
    """What the server answers to one request (see ``FakeOpenAI.enqueue``)."""

    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    tokens: int | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    drop_after: int | None = None
    error_after: int | None = None
    malformed_after: int | None = None
    when: Callable[[Any], bool] | None = None


HANG_UP = 0
"""A ``ScriptedError`` status: no response at all, the connection closed."""


@dataclass
class ScriptedError:
    status: int
    message: str
    headers: dict[str, str]
    when: Callable[[Any], bool] | None = None


class FakeOpenAI(InFlight):
    """The fake server: ``start()``/``stop()`` or ``with``; ``base_url`` (ending in /v1)."""

    def __init__(
        self,
        *,
        dialect: str = "openai",
        api_key: str | None = None,
        chunk_chars: int = 12,
        tool_call_style: str = "fragments",
        reasoning_field: str = "reasoning_content",
        usage_always: bool = False,
        models: tuple[str, ...] = ("gpt-5-mini", "gpt-5-nano"),
    ) -> None:
        InFlight.__init__(self)  # requests answered at once (fake_load.py)
        self.dialect = dialect
        self.models = models
        self.api_key = api_key
        self.chunk_chars = chunk_chars
        self.tool_call_style = tool_call_style
        self.reasoning_field = reasoning_field
        self.usage_always = usage_always
        self.requests: list[RecordedRequest] = []
        self._prompts: list[str] = []  # what earlier prompts were, for the prefix cache
        self._script: deque[ScriptedReply | ScriptedError] = deque()
        self._lock = threading.Lock()
        self._count = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._connections: set[socket.socket] = set()
        self.batches = FakeBatches(self)
        """The Files and Batch APIs (``fake_openai_batches.py``)."""

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        return self

    def stop(self) -> None:
        self.batches.release.set()  # a held file content lets go
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            connections, self._connections = self._connections, set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """As the ``openai`` SDK takes it: ending in ``/v1``."""
        return self.origin + "/v1"

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    # -- scripting -------------------------------------------------------------------
    def enqueue(
        self,
        text: str | None = None,
        *,
        tool_calls: list[dict[str, Any]] | None = None,
        reasoning: str | None = None,
        refusal: str | None = None,
        finish_reason: str | None = None,
        tokens: int | None = None,
        model: str | None = None,
        usage: dict[str, Any] | None = None,
        drop_after: int | None = None,
        error_after: int | None = None,
        malformed_after: int | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> None:
        """Script the next reply. A tool call is ``{"name", "arguments"}`` (an object,
        sent as JSON text; an ``id`` is made up if absent). The ``*_after`` faults count
        chunks sent. ``usage`` replaces fields of the usage reported."""
        self._push(
            ScriptedReply(
                text, list(tool_calls or []), reasoning, refusal, finish_reason, tokens,
                model, usage, drop_after, error_after, malformed_after, when,
            )
        )  # fmt: skip

    def enqueue_error(
        self,
        status: int,
        *,
        times: int = 1,
        message: str | None = None,
        retry_after: float | None = None,
        retry_after_ms: int | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> None:
        """Answer the next ``times`` requests with an HTTP error (429, 500, 401...)."""
        headers = {}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        for _ in range(times):
            self._push(ScriptedError(status, message or f"fake error {status}", headers, when))

    def enqueue_hang_up(self, *, times: int = 1) -> None:
        """Close the next ``times`` requests' connections without a response, as a server
        does that closes a kept-alive connection just as the client reuses it."""
        for _ in range(times):
            self._push(ScriptedError(HANG_UP, "", {}))

    def _push(self, item: ScriptedReply | ScriptedError) -> None:
        with self._lock:
            self._script.append(item)

    def _next(self, body: Any) -> ScriptedReply | ScriptedError:
        with self._lock:
            self._count += 1
            item = next((i for i in self._script if i.when is None or i.when(body)), None)
            if item is None:
                return ScriptedReply()
            self._script.remove(item)
            return item

    # -- what a reply is -------------------------------------------------------------
    def usage_for(
        self, body: dict[str, Any], outputs: list[str], *, cached: bool = True
    ) -> dict[str, Any]:
        """Usage as OpenAI reports it: the prompt by characters / 4, its cached prefix
        (``cached=False``: none, for a batch's thousands of requests)."""
        prompt = json.dumps([body.get("tools"), body["messages"]], sort_keys=True)
        prompt_tokens = math.ceil(len(prompt) / CHARS_PER_TOKEN)
        common = 0
        if cached:
            with self._lock:
                common = max((_common_prefix(prompt, seen) for seen in self._prompts), default=0)
                self._prompts.append(prompt)
        prefix = common // CHARS_PER_TOKEN
        cached = 0
        if prefix >= MIN_CACHED and prompt_tokens >= MIN_CACHED:
            cached = min(MIN_CACHED + (prefix - MIN_CACHED) // CACHE_STEP * CACHE_STEP, prefix)
        completion = sum(max(1, math.ceil(len(out) / CHARS_PER_TOKEN)) for out in outputs)
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }

    def reply_text(self, reply: ScriptedReply, body: dict[str, Any], choice: int) -> str | None:
        if reply.tokens is not None:
            return "".join(long_text(reply.tokens))
        if reply.text is not None:
            return reply.text if choice == 0 else f"{reply.text} (choice {choice})"
        if reply.tool_calls or reply.refusal:
            return None
        messages = body["messages"]
        last = messages[-1].get("content") or ""
        if isinstance(last, list):
            last = " ".join(p.get("text", "") for p in last if isinstance(p, dict))
        said = f"Fake reply to {len(messages)} message(s); the last said: {str(last)[:200]}"
        return said if choice == 0 else f"{said} (choice {choice})"

    def calls_for(self, reply: ScriptedReply) -> list[dict[str, Any]]:
        with self._lock:
            number = self._count
        return [
            {
                "id": call.get("id", f"call_fake{number:04d}x{position}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call.get("arguments"), str)
                    else json.dumps(call.get("arguments", {})),
                },
            }
            for position, call in enumerate(reply.tool_calls)
        ]

    def chunks_for(self, reply: ScriptedReply, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The stream's chunks, in the real order: a role chunk, reasoning, text, tool
        calls, a finish chunk per choice (choices interleaved), then usage if asked."""
        n = body.get("n", 1)
        model = reply.model or body["model"]
        base = {"id": f"chatcmpl-fake{self._count}", "object": "chat.completion.chunk",
                "created": 1718400000, "model": model}  # fmt: skip
        per_choice: list[list[dict[str, Any]]] = []
        outputs: list[str] = []
        for choice in range(n):
            deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
            if reply.reasoning:
                deltas += [_reasoning_delta(self.reasoning_field, piece)
                           for piece in self._pieces(reply.reasoning)]  # fmt: skip
                outputs.append(reply.reasoning)
            text = self.reply_text(reply, body, choice)
            if text:
                pieces = long_text(reply.tokens) if reply.tokens else self._pieces(text)
                deltas += [{"content": piece} for piece in pieces]
                outputs.append(text)
            if reply.refusal:
                deltas += [{"refusal": piece} for piece in self._pieces(reply.refusal)]
                outputs.append(reply.refusal)
            calls = self.calls_for(reply)
            deltas += self._call_deltas(calls)
            outputs += [call["function"]["arguments"] for call in calls]
            finish = reply.finish_reason or ("tool_calls" if calls else "stop")
            chunks = [
                {**base, "choices": [{"index": choice, "delta": delta, "finish_reason": None}]}
                for delta in deltas
            ]
            chunks.append({**base, "choices": [{"index": choice, "delta": {},
                                                "finish_reason": finish}]})  # fmt: skip
            per_choice.append(chunks)
        stream = [chunk for group in _interleaved(per_choice) for chunk in group]
        usage = {**self.usage_for(body, outputs), **(reply.usage or {})}
        asked = (body.get("stream_options") or {}).get("include_usage")
        if asked:
            stream.append({**base, "choices": [], "usage": usage})
        elif self.usage_always:
            stream[-1] = {**stream[-1], "usage": usage}
        return stream

    def _pieces(self, text: str) -> list[str]:
        step = self.chunk_chars
        return [text[i : i + step] for i in range(0, len(text), step)]

    def _call_deltas(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        deltas = []
        for position, call in enumerate(calls):
            index = 0 if self.tool_call_style == "stuck_index" else position
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            if self.tool_call_style in ("whole", "stuck_index"):
                whole = {"index": index, "id": call["id"], "type": "function",
                         "function": {"name": name, "arguments": arguments}}  # fmt: skip
                deltas.append({"tool_calls": [whole]})
                continue
            first = {"index": index, "id": call["id"], "type": "function",
                     "function": {"name": name, "arguments": ""}}  # fmt: skip
            deltas.append({"tool_calls": [first]})
            for start in range(0, len(arguments), 7):
                function: dict[str, Any] = {"arguments": arguments[start : start + 7]}
                if self.tool_call_style == "repeat_names":
                    function["name"] = name
                deltas.append({"tool_calls": [{"index": index, "function": function}]})
        return deltas

    def completion_for(
        self, reply: ScriptedReply, body: dict[str, Any], *, cached: bool = True
    ) -> dict[str, Any]:
        """The non-streamed response: the same reply folded into whole messages."""
        choices, outputs = [], []
        calls = self.calls_for(reply)
        for choice in range(body.get("n", 1)):
            text = self.reply_text(reply, body, choice)
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if reply.reasoning:
                message[self.reasoning_field] = reply.reasoning
            if reply.refusal:
                message["refusal"] = reply.refusal
            if calls:
                message["tool_calls"] = calls
            finish = reply.finish_reason or ("tool_calls" if calls else "stop")
            choices.append({"index": choice, "message": message, "finish_reason": finish})
            outputs += [text or "", reply.reasoning or ""]
        usage = {**self.usage_for(body, outputs, cached=cached), **(reply.usage or {})}
        return {"id": f"chatcmpl-fake{self._count}", "object": "chat.completion",
                "created": 1718400000, "model": reply.model or body["model"],
                "choices": choices, "usage": usage}  # fmt: skip


def long_text(tokens: int) -> list[str]:
    """``tokens`` deterministic word pieces, one per chunk."""
    return [("" if i == 0 else " ") + _WORDS[i % len(_WORDS)] for i in range(tokens)]


def _reasoning_delta(field_name: str, piece: str) -> dict[str, Any]:
    if field_name == "reasoning_details":
        # OpenRouter sends the text in ``reasoning`` and its structured form beside it
        detail = {"type": "reasoning.text", "text": piece, "index": 0, "format": "unknown"}
        return {"reasoning": piece, "reasoning_details": [detail]}
    return {field_name: piece}


def _interleaved(groups: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Chunks of several choices taken in turn, as a server streaming ``n`` at once."""
    rounds: list[list[dict[str, Any]]] = []
    for position in range(max((len(g) for g in groups), default=0)):
        rounds.append([g[position] for g in groups if position < len(g)])
    return rounds


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # the longest common prefix, by halving
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a test or a benchmark ending) is no error to print."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Serves one connection (HTTP/1.1 keep-alive, chunked event streams)."""

    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._connections.discard(self.connection)
        super().finish()

    def do_GET(self) -> None:
        """``GET .../models``: the model list, as OpenAI answers it (files and batches:
        ``fake_openai_batches``)."""
        parts = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RecordedRequest("GET", parts.path, parse_qs(parts.query), headers, None)
        with self.fake._lock:
            self.fake.requests.append(record)
        if BATCH_ROUTE.match(parts.path):
            return self._batch_api(record, b"")
        if not MODELS_ROUTE.fullmatch(parts.path):
            return self._error(404, f"Invalid URL (GET {parts.path})")
        key = headers.get("api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.fake.api_key is not None and key != self.fake.api_key:
            return self._error(401, "Incorrect API key provided.", code="invalid_api_key")
        data = [{"id": model, "object": "model", "created": 1718400000, "owned_by": "fake"}
                for model in self.fake.models]  # fmt: skip
        self._json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RecordedRequest(
            "POST", parts.path, parse_qs(parts.query), headers, body, time.monotonic()
        )
        with self.fake._lock:
            self.fake.requests.append(record)
        if BATCH_ROUTE.match(parts.path):
            return self._batch_api(record, raw)
        with self.fake.counting(record.path) as self._ticket:
            self._answer(record)

    def _batch_api(self, record: RecordedRequest, raw: bytes) -> None:
        key = record.headers.get("api-key") or record.headers.get("authorization", "")
        if self.fake.api_key is not None and key.removeprefix("Bearer ") != self.fake.api_key:
            return self._error(401, "Incorrect API key provided.", code="invalid_api_key")
        self.fake.batches.serve(self, record.method, record.path, record.query, raw)

    def _answer(self, record: RecordedRequest) -> None:
        if not ROUTE.fullmatch(record.path) and not (
            self.fake.dialect == "llama.cpp" and record.path == "/chat/completions"
        ):
            return self._error(404, f"Invalid URL (POST {record.path})")
        if "/openai/deployments/" in record.path and not record.query.get("api-version"):
            return self._error(404, "Resource not found")
        headers = record.headers
        key = headers.get("api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.fake.api_key is not None and key != self.fake.api_key:
            return self._error(401, "Incorrect API key provided.", code="invalid_api_key")
        body = record.body
        problem = validate(body, self.fake.dialect)
        if problem:
            return self._error(400, problem)
        item = self.fake._next(body)
        if isinstance(item, ScriptedError) and item.status == HANG_UP:
            return self._drop()
        if isinstance(item, ScriptedError):
            return self._error(item.status, item.message, headers=item.headers)
        if body.get("stream"):
            return self._stream(self.fake.chunks_for(item, body), item, record)
        self._json(200, self.fake.completion_for(item, body))

    def _release(self) -> None:
        """The reply is as good as over: no longer counted in flight (fake_load.py)."""
        ticket = getattr(self, "_ticket", None)
        if ticket is not None:
            ticket.release()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._release()
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        kind = _ERROR_TYPES.get(status, "server_error")
        if self.fake.dialect == "llama.cpp":
            payload = {"error": {"code": status, "message": message, "type": kind}}
        else:
            payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self._json(status, payload, headers)

    def _stream(
        self, chunks: list[dict[str, Any]], reply: ScriptedReply, record: RecordedRequest
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", "req_fake")
        self.end_headers()
        for sent, chunk in enumerate(chunks):
            if sent == reply.drop_after:
                return self._drop()
            if sent == reply.error_after:
                self._release()
                error = {"error": {"message": "The server had an error while processing "
                                   "your request.", "type": "server_error"}}  # fmt: skip
                self._write(b"data: " + json.dumps(error).encode() + b"\n\n")
                return self._end()
            if sent == reply.malformed_after:
                self._release()
                self._write(b'data: {"id": "chatcmpl-fake", "choi\n\n')
                return self._end()
            self._write(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
            if sent == 0:
                record.first_chunk = time.monotonic()
        self._release()  # the SDK stops reading at [DONE]
        self._write(b"data: [DONE]\n\n")
        self._end()

    def _write(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        self._release()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


__all__ = ["ONE_CHOICE", "FakeOpenAI", "RecordedRequest"]
