"""``%%chat --over``: one question over many rows, on a real kernel (experiment.py).

The cells run through a real ipykernel, against the offline model where only the tree
matters and against the fake Messages API (real SDK, real HTTP and SSE, a set pace)
where the requests themselves do: how many run at once, what each row sent, a failing
row. What is checked is what a person sees: the file's records, the cell's grid and its
one-line errors.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic, RecordedRequest
from helpers.kernel_harness import CellRun, Kernel

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import Node, SessionTree

pytestmark = pytest.mark.kernel

CITIES = (
    "import pandas as pd\n"
    "cities = pd.DataFrame({'city': ['Paris', 'Oslo', 'Lima'], 'people': [2.1, 0.7, 10.0]})"
)


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(tokens_per_second=100) as fake:
        yield fake


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Kernel]:
    with Kernel(tmp_path) as kernel:
        yield kernel


def tree_of(kernel: Kernel) -> SessionTree:
    loaded = load_file(kernel.session_file())
    assert loaded.problems == []
    return loaded.tree


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def rows_asked(tree: SessionTree) -> list[Node]:
    """Every experiment question in the file, in the order they were written."""
    return [n for n in tree if n.role == "user" and (n.meta or {}).get("experiment")]


def calls(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.path.startswith("/v1/messages")]


def last_text(request: RecordedRequest) -> str:
    """The text of the request's last message (a string, or its text blocks)."""
    content = request.body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def grid_html(run: CellRun) -> str:
    found = [h for h in run.html if "jtc-experiment-grid" in h]
    assert len(found) == 1, run.visible_text
    return found[0]


# -- rows, fields and the records --------------------------------------------------------


def test_each_row_is_a_sibling_question_keeping_its_template_and_row(offline):
    offline.run(CITIES).check()
    offline.chat("Hello", "c0000001").check()
    before = tree_of(offline).leaf

    run = offline.chat("What is {city} known for? ({people} million)", "c0000002", "--over cities")
    run.check()

    tree = tree_of(offline)
    asked = rows_asked(tree)
    assert [q.text for q in asked] == [
        "What is Paris known for? (2.1 million)",
        "What is Oslo known for? (0.7 million)",
        "What is Lima known for? (10.0 million)",
    ]
    assert {q.parent_id for q in asked} == {before}  # siblings under where the cell ran
    about = [q.meta["experiment"] for q in asked]
    assert [a["row"] for a in about] == [
        {"city": "Paris", "people": 2.1},
        {"city": "Oslo", "people": 0.7},
        {"city": "Lima", "people": 10.0},
    ]
    assert [a["index"] for a in about] == [0, 1, 2]
    assert {a["template"] for a in about} == {"What is {city} known for? ({people} million)"}
    assert {a["version"] for a in about} == {1}
    assert len({a["id"] for a in about}) == 1
    assert {q.meta["cell_id"] for q in asked} == {"c0000002"}
    for question in asked:  # the model saw its own row and nothing of the others
        (answer,) = tree.children(question.id)
        assert "**3 messages** on the active path" in answer.text  # Hello, its answer, the row
        assert question.text in answer.text
    # the questions were written before any answer, in one append
    lines = records(offline)
    firsts = [i for i, r in enumerate(lines) if r.get("id") in {q.id for q in asked}]
    answers = [i for i, r in enumerate(lines) if r.get("parentId") in {q.id for q in asked}]
    assert max(firsts) < min(answers)
    # the first row's answer is current, and the cell says so
    first_answer = tree.children(asked[0].id)[0]
    assert tree.leaf == first_answer.id
    assert f"The first row's answer {first_answer.id[:7]} is current" in run.stdout


def test_a_plain_next_cell_continues_from_the_first_rows_answer(offline):
    offline.run(CITIES).check()
    offline.chat("Describe {city}.", "c0000001", "--over cities").check()
    offline.chat("And its weather?", "c0000002").check()

    tree = tree_of(offline)
    first = rows_asked(tree)[0]
    follow = next(n for n in tree if n.text == "And its weather?")
    assert tree.get(follow.parent_id).parent_id == first.id
    (answer,) = tree.children(follow.id)
    assert "**3 messages** on the active path" in answer.text  # Paris's row only


