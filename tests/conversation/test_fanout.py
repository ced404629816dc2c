"""Fan-out (fanout.py) on a real kernel: many answers to one question at once.

The cells run through a real ipykernel and the real SDK against the fake Messages API,
which streams at a set number of tokens a second and logs when each request arrived,
began and ended, and what it read from the prompt cache. So these tests show, from the
server's side, that the answers overlap and that all but the first read the cache the
first one wrote; from the file, that the tree is the same whatever order the answers
finish in; and from the cell, what a person sees (columns, footers, one-line errors).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic, RecordedRequest
from helpers.kernel_harness import CellRun, Kernel

from jupyter_tree_chat.conversation.events import ReplyDelta
from jupyter_tree_chat.conversation.many.variants import Fanout
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.errors import SessionBusy
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import SessionTree, is_tool_result
from jupyter_tree_chat.providers.offline.provider import OfflineProvider

pytestmark = pytest.mark.kernel

#: long enough (about 2,400 tokens) for the API to cache the prefix
QUESTION = "Explain prompt caching in two sentences. Context: " + "lorem ipsum " * 799 + "lorem."


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """The fake API streaming at 100 tokens a second (``claude`` asks it: conftest.py)."""
    with FakeAnthropic(tokens_per_second=100) as fake:
        yield fake


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Kernel]:
    with Kernel(tmp_path) as kernel:
        yield kernel


def model_is(name: str) -> Any:
    return lambda body: body.get("model") == name


def answered_by_tool(body: Any) -> bool:
    last = body["messages"][-1]
    return is_tool_result(last)


def calls(fake_anthropic: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake_anthropic.requests if r.path.startswith("/v1/messages")]


def tree_of(kernel: Kernel) -> SessionTree:
    loaded = load_file(kernel.session_file())
    assert loaded.problems == []
    return loaded.tree


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def question_node(tree: SessionTree, text: str = QUESTION) -> Any:
    found = [n for n in tree if n.role == "user" and n.text == text]
    assert len(found) == 1, "the question is stored once"
    return found[0]


def columns_html(run: CellRun) -> str:
    grids = [
        o["data"]["text/html"]
        for o in run.outputs
        if o["output_type"] == "display_data"
        and 'class="jtc-fanout"' in o["data"].get("text/html", "")
    ]
    assert len(grids) == 1, run.visible_text
    return grids[0]


def sections(html: str) -> list[str]:
    return re.findall(r'<section class="jtc-answer".*?</section>', html, re.S)


def every_column_shows(run: CellRun, text: str) -> bool:
    """Whether the fan-out's grid is up and each of its answers shows ``text`` (so far)."""
    grids = [
        o["data"]["text/html"]
        for o in run.outputs
        if o["output_type"] == "display_data"
        and 'class="jtc-fanout"' in o["data"].get("text/html", "")
    ]
    shown = sections(grids[0]) if len(grids) == 1 else []
    return bool(shown) and all(text in section for section in shown)


# -- the core, without a kernel --------------------------------------------------------------


def counting_ids() -> Any:
    numbers = iter(range(1, 10_000))
    return lambda: f"n{next(numbers):04d}"


def test_the_same_fan_out_builds_the_same_tree_every_time():
    def build() -> list[tuple[str, str | None, str]]:
        provider = OfflineProvider(delay=0.001, words_per_chunk=1)
        session = Session.in_memory(provider, new_id=counting_ids(), clock=lambda: 0)
        session.ask("What is 1 + 1?", fanout=Fanout(n=2, temperatures=(0.0, 1.0)))
        return [(n.id, n.parent_id, n.text) for n in session.tree]

    first = build()
    assert len(first) == 5
    assert build() == first


def test_a_second_action_during_a_fan_out_is_told_the_session_is_busy():
    session = Session.in_memory(OfflineProvider(delay=0.02))
    refused: list[str] = []

    def click_retry(event: object) -> None:
        if isinstance(event, ReplyDelta) and not refused:
            outside = threading.Thread(target=lambda: refused.append(try_retry(session)))
            outside.start()
            outside.join()

    session.subscribe(click_retry)
    turn = session.ask("Hi", fanout=Fanout(n=3))

    assert refused == ["busy"]
    assert len(turn.answers) == 3 and all(a.error is None for a in turn.answers)


