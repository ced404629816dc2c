"""Rough edges a new user met in one afternoon (issue 38), each seen in a real kernel.

Each test runs what the user ran, as JupyterLab runs it (``kernel_harness``), and checks
what they saw: the cell's output, ``%chat`` listings, the session file, exported files.
The offline model needs no key; the local model is a real ``llama-server``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.kernel_harness import Kernel, unwrapped

from jupyter_tree_chat.providers.endpoints.config import PRESETS

pytestmark = pytest.mark.kernel

#: no hosted endpoint's key reaches these kernels, whatever this machine's environment holds
NO_KEYS = {variable: "" for endpoint in PRESETS.values() for variable in endpoint.key_env}


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Kernel]:
    """A kernel with no key of any kind: the offline teaching model answers."""
    with Kernel(tmp_path, env=NO_KEYS) as started:
        yield started


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def replies(kernel: Kernel) -> list[dict[str, Any]]:
    return [r for r in records(kernel) if r.get("message", {}).get("role") == "assistant"]


# -- 1. an offline answer is named and priced as what answered ----------------------------


def test_an_offline_answer_asked_for_claude_is_named_and_priced_as_the_offline_model(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue("Hello from the local server.")  # the ``local`` endpoint's answer
    with Kernel(tmp_path, env=NO_KEYS) as kernel:
        kernel.run(
            f"%config TreeChat.endpoints = {{'local': {{'base_url': {fake_anthropic.base_url!r}}}}}"
        ).check()
        run = kernel.chat(
            "Say hello.", "c0000001", "--models claude-sonnet-4-6,local:smollm2 --max-tokens 24"
        ).check()
        frame = kernel.run(
            "from jupyter_tree_chat import compare_frame\n"
            "print(compare_frame()[['model', 'cost']].to_json(orient='records'))"
        )
        rows = json.loads(frame.check().stdout)
    shown = run.visible_text
    assert "· offline-teacher (asked for claude-sonnet-4-6) ──" in shown
    assert "· local:smollm2 ──" in shown
    assert "· claude-sonnet-4-6 ──" not in shown  # no column claims Claude answered
    first = replies(kernel)[0]["meta"]
    assert (first["model"], first["asked_model"]) == ("offline-teacher", "claude-sonnet-4-6")
    assert "(offline-teacher (asked for claude-sonnet-4-6) · " in shown
    assert "$0 ·" in shown  # the offline model costs nothing, and says so
    assert rows[0] == {"model": "offline-teacher", "cost": 0.0}
    assert rows[1]["model"] == "local:smollm2"


LONG = "tell me about the branches of a session tree " * 12  # about 135 tokens


def four_long_exchanges(kernel: Kernel) -> None:
    for k in range(4):
        kernel.chat(f"Question {k}: " + LONG, f"c{k:07d}").check()


# -- 2. and 8. %chat context takes --budget, and says which figure is which ---------------


def test_chat_context_takes_a_budget_and_lists_what_that_budget_keeps(offline: Kernel) -> None:
    four_long_exchanges(offline)
    whole = offline.run("%chat context").check().stdout
    assert "The request sends the whole path" in whole
    listing = offline.run("%chat context --budget 300").check().stdout
    assert "Budget: 300 tokens a request may hold" in listing
    assert "The request keeps 1 of 4 exchanges" in listing
    assert "--budget" not in listing  # not taken for a question
    assert "(new)" not in listing  # and no question was added
    same = offline.run("%chat context --budget=300").check().stdout
    assert "Budget: 300 tokens a request may hold" in same
    asked = offline.run("%chat context --budget 300 And what else").check().stdout
    assert "✓ (new)" in asked and "And what else" in asked


def test_an_option_chat_context_does_not_take_is_one_line(offline: Kernel) -> None:
    offline.chat("Hello", "c0000001").check()
    run = offline.run("%chat context --budjet 300")
    assert run.visible_text.strip() == (
        "UsageError: %chat context takes --budget N (tokens, 'window' or 'off') and a "
        "question, not --budjet"
    )
    bad = offline.run("%chat context --budget lots")
    assert "%chat context --budget lots: give the tokens a request may hold" in bad.visible_text
    for line, usage in (
        ("%chat export md --x", "export md|html|ipynb [FILE]"),
        ("%chat model --x", "model [NAME]"),
        ("%chat compact --x", "compact [TEXT]"),
        ("%chat switch --x", "switch ID"),
    ):  # an option no command takes is one line, never a file, a model or a summary's text
        shown = offline.run(line).visible_text.strip()
        assert shown == f"UsageError: %chat: unknown option '--x'; usage: %chat {usage}", line
    assert not list(offline.folder.glob("--x*"))
    assert offline.run("%chat model").check().stdout.startswith("Model: offline-teacher")
    said = offline.run("%chat model claude-sonnet-4-6").check().stdout
    assert said == "Model: offline-teacher (asked for claude-sonnet-4-6)\n"  # no key


def test_chat_context_says_which_figure_is_the_last_request_and_which_the_path(
    offline: Kernel,
) -> None:
    four_long_exchanges(offline)
    offline.chat("Summarise what we said.", "c0000009", "--budget 400").check()
    listing = offline.run("%chat context").check().stdout.splitlines()
    reported = next(line for line in listing if "as reported in the usage of reply" in line)
    assert "what its request held and the reply; a budget's cuts are not in it" in reported
    at = listing.index("The whole path by part (estimates: characters / 4):")
    assert listing[at + 3].strip().startswith("messages")
    next_at = listing.index("The next request (estimates):")
    assert next_at > at and listing[next_at + 2].startswith("The request sends the whole path")


# -- 5. the offline model keeps the budget's note apart from the question ------------------


def test_the_offline_model_quotes_the_budgets_note_apart_and_counts_only_the_question(
    offline: Kernel,
) -> None:
    four_long_exchanges(offline)
    run = offline.chat("Summarise what we said.", "c0000009", "--budget 400").check()
    reply = run.markdown[0]
    assert "> [4 earlier exchanges left out]\n>\n> Summarise what we said." in reply
    assert "Your message has 4 words; the longest is “Summarise”" in reply
    assert "out]Summarise" not in reply
    question = [r for r in records(offline) if r.get("message", {}).get("role") == "user"][-1]
    assert question["message"]["content"] == "Summarise what we said."  # the note is not stored


# -- 6. an export is no more readable than the session it copies ----------------------------


def test_every_export_has_the_session_files_permissions(offline: Kernel, tmp_path: Path) -> None:
    offline.chat("Hello", "c0000001").check()
    session_file = offline.session_file()
    assert session_file.stat().st_mode & 0o777 == 0o600
    offline.run("%chat export html").check()
    offline.run("%chat export ipynb branch.ipynb").check()
    offline.run("%chat export md path.md").check()
    stale = tmp_path / "stale.html"
    stale.write_text("an older export, world-readable")
    stale.chmod(0o644)
    offline.run(f"%chat export html {stale}").check()
    exported = [tmp_path / "analysis.chat.html", tmp_path / "branch.ipynb", tmp_path / "path.md"]
    for path in [*exported, stale]:
        assert path.stat().st_mode & 0o777 == 0o600, path.name
    assert "<html" in stale.read_text()


def test_the_command_lines_export_has_the_session_files_permissions(
    offline: Kernel, tmp_path: Path
) -> None:
    offline.chat("Hello", "c0000001").check()
    page = tmp_path / "from-cli.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter_tree_chat.cli",
            "export",
            str(offline.session_file()),
            "--format",
            "html",
            "-o",
            str(page),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert page.stat().st_mode & 0o777 == 0o600


# -- 4. %chat tree shows a reply's first line as plain words --------------------------------


def test_chat_tree_shows_plain_words_where_the_reply_has_markdown(offline: Kernel) -> None:
    offline.chat("Hello **there**", "c0000001").check()
    offline.chat("你好", "c0000002").check()
    tree = offline.run("%chat tree").check().stdout
    assert "I was sent 1 message on the active path: user. …" in tree
    assert "Hello there" in tree
    assert "我在 active path 上收到了 3 条消息" in tree
    assert "**" not in tree


# -- 15. a retry with the offline model shows it is a new sibling ----------------------------


def test_an_offline_retry_says_which_answer_it_is_and_stands_beside_the_first(
    offline: Kernel,
) -> None:
    first = offline.chat("What is 2 + 3", "c0000001").check()
    assert "This is answer" not in first.visible_text  # the first answer is just an answer
    retried = offline.run("%chat retry").check()
    assert "This is answer **2** to this question" in retried.markdown[0]
    assert "reply 2/2" in retried.markdown[-1]
    again = offline.run("%chat retry --n 2").check().visible_text
    assert "── 3/4 · offline-teacher · sample 1/2 ──" in again
    assert "This is answer **3** to this question" in again
    assert "This is answer **4** to this question" in again
    texts = {r["message"]["content"][0]["text"] for r in replies(offline)}
    assert len(texts) == 4  # four answers, each saying which it is: none looks like another


# -- 7. %chat models: a table in a notebook, lines that wrap at spaces, no network on the way


def test_chat_models_is_a_table_and_asks_no_proxy_and_no_server_for_long(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    silent = socket.socket()  # takes connections and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    dead_proxy = {"http_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    try:
        with Kernel(tmp_path, env={**NO_KEYS, **dead_proxy}) as kernel:
            endpoints = {
                "local": {"base_url": fake_anthropic.base_url},
                "vllm": {"base_url": f"http://127.0.0.1:{port}"},
            }
            kernel.run(f"%config TreeChat.endpoints = {endpoints!r}").check()
            run = kernel.run("%chat models").check()
    finally:
        silent.close()
    [table] = run.html
    assert '<table class="jtc-models">' in table
    assert "<td><code>local</code></td>" in table and "<td><code>vllm</code></td>" in table
    assert "local:smollm2 · window 8k · free" in table
    [plain] = [p for p in run.plain if p.startswith("Models by endpoint")]
    assert all(len(line) <= 79 for line in plain.splitlines())
    lines = unwrapped(plain)
    local = next(line for line in lines if line.startswith("local at "))
    assert local.endswith("(llama.cpp): answering, no key set (it takes any)")  # not the proxy
    vllm = next(line for line in lines if line.startswith("vllm at "))
    assert vllm.endswith(
        "is not answering: start it with `vllm serve MODEL` (no answer within 1.5 s)"
    )
    assert "adaptive_thinking" in plain  # never cut inside a word
    assert "openai-compatible ()" not in plain
    assert lines[-1].startswith("Not asked, no base_url: azure, openai-compatible;")
    assert [r.path.split("?")[0] for r in fake_anthropic.requests] == ["/v1/models"]
