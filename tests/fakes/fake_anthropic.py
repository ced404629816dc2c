"""A local fake of the Anthropic Messages API, so tests run the real SDK over real HTTP.

Mocking the SDK would test our idea of the SDK; this server lets the official client do
its own HTTP, server-sent-event parsing, retries and error mapping, offline. It serves
``POST /v1/messages`` (streaming and not), with scripted replies, injected faults and
prompt-cache accounting, and ``POST /v1/messages/count_tokens``, and records every
request so tests can check what was sent.

    with FakeAnthropic() as server:                      # or the ``fake_anthropic`` fixture
        server.enqueue(text="Hi there")                  # next reply
        server.enqueue(tool_use={"name": "add", "input": {"a": 1}}, text="I'll call it")
        server.enqueue(replay="basic_response.sse")      # a recorded real stream
        server.enqueue(stop_reason="max_tokens")         # or refusal=True
        server.enqueue(tokens=2000)                      # a long reply, one token a delta
        server.enqueue(thinking="Hmm...", text="Hi")      # thinking first, if the request asks
        server.enqueue(redacted=1, text="Hi")            # a redacted_thinking block too
        server.enqueue(usage={"input_tokens": 150_000})  # the usage reported, scripted
        server.enqueue(text="cut", drop_after=4)         # connection dropped after 4 events
        server.enqueue(error_event_after=3)              # ``event: error`` (overloaded_error)
        server.enqueue(malformed_after=3)                # a ``data:`` line that is not JSON
        server.enqueue_error(429, retry_after_ms=1, times=3)  # count_tokens gets these too
        server.enqueue_hang_up()                         # the connection closed, no response
        server.tokens_per_second = 100                   # each text delta waits 10 ms
        server.flowing.clear(); ...; server.flowing.set()  # streams held after 2 deltas
        server.enqueue(text="B", when=lambda body: body["model"] == "b")  # for some requests
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url)
        FakeAnthropic(endpoint="deepseek")                # as another endpoint: fake_endpoints
        server.batches.hold = True; server.batches.finish()  # Message Batches: fake_batches
        server.requests[-1].body                          # the parsed JSON body sent
        server.requests[-1].received, .first_event, .ended, .usage   # when, and what it cost
        server.requests[-1].raw                           # the body, byte for byte
        server.reset_load(); ...; server.most_in_flight   # the most answered at once

With nothing enqueued the reply is deterministic and says how many messages it got.

Thinking streams as the real API streams it (``content_block_start`` of a ``thinking``
block, ``thinking_delta`` pieces, one ``signature_delta``, ``content_block_stop``), only
when the request asks for thinking: with ``enabled`` thinking a reply always thinks (a
default text if none is scripted), with ``adaptive`` only when scripted. Signatures are
``fake_rules.sign_thinking``'s, so the rules can tell an altered or unsigned block.
count_tokens answers the prompt's size as the cache accounting measures it (characters
/ 4), so a count equals the input, cache-write and cache-read tokens of the same request.

Prompt caching follows the real API's rules (``fake_cache.py``), including when an entry
becomes readable (once the response that wrote it has sent its first event), each model's
minimum cacheable prefix and the entries' time to live (``FakeAnthropic(clock=...)``
lets a test move time). Like the real API it refuses (400) what breaks the API's request
rules (``fake_rules.py``: role order, tool use answered by tool results, message shape,
cache breakpoints, image and document blocks; ``fake_request_rules.py``: unknown fields,
tool blocks without ``tools``, tool names, what thinking forbids, each model's output and
window), a request without an ``anthropic-version`` header, a body over 32 MB (413);
with ``api_key`` set it refuses (401) any other key.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fakes.fake_cache import PromptCache, estimate_tokens, prompt_tokens
from fakes.fake_endpoints import endpoint_mode
from fakes.fake_load import InFlight
from fakes.fake_request_rules import BETA_FIELDS, COUNT_FIELDS, MESSAGE_FIELDS
from fakes.fake_rules import (
    COUNT_RULES,
    LEGACY_API_VERSION,
    RULES,
    redacted_data,
    sign_thinking,
    thinking_mode,
    validate,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic-sse"
DEFAULT_MODEL = "claude-sonnet-4-5"
MAX_REQUEST_BYTES = 32 * 1024 * 1024
HOLD_LIMIT = 300.0
"""Seconds a held stream waits at most for ``flowing`` (a test that failed never sets it)."""
_NO_VERSION = "anthropic-version: header is required"
_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class RecordedRequest:
    """One request as the server received it; header names are lower case.

    The times are ``time.monotonic()`` in the server's process: when the request
    arrived, when its first stream event was sent, and when its answer ended; ``usage``
    is the token accounting its answer reported."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received: float = 0.0
    first_event: float | None = None
    ended: float | None = None
    usage: dict[str, int] | None = None
    raw: bytes = b""
    """The body exactly as it arrived, byte for byte."""