def try_retry(session: Session) -> str:
    try:
        session.retry()
    except SessionBusy:
        return "busy"
    return "ran"


# -- concurrency and the cache (a real kernel from here on) -------------------------


def test_the_answers_overlap_and_all_but_the_first_read_the_cache(claude, fake_anthropic):
    for _ in range(3):
        fake_anthropic.enqueue(tokens=60)  # 0.6 s each at 100 tokens/s

    run = claude.chat(QUESTION, "c0000001", "--n 3").check()

    first, *others = sorted(calls(fake_anthropic), key=lambda r: r.received)
    assert len(others) == 2
    assert first.first_event is not None and first.ended is not None
    for other in others:
        assert other.received >= first.first_event  # waited for the first to begin...
        assert other.received < first.ended  # ...not for it to end: they overlap
    assert max(r.received for r in calls(fake_anthropic)) < min(
        r.ended or 0 for r in calls(fake_anthropic)
    )
    assert first.usage["cache_creation_input_tokens"] > 1024
    assert first.usage["cache_read_input_tokens"] == 0
    for other in others:
        assert other.usage["cache_read_input_tokens"] == first.usage["cache_creation_input_tokens"]
        assert other.usage["cache_creation_input_tokens"] == 0

    tree = tree_of(claude)
    answers = tree.children(question_node(tree).id)
    assert [a.role for a in answers] == ["assistant"] * 3
    reads = [a.meta["usage"]["cache_read_input_tokens"] for a in answers]
    assert sorted(reads)[0] == 0 and all(r > 0 for r in sorted(reads)[1:])
    assert tree.leaf == answers[0].id  # the current leaf is the first variant's
    assert records(claude)[-1] == {"type": "leaf", "id": answers[0].id}

    html = columns_html(run)
    assert "grid-template-columns:repeat(3," in html
    shown = sections(html)
    assert len(shown) == 3
    for number, (section, answer) in enumerate(zip(shown, answers, strict=True), 1):
        assert f"{number}/3 · claude-sonnet-4-6 · sample {number}/3" in section
        assert "alpha beta gamma" in section  # the streamed text, rendered
        assert "60 out" in section
        assert ("cache read" in section) == (answer.meta["usage"]["cache_read_input_tokens"] > 0)
    assert run.updates > 3  # the columns streamed, updated in place


def test_answers_are_appended_in_variant_order_whatever_order_they_finish(claude, fake_anthropic):
    fake_anthropic.enqueue(tokens=80, when=model_is("model-a"))  # finishes last
    fake_anthropic.enqueue(tokens=5, when=model_is("model-b"))  # finishes first
    fake_anthropic.enqueue(tokens=30, when=model_is("model-c"))

    claude.chat(QUESTION, "c0000001", "--models model-a,model-b,model-c").check()

    tree = tree_of(claude)
    question = question_node(tree)
    finished = sorted(calls(fake_anthropic), key=lambda r: r.ended or 0)
    assert [r.body["model"] for r in finished] == ["model-b", "model-c", "model-a"]
    answers = tree.children(question.id)
    assert [a.meta["model"] for a in answers] == ["model-a", "model-b", "model-c"]
    assert tree.leaf == answers[0].id

    claude.chat(QUESTION, "c0000001", "--models model-a,model-b,model-c").check()  # the retry rule

    tree = tree_of(claude)
    assert question_node(tree).id == question.id
    answers = tree.children(question.id)
    assert [a.meta["model"] for a in answers] == ["model-a", "model-b", "model-c"] * 2
    assert tree.leaf == answers[3].id


