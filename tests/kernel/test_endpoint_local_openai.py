"""The second wire against a real model, through the routing: ``local-openai:smollm2`` on a
real kernel asks llama.cpp's llama-server (SmolLM2-135M, ``tests/helpers/llama_server.py``) on
``/v1/chat/completions``, the same server ``local:smollm2`` asks on ``/v1/messages``.

Real answers vary: the tests assert structure (stored, marked, what the model was shown),
never words.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import Kernel
from helpers.llama_server import TestServer

from jupyter_tree_chat.providers.endpoints.config import PRESETS

pytestmark = pytest.mark.kernel

CHAT = "--model local-openai:smollm2 --max-tokens 32"
MESSAGES = "--model local:smollm2 --max-tokens 32"
NO_KEYS = {variable: "" for endpoint in PRESETS.values() for variable in endpoint.key_env}


def point_at(kernel: Kernel, server: TestServer) -> None:
    endpoints = {
        "local": {"base_url": server.base_url},
        "local-openai": {"base_url": server.base_url + "/v1"},
    }
    kernel.run(f"%config TreeChat.endpoints = {endpoints!r}").check()


@pytest.fixture
def kernel(tmp_path: Path, llama_server: TestServer) -> Iterator[Kernel]:
    """A kernel with no key of any kind, both local endpoints on the test server."""
    with Kernel(tmp_path, env=NO_KEYS) as started:
        point_at(started, llama_server)
        yield started


def replies(kernel: Kernel) -> list[dict[str, Any]]:
    lines = kernel.session_file().read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    return [r for r in records if r.get("message", {}).get("role") == "assistant"]


def text_of(reply: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in reply["message"]["content"] if b["type"] == "text")


def test_a_cell_streams_a_real_answer_on_chat_completions(kernel):
    run = kernel.chat("Name three colours.", "c0000001", CHAT).check()
    assert run.updates >= 1  # updated in place while it streamed
    [reply] = replies(kernel)
    meta = reply["meta"]
    assert (meta["provider"], meta["endpoint"], meta["model"]) == (
        "openai-chat",
        "local-openai",
        "local-openai:smollm2",
    )
    assert meta["usage"]["input_tokens"] > 0 and 0 < meta["usage"]["output_tokens"] <= 32
    assert text_of(reply).strip() and run.markdown[0].strip() == text_of(reply).strip()
    assert "local-openai:smollm2" in run.markdown[-1] and "$0" in run.markdown[-1]


def test_one_branch_on_both_wires_of_the_same_server_round_trips(kernel, llama_server):
    kernel.chat("My cat is called Mochi.", "c0000001", MESSAGES).check()
    mark = llama_server.prompt_mark()
    kernel.chat("What is my cat called?", "c0000002", CHAT).check()
    (prompt,) = llama_server.prompts(since=mark)
    assert "Mochi" in prompt and "What is my cat called?" in prompt
    before = kernel.session_file().read_text(encoding="utf-8")

    kernel.restart()  # the mixed branch read back from the file
    point_at(kernel, llama_server)
    mark = llama_server.prompt_mark()
    kernel.chat("And my dog is Biscuit.", "c0000003", MESSAGES).check()
    kernel.chat("Name both pets.", "c0000004", CHAT).check()
    prompts = llama_server.prompts(since=mark)
    assert len(prompts) == 2
    for prompt in prompts:  # each wire was shown the whole branch, in order
        positions = [prompt.index(said) for said in ("Mochi", "What is my cat", "Biscuit")]
        assert positions == sorted(positions)
    assert kernel.session_file().read_text(encoding="utf-8").startswith(before)
    wires = [r["meta"]["provider"] for r in replies(kernel)]
    assert wires == ["anthropic", "openai-chat", "anthropic", "openai-chat"]


def test_n_samples_come_from_one_request_to_this_llama_cpp(kernel):
    run = kernel.chat("Say hello.", "c0000001", f"{CHAT} --n 2").check()
    heads = replies(kernel)
    assert [r["meta"].get("choice") for r in heads] == [
        {"index": 1, "of": 2},
        {"index": 2, "of": 2},
    ]
    assert all(text_of(r).strip() for r in heads)
    assert "lacks n" not in run.visible_text


def test_the_meter_estimates_on_this_wire_and_counts_on_the_other(kernel):
    kernel.chat("Hello there.", "c0000001", CHAT).check()
    kernel.run("%config TreeChat.model = 'local-openai:smollm2'").check()
    estimated = kernel.run("%chat context One more question").check().stdout
    assert "(estimated: local-openai cannot count tokens)" in estimated and "of 8k" in estimated
    kernel.run("%config TreeChat.model = 'local:smollm2'").check()
    counted = kernel.run("%chat context One more question").check().stdout
    assert "tokens (counted by local)" in counted


def test_an_override_sends_the_local_preset_itself_on_this_wire(tmp_path, llama_server):
    with Kernel(tmp_path, env=NO_KEYS) as kernel:
        endpoints = {"local": {"base_url": llama_server.base_url, "api": "openai-chat"}}
        kernel.run(f"%config TreeChat.endpoints = {endpoints!r}").check()
        kernel.chat("Hello.", "c0000001", MESSAGES).check()
        [reply] = replies(kernel)
    assert reply["meta"]["provider"] == "openai-chat" and reply["meta"]["endpoint"] == "local"
    assert text_of(reply).strip()
