"""A Streamable HTTP MCP server for the tests, built on the ``mcp`` SDK's own server.

    python tests/helpers/mcp_http_server.py PORT TOKEN

serves ``http://127.0.0.1:PORT/mcp`` and refuses (401) any request without
``Authorization: Bearer TOKEN``, so a test can show that ``headers`` with ``${VAR}``
reach the server. Its tools:

- ``count(label)``: annotated not destructive; how many times it has been called (so a
  test can show that replaying or switching a branch never runs a tool again),
  ``"call N: label"``;
- ``slow(seconds)``: annotated read-only; answers after ``seconds`` (a timeout, Ctrl-C,
  overlapping calls);
- ``erase(what)``: annotated destructive; answers what it would have erased.

It prints ``ready`` on stdout once it accepts connections.
"""

from __future__ import annotations

import sys
import time

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("counter")
calls = 0
running = 0
most_running = 0


@server.tool(annotations=ToolAnnotations(destructive_hint=False))
def count(label: str) -> str:
    """Count this call and say how many there have been."""
    global calls
    calls += 1
    return f"call {calls}: {label}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def slow(seconds: float) -> str:
    """Answer after some seconds, saying how many calls ran at once at most."""
    global running, most_running
    running += 1
    most_running = max(most_running, running)
    try:
        await anyio.sleep(seconds)
    finally:
        running -= 1
    return f"slept {seconds:g} s; at most {most_running} at once"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def erase(what: str) -> str:
    """Erase something (it does not really)."""
    return f"erased {what}"


def main(port: int, token: str) -> None:
    app = server.streamable_http_app()

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no token"})
                return
        await app(scope, receive, send)

    config = uvicorn.Config(guarded, host="127.0.0.1", port=port, log_level="warning")
    web = uvicorn.Server(config)

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve)
            while not web.started:
                await anyio.sleep(0.02)
            print("ready", flush=True)

    started = time.monotonic()
    anyio.run(serve)
    print(f"served {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