def test_every_combination_of_models_and_temperatures_up_to_twelve(claude, fake_anthropic):
    claude.chat("Hi", "c0000001", "--n 2 --models model-a,model-b --temperatures 0,1").check()

    tree = tree_of(claude)
    answers = tree.children(question_node(tree, "Hi").id)
    settings = [(a.meta["model"], a.meta["temperature"]) for a in answers]
    assert settings == [
        ("model-a", 0.0),
        ("model-a", 0.0),
        ("model-a", 1.0),
        ("model-a", 1.0),
        ("model-b", 0.0),
        ("model-b", 0.0),
        ("model-b", 1.0),
        ("model-b", 1.0),
    ]
    sent = sorted((r.body["model"], r.body["temperature"]) for r in calls(fake_anthropic))
    assert sent == sorted(settings)

    before = claude.session_file().read_bytes()
    too_many = claude.chat("Hi again", "c0000002", "--n 5 --models a,b,c")
    assert too_many.status == "error"
    assert too_many.stderr.strip() == (
        "UsageError: %%chat: 5 samples × 3 models is 15 answers; at most 12 at once: "
        "ask for fewer samples, models or temperatures"
    )
    assert claude.session_file().read_bytes() == before  # nothing was written
    assert len(calls(fake_anthropic)) == 8


# -- faults --------------------------------------------------------------------------------


def test_one_failing_answer_keeps_the_others_and_is_marked(claude, fake_anthropic):
    fake_anthropic.enqueue(tokens=20, when=model_is("good"))
    # every attempt refused (5: the router's RetryRule), each retry one line
    fake_anthropic.enqueue_error(429, times=5, retry_after_ms=1, when=model_is("limited"))
    fake_anthropic.enqueue(tokens=40, drop_after=12, when=model_is("dropped"))
    fake_anthropic.enqueue(tokens=40, error_event_after=12, when=model_is("errored"))

    run = claude.chat(QUESTION, "c0000001", "--models good,limited,dropped,errored").check()

    tree = tree_of(claude)
    answers = {a.meta["model"]: a for a in tree.children(question_node(tree).id)}
    assert list(answers) == ["good", "dropped", "errored"]  # the 429 got nothing to keep
    assert answers["good"].meta["stop_reason"] == "end_turn"
    assert "interrupted" not in answers["good"].meta
    for name, kind in (("dropped", "connection_failed"), ("errored", "overloaded")):
        meta = answers[name].meta
        assert meta["interrupted"] is True
        assert meta["error"] == kind
        assert answers[name].text.startswith("alpha beta")  # what arrived is kept
    assert tree.leaf == answers["good"].id
    shown = sections(columns_html(run))
    assert "failed" not in shown[0]
    assert "failed: Rate limited by the Anthropic API (429)" in shown[1]
    assert "failed: The connection to the Anthropic API dropped mid-reply" in shown[2]
    assert "failed: The Anthropic API became overloaded mid-reply" in shown[3]
    assert "Answer 2 (limited) failed: Rate limited" in run.stderr
    assert "(gave up after 5 attempts)" in run.stderr
    for attempt in (2, 3, 4, 5):
        note = (
            "Answer 2 (limited): Rate limited by the Anthropic API: "
            f"retrying in 0.001 s (attempt {attempt} of 5)."
        )
        assert run.stderr.count(note) == 1
    replies = [r for r in fake_anthropic.requests if r.path == "/v1/messages"]
    limited = [r for r in replies if r.body["model"] == "limited"]
    assert len(limited) == 5  # no silent retries of the SDK's on top


def test_when_every_answer_fails_the_cell_fails(claude, fake_anthropic):
    fake_anthropic.enqueue_error(529, times=10, retry_after_ms=1)  # 5 attempts each

    run = claude.chat("Hi", "c0000001", "--n 2")

    assert run.status == "error"
    assert run.error_lines[-1].startswith("Model error: The Anthropic API is overloaded (529)")
    tree = tree_of(claude)
    assert tree.children(question_node(tree, "Hi").id) == []
    assert tree.leaf == question_node(tree, "Hi").id


