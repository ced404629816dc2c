"""Grades and preferences on a real kernel: ``%chat grade``, ``%chat prefer``,
``%chat grade --by FUNC``, ``%chat experiment`` and ``experiment_frame``'s columns.

What is checked is what a person sees: the records in the session file (appended, never
rewritten), the one-line errors that write nothing, the frame's columns, the summary,
and grades surviving a restart and reaching a second kernel on the same file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import Kernel

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.kernel

CITIES = (
    "import pandas as pd\n"
    "cities = pd.DataFrame({'city': ['Paris', 'Oslo', 'Lima'], 'people': [2.1, 0.7, 10.0]})"
)


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Kernel]:
    with Kernel(tmp_path) as kernel:
        yield kernel


def records(kernel: Kernel) -> list[dict[str, Any]]:
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def graded(kernel: Kernel) -> list[dict[str, Any]]:
    return [r for r in records(kernel) if r.get("type") in ("grade", "preference")]


def answers_of_experiment(kernel: Kernel, versions: int = 1) -> list[str]:
    """Run the cities experiment (``versions`` wordings); the answers' ids, in file order."""
    kernel.run(CITIES).check()
    kernel.chat("What is {city} known for?", "c0000001", "--over cities").check()
    if versions > 1:
        kernel.chat("Name one sight in {city}.", "c0000001", "--over cities").check()
    tree = load_file(kernel.session_file()).tree
    return [n.id for n in tree if n.role == "assistant"]


def frame(kernel: Kernel, expression: str) -> Any:
    run = kernel.run(
        "import jupyter_tree_chat, json\n"
        "_df = jupyter_tree_chat.experiment_frame()\n"
        f"print(json.dumps({expression}, default=str))"
    ).check()
    return json.loads(run.stdout.splitlines()[-1])  # after any notice the cell printed


def by_id(kernel: Kernel, columns: list[str]) -> dict[str, dict[str, Any]]:
    """The frame's ``columns`` for each answer, by its id."""
    return frame(kernel, f"_df.set_index('id')[{columns!r}].to_dict('index')")


def test_a_hand_grade_is_a_record_and_regrading_appends(offline):
    first, *_ = answers_of_experiment(offline)
    before = offline.session_file().read_bytes()

    offline.run(f"%chat grade {first[:6]} 4 --note 'a bit long'").check()
    offline.run(f"%chat grade {first[:6]} 2").check()

    after = offline.session_file().read_bytes()
    assert after.startswith(before)  # nothing rewritten
    found = graded(offline)
    assert [(r["id"], r["score"], r.get("note")) for r in found] == [
        (first, 4, "a bit long"),
        (first, 2, None),
    ]
    assert all(r["grader"] == "grade" and r["by"] == "hand" for r in found)
    assert by_id(offline, ["grade", "note"])[first] == {"grade": 2, "note": None}
    assert load_file(offline.session_file()).problems == []


def test_thumbs_are_grades_on_the_scale_zero_to_one(offline):
    first, second, _third = answers_of_experiment(offline)
    offline.run(f"%chat grade {first[:6]} up").check()
    offline.run(f"%chat grade {second[:6]} 👎").check()
    assert [(r["score"], r["scale"]) for r in graded(offline)] == [(1, [0, 1]), (0, [0, 1])]