def test_unchanged_it_is_one_more_sample_per_row_edited_a_new_version(offline):
    offline.run(CITIES).check()
    offline.chat("Describe {city}.", "c0000001", "--over cities").check()
    offline.chat("Describe {city}.", "c0000001", "--over cities").check()

    tree = tree_of(offline)
    asked = rows_asked(tree)
    assert len(asked) == 3  # no new question: a sample each
    assert [len(tree.children(q.id)) for q in asked] == [2, 2, 2]
    assert tree.leaf == tree.children(asked[0].id)[1].id

    offline.chat("Describe {city} in one word.", "c0000001", "--over cities").check()

    tree = tree_of(offline)
    asked = rows_asked(tree)
    assert len(asked) == 6
    old, new = asked[:3], asked[3:]
    assert [q.meta["experiment"]["version"] for q in new] == [2, 2, 2]
    assert {q.meta["experiment"]["id"] for q in asked} == {old[0].meta["experiment"]["id"]}
    assert [q.meta["edited_from"] for q in new] == [q.id for q in old]
    assert {q.parent_id for q in asked} == {old[0].parent_id}  # a fork: siblings
    assert [q.text for q in new] == [
        "Describe Paris in one word.",
        "Describe Oslo in one word.",
        "Describe Lima in one word.",
    ]
    assert tree.leaf == tree.children(new[0].id)[0].id

    offline.chat("Describe {city}.", "c0000001", "--over cities").check()  # back to v1's text
    assert [q.meta["experiment"]["version"] for q in rows_asked(tree_of(offline))[6:]] == [3] * 3


def test_a_list_of_dicts_a_csv_beside_the_notebook_and_any_column_name(offline, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "prices.csv").write_text(
        "品名,价格,unit price\n苹果,3,1.5\n梨,4,2\n", encoding="utf-8"
    )
    offline.run("items = [{'name': 'pen', 'n': 2}, {'name': 'ink'}]").check()

    offline.chat("Price of {name} × {n}?", "c0000001", "--over items").check()
    offline.chat("{品名}: {价格} ({row[unit price]} each)", "c0000002", "--over data/prices.csv")
    tree = tree_of(offline)
    assert [q.text for q in rows_asked(tree)] == [
        "Price of pen × 2?",
        "Price of ink × ?",  # a row without the column: its value is missing
        "苹果: 3 (1.5 each)",
        "梨: 4 (2.0 each)",
    ]
    assert rows_asked(tree)[1].meta["experiment"]["row"] == {"name": "ink", "n": None}