def test_ctrl_c_keeps_what_every_answer_had_received(claude, fake_anthropic):
    for _ in range(3):
        fake_anthropic.enqueue(tokens=3000)  # 30 s at 100 tokens/s
    msg_id = claude.send(f"%%chat --n 3\n{QUESTION}", "c0000001")
    run = claude.collect(msg_id, until=lambda r: every_column_shows(r, "alpha beta"))
    assert len(calls(fake_anthropic)) == 3
    claude.interrupt()
    run = claude.collect(msg_id, run=run)

    assert run.status == "error"  # so Run All stops here
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith("Interrupted: what each answer had received is kept (")
    lines = records(claude)
    questions = [i for i, r in enumerate(lines) if r.get("message", {}).get("content") == QUESTION]
    assert len(questions) == 1  # on disk once...
    tree = tree_of(claude)
    answers = tree.children(question_node(tree).id)
    assert len(answers) == 3
    first_answer = next(i for i, r in enumerate(lines) if r.get("id") == answers[0].id)
    assert questions[0] < first_answer  # ...before any answer
    for answer in answers:
        assert answer.meta["interrupted"] is True
        assert answer.meta["error"] == "interrupted by the user"
        assert answer.text.startswith("alpha beta")
        assert answer.id[:7] in run.error_lines[0]
    assert tree.leaf == answers[0].id
    for section in sections(columns_html(run)):
        assert "interrupted (interrupted by the user)" in section


# -- tools ---------------------------------------------------------------------------------

SLOW_TOOL = '''
import threading, time
from jupyter_tree_chat import tool
tool_calls = []

@tool
def slow_add(a: int, b: int) -> int:
    """Add two integers, slowly."""
    tool_calls.append(("start", threading.current_thread().name, time.monotonic()))
    time.sleep(0.2)
    tool_calls.append(("end", threading.current_thread().name, time.monotonic()))
    return a + b
'''


def test_each_answer_runs_its_own_tool_loop_one_tool_call_at_a_time(claude, fake_anthropic):
    claude.run(SLOW_TOOL).check()
    for _ in range(3):
        fake_anthropic.enqueue(
            "I will add them.",
            tool_use={"name": "slow_add", "input": {"a": 2, "b": 3}},
            when=lambda body: not answered_by_tool(body),
        )
        fake_anthropic.enqueue("The sum is 5.", when=answered_by_tool)

    claude.chat("What is 2 + 3? Use slow_add.", "c0000001", "--n 3").check()

    kinds = json.loads(
        claude.run("import json; print(json.dumps([c[:2] for c in tool_calls]))").check().stdout
    )
    assert [k for k, _ in kinds] == ["start", "end"] * 3  # never two at once
    assert {thread for _, thread in kinds} == {"MainThread"}  # in the kernel's own thread
    tree = tree_of(claude)
    for head in tree.children(question_node(tree, "What is 2 + 3? Use slow_add.").id):
        chain = tree.path_nodes(tree.deepest_leaf(head.id))[-3:]
        assert chain[0].id == head.id
        assert chain[1].message["content"][0]["content"] == "5"
        assert chain[2].text == "The sum is 5."
    assert len(calls(fake_anthropic)) == 6


# -- thinking and cost ----------------------------------------------------------------------

TWO_MODELS = "--models claude-sonnet-4-6,claude-haiku-4-5"


def test_each_answer_thinks_and_its_column_shows_its_thinking_and_cost(claude, fake_anthropic):
    sonnet, haiku = model_is("claude-sonnet-4-6"), model_is("claude-haiku-4-5")
    usage = {"input_tokens": 2_000, "output_tokens": 500}
    fake_anthropic.enqueue("Blue.", thinking="The sky comes first.", usage=usage, when=sonnet)
    usage = {"input_tokens": 1_000, "output_tokens": 100}
    fake_anthropic.enqueue("Red.", thinking="Roses come next.", usage=usage, when=haiku)

    run = claude.chat("Name a colour", "c0000001", f"{TWO_MODELS} --thinking 2048").check()

    assert [r.body["thinking"] for r in calls(fake_anthropic)] == [
        {"type": "enabled", "budget_tokens": 2048}
    ] * 2
    assert all("temperature" not in r.body for r in calls(fake_anthropic))
    tree = tree_of(claude)
    answers = tree.children(question_node(tree, "Name a colour").id)
    for answer, thought in zip(answers, ("The sky comes first.", "Roses come next."), strict=True):
        block = answer.message["content"][0]
        assert block["type"] == "thinking" and block["thinking"] == thought
        assert block["signature"]  # signed by the API, so it can be sent back
        assert answer.meta["thinking"] == 2048
    shown = sections(columns_html(run))
    assert '<details class="jtc-thinking"><summary>Thinking</summary>' in shown[0]
    assert "The sky comes first." in shown[0] and "Roses come next." in shown[1]
    assert shown[0].index("The sky comes first.") < shown[0].index("Blue.")
    # $3 / $15 a million tokens: 2,000 in, 500 out; $1 / $5: 1,000 in, 100 out
    assert "· 2,000 in · 500 out · $0.0135 ·" in shown[0]
    assert "· 1,000 in · 100 out · $0.0015 ·" in shown[1]