@dataclass
class ScriptedReply:
    """What the server answers to one request (see ``FakeAnthropic.enqueue``)."""

    text: str | None = None
    tool_uses: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    replay: str | None = None
    tokens: int | None = None
    model: str | None = None
    drop_after: int | None = None
    error_event_after: int | None = None
    error_event_type: str = "overloaded_error"
    malformed_after: int | None = None
    thinking: str | None = None
    redacted: int = 0
    usage: dict[str, int] | None = None
    when: Callable[[Any], bool] | None = None

    @property
    def wants_default_text(self) -> bool:
        nothing_scripted = self.text is None and not self.tool_uses and self.tokens is None
        return nothing_scripted and self.replay is None and self.stop_reason != "refusal"


HANG_UP = 0
"""A ``ScriptedError`` status: no response at all, the connection closed."""


@dataclass
class ScriptedError:
    """An HTTP error status answered instead of a reply."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str]
    when: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class SseEvent:
    name: str
    data: str

    def encode(self) -> bytes:
        return f"event: {self.name}\ndata: {self.data}\n\n".encode()


def long_text(tokens: int) -> list[str]:
    """``tokens`` deterministic word pieces, one per stream delta."""
    return [("" if i == 0 else " ") + _WORDS[i % len(_WORDS)] for i in range(tokens)]


class FakeAnthropic(InFlight):
    """The fake server: ``start()``/``stop()`` or ``with``; ``base_url`` for the client."""

    def __init__(
        self,
        *,
        chunk_chars: int = 16,
        api_key: str | None = None,
        tokens_per_second: float | None = None,
        endpoint: str | None = None,
        first_event_delay: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        InFlight.__init__(self)  # requests answered at once (fake_load.py)
        self.endpoint = endpoint_mode(endpoint)
        """How this server differs from the Anthropic API (fake_endpoints.py)."""
        self.first_event_delay = first_event_delay
        """Seconds before a stream's first event (a server slow to begin: a long prefill)."""
        self.chunk_chars = chunk_chars
        self.api_key = api_key
        self.tokens_per_second = tokens_per_second
        """Stream text deltas at this rate (one delta ≈ one token); None: at once."""
        self.flowing = threading.Event()
        """While clear, streams stop after ``held_after`` text deltas until it is set again:
        a test holds answers mid-stream to look at what shows meanwhile, however slow the
        machine. (The kernel sends streamed text on with the next delta, not on a timer:
        give the stream a ``tokens_per_second`` and two deltas, and the first two show.)"""
        self.flowing.set()
        self.held_after = 2
        self.requests: list[RecordedRequest] = []
        self.cache = PromptCache(clock)
        """The prompt cache; its ``clock`` is what a cache entry's time to live is read by."""
        self._script: deque[ScriptedReply | ScriptedError] = deque()
        self._lock = threading.Lock()
        self._message_count = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._connections: set[socket.socket] = set()
        self._thread: threading.Thread | None = None
        from fakes.fake_batches import FakeBatches

        self.batches = FakeBatches(self)
        """Message Batches (fake_batches.py): hold, finish, expire, fail."""

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeAnthropic:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close open keep-alive connections, as a server going away."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            connections, self._connections = self._connections, set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- scripting -------------------------------------------------------------------
    def enqueue(
        self,
        text: str | None = None,
        *,
        tool_use: dict[str, Any] | list[dict[str, Any]] | None = None,
        stop_reason: str | None = None,
        refusal: bool = False,
        replay: str | None = None,
        tokens: int | None = None,
        model: str | None = None,
        drop_after: int | None = None,
        error_event_after: int | None = None,
        error_event_type: str = "overloaded_error",
        malformed_after: int | None = None,
        thinking: str | None = None,
        redacted: int = 0,
        usage: dict[str, int] | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> None:
        """Script the next reply. ``tool_use`` is ``{"name", "input"}`` (an ``id`` is
        made up if absent); ``replay`` names a file in fixtures/anthropic-sse/. The
        ``*_after`` faults count events sent (``message_start`` is event 1).
        ``thinking`` and ``redacted`` (a number of ``redacted_thinking`` blocks) stream
        before the text when the request asks for thinking; ``usage`` replaces the
        counts the cache accounting would report. With ``when``, it answers the first
        request whose body ``when`` accepts (concurrent requests arrive in no fixed
        order)."""
        tool_uses = [tool_use] if isinstance(tool_use, dict) else list(tool_use or [])
        if refusal:
            stop_reason = "refusal"
        self._push(
            ScriptedReply(
                text=text,
                tool_uses=tool_uses,
                stop_reason=stop_reason,
                replay=replay,
                tokens=tokens,
                model=model,
                drop_after=drop_after,
                error_event_after=error_event_after,
                error_event_type=error_event_type,
                malformed_after=malformed_after,
                thinking=thinking,
                redacted=redacted,
                usage=usage,
                when=when,
            )
        )

    def enqueue_error(
        self,
        status: int,
        *,
        times: int = 1,
        message: str | None = None,
        error_type: str | None = None,
        retry_after_ms: int | None = None,
        retry_after: int | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> None:
        """Answer the next ``times`` requests (that ``when`` accepts, if given) with an
        HTTP error (429, 529, 500, 401...)."""
        headers = {}
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        kind = error_type or _ERROR_TYPES.get(status, "api_error")
        for _ in range(times):
            self._push(ScriptedError(status, kind, message or f"fake {kind}", headers, when))

    def enqueue_hang_up(self, *, times: int = 1) -> None:
        """Close the next ``times`` requests' connections without a response, as a server
        does that closes a kept-alive connection just as the client reuses it."""
        for _ in range(times):
            self._push(ScriptedError(HANG_UP, "", "", {}))

    def reset(self) -> None:
        """Forget the script, the recorded requests and the prompt cache."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.flowing.set()
            self.cache = PromptCache(self.cache.clock)
        self.batches.reset()

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    def _push(self, item: ScriptedReply | ScriptedError) -> None:
        with self._lock:
            self._script.append(item)

    def _next_error(self, body: Any) -> ScriptedError | None:
        """The next scripted error (that ``when`` accepts), for a count, which never
        takes a scripted reply: a reply first in line stays there for its request."""
        with self._lock:
            item = next((i for i in self._script if i.when is None or i.when(body)), None)
            if isinstance(item, ScriptedError):
                self._script.remove(item)
                return item
        return None

    def _next(self, body: Any) -> ScriptedReply | ScriptedError:
        with self._lock:
            self._message_count += 1
            item = next((i for i in self._script if i.when is None or i.when(body)), None)
            if item is None:
                item = ScriptedReply()
            else:
                self._script.remove(item)
        if isinstance(item, ScriptedReply) and item.wants_default_text:
            item.text = default_reply_text(body)
        return item

    # -- replies as events -----------------------------------------------------------
    def events_for(
        self, reply: ScriptedReply, body: dict[str, Any], pending: list[str] | None = None
    ) -> list[SseEvent]:
        """The stream for a scripted reply, in the real API's order; the cache entries it
        writes go to ``pending`` (see ``PromptCache.usage``) when given."""
        if reply.replay is not None:
            return list(read_recording(FIXTURES / reply.replay))
        with self._lock:
            number = self._message_count
        reply_id = f"msg_fake{number:06d}"
        usage = self.cache.usage(body, pending)
        if reply.usage is not None:
            usage = {**usage, **{k: v for k, v in reply.usage.items() if k != "output_tokens"}}
        start_message = {
            "id": reply_id,
            "type": "message",
            "role": "assistant",
            "model": reply.model or body.get("model", DEFAULT_MODEL),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events = [_event("message_start", {"type": "message_start", "message": start_message})]
        index, output_tokens = 0, 0
        for block_events, tokens in self._thinking_blocks(reply, body, reply_id):
            events += block_events
            output_tokens += tokens
            index += 1
        pieces = self._text_pieces(reply)
        if pieces is not None:
            events += self._text_block(index, pieces)
            output_tokens += reply.tokens or estimate_tokens("".join(pieces))
            index += 1
        for tool_use in reply.tool_uses:
            events += self._tool_use_block(index, tool_use, reply_id)
            output_tokens += estimate_tokens(json.dumps(tool_use.get("input", {})))
            index += 1
        stop_reason = reply.stop_reason or ("tool_use" if reply.tool_uses else "end_turn")
        events.append(
            _event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": _scripted_output(reply, output_tokens)},
                },
            )
        )
        events.append(_event("message_stop", {"type": "message_stop"}))
        return events

    def _thinking_blocks(
        self, reply: ScriptedReply, body: dict[str, Any], reply_id: str
    ) -> list[tuple[list[SseEvent], int]]:
        """Each thinking block's events and output tokens, if the request asks to think."""
        mode = thinking_mode(body)
        thought = reply.thinking
        if mode == "enabled" and thought is None:
            thought = f"Thinking about {len(body.get('messages', []))} message(s)."
        if mode is None or (thought is None and not reply.redacted):
            return []
        count = (1 if thought is not None else 0) + reply.redacted
        blocks: list[tuple[list[SseEvent], int]] = []
        if thought is not None:
            step = self.chunk_chars
            pieces = [thought[i : i + step] for i in range(0, len(thought), step)]
            start = {"type": "thinking", "thinking": "", "signature": ""}
            signature = sign_thinking(reply_id, 0, count, thought)
            events = [_block_start(0, start)]
            events += _deltas(0, "thinking_delta", "thinking", pieces)
            events += _deltas(0, "signature_delta", "signature", [signature])
            events.append(_block_stop(0))
            blocks.append((events, estimate_tokens(thought)))
        for position in range(count - reply.redacted, count):
            data = redacted_data(reply_id, position, count)
            start = {"type": "redacted_thinking", "data": data}
            blocks.append(([_block_start(position, start), _block_stop(position)], 100))
        return blocks

    def _text_pieces(self, reply: ScriptedReply) -> list[str] | None:
        if reply.tokens is not None:
            return long_text(reply.tokens)
        if reply.text is None and reply.tool_uses:
            return None
        text = reply.text or ""
        return [text[i : i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)]

    def _text_block(self, index: int, pieces: list[str]) -> list[SseEvent]:
        events = [
            _event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        ]
        if index == 0:
            events.append(_event("ping", {"type": "ping"}))
        return events + _deltas_and_stop(index, "text_delta", "text", pieces)

    def _tool_use_block(
        self, index: int, tool_use: dict[str, Any], reply_id: str
    ) -> list[SseEvent]:
        made_up = f"toolu_{reply_id.removeprefix('msg_')}_{index:02d}"  # unique, as the API's
        block = {
            "type": "tool_use",
            "id": tool_use.get("id", made_up),
            "name": tool_use["name"],
            "input": {},
        }
        raw = json.dumps(tool_use.get("input", {}))
        pieces = ["", *(raw[i : i + 7] for i in range(0, len(raw), 7))]
        events = [
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        ]
        return events + _deltas_and_stop(index, "input_json_delta", "partial_json", pieces)


def _deltas_and_stop(index: int, kind: str, field: str, pieces: list[str]) -> list[SseEvent]:
    """A block's content_block_delta events, one a piece, then its content_block_stop."""
    return [*_deltas(index, kind, field, pieces), _block_stop(index)]


def _deltas(index: int, kind: str, field: str, pieces: list[str]) -> list[SseEvent]:
    return [
        _event(
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: piece}},
        )
        for piece in pieces
    ]