@pytest.mark.parametrize(
    ("setup", "line", "text", "error"),
    [
        (
            CITIES,
            "--over cities",
            "What is {town}?",
            "UsageError: %%chat --over: {town} names no column of the rows and no Python "
            "variable (columns: city, people); write {{ }} for literal braces",
        ),
        (
            CITIES,
            "--over cities",
            "What is {row[town hall]}?",
            "UsageError: %%chat --over: {row[town hall]} names no column of the rows and no "
            "Python variable (columns: city, people); write {{ }} for literal braces",
        ),
        (
            "",
            "--over nowhere",
            "Hi {x}",
            "UsageError: %%chat --over nowhere: no such variable; define it (a DataFrame or a "
            "list of dicts)",
        ),
        (
            "things = [{'a': 1}, 'b']",
            "--over things",
            "Hi {a}",
            "UsageError: %%chat --over things: item 2 is a str, not a dict",
        ),
        (
            "count = 3",
            "--over count",
            "Hi",
            "UsageError: %%chat --over count: a int; give a DataFrame, a list of dicts or a "
            ".csv path",
        ),
        (
            "empty = []",
            "--over empty",
            "Hi",
            "UsageError: %%chat --over empty: there are no rows to ask about",
        ),
        (
            "",
            "--over missing.csv",
            "Hi",
            "UsageError: %%chat --over missing.csv: no such file (looked for {folder}/missing.csv);"
            " give a path relative to the notebook",
        ),
        (
            "",
            "--concurrency 3",
            "Hi",
            "UsageError: %%chat: --concurrency goes with --over NAME or a fan-out "
            "(--n, --models, --temperatures); add the rows or the answers to ask",
        ),
        (
            CITIES,
            "--over cities --raw",
            "Hi {city}",
            "UsageError: %%chat: --raw and --over contradict: --over fills each row's {column}; "
            "drop --raw",
        ),
        (
            CITIES,
            "--over cities --concurrency 0",
            "Hi",
            "UsageError: %%chat --concurrency: at least 1 request at once, e.g. --concurrency 4",
        ),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(offline, tmp_path, setup, line, text, error):
    if setup:
        offline.run(setup).check()
    offline.chat("Hello", "c0000001").check()
    before = offline.session_file().read_bytes()

    run = offline.chat(text, "c0000002", line)

    assert run.status == "error"
    assert run.stderr.strip() == error.replace("{folder}", str(tmp_path))
    assert offline.session_file().read_bytes() == before


def test_a_column_wins_over_a_kernel_variable_and_the_cell_says_so_once(offline):
    offline.run(CITIES + "\ncity = 'Rome'\nunit = 'km'").check()

    run = offline.chat("{city}, {city}: area in {unit}?", "c0000001", "--over cities").check()

    assert run.stdout.count("{city} is a column of the rows and a kernel variable") == 1
    assert [q.text for q in rows_asked(tree_of(offline))] == [
        "Paris, Paris: area in km?",
        "Oslo, Oslo: area in km?",
        "Lima, Lima: area in km?",
    ]


def test_with_kernel_values_off_the_rows_still_fill_their_columns(offline):
    offline.run(CITIES + "\nunit = 'km'\n%config TreeChat.substitute_variables = False").check()

    offline.chat("{city}: area in {unit}? {{x}}", "c0000001", "--over cities").check()

    assert [q.text for q in rows_asked(tree_of(offline))] == [
        "Paris: area in {unit}? {x}",
        "Oslo: area in {unit}? {x}",
        "Lima: area in {unit}? {x}",
    ]


# -- the requests: concurrency, models, faults -------------------------------------------


def test_rows_run_concurrently_up_to_the_limit(claude, fake_anthropic):
    claude.run("rows = [{'n': i} for i in range(6)]").check()
    for _ in range(6):
        fake_anthropic.enqueue(tokens=40)  # 0.4 s each

    claude.chat("Count to {n}.", "c0000001", "--over rows --concurrency 2").check()

    spans = sorted((r.received, r.ended or 0) for r in calls(fake_anthropic))
    assert len(spans) == 6
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _end in spans)
    assert most == 2  # overlapping, never more than two at once
    sent = sorted(last_text(r) for r in calls(fake_anthropic))
    assert sent == [f"Count to {i}." for i in range(6)]
    for request in calls(fake_anthropic):  # each row alone on its path
        assert len(request.body["messages"]) == 1


def test_with_models_every_row_gets_each(claude, fake_anthropic):
    claude.run("rows = [{'w': 'a'}, {'w': 'b'}]").check()

    claude.chat("Say {w}.", "c0000001", "--over rows --models model-a,model-b").check()

    tree = tree_of(claude)
    for question in rows_asked(tree):
        assert [a.meta["model"] for a in tree.children(question.id)] == ["model-a", "model-b"]
    asked = sorted((r.body["model"], last_text(r)) for r in calls(fake_anthropic))
    assert asked == [
        ("model-a", "Say a."),
        ("model-a", "Say b."),
        ("model-b", "Say a."),
        ("model-b", "Say b."),
    ]


def test_a_failing_row_is_marked_and_the_others_kept(claude, fake_anthropic):
    claude.run("rows = [{'w': 'one'}, {'w': 'two'}, {'w': 'three'}]").check()
    fake_anthropic.enqueue_error(  # every attempt (5) refused
        429, times=5, retry_after_ms=1, when=lambda body: "two" in json.dumps(body["messages"])
    )

    run = claude.chat("Say {w}.", "c0000001", "--over rows").check()

    tree = tree_of(claude)
    asked = rows_asked(tree)
    assert [len(tree.children(q.id)) for q in asked] == [1, 0, 1]
    assert "1 of 3 answers failed (marked in the grid)" in run.stdout
    html = grid_html(run)
    marked = [row for row in html.split("<tr")[1:] if "jtc-grid-failed-line" in row]
    assert len(marked) == 1
    assert "w: two" in marked[0] and "failed: Rate limited by the Anthropic API (429)" in marked[0]
    assert "Answer 2" not in run.stderr  # no line per failed row: the grid marks it
    retries = [line for line in run.stderr.splitlines() if "retrying in" in line]
    assert retries == [  # but one per retry, naming the row
        f"Row 2 (claude-sonnet-4-6): Rate limited by the Anthropic API: "
        f"retrying in 0.001 s (attempt {attempt} of 5)."
        for attempt in (2, 3, 4, 5)
    ]


def test_a_row_whose_stream_drops_keeps_what_it_received(claude, fake_anthropic):
    claude.run("rows = [{'w': 'one'}, {'w': 'two'}]").check()
    two = lambda body: "two" in json.dumps(body["messages"])  # noqa: E731
    fake_anthropic.enqueue(tokens=40, drop_after=12, when=two)
    fake_anthropic.enqueue(tokens=5)

    claude.chat("Say {w}.", "c0000001", "--over rows").check()

    kept = [tree_of(claude).children(q.id) for q in rows_asked(tree_of(claude))]
    assert [len(k) for k in kept] == [1, 1]
    assert "interrupted" not in kept[0][0].meta
    dropped = kept[1][0]
    assert (dropped.meta["interrupted"], dropped.meta["error"]) == (True, "connection_failed")
    assert dropped.text.startswith("alpha beta")  # the text streamed before the drop


def test_ctrl_c_keeps_what_arrived(claude, fake_anthropic):
    claude.run("rows = [{'n': i} for i in range(8)]").check()
    for _ in range(8):
        fake_anthropic.enqueue(tokens=3000)  # 30 s each
    msg_id = claude.send("%%chat --over rows --concurrency 2\nCount to {n}.", "c0000001")

    def both_began(run: CellRun) -> bool:
        began = [r for r in calls(fake_anthropic) if r.first_event is not None]
        return len(began) == 2

    run = claude.collect(msg_id, until=both_began)
    time.sleep(0.5)  # some text arrives on both
    claude.interrupt()
    run = claude.collect(msg_id, run=run)

    assert run.status == "error"
    assert run.error_lines == ["Interrupted: the 2 answers that had arrived are kept."]
    tree = tree_of(claude)
    asked = rows_asked(tree)
    assert len(asked) == 8  # every question was on disk before any was sent
    kept = [tree.children(q.id) for q in asked]
    assert [len(k) for k in kept] == [1, 1, 0, 0, 0, 0, 0, 0]
    for (answer,) in kept[:2]:
        assert answer.meta["interrupted"] is True
        assert answer.text.startswith("alpha beta")
    assert len(calls(fake_anthropic)) == 2  # the rows not started were never sent
    assert "jtc-experiment-grid" in "".join(run.html)  # the grid shows what arrived


# -- what the cell shows ---------------------------------------------------------------


def test_the_grid_shows_each_rows_inputs_and_answer_escaped(claude, fake_anthropic):
    hostile = "<img src=x onerror=alert(1)>"
    claude.run(f"rows = [{{'w': {hostile!r}}}, {{'w': 'fine'}}]").check()
    fake_anthropic.enqueue("<script>alert(2)</script> first line\nsecond line")
    fake_anthropic.enqueue("Plain answer.")

    run = claude.chat("Echo {w}.", "c0000001", "--over rows").check()

    html = grid_html(run)
    assert "<img" not in html and "<script" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt; first line" in html
    assert "second line" not in html  # the first line only
    tree = tree_of(claude)
    for question in rows_asked(tree):
        (answer,) = tree.children(question.id)
        assert f'data-node="{answer.id[:7]}"' in html
    assert "claude-sonnet-4-6" in html and " in · " in html and " s<" in html
    progress = [o for o in run.outputs if "jtc-experiment-progress" in str(o.get("data"))]
    assert progress == []  # the bar was replaced in place by the grid
    assert run.updates >= 1


def test_a_fan_out_still_streams_its_columns(claude, fake_anthropic):
    run = claude.chat("Hi", "c0000001", "--n 2").check()
    assert any("jtc-fanout" in h for h in run.html)
    assert not any("jtc-experiment" in h for h in run.html)


# -- the frame and the versions side by side -----------------------------------------------

FRAME = """
import jupyter_tree_chat, json
df = jupyter_tree_chat.experiment_frame()
print(json.dumps({"columns": list(df.columns), "rows": json.loads(df.to_json(orient="records"))}))
"""


def frame_of(kernel: Kernel) -> dict[str, Any]:
    return json.loads(kernel.run(FRAME).check().stdout)


def test_experiment_frame_has_a_row_per_answer_with_version_row_and_template(
    claude, fake_anthropic
):
    claude.run("rows = [{'w': 'a', 'text': 't1'}, {'w': 'b', 'text': 't2'}]").check()
    claude.chat("Say {w}.", "c0000001", "--over rows --models model-a,model-b").check()
    claude.chat("Say {w} loudly.", "c0000001", "--over rows").check()

    frame = frame_of(claude)

    assert frame["columns"][:8] == [
        "id", "question", "experiment", "version", "row", "template", "w", "row.text"
    ]  # fmt: skip
    for name in ("text", "model", "endpoint", "temperature", "input_tokens", "output_tokens"):
        assert name in frame["columns"]
    assert {"cost", "seconds"} <= set(frame["columns"])
    rows = frame["rows"]
    assert [(r["version"], r["row"], r["w"], r["model"]) for r in rows] == [
        (1, 0, "a", "model-a"),
        (1, 0, "a", "model-b"),
        (1, 1, "b", "model-a"),
        (1, 1, "b", "model-b"),
        (2, 0, "a", "claude-sonnet-4-6"),
        (2, 1, "b", "claude-sonnet-4-6"),
    ]
    assert {r["template"] for r in rows} == {"Say {w}.", "Say {w} loudly."}
    assert [r["row.text"] for r in rows] == ["t1", "t1", "t2", "t2", "t1", "t2"]
    assert len({r["experiment"] for r in rows}) == 1
    tree = tree_of(claude)
    for r in rows:
        answer = tree.get(r["id"])
        assert answer.parent_id == r["question"]
        assert r["text"] == answer.text
        assert r["output_tokens"] == answer.meta["usage"]["output_tokens"]
        if r["model"] == "claude-sonnet-4-6":
            assert r["cost"] > 0
        else:  # a model with no known price has no cost, never a guess
            assert r["cost"] is None
    # an older experiment by the start of its id, a fan-out as an experiment of one row
    first = rows[0]["experiment"]
    claude.chat("Hi", "c0000002", "--n 2").check()
    assert [r["row"] for r in frame_of(claude)["rows"]] == [None, None]
    found = claude.run(f"print(len(jupyter_tree_chat.experiment_frame({first[:6]!r})))").check()
    assert found.stdout.strip() == "6"


def test_compare_versions_shows_rows_by_versions_with_differences(claude, fake_anthropic):
    claude.run("rows = [{'w': 'a'}, {'w': 'b'}]").check()
    fake_anthropic.enqueue("First version answer.")
    fake_anthropic.enqueue("First version answer.")
    claude.chat("Say {w}.", "c0000001", "--over rows --concurrency 1").check()
    one = claude.run("%chat compare --versions")
    assert one.status == "error"
    assert one.stderr.strip() == (
        "UsageError: %chat compare --versions: the experiment has 1 version; edit its cell's "
        "question and run it again for a second"
    )
    fake_anthropic.enqueue("Second <b>version</b> answer.")
    fake_anthropic.enqueue("Second version answer.")
    claude.chat("Say {w} twice.", "c0000001", "--over rows --concurrency 1").check()

    run = claude.run("%chat compare --versions").check()

    (html,) = run.html
    assert html.count('class="jtc-version-row"') == 2
    assert "<b>v1</b> Say {w}." in html and "<b>v2</b> Say {w} twice." in html
    first_row = html.split('class="jtc-version-row"')[1]
    assert "w: a" in first_row
    assert first_row.count('class="jtc-answer"') == 4  # two versions, plain and marked
    assert "First version answer." in first_row
    assert "<b>version</b>" not in first_row  # model text rendered safely
    assert '<details class="jtc-differences">' in first_row
    assert "<mark" in first_row  # what v2 says that v1 does not


def test_without_a_cell_id_same_experiment_makes_the_version(offline):
    """nbclient, and some front ends, send no cell id: the rule cannot know the cell."""
    offline.run(CITIES).check()
    offline.chat("Describe {city}.", None, "--over cities").check()
    offline.chat("Describe {city}.", None, "--over cities --same-experiment").check()
    offline.chat("Describe {city} briefly.", None, "--over cities --same-experiment").check()

    tree = tree_of(offline)
    asked = rows_asked(tree)
    assert [q.meta["experiment"]["version"] for q in asked] == [1, 1, 1, 2, 2, 2]
    assert [len(tree.children(q.id)) for q in asked] == [2, 2, 2, 1, 1, 1]
    assert len({q.meta["experiment"]["id"] for q in asked}) == 1

    offline.chat("Hello", None, "--new").check()
    before = offline.session_file().read_bytes()
    run = offline.chat("Describe {city}.", None, "--over cities --same-experiment")
    assert run.stderr.strip() == (
        "UsageError: %%chat --over --same-experiment: no experiment on the current path; "
        "`%chat switch ID` to one of its answers first"
    )
    clash = offline.chat("Describe {city}.", None, "--over cities --same-experiment --new")
    assert clash.stderr.strip() == (
        "UsageError: %%chat: --new and --same-experiment contradict; use only one of them"
    )
    assert offline.session_file().read_bytes() == before