def test_grading_a_tool_rounds_reply_lands_on_the_answers_first_node(offline):
    answers_of_experiment(offline)
    loaded = load_file(offline.session_file())
    question = next(n for n in loaded.tree if n.role == "user")
    run = offline.run(f"%chat grade {question.id} 3")
    assert run.status == "error"
    assert run.stderr.strip().startswith("UsageError: %chat grade: ")
    assert "is a question; grade one of its answers" in run.stderr


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("grade {a} 7", "UsageError: %chat grade: score 7 is outside the scale 1–5"),
        ("grade {a} 0", "UsageError: %chat grade: score 0 is outside the scale 1–5"),
        ("grade {a} nan", "UsageError: %chat grade: score nan is outside the scale 1–5"),
        ("grade {a} good", "UsageError: %chat grade: 'good' is not a number (or up, down, 👍, 👎)"),
        (
            "grade zzzz 3",
            "UsageError: no node id or label starts with 'zzzz'; `%chat tree` shows the ids",
        ),
        (
            "grade {a} 3 --scale 5",
            "UsageError: %chat grade: --scale '5' is not LOW-HIGH, e.g. 1-5 or 0-10",
        ),
        (
            "grade --by not_a_function",
            "UsageError: %chat grade --by: no kernel variable 'not_a_function'; define the "
            "function first",
        ),
        (
            "grade --by number",
            "UsageError: %chat grade: 42 is not callable; --by takes a function of "
            "(answer_text, row)",
        ),
        (
            "prefer {a} {a}",
            "UsageError: %chat prefer: {a6} and {a6} are the same answer; prefer one answer "
            "over another",
        ),
        (
            "prefer {a} zzzz",
            "UsageError: no node id or label starts with 'zzzz'; `%chat tree` shows the ids",
        ),
        (
            "grade {a} 3 --loud",
            "UsageError: %chat: unknown option '--loud'; usage: %chat grade ID SCORE [--note "
            "TEXT] [--scale LOW-HIGH] | grade --by FUNC [EXPERIMENT] | grade --rubric TEXT "
            "[--model M] [--name NAME] [--batch] [EXPERIMENT]",
        ),
        (
            "grade {a} 3 --batch",
            "UsageError: %chat grade --batch goes with --rubric TEXT: a judge's requests",
        ),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(offline, line, error):
    first, *_ = answers_of_experiment(offline)
    offline.run("number = 42").check()
    before = offline.session_file().read_bytes()

    run = offline.run("%chat " + line.format(a=first[:6]))

    assert run.status == "error"
    assert run.stderr.strip() == error.format(a6=first[:7])
    assert offline.session_file().read_bytes() == before


def test_grades_survive_a_restart_and_reach_a_second_kernel(offline, tmp_path):
    first, second, _third = answers_of_experiment(offline)
    offline.run(f"%chat grade {first[:6]} 5").check()
    offline.run(f"%chat prefer {first[:6]} {second[:6]}").check()

    with Kernel(tmp_path) as other:  # a second kernel on the same notebook and file
        assert by_id(other, ["grade", "wins"])[first] == {"grade": 5, "wins": 1.0}
        other.run(f"%chat grade {second[:6]} 3 --note 'from the other kernel'").check()

    # the first kernel reads what the second appended (its refresh on the next action)
    offline.run("%chat tree").check()
    assert by_id(offline, ["note"])[second] == {"note": "from the other kernel"}

    offline.restart()
    offline.run("%load_ext jupyter_tree_chat").check()
    shown = by_id(offline, ["grade", "wins", "preferences"])
    assert shown[first] == {"grade": 5, "wins": 1.0, "preferences": 1}
    assert shown[second] == {"grade": 3, "wins": 0.0, "preferences": 1}


def test_a_preference_and_a_tie_the_latest_word_wins(offline):
    first, second, third = answers_of_experiment(offline)
    offline.run(f"%chat prefer {first[:6]} {second[:6]}").check()
    offline.run(f"%chat prefer {second[:6]} {first[:6]} --tie").check()
    offline.run(f"%chat prefer {third[:6]} {first[:6]}").check()

    assert [(r["better"], r["worse"], r.get("tie", False)) for r in graded(offline)] == [
        (first, second, False),
        (second, first, True),
        (third, first, False),
    ]
    shown = by_id(offline, ["wins", "preferences"])
    assert shown[first] == {"wins": 0.5, "preferences": 2}
    assert shown[second] == {"wins": 0.5, "preferences": 1}
    assert shown[third] == {"wins": 1.0, "preferences": 1}