def _block_start(index: int, block: dict[str, Any]) -> SseEvent:
    payload = {"type": "content_block_start", "index": index, "content_block": block}
    return _event("content_block_start", payload)


def _block_stop(index: int) -> SseEvent:
    return _event("content_block_stop", {"type": "content_block_stop", "index": index})


def _scripted_output(reply: ScriptedReply, counted: int) -> int:
    if reply.usage is not None and "output_tokens" in reply.usage:
        return reply.usage["output_tokens"]
    return max(counted, 1)


def _event(name: str, data: dict[str, Any]) -> SseEvent:
    return SseEvent(name, json.dumps(data, separators=(",", ":")))


def read_recording(path: Path) -> Iterator[SseEvent]:
    """Events of a recorded ``.sse`` file (the last may lack its trailing newline)."""
    for chunk in path.read_text().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.strip().splitlines() if ": " in line)
        if "event" in fields:
            yield SseEvent(fields["event"], fields.get("data", ""))


def message_from_events(events: list[SseEvent]) -> dict[str, Any]:
    """Fold a stream into the non-streaming response body."""
    message: dict[str, Any] = {}
    partial_json: dict[int, str] = {}
    for event in events:
        data = json.loads(event.data)
        kind = data["type"]
        if kind == "message_start":
            message = data["message"]
        elif kind == "content_block_start":
            message["content"].append(data["content_block"])
        elif kind == "content_block_delta":
            delta, block = data["delta"], message["content"][data["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "input_json_delta":
                partial_json[data["index"]] = (
                    partial_json.get(data["index"], "") + delta["partial_json"]
                )
        elif kind == "content_block_stop" and data["index"] in partial_json:
            message["content"][data["index"]]["input"] = json.loads(
                partial_json[data["index"]] or "{}"
            )
        elif kind == "message_delta":
            message.update(data["delta"])
            message["usage"].update(data["usage"])
    return message


def default_reply_text(body: Any) -> str:
    messages = body.get("messages", []) if isinstance(body, dict) else []
    last = messages[-1].get("content", "") if messages else ""
    if isinstance(last, list):
        last = " ".join(b.get("text", "") for b in last if isinstance(b, dict))
    return f"Fake reply to {len(messages)} message(s); the last said: {str(last)[:200]}"


class _Handler(BaseHTTPRequestHandler):
    """Serves one connection (HTTP/1.1 keep-alive, chunked event streams)."""

    fake: FakeAnthropic
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
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
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RecordedRequest("GET", self.path, headers, None, received=time.monotonic())
        with self.fake._lock:
            self.fake.requests.append(record)
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.fake.api_key is not None and key != self.fake.api_key:
            return self._send_error(401, "authentication_error", "invalid x-api-key")
        if self.path.startswith("/v1/messages/batches"):
            return self.fake.batches.handle(self, "GET", self.path.split("?")[0], b"", headers)
        if self.path.split("?")[0] != "/v1/models":
            return self._send_error(404, "not_found_error", f"no route {self.path}")
        body, status = self.fake.endpoint.models
        self._send_json(status, body)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:  # a batch's body is read by fake_batches.py (once: it may be 100,000 requests)
            batch = self.path.startswith("/v1/messages/batches")
            body: Any = None if batch else json.loads(raw or b"null")
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RecordedRequest(
            "POST", self.path, headers, body, received=time.monotonic(), raw=raw
        )
        with self.fake._lock:
            self.fake.requests.append(record)
        try:
            with self.fake.counting(record.path) as self._ticket:
                self._answer(record)
        finally:
            record.ended = time.monotonic()

    def _answer(self, record: RecordedRequest) -> None:
        headers, body = record.headers, record.body
        route = self.path.split("?")[0]
        if route.startswith("/v1/messages/batches"):
            key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            if self.fake.api_key is not None and key != self.fake.api_key:
                return self._send_error(401, "authentication_error", "invalid x-api-key")
            return self.fake.batches.handle(self, "POST", route, record.raw, headers)
        if route not in ("/v1/messages", "/v1/messages/count_tokens"):
            return self._send_error(404, "not_found_error", f"no route {self.path}")
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.fake.api_key is not None and key != self.fake.api_key:
            return self._send_error(401, "authentication_error", "invalid x-api-key")
        if int(headers.get("content-length") or 0) > MAX_REQUEST_BYTES:  # the API's limit
            return self._send_error(
                413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
            )
        mode = self.fake.endpoint  # another endpoint's ways (fake_endpoints.py), if any
        version = headers.get("anthropic-version")
        if mode.any_version:  # it reads no version header: it takes what Anthropic's 2023 one did
            version = LEGACY_API_VERSION
        elif not version:
            return self._send_error(400, "invalid_request_error", _NO_VERSION)
        beta = BETA_FIELDS if headers.get("anthropic-beta") else frozenset()
        if route == "/v1/messages/count_tokens":
            if not mode.count_tokens:
                return self._send_error(404, "not_found_error", f"no route {self.path}")
            problem = validate(body, mode.rules(COUNT_RULES), version, fields=COUNT_FIELDS | beta)
            if problem:
                return self._send_error(400, "invalid_request_error", problem)
            error = self.fake._next_error(body)
            if error is not None and error.status == HANG_UP:
                return self._drop()
            if error is not None:
                return self._send_error(
                    error.status, error.error_type, error.message, error.headers
                )
            return self._send_json(200, {"input_tokens": prompt_tokens(body)})
        problem = validate(body, mode.rules(RULES), version, fields=MESSAGE_FIELDS | beta)
        if problem:
            return self._send_error(400, "invalid_request_error", problem)
        body = mode.answering(body)
        item = self.fake._next(body)
        if isinstance(item, ScriptedError) and item.status == HANG_UP:
            return self._drop()
        if isinstance(item, ScriptedError):
            return self._send_error(item.status, item.error_type, item.message, item.headers)
        pending: list[str] = []
        events = self.fake.events_for(item, body, pending)
        if events and events[0].name == "message_start":
            record.usage = json.loads(events[0].data)["message"]["usage"]
        if body.get("stream"):
            self._stream(events, item, lambda: self._began(record, pending))
        else:
            self._send_json(200, message_from_events(events))
            self._began(record, pending)

    def _began(self, record: RecordedRequest, pending: list[str]) -> None:
        """The response has begun: what it wrote to the cache is readable from now on."""
        record.first_event = time.monotonic()
        self.fake.cache.publish(pending)

    def _release(self) -> None:
        """The reply is as good as over: no longer counted in flight (fake_load.py)."""
        ticket = getattr(self, "_ticket", None)
        if ticket is not None:
            ticket.release()

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._release()
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        payload = {"type": "error", "error": {"type": error_type, "message": message}}
        self._send_json(status, payload, headers)

    def _stream(
        self, events: list[SseEvent], reply: ScriptedReply, began: Callable[[], None]
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        payloads = [event.encode() for event in events]
        if reply.replay is not None:  # byte for byte, so a missing final newline stays missing
            payloads = _recording_payloads(FIXTURES / reply.replay)
        rate = self.fake.tokens_per_second
        pause = 1 / rate if rate else 0.0
        if self.fake.first_event_delay:
            time.sleep(self.fake.first_event_delay)
        deltas = 0
        for sent, payload in enumerate(payloads):
            if sent == reply.drop_after:
                return self._drop()
            if sent == reply.error_event_after:
                self._release()
                error = {
                    "type": "error",
                    "error": {"type": reply.error_event_type, "message": "Overloaded"},
                }
                self._write_chunk(_event("error", error).encode())
                return self._end_chunks()
            if sent == reply.malformed_after:
                self._release()
                self._write_chunk(b'event: content_block_delta\ndata: {"type": "content_blo\n\n')
                return self._end_chunks()
            if payload.startswith(b"event: content_block_delta"):
                if deltas >= self.fake.held_after:
                    self.fake.flowing.wait(HOLD_LIMIT)
                deltas += 1
                if pause:
                    time.sleep(pause)
            self._write_chunk(payload)
            if sent == 0:
                began()
        self._release()
        self._end_chunks()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        self._release()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _recording_payloads(path: Path) -> list[bytes]:
    raw = path.read_bytes()
    parts = raw.split(b"\n\n")
    payloads = [part + b"\n\n" for part in parts[:-1]]
    if parts[-1]:
        payloads.append(parts[-1])
    return payloads
