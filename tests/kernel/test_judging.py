"""``%chat grade --rubric``: a model judges each answer, on a real kernel (judging.py).

Against the fake Messages API (the real SDK, real HTTP and SSE) where the judge's words
must be known, and against a real llama-server where only the structure can be: each
judge request is a conversation of its own (a side branch, never on the experiment's
paths), its verdict, reasoning, reply and cost are kept in the grade record, a reply
without a score is that answer's error, and the current leaf stays where it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import FakeOpenAI
from helpers.kernel_harness import Kernel
from helpers.llama_server import TestServer
from test_endpoint_local_model import NO_KEYS, point_local_at

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.measures.usage import dollars

pytestmark = pytest.mark.kernel

CITIES = "cities = [{'city': 'Paris'}, {'city': 'Oslo'}, {'city': 'Lima'}]"
RUBRIC = "Does it name a real sight of the city?"


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def grades(kernel: Kernel) -> list[dict[str, Any]]:
    return [r for r in records(kernel) if r.get("type") == "grade"]


def last_leaf(kernel: Kernel) -> str:
    """The current leaf the file says (its last leaf record or node)."""
    leaf = ""
    for record in records(kernel):
        if record.get("type") == "leaf" or "message" in record:
            leaf = record["id"]
    return leaf


def messages_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def test_a_judge_grades_each_answer_on_a_side_branch(claude, fake_anthropic: FakeAnthropic):
    for city in ("Paris", "Oslo", "Lima"):
        fake_anthropic.enqueue(
            f"{city} has a museum.", when=lambda body, c=city: c in messages_text(body)
        )
    claude.run(CITIES).check()
    claude.chat("Name one sight in {city}.", "c0000001", "--over cities").check()
    tree = load_file(claude.session_file()).tree
    answers = {n.text.split()[0]: n.id for n in tree if n.role == "assistant"}
    leaf_before = last_leaf(claude)
    fake_anthropic.enqueue("The Louvre is real.\nScore: 5")
    fake_anthropic.enqueue("A museum, vague.\n**Score: 3**")
    fake_anthropic.enqueue("I cannot tell.")
    sent_before = len(fake_anthropic.requests)

    run = claude.run(f"%chat grade --rubric '{RUBRIC}' --model claude-haiku-4-5").check()

    assert "Judged 3 answer(s) as judge; 1 without a score; cost $" in run.stdout
    assert "the judge's reply has no Score: 1-5 line" in run.stdout
    judge_requests = [r for r in fake_anthropic.requests[sent_before:] if r.path == "/v1/messages"]
    assert len(judge_requests) == 3
    for request, city in zip(judge_requests, ("Paris", "Oslo", "Lima"), strict=True):
        assert request.body["model"] == "claude-haiku-4-5"
        assert len(request.body["messages"]) == 1  # the judge sees no experiment path
        prompt = messages_text(request.body)
        assert RUBRIC in prompt and f"Name one sight in {city}." in prompt
        assert f"{city} has a museum." in prompt
        assert request.body["temperature"] == 0 and "tools" not in request.body

    found = {g["id"]: g for g in grades(claude)}
    assert set(found) == set(answers.values())
    paris, oslo, lima = (found[answers[c]] for c in ("Paris", "Oslo", "Lima"))
    assert (paris["score"], oslo["score"], lima["score"]) == (5, 3, None)
    assert lima["error"] == "the judge's reply has no Score: 1-5 line"
    assert paris["by"] == "model" and paris["grader"] == "judge"
    assert paris["judge"]["reasoning"] == "The Louvre is real.\nScore: 5"
    assert paris["judge"]["model"] == "claude-haiku-4-5" and paris["judge"]["cost"] > 0

    loaded = load_file(claude.session_file())
    assert loaded.problems == []
    reply = loaded.tree.get(paris["judge"]["node"])
    question = loaded.tree.get(reply.parent_id)
    assert question.parent_id is None  # a root of its own: a side branch
    assert question.meta["judge"] == {"of": answers["Paris"], "grader": "judge"}
    assert last_leaf(claude) == leaf_before  # the current leaf did not move

    frame = claude.run(
        "import jupyter_tree_chat, json\n"
        "_df = jupyter_tree_chat.experiment_frame()\n"
        "print(json.dumps(_df[['id', 'judge', 'judge.error']].to_dict('records')))"
    ).check()
    rows = {r["id"]: r for r in json.loads(frame.stdout.splitlines()[-1])}
    assert len(rows) == 3  # the judge's nodes are not rows of the experiment
    assert rows[answers["Oslo"]]["judge"] == 3
    summary = claude.run("%chat experiment").check().stdout.splitlines()
    assert summary[1].split() == [
        "version", "model", "answers", "grade", "judge", "wins", "cost", "judging"
    ]  # fmt: skip
    judging = sum(found[a]["judge"].get("cost", 0) for a in answers.values())
    assert judging > 0 and summary[2].split()[-1] == dollars(judging)


def test_a_judge_that_takes_only_its_default_temperature_is_sent_none(tmp_path):
    # OpenAI's reasoning models refuse temperature 0 (the fake, as the API: a 400)
    key = "sk-fake-judge"
    with FakeOpenAI(api_key=key) as gpt, Kernel(tmp_path, env={"OPENAI_API_KEY": key}) as kernel:
        kernel.run(f"%config TreeChat.endpoints = {{'openai': {{'base_url': {gpt.base_url!r}}}}}")
        kernel.run(CITIES).check()
        kernel.chat("Name one sight in {city}.", "c0000001", "--over cities").check()
        for _ in range(3):
            gpt.enqueue("It names one.\nScore: 4")

        run = kernel.run(f"%chat grade --rubric '{RUBRIC}' --model openai:gpt-5-mini").check()

        assert "Judged 3 answer(s) as judge; 0 without a score" in run.stdout
        bodies = [r.body for r in gpt.requests if r.path.endswith("/chat/completions")]
        assert len(bodies) == 3 and all("temperature" not in body for body in bodies)
        assert [g["score"] for g in grades(kernel)] == [4, 4, 4]


def test_the_offline_model_cannot_judge_and_nothing_is_written(tmp_path):
    with Kernel(tmp_path) as kernel:
        kernel.run(CITIES).check()
        kernel.chat("Name one sight in {city}.", "c0000001", "--over cities").check()
        before = kernel.session_file().read_bytes()
        run = kernel.run(f"%chat grade --rubric '{RUBRIC}'")
        assert run.status == "error"
        assert run.stderr.strip() == (
            "UsageError: %chat grade: a judge needs a real model, and the offline one only "
            "repeats its input; set ANTHROPIC_API_KEY, or run a local one (`jupyter tree-chat "
            "serve-local`) and add --model local:smollm2"
        )
        assert kernel.session_file().read_bytes() == before


@pytest.fixture
def local_kernel(tmp_path: Path, llama_server: TestServer) -> Iterator[Kernel]:
    with Kernel(tmp_path, env=NO_KEYS) as started:
        point_local_at(started, llama_server)
        yield started


def test_a_real_local_model_judges_on_a_side_branch(local_kernel, llama_server):
    kernel = local_kernel
    kernel.run("cities = [{'city': 'Paris'}, {'city': 'Oslo'}]").check()
    kernel.chat("Name one sight in {city}.", "c0000001", "--over cities").check()  # offline
    kernel.run("%config TreeChat.max_tokens = 48").check()
    leaf_before = last_leaf(kernel)
    mark = llama_server.prompt_mark()

    run = kernel.run(f"%chat grade --rubric '{RUBRIC}' --model local:smollm2", timeout=300)

    run.check()
    assert run.stdout.startswith("Judged 2 answer(s) as judge; ")
    prompts = llama_server.prompts(since=mark)
    assert prompts and all(RUBRIC in p for p in prompts)
    loaded = load_file(kernel.session_file())
    assert loaded.problems == []
    found = grades(kernel)
    assert len(found) == 2
    for grade in found:
        assert grade["by"] == "model" and grade["judge"]["model"] == "local:smollm2"
        # a real model's words are not fixed: a score in 1-5, or the error that says none
        assert grade["score"] in (1, 2, 3, 4, 5) or (
            grade["score"] is None and grade["error"] == "the judge's reply has no Score: 1-5 line"
        )
        reply = loaded.tree.get(grade["judge"]["node"])
        assert reply.meta["model"] == "local:smollm2"
        assert grade["judge"]["reasoning"] == reply.text
        question = loaded.tree.get(reply.parent_id)
        assert question.parent_id is None and question.meta["judge"]["of"] == grade["id"]
    assert last_leaf(kernel) == leaf_before
