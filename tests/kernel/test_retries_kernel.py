"""Big runs without ``--batch``, on a real kernel: what a cell shows when a server says
"not now" (429, 529, an overload before any text), and how many requests each endpoint
gets at once. The real SDK over real HTTP against the fake Messages API, which counts
the requests it answers at once (fakes/fake_load.py) and logs when each arrived."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.kernel_harness import Kernel

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.kernel


def replies(server: FakeAnthropic) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/messages"]


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def nodes(kernel: Kernel, role: str) -> list[dict[str, Any]]:
    return [r for r in records(kernel) if r.get("message", {}).get("role") == role]


def notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "retrying in" in line]


# -- a plain %%chat ----------------------------------------------------------------------------


def test_a_429_in_a_plain_cell_is_one_line_then_the_answer(claude, fake_anthropic):
    fake_anthropic.enqueue_error(429, retry_after=1)
    fake_anthropic.enqueue(text="Here after the wait.")

    run = claude.chat("Hello there", "c0000001").check()

    assert notes(run.stderr) == [
        "Rate limited by the Anthropic API: retrying in 1 s (attempt 2 of 5)."
    ]
    assert "Traceback" not in run.visible_text
    assert any("Here after the wait." in shown for shown in run.markdown)
    sent = replies(fake_anthropic)
    assert len(sent) == 2 and sent[0].raw == sent[1].raw  # the same request, no SDK retry
    assert sent[1].received - sent[0].ended >= 1.0
    questions = nodes(claude, "user")
    assert [q["message"]["content"] for q in questions] == ["Hello there"]  # stored once
    assert [a["parentId"] for a in nodes(claude, "assistant")] == [questions[0]["id"]]


def test_when_attempts_run_out_the_cell_says_so_in_one_line_and_keeps_the_question(
    claude, fake_anthropic
):
    fake_anthropic.enqueue_error(529, retry_after_ms=1, times=5)

    run = claude.chat("Hello there", "c0000001")

    assert len(notes(run.stderr)) == 4
    assert "Traceback" not in run.visible_text
    assert run.error_lines[-1].startswith("Model error: The Anthropic API is overloaded (529)")
    assert run.error_lines[-1].endswith("(gave up after 5 attempts)")
    assert [q["message"]["content"] for q in nodes(claude, "user")] == ["Hello there"]
    assert nodes(claude, "assistant") == []
    assert claude.chat("Again?", "c0000002").check()  # the session goes on


def test_ctrl_c_during_a_wait_is_the_usual_one_line_and_sends_nothing_more(claude, fake_anthropic):
    fake_anthropic.enqueue_error(429, retry_after=60)
    msg_id = claude.send("%%chat\nHello there", "c0000001")
    run = claude.collect(msg_id, until=lambda r: bool(notes(r.stderr)))
    assert notes(run.stderr) == [
        "Rate limited by the Anthropic API: retrying in 60 s (attempt 2 of 5)."
    ]
    claude.interrupt()
    run = claude.collect(msg_id, run=run)

    assert "Traceback" not in run.visible_text and "KeyboardInterrupt" not in run.visible_text
    assert run.error_lines == [
        "Interrupted: nothing had arrived; the question is kept, unanswered."
    ]
    assert len(replies(fake_anthropic)) == 1
    assert [q["message"]["content"] for q in nodes(claude, "user")] == ["Hello there"]
    claude.chat("Still here?", "c0000002").check()


# -- fan-outs and experiments: each endpoint at its pace -------------------------------------


@pytest.fixture
def labs() -> Iterator[dict[str, FakeAnthropic]]:
    """Two servers on your own machine, streaming at 40 tokens a second."""
    started = {name: FakeAnthropic(tokens_per_second=40).start() for name in ("one", "two")}
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def lab_kernel(tmp_path: Path, labs: dict[str, FakeAnthropic]) -> Iterator[Kernel]:
    with Kernel(tmp_path) as kernel:
        endpoints = {
            "one": {"base_url": labs["one"].base_url, "concurrency": 1},
            "two": {"base_url": labs["two"].base_url, "concurrency": 2},
        }
        kernel.run(f"%config TreeChat.endpoints = {endpoints!r}").check()
        yield kernel


def test_a_fan_out_keeps_each_endpoint_within_its_own_limit(lab_kernel, labs):
    for server in labs.values():
        for _ in range(3):
            server.enqueue(tokens=40)  # a second each

    run = lab_kernel.chat("Hi", "c0000001", "--n 3 --models one:m,two:m").check()

    assert labs["one"].most_in_flight == 1
    assert labs["two"].most_in_flight == 2  # not one at a time: each endpoint apart
    assert [len(replies(s)) for s in labs.values()] == [3, 3]
    said = [line for line in run.stdout.splitlines() if "at once" in line]
    assert said == [
        f"one at {labs['one'].base_url} takes 1 request at once (its concurrency): "
        "asking it 1 at a time, not 3.",
        f"two at {labs['two'].base_url} takes 2 requests at once (its concurrency): "
        "asking it 2 at a time, not 3.",
    ]
    answers = nodes(lab_kernel, "assistant")
    assert len(answers) == 6 and not any(a["meta"].get("interrupted") for a in answers)


def test_a_fan_outs_own_concurrency_bounds_it_too(lab_kernel, labs):
    for _ in range(3):
        labs["two"].enqueue(tokens=20)

    run = lab_kernel.chat("Hi", "c0000001", "--n 3 --model two:m --concurrency 1").check()

    assert labs["two"].most_in_flight == 1
    assert len(replies(labs["two"])) == 3
    assert "at once" not in run.stdout  # the endpoint's 2 lowered nothing


def test_concurrency_is_the_lower_of_the_cells_and_the_endpoints(lab_kernel, labs):
    lab_kernel.run("rows = [{'w': w} for w in 'abcde']").check()
    for _ in range(5):
        labs["two"].enqueue(tokens=20)

    run = lab_kernel.chat("Say {w}.", "c0000001", "--over rows --model two:m --concurrency 4")
    run.check()

    assert labs["two"].most_in_flight == 2
    assert run.stdout.count("asking it 2 at a time, not 4.") == 1
    lab_kernel.run("rows = [{'w': w} for w in 'fgh']").check()
    labs["two"].reset_load()
    run = lab_kernel.chat("Say {w}!", "c0000002", "--over rows --model two:m --concurrency 1")
    assert labs["two"].most_in_flight == 1  # the cell's own bound, lower: nothing said
    assert "at once" not in run.check().stdout


def test_a_rate_limited_row_is_retried_its_note_names_it_and_no_row_is_lost(lab_kernel, labs):
    lab_kernel.run("rows = [{'w': w} for w in ('one', 'two', 'three')]").check()
    two = lambda body: "two" in json.dumps(body["messages"])  # noqa: E731
    labs["two"].enqueue_error(429, retry_after_ms=100, times=2, when=two)

    run = lab_kernel.chat("Say {w}.", "c0000001", "--over rows --model two:m").check()

    where = f"two at {labs['two'].base_url}"
    assert notes(run.stderr) == [
        f"Row 2 (two:m): Rate limited by {where}: retrying in 0.1 s (attempt {n} of 5)."
        for n in (2, 3)
    ]
    loaded = load_file(lab_kernel.session_file())
    questions = [n for n in loaded.tree if n.role == "user"]
    assert sorted(q.text for q in questions) == ["Say one.", "Say three.", "Say two."]
    for question in questions:  # every row answered once, no question written twice
        assert len(loaded.tree.children(question.id)) == 1
    assert len(replies(labs["two"])) == 5


def test_ctrl_c_while_a_row_waits_keeps_the_rows_that_arrived_and_sends_nothing_more(
    lab_kernel, labs
):
    lab_kernel.run("rows = [{'w': w} for w in ('one', 'two', 'three')]").check()
    # two at once: the waiting row holds one slot, the others go through the other
    two = lambda body: "two" in json.dumps(body["messages"])  # noqa: E731
    labs["two"].enqueue_error(429, retry_after=60, when=two)

    msg_id = lab_kernel.send("%%chat --over rows --model two:m\nSay {w}.", "c0000001")
    run = lab_kernel.collect(  # row 2 waits; rows 1 and 3 are answered and shown
        msg_id, until=lambda r: bool(notes(r.stderr)) and "2 of 3 answers" in r.visible_text
    )
    lab_kernel.interrupt()
    run = lab_kernel.collect(msg_id, run=run)

    assert "Traceback" not in run.visible_text
    assert run.error_lines == ["Interrupted: the 2 answers that had arrived are kept."]
    assert len([r for r in replies(labs["two"]) if two(r.body)]) == 1  # not asked again
    loaded = load_file(lab_kernel.session_file())
    questions = {n.text: n for n in loaded.tree if n.role == "user"}
    assert sorted(questions) == ["Say one.", "Say three.", "Say two."]
    answered = {text: len(loaded.tree.children(q.id)) for text, q in questions.items()}
    assert answered == {"Say one.": 1, "Say two.": 0, "Say three.": 1}


def test_a_real_llama_server_given_one_slot_is_asked_one_at_a_time(tmp_path, llama_server):
    with Kernel(tmp_path) as kernel:
        endpoints = {"local": {"base_url": llama_server.base_url, "concurrency": 1}}
        kernel.run(f"%config TreeChat.endpoints = {endpoints!r}").check()
        run = kernel.chat(
            "Say hello.", "c0000001", "--n 3 --model local:smollm2 --max-tokens 16"
        ).check()
        answers = nodes(kernel, "assistant")
    assert (
        run.stdout.count(
            f"local at {llama_server.base_url} takes 1 request at once (its concurrency): "
            "asking it 1 at a time, not 3."
        )
        == 1
    )
    assert len(answers) == 3 and len({a["parentId"] for a in answers}) == 1, run.visible_text
    assert all(a["meta"]["usage"]["output_tokens"] > 0 for a in answers)
    assert not any(a["meta"].get("interrupted") for a in answers)
