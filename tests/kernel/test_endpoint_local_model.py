"""The ``local`` endpoint against a real model: llama.cpp's llama-server with SmolLM2-135M.

A real kernel, driven as JupyterLab drives it, asks a real server started by the tests on
a free port (``llama_server``: tests/helpers/llama_server.py) through ``local:smollm2``, with no
key at all. The server keeps every prompt it evaluated, so the tests read what the model
was really shown (the active path only, after an edit, a retry or a switch). Real answers
vary: the tests assert structure (stored, where, marked, what was sent), never words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.content_blocks import tiny_png
from helpers.kernel_harness import CellRun, Kernel, unwrapped
from helpers.llama_server import TestServer

from jupyter_tree_chat.providers.endpoints.config import PRESETS

pytestmark = pytest.mark.kernel

LOCAL = "--model local:smollm2 --max-tokens 48"
#: no hosted endpoint's key reaches these kernels, whatever this machine's environment holds
NO_KEYS = {variable: "" for endpoint in PRESETS.values() for variable in endpoint.key_env}


def point_local_at(kernel: Kernel, server: TestServer) -> None:
    kernel.run(
        f"%config TreeChat.endpoints = {{'local': {{'base_url': {server.base_url!r}}}}}"
    ).check()


@pytest.fixture
def kernel(tmp_path: Path, llama_server: TestServer) -> Iterator[Kernel]:
    """A kernel with no key of any kind, its ``local`` endpoint on the test server."""
    with Kernel(tmp_path, env=NO_KEYS) as started:
        point_local_at(started, llama_server)
        yield started


def nodes(kernel: Kernel) -> list[dict[str, Any]]:
    path = kernel.session_file()
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in lines if "message" in r]


def replies(kernel: Kernel) -> list[dict[str, Any]]:
    return [n for n in nodes(kernel) if n["message"]["role"] == "assistant"]


def shown_prompt(server: TestServer, mark: int) -> str:
    """The one prompt the server evaluated since ``mark``."""
    prompts = server.prompts(since=mark)
    assert len(prompts) == 1, f"{len(prompts)} prompts evaluated"
    return prompts[0]


def test_a_chat_cell_streams_a_real_answer_from_the_local_model(kernel, llama_server):
    run = kernel.chat("Name three colours.", "c0000001", LOCAL).check()
    assert run.updates >= 1  # the answer was updated in place while it streamed
    [reply] = replies(kernel)
    meta = reply["meta"]
    assert (meta["endpoint"], meta["model"], meta["provider"]) == (
        "local",
        "local:smollm2",
        "anthropic",  # the Messages API's wire
    )
    assert "served_model" not in meta  # the server answers to its alias, smollm2
    assert meta["usage"]["output_tokens"] > 0 and meta["stop_reason"]
    text = "".join(b["text"] for b in reply["message"]["content"] if b["type"] == "text")
    assert text.strip() and run.markdown[0].strip() == text.strip()  # shown as stored
    footer = run.markdown[-1]
    assert footer.startswith(reply["id"][:7]) and "local:smollm2" in footer
    assert "$0" in footer and "of 8k" in footer  # free, and the window the preset knows


def test_edit_retry_and_switch_each_send_the_active_path_only(kernel, llama_server):
    kernel.chat("My cat is called Mochi.", "c0000001", LOCAL).check()
    kernel.chat("My dog is called Biscuit.", "c0000002", LOCAL).check()
    old_leaf = replies(kernel)[-1]["id"]

    mark = llama_server.prompt_mark()
    kernel.chat("My cat is called Tofu.", "c0000001", LOCAL).check()  # cell 1 edited
    edited = shown_prompt(llama_server, mark)
    assert "Tofu" in edited and "Mochi" not in edited and "Biscuit" not in edited

    mark = llama_server.prompt_mark()
    kernel.chat("My cat is called Tofu.", "c0000001", LOCAL).check()  # the same: a retry
    retried = shown_prompt(llama_server, mark)
    assert "Tofu" in retried and "Mochi" not in retried and "Biscuit" not in retried
    assert retried.count("Tofu") == 1  # no second copy of the question

    kernel.run(f"%chat switch {old_leaf[:8]}").check()
    mark = llama_server.prompt_mark()
    kernel.chat("What pets do I have?", "c0000003", LOCAL).check()
    switched = shown_prompt(llama_server, mark)
    assert "Mochi" in switched and "Biscuit" in switched and "Tofu" not in switched
    positions = [switched.index(word) for word in ("Mochi", "Biscuit", "What pets")]
    assert positions == sorted(positions)
    users = [n for n in nodes(kernel) if n["message"]["role"] == "user"]
    assert len(users) == 4 and len(replies(kernel)) == 5  # every branch kept in the file


def test_models_mixes_the_local_model_with_the_anthropic_api_in_one_fan_out(tmp_path, llama_server):
    with FakeAnthropic(tokens_per_second=200) as claude:
        env = {**NO_KEYS, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": claude.base_url}
        with Kernel(tmp_path, env=env) as kernel:
            point_local_at(kernel, llama_server)
            claude.enqueue(tokens=30)
            run = kernel.chat(
                "Say hello.", "c0000001", "--models claude-sonnet-4-6,local:smollm2 --max-tokens 32"
            ).check()
            first_claude = claude.requests[0]
    answers = replies(kernel)
    assert [(a["meta"]["endpoint"], a["meta"]["model"]) for a in answers] == [
        ("anthropic", "claude-sonnet-4-6"),
        ("local", "local:smollm2"),
    ]
    assert answers[0]["parentId"] == answers[1]["parentId"]  # siblings of one question
    assert all(a["meta"]["usage"]["output_tokens"] > 0 for a in answers)
    assert "smollm2" not in json.dumps(first_claude.body)  # each endpoint only its own
    html = "".join(run.html)
    assert "local:smollm2" in html and "claude-sonnet-4-6" in html  # the columns name them


def test_temperature_goes_to_the_local_model_and_outside_its_range_is_refused(kernel):
    kernel.chat("Name a fruit.", "c0000001", f"{LOCAL} --temperature 0").check()
    kernel.chat("Name a fruit.", "c0000001", f"{LOCAL} --temperature 0").check()  # a retry
    first, second = replies(kernel)
    assert first["meta"]["temperature"] == 0
    # temperature 0 is greedy sampling: a real model gives the same answer to the same path
    assert first["message"]["content"] == second["message"]["content"]
    before = kernel.session_file().read_text()
    run = kernel.chat("Name a fruit.", "c0000002", f"{LOCAL} --temperature 2.5")
    assert run.status == "error"
    assert run.stderr.strip().splitlines()[-1] == (
        "UsageError: temperature 2.5 is outside what local takes (0 to 2): give one in it"
    )
    assert kernel.session_file().read_text() == before


def test_chat_context_counts_with_the_servers_own_count_tokens(kernel, llama_server):
    kernel.run('%config TreeChat.model = "local:smollm2"').check()
    kernel.chat("Hello there.", "c0000001", "--max-tokens 16").check()
    out = kernel.run("%chat context How many tokens does this hold").check().stdout
    assert "Context of the current path (local:smollm2)" in out
    line = next(line for line in out.splitlines() if "With the question" in line)
    assert "(counted by local), fits" in line
    tokens = int(line.split(":")[1].split("tokens")[0].replace(",", ""))
    path = [
        {"role": n["message"]["role"], "content": n["message"]["content"]} for n in nodes(kernel)
    ]
    asked = [*path, {"role": "user", "content": "How many tokens does this hold"}]
    client = anthropic.Anthropic(api_key="any", base_url=llama_server.base_url)
    assert tokens == client.messages.count_tokens(model="smollm2", messages=asked).input_tokens


def test_an_image_to_the_text_only_model_is_refused_before_anything_is_written(kernel, tmp_path):
    (tmp_path / "dot.png").write_bytes(tiny_png())
    kernel.chat("Hello.", "c0000001", LOCAL).check()
    before = kernel.session_file().read_text()
    run = kernel.chat("What is in this picture?", "c0000002", f"{LOCAL} --attach dot.png")
    assert run.status == "error"
    [line] = [line for line in run.stderr.splitlines() if "image" in line]
    assert line.startswith("UsageError: local reads no image blocks and this request holds 1")
    assert "Traceback" not in run.visible_text
    assert kernel.session_file().read_text() == before


def test_the_server_killed_mid_stream_keeps_the_partial_answer_marked_interrupted(
    tmp_path: Path, llama_server_factory: Callable[..., TestServer]
):
    # the model never ends its reply by itself (--ignore-eos), so the kill lands mid-stream
    server = llama_server_factory(parallel=1, extra=("--ignore-eos",))
    with Kernel(tmp_path, env=NO_KEYS) as kernel:
        point_local_at(kernel, server)
        msg = kernel.send(
            "%%chat --model local:smollm2 --max-tokens 3000\n"
            "Count from 1 to 200, one number a line.",
            "c0000001",
        )

        def some_text_arrived(run: CellRun) -> bool:
            return any(len(text) > 20 for text in run.markdown)

        run = kernel.collect(msg, until=some_text_arrived, timeout=120)
        server.kill()
        run = kernel.collect(msg, run=run, timeout=60)
        assert run.status == "error"
        assert "Model error:" in run.visible_text and "Traceback" not in run.visible_text
        assert "local at http://127.0.0.1" in run.visible_text
        [reply] = replies(kernel)
    assert reply["meta"]["interrupted"] is True
    assert reply["meta"]["endpoint"] == "local" and reply["meta"]["error"] == "connection_failed"
    kept = "".join(b["text"] for b in reply["message"]["content"] if b["type"] == "text")
    assert len(kept) > 10  # what arrived before the kill


def test_the_server_not_running_is_one_line_saying_how_to_start_it(
    tmp_path: Path, llama_server_factory: Callable[..., TestServer]
):
    server = llama_server_factory(parallel=1)
    server.stop()  # an address where nothing answers now
    with Kernel(tmp_path, env=NO_KEYS) as kernel:
        point_local_at(kernel, server)
        run = kernel.chat("Hello?", "c0000001", LOCAL)
        listed = "\n".join(unwrapped("\n".join(kernel.run("%chat models local").check().plain)))
    assert run.status == "error"
    expected = (
        f"local at {server.base_url} is not answering: start it with "
        "`jupyter tree-chat serve-local`"
    )
    assert run.error_lines[-1] == f"Model error: {expected}"
    assert "Traceback" not in run.visible_text
    assert expected in listed.splitlines()
    assert [n["message"]["role"] for n in nodes(kernel)] == ["user"]  # kept, unanswered


def test_chat_models_lists_the_running_server_its_model_and_what_it_supports(kernel):
    lines = unwrapped("\n".join(kernel.run("%chat models").check().plain))
    lines = lines[
        lines.index(
            "Models by endpoint (name one ENDPOINT:MODEL; a bare name is Anthropic's API):"
        ) :
    ]  # after the once-per-kernel note that no Anthropic key is set
    [local] = [line for line in lines if line.startswith("local at ")]
    assert local.endswith("(llama.cpp): answering, no key set (it takes any)")
    at = lines.index(local)
    assert lines[at + 1] == "  local:smollm2 · window 8k · free"
    assert lines[at + 2].startswith("  supports tools, count_tokens, cache_control")
    assert "lacks images, documents, thinking" in lines[at + 2]
    assert "temperature 0 to 2, 4 requests at once;" in lines[at + 2]  # serve-local's slots
    assert any(
        line.startswith("Not asked, no key set: ") and "deepseek (DEEPSEEK_API_KEY)" in line
        for line in lines
    )
    assert lines[1].startswith("anthropic: no ANTHROPIC_API_KEY set")
    assert "Traceback" not in "\n".join(lines)
