"""Shared pytest fixtures. Keep each one generic and documented; one section per area."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import FakeOpenAI
from helpers.kernel_harness import Kernel
from helpers.llama_server import TestServer, running_server, server_factory
from helpers.mcp_helpers import require_reference_servers
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

from jupyter_tree_chat import i18n, load_ipython_extension
from jupyter_tree_chat.kernel import sessions as kernel_sessions

# -- the local fake Anthropic Messages API ---------------------------------------------


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A started fake Messages API server on 127.0.0.1; ``.base_url`` for the client."""
    with FakeAnthropic() as server:
        yield server


# -- the local fake Chat Completions server ---------------------------------------------


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started fake Chat Completions server; ``.base_url`` (ending in /v1) for the client."""
    with FakeOpenAI() as server:
        yield server


# -- the reference MCP servers (npm, tests/mcp_servers) ---------------------------------------


@pytest.fixture
def reference_servers() -> None:
    """Fails (never skips) when ``scripts/setup.sh`` has not installed them; a module
    that needs them says ``pytest.mark.usefixtures("reference_servers")``."""
    require_reference_servers()


# -- a real model server: llama.cpp's llama-server with SmolLM2-135M ---------------------


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestServer]:
    """One real llama-server for the session, on a free port (``.base_url``, ``.model``,
    ``.log_text()``, ``.prompts()``: tests/helpers/llama_server.py); fails if not prepared."""
    with running_server(tmp_path_factory.mktemp("llama-server")) as server:
        yield server


@pytest.fixture
def llama_server_factory(tmp_path: Path) -> Iterator[Callable[..., TestServer]]:
    """Starts servers of the test's own (``.kill()`` one mid-stream); all killed after."""
    with server_factory(tmp_path / "llama") as start:
        yield start


# -- an in-process IPython shell -------------------------------------------------------


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A shell with the extension loaded and ``__session__`` set to a tmp notebook
    (offline: no API key; set ``ANTHROPIC_API_KEY`` before the first cell for Claude)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    shell = start_ipython() or get_ipython()
    assert shell is not None
    load_ipython_extension(shell)
    shell.user_ns["__session__"] = str(tmp_path / "nb.ipynb")
    yield shell
    shell.user_ns.pop("__session__", None)
    shell.config.pop("TreeChat", None)  # %config settings stay in the test that made them
    kernel_sessions.install(None)
    i18n.forget_choices()  # and so does the language a test chose


@pytest.fixture
def claude(tmp_path: Path, fake_anthropic: FakeAnthropic) -> Iterator[Kernel]:
    """A real kernel for a notebook in ``tmp_path``, asking ``fake_anthropic`` through the
    real SDK (a module can override ``fake_anthropic``, e.g. to stream at a set pace)."""
    env = {"ANTHROPIC_API_KEY": "sk-test-dummy", "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    with Kernel(tmp_path, env=env) as kernel:
        yield kernel
