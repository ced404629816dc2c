"""measures/sizes.py: each node counted once, the same as the estimator, and tool pairs."""

from __future__ import annotations

import pytest
from test_budget import Path

from jupyter_tree_chat.history.tree import is_real_user_message
from jupyter_tree_chat.measures.budget import select
from jupyter_tree_chat.measures.sizes import Sizes, _scan, pairs_by_id
from jupyter_tree_chat.measures.usage import estimate_tokens


@pytest.mark.parametrize(
    ("calls", "results", "pairs"),
    [
        (["a", "b"], ["b", "a"], True),
        (["a"], ["a", "a"], False),  # answered twice
        (["a", "a"], ["a"], False),  # one id called twice
        (["a"], ["b"], False),  # a result with no call
        ([], [], True),
    ],
)
def test_calls_and_results_pair_by_id(calls, results, pairs):
    messages = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": i} for i in calls]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i} for i in results]},
    ]
    assert pairs_by_id(messages) is pairs


def test_remembered_sizes_give_the_same_selection_as_counting_afresh():
    path = Path()
    sizes = Sizes()
    for k in range(30):
        path.ask(50 + k, f"q{k}")
        memo = select(path.nodes, budget=1_500, sizes=sizes)
        fresh = select(path.nodes, budget=1_500)
        assert (memo.kept, memo.messages, memo.breakdown) == (
            fresh.kept,
            fresh.messages,
            fresh.breakdown,
        )
        path.answer(50, f"a{k}")
    assert len(sizes) == 59  # each node counted once, however many requests held it


def test_the_one_pass_count_is_the_estimator_s_exactly():
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "x" * 9000},
    }
    messages = [
        {"role": "user", "content": "会话树 and some words"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, image, "stray"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "4"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": 12}, {"type": "tool_use", "id": "t"}],
        },
        {"role": "assistant", "content": None},
    ]
    for message in messages:
        assert _scan(message) == (estimate_tokens(message), is_real_user_message(message))
