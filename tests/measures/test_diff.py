"""diff.py: what each of several answers says that the others do not.

The marks are what the compare views highlight, so each test names the words a person
would see marked. The front end's port (labextension/src/components/diff.ts) is run
under Node on the same inputs and must mark the same units.
"""

from __future__ import annotations

import random

import pytest
from helpers.node_runner import node_module
from hypothesis import given
from hypothesis import strategies as st

from jupyter_tree_chat.measures import diff
from jupyter_tree_chat.measures.diff import code_units, matched, prose_units, unique_marks


def marked(answers: list[str]) -> list[list[str]]:
    units = [prose_units(a) for a in answers]
    return [
        [u for u, m in zip(us, ms, strict=True) if m]
        for us, ms in zip(units, unique_marks(units), strict=True)
    ]


def test_two_answers_mark_the_words_only_one_of_them_says():
    assert marked(["the sky is blue today", "the sky is grey today"]) == [["blue"], ["grey"]]


def test_a_word_shared_with_any_other_answer_is_not_marked():
    answers = ["cats are kind", "dogs are kind", "cats are loud"]
    assert marked(answers) == [[], ["dogs"], ["loud"]]


def test_identical_answers_and_a_single_answer_mark_nothing():
    assert marked(["same words", "same words"]) == [[], []]
    assert marked(["alone here"]) == [[]]
    assert marked(["", "something new"]) == [[], ["something", "new"]]


def test_order_matters_a_moved_word_is_a_difference():
    assert marked(["a b c", "c a b"]) == [["c"], ["c"]]


def test_units_are_words_of_prose_and_lines_of_code():
    assert prose_units("  two\twords\n and  more ") == ["two", "words", "and", "more"]
    assert code_units("def f():\n    return 1  \n\n") == ["def f():", "    return 1"]


def test_past_the_budget_the_differing_middle_is_marked_whole(monkeypatch):
    monkeypatch.setattr(diff, "MAX_CELLS", 3)
    a = ["head", "x", "y", "tail"]
    b = ["head", "y", "x", "tail"]
    assert matched(a, b) == ([True, False, False, True], [True, False, False, True])


words = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=12)


@given(st.lists(words, min_size=2, max_size=4))
def test_unmarked_units_form_a_common_subsequence_with_some_other_answer(answers):
    marks = unique_marks(answers)
    for x, units in enumerate(answers):
        for i, unit in enumerate(units):
            if not marks[x][i]:
                assert any(unit in other for y, other in enumerate(answers) if y != x)


@given(words, words)
def test_the_matched_units_of_a_pair_are_a_longest_common_subsequence(a, b):
    in_a, in_b = matched(a, b)
    kept_a = [u for u, m in zip(a, in_a, strict=True) if m]
    kept_b = [u for u, m in zip(b, in_b, strict=True) if m]
    assert kept_a == kept_b
    assert len(kept_a) == lcs_length(a, b)


def lcs_length(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if a[i] == b[j] else max(table[i][j + 1], table[i + 1][j])
            )
    return table[len(a)][len(b)]


# -- the TypeScript port marks the same units ----------------------------------------------

RUNNER = """
import { uniqueMarks, proseUnits, codeUnits } from './bundle.mjs';
import { readFileSync } from 'node:fs';
const { cases, texts, codes } = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({
  marks: cases.map(answers => uniqueMarks(answers)),
  prose: texts.map(proseUnits),
  code: codes.map(codeUnits),
}));
"""


@pytest.fixture(scope="module")
def ts_diff(tmp_path_factory):
    return node_module("src/components/diff.ts", RUNNER, tmp_path_factory.mktemp("ts-diff"))


def random_answers(rng: random.Random) -> list[list[str]]:
    vocabulary = ["the", "a", "cat", "sat", "on", "mat", "print(1)", "x = 2", "—", "é"]
    count = rng.randint(1, 5)
    return [[rng.choice(vocabulary) for _ in range(rng.randint(0, 30))] for _ in range(count)]


def test_the_front_end_marks_exactly_what_this_module_marks(ts_diff):
    rng = random.Random(12)
    cases = [random_answers(rng) for _ in range(400)]
    cases += [[["same"] * 50, ["same"] * 49 + ["other"]], [[], []], [["only"]]]
    texts = ["  two\twords\n and  more ", "", "ünïcode wörds — here"]
    codes = ["def f():\n    return 1  \n\n", "", "\n\nx\n"]

    got = ts_diff({"cases": cases, "texts": texts, "codes": codes})

    assert got["marks"] == [unique_marks(answers) for answers in cases]
    assert got["prose"] == [prose_units(t) for t in texts]
    assert got["code"] == [code_units(c) for c in codes]