def test_an_answer_cut_short_while_thinking_keeps_its_thinking_unsigned(claude, fake_anthropic):
    thought = "Weighing every colour there is. " * 8
    sonnet, haiku = model_is("claude-sonnet-4-6"), model_is("claude-haiku-4-5")
    fake_anthropic.enqueue("Blue.", when=sonnet)
    fake_anthropic.enqueue("Red.", thinking=thought, drop_after=6, when=haiku)

    run = claude.chat("Name a colour", "c0000001", f"{TWO_MODELS} --thinking 2048").check()

    tree = tree_of(claude)
    good, cut = tree.children(question_node(tree, "Name a colour").id)
    assert good.meta["stop_reason"] == "end_turn" and good.text == "Blue."
    assert cut.meta["interrupted"] is True and cut.meta["error"] == "connection_failed"
    assert cut.meta["thinking"] == 2048
    (block,) = cut.message["content"]
    assert block["type"] == "thinking" and block["signature"] == ""  # never sent back
    assert block["thinking"] and thought.startswith(block["thinking"])
    assert tree.leaf == good.id
    shown = sections(columns_html(run))
    assert "<summary>Thinking (cut short)</summary>" in shown[1]
    assert "failed: The connection to the Anthropic API dropped mid-reply" in shown[1]


def test_a_fan_out_over_temperatures_with_thinking_is_refused_before_any_request(
    claude, fake_anthropic
):
    claude.chat("Hi", "c0000001").check()
    before = claude.session_file().read_bytes()

    cell = claude.chat("Hi again", "c0000002", "--temperatures 0,1 --thinking 2048")
    claude.run("%config TreeChat.thinking = 2048").check()
    retry = claude.run("%chat retry --temperatures 0,1")
    claude.run("%config TreeChat.context_windows = {'tiny': 50}").check()
    variant = claude.chat("Hi again " * 30, "c0000002", "--models claude-sonnet-4-6,tiny")

    fix = (
        "UsageError: --temperatures cannot be used with thinking (the API accepts no "
        "temperature but 1 there): drop --temperatures (compare --n samples or --models "
        "instead), or turn thinking off with --thinking off"
    )
    assert cell.status == retry.status == "error"
    assert cell.stderr.strip() == retry.stderr.strip() == fix
    assert variant.status == "error"  # each variant is checked as a request of its own
    assert variant.stderr.strip().startswith("UsageError: this question would not fit: ")
    assert "over tiny's 50 window" in variant.stderr
    assert claude.session_file().read_bytes() == before  # nothing was stored...
    assert len(calls(fake_anthropic)) == 1  # ...nor sent


# -- the other ways in: retry and edit -----------------------------------------------------


def test_retry_and_edit_take_the_fan_out_options(claude, fake_anthropic):
    claude.chat("Hi", "c0000001").check()
    retry = claude.run("%chat retry --n 2").check()
    assert len(sections(columns_html(retry))) == 2
    tree = tree_of(claude)
    hi = question_node(tree, "Hi")
    assert len(tree.children(hi.id)) == 3
    assert tree.leaf == tree.children(hi.id)[1].id

    claude.run("%chat edit 1 --temperatures 0,0.5 Hello").check()

    tree = tree_of(claude)
    hello = question_node(tree, "Hello")
    assert hello.parent_id == hi.parent_id
    assert [a.meta["temperature"] for a in tree.children(hello.id)] == [0.0, 0.5]
    bad = claude.run("%chat retry --n x")
    assert bad.stderr.strip() == "UsageError: %chat retry --n: 'x' is not a number; e.g. --n 3"


