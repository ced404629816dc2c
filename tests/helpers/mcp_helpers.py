"""The MCP servers the tests run, and what tests ask about processes.

Real servers no one here wrote: ``@modelcontextprotocol/server-everything`` and
``@modelcontextprotocol/server-filesystem`` (npm, installed from ``tests/mcp_servers``'s
lock file by ``scripts/setup.sh``), ``mcp-server-git`` (PyPI, in the test extra); and a
Streamable HTTP server made with the SDK's own server (``mcp_http_server.py``); a stdio
server on the SDK whose tools are annotated each way (``mcp_notes_server.py``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
NPM_BIN = HERE.parent / "mcp_servers" / "node_modules" / ".bin"
EVERYTHING = NPM_BIN / "mcp-server-everything"
FILESYSTEM = NPM_BIN / "mcp-server-filesystem"
GIT = Path(sys.executable).with_name("mcp-server-git")
HTTP_SERVER = HERE / "mcp_http_server.py"
NOTES_SERVER = HERE / "mcp_notes_server.py"


def require_reference_servers() -> None:
    """Fail (never skip) a test that needs the npm reference servers when they are not
    installed: a missing setup must not look green."""
    missing = [path.name for path in (EVERYTHING, FILESYSTEM, GIT) if not path.exists()]
    if missing:
        pytest.fail(
            f"the reference MCP servers are not installed ({', '.join(missing)}): "
            "run bash scripts/setup.sh (it installs tests/mcp_servers)",
            pytrace=False,
        )


def everything(*marks: str) -> dict[str, Any]:
    """server-everything on stdio; ``marks`` (ignored by it) make its command line unique,
    so a test can find its process with ``ps``."""
    return {"command": str(EVERYTHING), "args": ["stdio", *marks]}


def filesystem(folder: Path) -> dict[str, Any]:
    return {"command": str(FILESYSTEM), "args": [str(folder)]}


def notes(folder: Path, allowed: list[str] | None = None) -> dict[str, Any]:
    """The SDK-built notes server (mcp_notes_server.py): a tool annotated each way and one
    not at all, keeping ``folder/notes.txt``; ``allowed`` is the entry's allowed_tools."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(NOTES_SERVER), str(folder)]}
    if allowed is not None:
        entry["allowed_tools"] = allowed
    return entry


def git(repo: Path) -> dict[str, Any]:
    return {"command": str(GIT), "args": ["--repository", str(repo)]}


def garbage() -> dict[str, Any]:
    """A "server" that prints something else than JSON-RPC on its stdout, then waits."""
    script = "import sys, time; print('Welcome to my server!', flush=True); time.sleep(60)"
    return {"command": sys.executable, "args": ["-c", script]}


def exits() -> dict[str, Any]:
    """A "server" that says why on stderr and exits at once."""
    script = "import sys; print('config file missing: /etc/nothing', file=sys.stderr); sys.exit(2)"
    return {"command": sys.executable, "args": ["-c", script]}


def write_mcp_json(folder: Path, servers: dict[str, Any]) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def git_repo(folder: Path) -> Path:
    """A git repository with two commits."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
    }
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=folder, check=True, env=env)
    for name, message in (("a.txt", "first: add a"), ("b.txt", "second: add b")):
        (folder / name).write_text(name)
        subprocess.run(["git", "add", name], cwd=folder, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "-m", message], cwd=folder, check=True, env=env)
    return folder


def processes_with(text: str) -> list[tuple[int, str]]:
    """Running processes whose command line contains ``text`` (by ``ps``)."""
    listing = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in listing.splitlines():
        parts = line.split(None, 2)
        if len(parts) < 3:
            continue
        pid, stat, args = parts
        if text in args and not stat.startswith("Z") and int(pid) != os.getpid():
            found.append((int(pid), args))
    return found


def wait_until(condition: Any, timeout: float = 20.0, what: str = "the condition") -> Any:
    """Poll ``condition()`` until it is truthy; its value, or AssertionError after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(token: str) -> Iterator[str]:
    """The SDK's Streamable HTTP server on 127.0.0.1; yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), str(port), token],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "ready":
            process.kill()
            raise AssertionError(f"the HTTP MCP server did not start: {process.stderr.read()}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
