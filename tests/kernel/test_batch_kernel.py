"""``--batch`` end to end, on a real kernel, against each wire's fake batch API.

Each test body runs once per wire in ``helpers.batch_wires.WIRES`` (Anthropic's Message
Batches, OpenAI's Batch API; another wire is one more entry there). What is checked is what a person
sees and what the file holds: the cell that returns at once with the batch's id and a
bar that keeps moving after the cell has ended, the answers that land under their own
questions once (however many kernels read them, one killed while the batch was
pending), errored and expired requests kept as facts about their questions, the lines
that refuse a batch before anything is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.batch_wires import WIRES, BatchWireCase
from helpers.kernel_harness import CellRun, Kernel

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import Node
from jupyter_tree_chat.measures.models import PRICES as ANTHROPIC_PRICES
from jupyter_tree_chat.measures.usage import node_cost
from jupyter_tree_chat.providers.endpoints.config import PRESETS, known_prices

pytestmark = pytest.mark.kernel

PRICES = {**ANTHROPIC_PRICES, **known_prices(PRESETS)}
"""Every price a wire's answers are counted at (the endpoints' models beside Claude's)."""
CITIES = "rows = [{'city': c} for c in ['Paris', 'Oslo', 'Lima']]"
ASK = "What is {city} known for?"


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest) -> Iterator[BatchWireCase]:
    case: BatchWireCase = WIRES[request.param]()
    case.start()
    try:
        yield case
    finally:
        case.stop()


def open_kernel(folder: Path, wire: BatchWireCase) -> Kernel:
    kernel = Kernel(folder, env=wire.env()).start()
    for cell in [*wire.setup(), "%config TreeChat.batch_poll = 0.1", CITIES]:
        kernel.run(cell).check()
    return kernel