# -- the offline model ---------------------------------------------------------------------


def test_offline_answers_differ_where_their_settings_differ(offline):
    offline.chat("What is 6 * 7?", "c0000001", "--temperatures 0,1").check()

    tree = tree_of(offline)
    first, second = (a.text for a in tree.children(question_node(tree, "What is 6 * 7?").id))
    assert "`6 * 7 = 42`" in first and "`6 * 7 = 42`" in second
    assert "model offline-teacher, temperature 0," in first
    assert "model offline-teacher, temperature 1," in second
    assert "This is answer" not in first and "This is answer **2** to this question" in second
    tried = re.sub(r"\n\nThis is answer \*\*2\*\*[^\n]*", "", second)  # says it is the 2nd
    assert first.replace("temperature 0,", "temperature 1,") == tried


# -- scoring: compare_frame ----------------------------------------------------------------

FRAME = """
import jupyter_tree_chat
df = jupyter_tree_chat.compare_frame()
print(list(df.columns))
print(df[["id", "position", "endpoint", "model", "served_model", "temperature", "output_tokens",
          "stop_reason"]].to_json(orient="records"))
print(df[["cache_read_input_tokens", "seconds", "interrupted", "text"]].to_json(orient="records"))
"""


def test_compare_frame_has_a_row_per_sibling_answer_in_order(claude, fake_anthropic):
    fake_anthropic.enqueue("Short.", when=lambda b: b.get("temperature") == 0)
    fake_anthropic.enqueue("A longer answer.", when=lambda b: b.get("temperature") == 1)

    claude.chat(QUESTION, "c0000001", "--temperatures 0,1").check()
    printed = claude.run(FRAME).check().stdout.splitlines()

    assert json.loads(printed[0].replace("'", '"')) == [
        "id",
        "position",
        "endpoint",
        "model",
        "served_model",
        "temperature",
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cost",
        "seconds",
        "stop_reason",
        "interrupted",
        "text",
    ]
    tree = tree_of(claude)
    answers = tree.children(question_node(tree).id)
    rows = json.loads(printed[1])
    assert [r["id"] for r in rows] == [a.id for a in answers]
    assert [r["position"] for r in rows] == ["1/2", "2/2"]
    assert [r["temperature"] for r in rows] == [0.0, 1.0]
    assert [r["model"] for r in rows] == ["claude-sonnet-4-6"] * 2
    assert [r["endpoint"] for r in rows] == ["anthropic"] * 2
    assert [r["served_model"] for r in rows] == [None] * 2
    assert [r["output_tokens"] for r in rows] == [a.meta["usage"]["output_tokens"] for a in answers]
    assert [r["stop_reason"] for r in rows] == ["end_turn"] * 2
    more = json.loads(printed[2])
    assert [r["text"] for r in more] == ["Short.", "A longer answer."]
    assert [r["interrupted"] for r in more] == [False, False]
    assert more[0]["cache_read_input_tokens"] == 0 and more[1]["cache_read_input_tokens"] > 0
    assert all(r["seconds"] > 0 for r in more)


COSTS = """
import jupyter_tree_chat
print(jupyter_tree_chat.compare_frame()[["model", "cost"]].to_json(orient="records"))
"""


