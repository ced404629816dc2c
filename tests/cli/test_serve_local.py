"""``jupyter tree-chat serve-local`` as a person runs it: a real subprocess starting the
real llama-server, asked through the real ``anthropic`` SDK and plain HTTP, stopped with
Ctrl-C; and its one-line refusals (a missing model file, a busy port, a public address)."""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anthropic
import pytest
from helpers.llama_server import binary_and_model

from jupyter_tree_chat.cli.llama_process import free_port
from jupyter_tree_chat.cli.serve_local import _ready_line

SCRIPT = Path(sys.executable).with_name("jupyter-tree-chat")
PROG = "jupyter-tree-chat"


class ServeLocal:
    """``jupyter-tree-chat serve-local ARGS`` running, its stdout read line by line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [str(SCRIPT), "serve-local", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._new: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._new.put(line.rstrip("\n"))
        self._new.put(None)

    def line_containing(self, text: str, timeout: float = 60) -> str:
        """The first line of stdout holding ``text`` (failing with all seen if none)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._new.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                stderr = self.process.stderr.read() if self.process.poll() is not None else ""
                pytest.fail(f"no line with {text!r}; stdout {self.lines}, stderr {stderr!r}")
            self.lines.append(line)
            if text in line:
                return line

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def processes_mentioning(text: str) -> list[str]:
    """Every running process whose command line holds ``text`` (as ``ps`` shows them)."""
    command = ["ps", "-ww", "-eo", "pid,args"]  # -ww: whole command lines
    listing = subprocess.run(command, capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if text in line and "ps -ww -eo" not in line]


def wait_until_gone(text: str, timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := processes_mentioning(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def model_link(tmp_path: Path) -> Path:
    """The real model under a path no other test uses, so ``ps`` tells this test's
    server from any other on the machine."""
    _binary, model = binary_and_model()
    link = tmp_path / f"unique-{os.getpid()}-{tmp_path.name}" / "smollm2.gguf"
    link.parent.mkdir()
    link.symlink_to(model)
    return link


def test_serve_local_announces_answers_both_apis_and_stops_on_ctrl_c(
    model_link: Path, tmp_path: Path
) -> None:
    port = free_port()
    serve = ServeLocal(
        "--port",
        str(port),
        "--model-file",
        str(model_link),
        "--alias",
        "smollm2",
        "--log",
        str(tmp_path / "server.log"),
    )
    try:
        ready = serve.line_containing("is ready")
        url = f"http://127.0.0.1:{port}"
        assert ready == (
            f"llama-server at {url} is ready (model smollm2): ask it with "
            f"%%chat --model local:smollm2 after %config TreeChat.endpoints = "
            f'{{"local": {{"base_url": "{url}"}}}}; Ctrl-C stops it'
        )
        assert serve.lines[0].startswith("Starting llama-server (")
        assert processes_mentioning(str(model_link)), "the server runs with the given file"

        # the Messages API, streamed, through the real SDK
        client = anthropic.Anthropic(api_key="unused-by-llama-server", base_url=url)
        deltas = []
        with client.messages.stream(
            model="smollm2",
            max_tokens=24,
            messages=[{"role": "user", "content": "Name a colour."}],
        ) as stream:
            deltas.extend(stream.text_stream)
            final = stream.get_final_message()
        assert deltas and "".join(deltas) == final.content[0].text
        assert (final.role, final.model) == ("assistant", "smollm2")
        assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0

        # OpenAI's Chat Completions, plain HTTP
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        body = {
            "model": "smollm2",
            "max_tokens": 16,
            "messages": [{"role": "user", "content": "Say hello."}],
        }
        connection.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        completion = json.loads(response.read())
        connection.close()
        assert response.status == 200
        assert completion["object"] == "chat.completion"
        assert completion["choices"][0]["message"]["role"] == "assistant"
        assert completion["choices"][0]["message"]["content"].strip()
        assert completion["usage"]["completion_tokens"] > 0

        # Ctrl-C
        serve.process.send_signal(signal.SIGINT)
        assert serve.process.wait(timeout=30) == 0
        assert serve.line_containing("Stopped.") == "Stopped."
        assert wait_until_gone(str(model_link)) == []
    finally:
        serve.stop()


def test_a_killed_serve_local_takes_its_server_with_it(model_link: Path, tmp_path: Path) -> None:
    serve = ServeLocal(
        "--port",
        str(free_port()),
        "--model-file",
        str(model_link),
        "--log",
        str(tmp_path / "server.log"),
    )
    try:
        assert "(model smollm2)" in serve.line_containing("is ready")
        serve.process.kill()  # no chance to clean up: the kernel's parent-death signal does
        serve.process.wait()
        assert wait_until_gone(str(model_link)) == []
    finally:
        serve.stop()


def test_the_ready_line_names_the_local_endpoint_on_its_own_address() -> None:
    assert _ready_line("http://127.0.0.1:8080", "smollm2") == (
        "local at http://127.0.0.1:8080 is ready (model smollm2): "
        "ask it with %%chat --model local:smollm2; Ctrl-C stops it"
    )


def refusal(*args: str) -> str:
    """What ``serve-local ARGS`` says on stderr, checking it is one line and status 2."""
    done = subprocess.run(
        [str(SCRIPT), "serve-local", *args], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"{PROG}: ")
    return done.stderr[len(PROG) + 2 : -1]


def test_a_missing_or_wrong_model_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    assert refusal("--model-file", str(missing)) == (
        f"{missing}: no such file; --model-file takes a GGUF model file"
    )
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    assert refusal("--model-file", str(text)) == (
        f"{text} is not a GGUF model file (llama-server reads only GGUF)"
    )


def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(12))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert refusal("--port", str(port), "--model-file", str(model)) == (
            f"port {port} on 127.0.0.1 is in use (a server already running?): stop it, "
            "or choose another port with --port"
        )


def test_a_public_address_needs_allow_remote(tmp_path: Path) -> None:
    assert refusal("--host", "0.0.0.0") == (
        "--host 0.0.0.0 would let other machines use this server, which has no key: "
        "give --allow-remote too if that is what you want"
    )


def test_a_model_the_server_cannot_load_is_one_line_with_its_reason(tmp_path: Path) -> None:
    binary_and_model()  # the real server is there to refuse it
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(4) + b"not a real header")
    log = tmp_path / "server.log"
    args = ("--port", str(free_port()), "--model-file", str(broken), "--log", str(log))
    command = [str(SCRIPT), "serve-local", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout.startswith("Starting llama-server (")
    # the reason is the server's own first error line (this build: "bad GGUF version: 0")
    reason = done.stderr.removeprefix(f"{PROG}: llama-server stopped before it was ready: ")
    assert reason.endswith(f" (its log: {log})\n") and reason.count("\n") == 1
    assert "GGUF" in reason and reason.split(" (its log")[0] in log.read_text()
