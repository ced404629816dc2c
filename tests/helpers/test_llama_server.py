"""The real-server fixtures other tests build on (tests/helpers/llama_server.py): the session's
server answers the real SDK and keeps what it was sent; a test's own server can be
killed in the middle of a stream; an unprepared machine fails with the fix."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anthropic
import pytest

from helpers.llama_server import TestServer
from jupyter_tree_chat.providers.anthropic.provider import TRANSPORT_ERRORS


def test_the_session_server_answers_the_sdk_and_keeps_each_prompt(
    llama_server: TestServer,
) -> None:
    client = anthropic.Anthropic(api_key="any", base_url=llama_server.base_url)
    mark = llama_server.prompt_mark()
    messages: list[anthropic.types.MessageParam] = [
        {"role": "user", "content": "My cat is called Mochi."},
        {"role": "assistant", "content": "Mochi is a lovely name."},
        {"role": "user", "content": "What is my cat called?"},
    ]
    reply = client.messages.create(
        model=llama_server.model, max_tokens=16, system="Answer briefly.", messages=messages
    )
    assert (reply.role, reply.model, reply.content[0].type) == ("assistant", "smollm2", "text")
    assert reply.usage.output_tokens > 0

    [prompt] = llama_server.prompts(since=mark)
    said = [
        "Answer briefly.",
        "My cat is called Mochi.",
        "Mochi is a lovely name.",
        "What is my cat called?",
    ]
    positions = [prompt.index(text) for text in said]
    assert positions == sorted(positions), "the turns reach the model in order"

    counted = client.messages.count_tokens(
        model=llama_server.model, system="Answer briefly.", messages=messages
    )
    # as with Anthropic's API, usage's input_tokens leaves out what was read from the cache
    cache_read = reply.usage.cache_read_input_tokens or 0
    assert counted.input_tokens == reply.usage.input_tokens + cache_read
    assert "listening on " + llama_server.base_url in llama_server.log_text()


def test_a_server_of_the_tests_own_can_die_mid_stream(
    llama_server_factory: Callable[..., TestServer],
) -> None:
    # the model never ends its reply by itself (--ignore-eos), so the kill lands mid-stream
    server = llama_server_factory(parallel=1, extra=("--ignore-eos",))
    client = anthropic.Anthropic(api_key="any", base_url=server.base_url, max_retries=0)
    received = []
    with (
        pytest.raises((anthropic.APIError, *TRANSPORT_ERRORS)),
        client.messages.stream(
            model=server.model,
            max_tokens=400,
            messages=[{"role": "user", "content": "Count from 1 to 300, one number a line."}],
        ) as stream,
    ):
        for text in stream.text_stream:
            received.append(text)
            if len(received) == 3:
                server.kill()
    assert len(received) >= 3
    assert not server.running() and server.health() is None


def test_an_unprepared_machine_fails_with_the_command_that_prepares_it(tmp_path: Path) -> None:
    test = tmp_path / "test_needs_model.py"
    test.write_text("def test_it(llama_server):\n    pass\n")
    # this suite's conftest as a plugin, on a machine with no llama-server and no cache
    env = {
        "PATH": str(tmp_path / "bin"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),  # tests/: conftest and helpers
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "conftest",
            str(test),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 error" in done.stdout and "skipped" not in done.stdout
    assert "the real local model is not prepared" in done.stdout
    assert "run bash scripts/setup.sh (or: jupyter tree-chat serve-local --prepare)" in done.stdout