def test_compare_frame_costs_each_answer_at_the_session_prices(claude, fake_anthropic):
    for model, usage in (
        ("claude-sonnet-4-6", {"input_tokens": 2_000, "output_tokens": 500}),
        ("house-model", {"input_tokens": 1_000, "output_tokens": 100}),
        ("unpriced-model", {"input_tokens": 1_000, "output_tokens": 100}),
    ):
        fake_anthropic.enqueue("An answer.", usage=usage, when=model_is(model))
    claude.run("%config TreeChat.prices = {'house-model': {'input': 10, 'output': 20}}").check()

    models = "claude-sonnet-4-6,house-model,unpriced-model"
    run = claude.chat("Name a colour", "c0000001", f"--models {models}").check()
    rows = json.loads(claude.run(COSTS).check().stdout)

    # $3 / $15 a million: 2,000 in, 500 out; the configured $10 / $20: 1,000 in, 100 out
    assert rows == [
        {"model": "claude-sonnet-4-6", "cost": pytest.approx(0.0135)},
        {"model": "house-model", "cost": pytest.approx(0.012)},
        {"model": "unpriced-model", "cost": None},  # no price: no figure, never $0
    ]
    html = columns_html(run)
    footers = [re.findall(r"<footer[^>]*>(.*?)</footer>", s)[0] for s in sections(html)]
    assert "· 500 out · $0.0135 ·" in footers[0] and "· 100 out · $0.0120 ·" in footers[1]
    assert "$" not in footers[2]


def test_compare_frame_without_pandas_says_how_to_get_it_in_one_line(offline):
    offline.chat("Hi", "c0000001", "--n 2").check()
    run = offline.run("import sys; sys.modules['pandas'] = None\n"
                      "import jupyter_tree_chat; jupyter_tree_chat.compare_frame()")  # fmt: skip
    assert run.status == "error"
    assert run.error_lines == [
        "MissingExtra: compare_frame needs pandas: pip install 'jupyter-tree-chat[pandas]'"
    ]


# -- %chat compare -------------------------------------------------------------------------

HOSTILE = "**Yes.** <img src=x onerror=alert(1)> <script>alert(2)</script>\n\n```py\nprint(1)\n```"
CALM = "**No.** plain words\n\n```py\nprint(2)\n```"


def test_chat_compare_renders_the_answers_escaped_with_differences_to_open(claude, fake_anthropic):
    fake_anthropic.enqueue(HOSTILE, when=model_is("model-a"))
    fake_anthropic.enqueue(CALM, when=model_is("model-b"))
    claude.chat("Is it safe?", "c0000001", "--models model-a,model-b").check()

    run = claude.run("%chat compare").check()

    assert len(run.outputs) == 1
    html = run.outputs[0]["data"]["text/html"]
    assert "<img" not in html and "<script" not in html and "onerror=alert(1)&gt;" in html
    assert "&lt;img src=x" in html and "&lt;script&gt;" in html
    plain, differences = html.split('<details class="jtc-differences">')
    assert "<strong>Yes.</strong>" in plain and "<strong>No.</strong>" in plain
    assert "<mark>" not in plain  # the differences are off until opened
    assert '<pre><code class="language-py">print(1)' in plain
    tree = tree_of(claude)
    answers = tree.children(question_node(tree, "Is it safe?").id)
    headers = re.findall(r"<header[^>]*>(.*?)</header>", plain)
    assert headers[0].startswith("1/2 · model-a · ") and headers[1].startswith("2/2 · model-b · ")
    assert all(" out · " in h and h.endswith(" s") for h in headers)
    assert f"%chat switch {answers[1].id[:7]}" in plain
    assert "<strong><mark>Yes.</mark></strong>" in differences
    assert "<strong><mark>No.</mark></strong>" in differences
    assert "<mark>print(1)</mark>" in differences and "<mark>print(2)</mark>" in differences
    assert "<mark>plain</mark> <mark>words</mark>" in differences

    one = claude.run(f"%chat compare {answers[0].id[:7]}").check()
    assert one.outputs[0]["data"]["text/html"] == html  # an answer names its question too


def test_chat_compare_of_a_single_answer_says_how_to_get_more(offline):
    offline.chat("Hi", "c0000001").check()
    run = offline.run("%chat compare")
    assert run.status == "error"
    line = run.stderr.strip()
    assert line.startswith("UsageError: %chat compare: question ") and "\n" not in line
    assert line.endswith("has 1 answer(s); ask for more with `%chat retry --n 3` (or %%chat --n 3)")