def test_grade_by_code_is_a_column_and_an_exception_is_that_answers_error(offline):
    answers_of_experiment(offline)
    offline.run(
        "def mentions_city(text, row):\n"
        "    if row['city'] == 'Lima':\n"
        "        raise ValueError('no Lima today')\n"
        "    return row['city'] in text\n"
        "def length(text, row):\n"
        "    return len(text)\n"
        "def says(text, row):\n"
        "    return 'yes'\n"
    ).check()

    run = offline.run("%chat grade --by mentions_city").check()
    assert "Graded 3 answer(s) by mentions_city; 1 failed" in run.stdout
    assert "ValueError: no Lima today" in run.stdout
    offline.run("%chat grade --by length").check()
    run = offline.run("%chat grade --by says").check()
    assert "Graded 3 answer(s) by says; 3 failed" in run.stdout

    shown = frame(
        offline,
        "_df[['city', 'mentions_city', 'mentions_city.error', 'length', 'says.error', 'text']]"
        ".to_dict('records')",
    )
    by_city = {row["city"]: row for row in shown}
    assert by_city["Paris"]["mentions_city"] is True  # the offline model repeats the question
    assert by_city["Lima"]["mentions_city"] is None
    assert by_city["Lima"]["mentions_city.error"] == "ValueError: no Lima today"
    assert all(row["length"] == len(row["text"]) for row in shown)
    assert {row["says.error"] for row in shown} == {"returned str, not a bool or a number"}
    code = [r for r in graded(offline) if r["by"] == "code"]
    assert len(code) == 9 and {r["grader"] for r in code} == {"mentions_city", "length", "says"}


def test_the_experiment_summary_per_version_and_model(offline):
    ids = answers_of_experiment(offline, versions=2)
    v1, v2 = ids[:3], ids[3:]
    for node, score in zip(v1, (5, 4, 3), strict=True):
        offline.run(f"%chat grade {node[:6]} {score}").check()
    offline.run(f"%chat grade {v2[0][:6]} 2").check()
    offline.run(f"%chat prefer {v1[0][:6]} {v2[0][:6]}").check()
    offline.run("def short(text, row):\n    return len(text) < 10**6").check()
    offline.run("%chat grade --by short").check()

    run = offline.run("%chat experiment").check()
    lines = run.stdout.splitlines()
    assert lines[0].startswith("Experiment ") and lines[0].endswith(": 6 answer(s)")
    assert lines[1].split() == ["version", "model", "answers", "grade", "short", "wins", "cost"]
    one = lines[2].split()
    assert one[:3] == ["1", "offline-teacher", "3"]
    assert " 4.00 ±1.00 (3) " in lines[2]  # 5, 4, 3
    assert " 1.00 ±0.00 (3) " in lines[2]  # short: all True
    assert " 100% (1) " in lines[2]
    two = lines[3]
    assert two.split()[:3] == ["2", "offline-teacher", "3"]
    assert " 2.00 (1) " in two  # one grade: no spread
    assert " 0% (1) " in two
    assert lines[-1] == "a grade: mean ±spread (count); wins: preference win rate (count)"


def test_check_reports_a_grade_for_an_unknown_node_and_keeps_loading(offline):
    first, *_ = answers_of_experiment(offline)
    path = offline.session_file()
    with path.open("a") as f:
        f.write(json.dumps({"type": "grade", "id": "nope", "grader": "grade", "score": 3}) + "\n")
        f.write(json.dumps({"type": "grade", "id": first, "grader": "grade", "score": "x"}) + "\n")
        f.write(json.dumps({"type": "preference", "better": first, "worse": first}) + "\n")
    loaded = load_file(path)
    lines = len(path.read_text().splitlines())
    assert [str(p) for p in loaded.problems] == [
        f"line {lines - 2}: grade record for unknown node 'nope' (ignored)",
        f"line {lines - 1}: grade of {first!r}: 'score' is not a number or a boolean (ignored)",
        f"line {lines}: preference of {first!r} over itself (ignored)",
    ]
    assert loaded.grades.latest == {}