@pytest.fixture
def kernel(tmp_path: Path, wire: BatchWireCase) -> Iterator[Kernel]:
    kernel = open_kernel(tmp_path, wire)
    try:
        yield kernel
    finally:
        kernel.stop()


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def wait_for(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def applied(kernel: Kernel) -> list[str]:
    """Every custom id the file says is written, each time it says so."""
    found: list[str] = []
    for record in records(kernel):
        if record.get("type") == "batch_applied":
            found += record["done"] + list(record.get("failed", {}))
    return found


def batch_answers(kernel: Kernel) -> list[dict[str, Any]]:
    return [r for r in records(kernel) if "batch" in (r.get("meta") or {})]


def bar_text(run: CellRun) -> str:
    bars = [
        o for o in run.outputs if "jtc-batch-progress" in o.get("data", {}).get("text/html", "")
    ]
    assert len(bars) == 1, run.visible_text
    return str(bars[0]["data"]["text/plain"])


def run_batch(kernel: Kernel, options: str = "--over rows --batch") -> tuple[str, CellRun]:
    msg_id = kernel.send(f"%%chat {options}\n{ASK}", "c0000002")
    return msg_id, kernel.collect(msg_id, timeout=60).check()


def test_a_batch_cell_returns_at_once_and_its_answers_land_later_once(kernel, wire):
    kernel.chat("Hello", "c0000001").check()
    before = load_file(kernel.session_file()).tree.leaf
    wire.hold()

    msg_id, run = run_batch(kernel)

    bar = bar_text(run)
    assert "0 of 3 ended" in bar and "batch " in bar
    written = records(kernel)
    questions = [r for r in written if (r.get("meta") or {}).get("experiment")]
    assert [q["message"]["content"] for q in questions] == [
        "What is Paris known for?",
        "What is Oslo known for?",
        "What is Lima known for?",
    ]
    (plan,) = [r for r in written if r.get("type") == "batch"]
    (sent,) = [r for r in written if r.get("type") == "batch_sent"]
    assert sent["id"] in bar
    # the questions and the plan in one append: the plan follows the last question
    assert written.index(plan) == written.index(questions[-1]) + 1
    assert {question for _cid, question, _v in plan["requests"]} == {q["id"] for q in questions}
    assert wire.created() == [3]
    assert batch_answers(kernel) == []
    # pending: the leaf stays where the cell ran from, and a retry says it waits
    retry = kernel.run(f"%chat retry {questions[0]['id']}")
    assert retry.status == "error"
    assert "is waiting for batch" in retry.stderr
    kernel.chat("And in one line?", "c0000003").check()
    after = load_file(kernel.session_file()).tree
    assert after.get(after.leaf).parent_id is not None
    assert after.path_nodes(after.leaf)[-3].id == before  # continued from where it ran

    wire.finish()
    wait_for(lambda: len(batch_answers(kernel)) == 3)

    # the bar went on after the cell had ended: it reads done, from the batch cell's output
    kernel.collect(msg_id, timeout=30, until=lambda r: "done" in bar_text(r), run=run)
    assert "3 succeeded" in bar_text(run) and "3 stored" in bar_text(run)
    loaded = load_file(kernel.session_file())
    assert loaded.problems == []  # `check` stays clean
    answers = batch_answers(kernel)
    assert sorted(a["parentId"] for a in answers) == sorted(q["id"] for q in questions)
    assert sorted(applied(kernel)) == sorted(cid for cid, _q, _v in plan["requests"])
    for answer in answers:
        assert answer["meta"]["batch"]["id"] == sent["id"]
        assert answer["meta"]["batch"]["price"] == 0.5
        node = loaded.tree.get(answer["id"])
        standard = Node(node.id, node.parent_id, node.message, {**node.meta, "batch": None})
        standard_cost = node_cost(standard, PRICES)
        assert standard_cost  # priced: its model's price is known
        assert node_cost(node, PRICES) == pytest.approx(standard_cost / 2)  # at half price
    assert loaded.tree.leaf == after.leaf  # the answers did not move the leaf
    listing = kernel.run("%chat batch").check().stdout
    assert "3 requests · 3 answered · done" in listing


def test_errored_and_expired_requests_are_kept_on_their_questions(kernel, wire):
    wire.hold()
    wire.fail("Oslo")
    _msg, _run = run_batch(kernel)
    wire.finish()
    wait_for(lambda: len(applied(kernel)) == 3)
    answers = batch_answers(kernel)
    assert sorted(a["message"]["content"][0]["text"].split(": ")[-1] for a in answers) == [
        "What is Lima known for?",
        "What is Paris known for?",
    ]
    (failed,) = [r["failed"] for r in records(kernel) if r.get("failed")]
    ((_cid, (outcome, why)),) = failed.items()
    assert outcome == "errored" and why
    # kept on its question: experiment_frame has a line for it, without an answer
    question = next(r["id"] for r in records(kernel) if "Oslo" in str(r.get("message")))
    said = (
        kernel.run(
            "from jupyter_tree_chat import experiment_frame\n"
            f"f = experiment_frame('{question}')\n"
            "print(len(f), list(f[f['stop_reason'] == 'errored']['text']))"
        )
        .check()
        .stdout
    )
    assert said.startswith("3 [") and wire.failed_words in said

    kernel.run("other = [{'city': 'Rome'}, {'city': 'Kyoto'}]").check()
    msg_id = kernel.send(f"%%chat --over other --batch --new\n{ASK}", "c0000009")
    kernel.collect(msg_id, timeout=60).check()
    wire.expire()
    wait_for(lambda: len(applied(kernel)) == 5)
    listing = kernel.run("%chat batch").check().stdout
    assert "3 requests · 2 answered · 1 errored · done" in listing
    assert "2 requests · 0 answered · 2 expired · done" in listing
    assert load_file(kernel.session_file()).problems == []


def test_a_killed_kernel_s_batch_lands_once_through_two_new_kernels(tmp_path, wire):
    first = open_kernel(tmp_path, wire)
    wire.hold()
    run_batch(first)
    first.stop()  # killed while the batch is pending
    assert batch_answers(first) == []

    second = open_kernel(tmp_path, wire)
    third = open_kernel(tmp_path, wire)
    try:
        wire.finish()
        for kernel in (second, third):  # both pick it up when the session is first used
            kernel.run("%chat tree").check()
        wait_for(lambda: len(applied(second)) == 3)
        time.sleep(1.0)  # both pollers have had their look
        listing = third.run("%chat batch").check().stdout
        assert "3 answered · done" in listing
        assert len(batch_answers(second)) == 3
        assert len(applied(second)) == 3  # each result written once
        assert load_file(second.session_file()).problems == []
        tree = load_file(second.session_file()).tree
        assert sorted(
            len(tree.children(q)) for q in {a["parentId"] for a in batch_answers(second)}
        ) == [1, 1, 1]
    finally:
        second.stop()
        third.stop()


def test_n_samples_and_models_go_as_one_batch_per_endpoint(kernel, wire):
    kernel.chat("Hello", "c0000001").check()
    before = load_file(kernel.session_file()).tree.leaf
    wire.hold()
    run = kernel.chat(
        "Name a colour.", "c0000002", f"--models {','.join(wire.models)} --n 2 --batch"
    ).check()
    assert "0 of 4 ended" in bar_text(run)
    assert wire.created() == wire.batches_for([2, 2])  # one endpoint, one batch_sent
    assert len([r for r in records(kernel) if r.get("type") == "batch_sent"]) == 1
    written = records(kernel)  # the question and the plan in one append: side by side
    (plan,) = [r for r in written if r.get("type") == "batch"]
    asked = written[written.index(plan) - 1]
    assert asked["message"]["content"] == "Name a colour."
    assert load_file(kernel.session_file()).tree.leaf == before  # where the cell ran from
    wire.finish()
    wait_for(lambda: len(batch_answers(kernel)) == 4)
    answers = batch_answers(kernel)
    assert len({a["parentId"] for a in answers}) == 1
    assert sorted(a["meta"]["model"] for a in answers) == sorted(wire.models * 2)

    retry = kernel.run(f"%chat retry --n 2 --batch {answers[0]['parentId']}").check()
    assert "0 of 2 ended" in bar_text(retry)
    wire.finish()
    wait_for(lambda: len(batch_answers(kernel)) == 6)


def test_cancel_marks_what_was_not_answered(kernel, wire):
    wire.hold()
    run_batch(kernel)
    (plan,) = [r for r in records(kernel) if r.get("type") == "batch"]
    said = kernel.run(f"%chat batch cancel {plan['key'][:7]}").check().stdout
    assert "Canceling batch" in said
    wait_for(lambda: len(applied(kernel)) == 3)
    listing = kernel.run("%chat batch").check().stdout
    assert "3 canceled · done" in listing


def test_endpoints_without_a_batch_api_refuse_before_anything_is_written(tmp_path, wire):
    with Kernel(tmp_path) as offline:  # no key: the offline model
        offline.run(CITIES).check()
        run = offline.chat(ASK, "c0000001", "--over rows --batch")
        assert run.status == "error"
        assert "offline has no batch API: run the cell without --batch" in run.visible_text
        assert not offline.session_file().exists()

    (tmp_path / "b").mkdir()
    kernel = open_kernel(tmp_path / "b", wire)
    try:
        run = kernel.chat(ASK, "c0000001", "--over rows --batch --model local:smollm2")
        assert run.status == "error"
        assert "local has no batch API: run the cell without --batch" in run.visible_text
        run = kernel.chat("Hi", "c0000002", "--batch")
        assert run.status == "error"
        assert "a batch is many requests" in run.visible_text
        assert not kernel.session_file().exists()
    finally:
        kernel.stop()


TOOLS = '''
from jupyter_tree_chat import tool
calls = []

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    calls.append((a, b))
    return a + b
'''


def test_an_answer_that_calls_a_tool_goes_on_outside_the_batch(kernel, wire):
    kernel.run(TOOLS).check()
    kernel.chat("Hello", "c0000001").check()
    leaf = load_file(kernel.session_file()).tree.leaf
    wire.hold()
    wire.call_tool("Oslo", "add", {"a": 2, "b": 3})
    run_batch(kernel, "--over rows --batch --tools add")
    streamed = wire.streamed()
    wire.finish()
    wait_for(lambda: len(applied(kernel)) == 3)
    wait_for(lambda: wire.streamed() == streamed + 1)  # the next round, streamed
    assert "[(2, 3)]" in kernel.run("print(calls)").check().stdout
    tree = load_file(kernel.session_file()).tree
    (asked,) = [a for a in batch_answers(kernel) if a["meta"]["stop_reason"] == "tool_use"]
    (results,) = tree.children(asked["id"])
    assert results.meta["tool_results"] is True
    wait_for(lambda: len(load_file(kernel.session_file()).tree.children(results.id)) == 1)
    tree = load_file(kernel.session_file()).tree
    (after,) = tree.children(results.id)
    assert "batch" not in after.meta  # asked outside the batch: the standard price
    assert tree.leaf == leaf  # the loop went on without moving the leaf
    footer = kernel.run(f"%chat switch {after.id}").check()
    assert footer.status == "ok"
    said = (
        kernel.run(
            "from jupyter_tree_chat.kernel.display.output import footer\n"
            "from jupyter_tree_chat.kernel.sessions import current_session\n"
            f"s = current_session(); print(footer(s, s.tree.get('{after.id}')))"
            f"; print(footer(s, s.tree.get('{asked['id']}')))"
        )
        .check()
        .stdout
    )
    assert "after a batch answer's tool call: asked outside the batch, standard price" in said
    assert "batch answer · half price" in said


def test_a_rubric_judges_an_experiment_in_a_batch_and_its_verdicts_become_grades(kernel, wire):
    kernel.chat(ASK, "c0000001", "--over rows").check()  # answered now, streamed
    wire.hold()
    wire.reply("grading an answer", "It says what the city is known for.\nScore: 4", times=3)
    question = next(r["id"] for r in records(kernel) if "Paris" in str(r.get("message")))
    run = kernel.run(
        f"%chat grade --rubric 'Is it right?' --model {wire.judge} --batch {question}"
    ).check()
    assert "0 of 3 ended" in bar_text(run)
    assert [r for r in records(kernel) if r.get("type") == "grade"] == []
    wire.finish()
    wait_for(lambda: len([r for r in records(kernel) if r.get("type") == "grade"]) == 3)
    grades = [r for r in records(kernel) if r.get("type") == "grade"]
    assert {g["score"] for g in grades} == {4} and {g["by"] for g in grades} == {"model"}
    said = (
        kernel.run(
            "from jupyter_tree_chat import experiment_frame\n"
            f"print(sorted(experiment_frame('{question}')['judge']))"
        )
        .check()
        .stdout
    )
    assert said.strip() == "[4, 4, 4]"
    assert load_file(kernel.session_file()).problems == []
