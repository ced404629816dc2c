"""Rough edges a new user met in one afternoon (issue 38), each seen in a real kernel.

Each test runs what the user ran, as JupyterLab runs it (``kernel_harness``), and checks
what they saw: the cell's output, ``%chat`` listings, the session file, exported files.
The offline model needs no key; the local model is a real ``llama-server``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic
from kernel_harness import Kernel

from jupyter_tree_chat.providers.endpoints import PRESETS

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
