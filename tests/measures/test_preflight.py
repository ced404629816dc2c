"""preflight.py: what the Messages API would refuse, said before anything is sent."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.errors import ContextWindowFull, SettingsError
from jupyter_tree_chat.history.tree import Node
from jupyter_tree_chat.measures.preflight import (
    check_fanout_thinking,
    check_fits,
    check_thinking,
    fanout_thinking_problem,
    thinking_problem,
    tool_turn_problem,
)
from jupyter_tree_chat.measures.usage import Meter


@pytest.mark.parametrize(
    ("thinking", "max_tokens", "temperature", "fix"),
    [
        (500, 4096, None, "at least 1024 tokens, not 500: use --thinking 1024 or more"),
        (4096, 4096, None, "must be below max_tokens (4,096)"),
        (5000, 4096, None, "raise --max-tokens (e.g. --max-tokens 10000) or lower --thinking"),
        (2048, 4096, 0.5, "temperature 0.5 cannot be used with thinking"),
        ("adaptive", 4096, 0.2, "drop --temperature, or turn thinking off with --thinking off"),
        ("lots", 4096, None, "a number of tokens or 'adaptive'"),
    ],
)
def test_each_broken_thinking_rule_is_one_line_with_the_fix(thinking, max_tokens, temperature, fix):
    problem = thinking_problem(thinking, max_tokens=max_tokens, temperature=temperature)
    assert problem is not None and fix in problem and "\n" not in problem
    with pytest.raises(SettingsError):
        check_thinking(thinking, max_tokens=max_tokens, temperature=temperature)


@pytest.mark.parametrize(
    ("thinking", "max_tokens", "temperature"),
    [(None, 10, 0.3), (1024, 1025, None), (2048, 4096, 1), ("adaptive", 100, None)],
)
def test_settings_the_api_takes_pass(thinking, max_tokens, temperature):
    assert thinking_problem(thinking, max_tokens=max_tokens, temperature=temperature) is None


def test_a_fan_out_over_temperatures_cannot_think():
    problem = fanout_thinking_problem(2048, (0.0, 1.0))
    assert problem is not None and "\n" not in problem
    assert problem.startswith("--temperatures cannot be used with thinking")
    assert "drop --temperatures" in problem and "--thinking off" in problem
    assert fanout_thinking_problem("adaptive", (1.0,)) == problem  # even at 1: nothing to compare
    with pytest.raises(SettingsError):
        check_fanout_thinking(2048, (0.5,))
    assert fanout_thinking_problem(None, (0.0, 1.0)) is None  # no thinking: temperatures go
    assert fanout_thinking_problem(2048, ()) is None  # samples or models may think


def tool_turn(began: object) -> list[Node]:
    meta = {"thinking": began} if began is not None else {}
    uses = {"type": "tool_use", "id": "t1", "name": "add", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "3"}
    return [
        Node("q", None, {"role": "user", "content": "add"}),
        Node("a", "q", {"role": "assistant", "content": [uses]}, meta),
        Node("r", "a", {"role": "user", "content": [result]}),
    ]


def test_a_tool_turn_goes_on_with_thinking_as_it_began():
    assert tool_turn_problem(tool_turn(None), None) is None
    assert tool_turn_problem(tool_turn(2048), 4096) is None  # on stays on; the budget may move
    began_off = tool_turn_problem(tool_turn(None), 2048)
    assert began_off and "began without thinking" in began_off and "--thinking off" in began_off
    began_on = tool_turn_problem(tool_turn(2048), None)
    assert began_on and "continue it with --thinking 2048" in began_on


def test_a_path_that_ends_with_a_question_is_no_tool_turn():
    assert tool_turn_problem(tool_turn(2048)[:1], None) is None
    assert tool_turn_problem([], 2048) is None


def test_a_question_over_the_window_is_refused_with_the_way_out():
    check_fits(Meter(tokens=10, window=10, counted=10, estimated=0), model="m")
    check_fits(Meter(tokens=99, window=None, counted=0, estimated=99), model="m")
    with pytest.raises(ContextWindowFull) as caught:
        check_fits(Meter(tokens=10_001, window=10_000, counted=9_000, estimated=1_001), model="m")
    message = str(caught.value)
    assert message == (
        "this question would not fit: the path and the question hold about 10,001 tokens, "
        "over m's 10k window; run `%chat compact` to summarise the path into a new root, "
        "or start afresh with `%%chat --new`"
    )
