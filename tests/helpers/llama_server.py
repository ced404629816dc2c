"""A real model server for the tests: llama.cpp's ``llama-server`` with SmolLM2-135M.

The same binary and model ``jupyter tree-chat serve-local`` runs (found or built and
fetched by ``jupyter_tree_chat/cli/local_model.py``; ``bash scripts/setup.sh`` prepares
both), started the way serve-local starts it (``cli/llama_process.py``), on a free port
of 127.0.0.1, never 8080. Its answers are real and so not fixed: assert on structure
(stored, on the right branch, what was sent), not on words.

Interface (the fixtures are in ``conftest.py``)::

    def test_it(llama_server):                  # one server for the whole session
        llama_server.base_url                   # "http://127.0.0.1:PORT": a client's
                                                #   base_url, ANTHROPIC_BASE_URL, an
                                                #   endpoint's base_url
        llama_server.model                      # "smollm2": the model name it answers to
        llama_server.port, llama_server.pid
        llama_server.log_text()                 # everything it has printed (log_path)
        llama_server.prompts()                  # each prompt it evaluated, oldest first,
                                                #   as the chat template rendered it
        llama_server.prompts(since=mark)        # only those after mark = ...prompt_mark()

    def test_crash(llama_server_factory):       # a server of the test's own
        server = llama_server_factory()         # started and ready; same interface
        server.kill()                           # SIGKILL at once (mid-stream, say)
        server.stop()                           # or in order; teardown kills what is left

``llama_server_factory(**options)`` takes ``alias``, ``context``, ``parallel`` and
``extra`` (more llama-server arguments), as ``llama_process.start_server`` does.

The session's server has ``--alias smollm2 --jinja``, an 8192-token context shared by 4
slots (``--kv-unified``: a fan-out of three never queues behind one slot, and any one
conversation may use the whole context), no web UI, and ``--log-prompts-dir``. A prompt
file is named by the server's clock in milliseconds: two prompts started in the same
millisecond (a fan-out) can share one file, so count fan-out requests from the answers,
not from ``prompts()``. The session's server is shared: a test that wants an exact
count of what it sent takes ``prompt_mark()`` first, or a server of its own.

When the binary or the model is missing, the fixture FAILS (never skips) and says the
command that prepares them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_tree_chat.cli import local_model
from jupyter_tree_chat.cli.llama_process import LlamaServer, free_port, server_command, url_of

ALIAS = local_model.MODEL_ALIAS
#: the session server's context (tokens, shared by the slots) and slots
CONTEXT = 8192
PARALLEL = 4
PREPARE = f"bash scripts/setup.sh (or: {local_model.PREPARE_COMMAND})"


class TestServer(LlamaServer):
    """A ``LlamaServer`` that also keeps every prompt it evaluates (``prompts()``)."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, command: list[str], *, base_url: str, log_path: Path, prompts_dir: Path):
        super().__init__(
            command,
            base_url=base_url,
            model=command[command.index("--alias") + 1],
            log_path=log_path,
        )
        self.prompts_dir = prompts_dir

    def _prompt_files(self) -> list[Path]:
        return sorted(self.prompts_dir.glob("*.txt")) if self.prompts_dir.is_dir() else []

    def prompt_mark(self) -> int:
        """How many prompts the server has evaluated so far; pass it to ``prompts``."""
        return len(self._prompt_files())

    def prompts(self, since: int = 0) -> list[str]:
        """Every prompt evaluated (after the first ``since``), oldest first."""
        return [file.read_text(encoding="utf-8") for file in self._prompt_files()[since:]]


def binary_and_model() -> tuple[Path, Path]:
    """The llama-server and the model file, or a pytest failure naming the fix."""
    binary, model = local_model.find_server(), local_model.find_model()
    missing = [
        name
        for name, found in (
            (f"llama-server (not on PATH, not in {local_model.cached_server()})", binary),
            (f"the model ({local_model.cached_model()})", model),
        )
        if found is None
    ]
    if missing:
        pytest.fail(
            f"the real local model is not prepared: {' and '.join(missing)} missing; run {PREPARE}",
            pytrace=False,
        )
    assert binary is not None and model is not None
    return binary, model


def start_test_server(
    folder: Path,
    *,
    alias: str = ALIAS,
    context: int = CONTEXT,
    parallel: int = PARALLEL,
    extra: tuple[str, ...] = (),
) -> TestServer:
    """Start a server whose log and prompts go under ``folder``; return it once ready."""
    binary, model = binary_and_model()
    host, port, prompts_dir = "127.0.0.1", free_port(), folder / "prompts"
    command = server_command(
        binary,
        model,
        host=host,
        port=port,
        alias=alias,
        context=context,
        parallel=parallel,
        webui=False,
        prompts_dir=prompts_dir,
        extra=extra,
    )
    server = TestServer(
        command,
        base_url=url_of(host, port),
        log_path=folder / "llama-server.log",
        prompts_dir=prompts_dir,
    )
    ready = False
    try:
        server.wait_ready(timeout=60)
        ready = True
    except local_model.LocalModelError as error:
        pytest.fail(f"llama-server did not start: {error}", pytrace=False)
    finally:
        if not ready:
            server.kill()
    return server


@contextlib.contextmanager
def running_server(folder: Path, **options: Any) -> Iterator[TestServer]:
    """A started server, killed when the block ends."""
    server = start_test_server(folder, **options)
    try:
        yield server
    finally:
        server.kill()


@contextlib.contextmanager
def server_factory(folder: Path) -> Iterator[Callable[..., TestServer]]:
    """A function that starts servers (each in a folder of its own), all killed at the
    end of the block."""
    started: list[TestServer] = []

    def start(**options: Any) -> TestServer:
        server = start_test_server(folder / f"server-{len(started)}", **options)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.kill()
