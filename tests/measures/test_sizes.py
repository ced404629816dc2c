"""measures/sizes.py: each node counted once, the same as the estimator, and tool pairs."""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_budget import Path

from jupyter_tree_chat.history.tree import Node, is_real_user_message
from jupyter_tree_chat.measures.budget import select, surely_within
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


# -- the bound: does the whole path surely fit? ----------------------------------------------

PIECES = ["word ", "会话树", "é", "😀", "\n", '"', "\\", "\x01", "𠀀", "한", "ｆ", "{}", "1", " "]


def generated_content(rng: random.Random) -> Any:
    """Content of every text kind: Latin, CJK, emoji, escapes, code, numbers, tool JSON."""

    def words(most: int = 30) -> str:
        return "".join(rng.choice(PIECES) for _ in range(rng.randrange(most)))

    def value(depth: int = 0) -> Any:
        kind = rng.randrange(9 if depth < 2 else 6)
        return [
            lambda: rng.randrange(-(10**12), 10**12),
            lambda: rng.random() * 10 ** rng.randrange(-8, 20),
            lambda: rng.choice([True, False, None, float("inf"), float("nan")]),
            words,
            lambda: rng.randrange(10),
            lambda: "",
            lambda: [value(depth + 1) for _ in range(rng.randrange(6))],
            lambda: {words(3): value(depth + 1) for _ in range(rng.randrange(5))},
            lambda: [rng.randrange(10) for _ in range(rng.randrange(40))],
        ][kind]()

    def block() -> Any:
        kind = rng.randrange(9)
        if kind == 0:
            return {"type": "text", "text": words()}
        if kind == 1:
            return {"type": "thinking", "thinking": words(), "signature": "sig"}
        if kind == 2:
            call = f"t{rng.randrange(99)}"
            return {"type": "tool_use", "id": call, "name": "f", "input": value()}
        if kind == 3:
            body = words() if rng.random() < 0.5 else [block() for _ in range(rng.randrange(3))]
            return {"type": "tool_result", "tool_use_id": "t1", "content": body}
        if kind == 4:
            return value()  # a stray value among the blocks
        if kind == 5:
            return {"type": "text", "text": value()}
        if kind == 6:
            return {"type": words(2) or "x", "data": value()}
        return {"type": "text", "text": "x" * rng.randrange(3)}

    if rng.random() < 0.3:
        return words(200)
    if rng.random() < 0.1:
        return value()
    return [block() for _ in range(rng.randrange(5))]


def test_the_bound_is_never_below_the_estimate_of_any_content():
    rng = random.Random(26)
    for k in range(3_000):
        content = generated_content(rng)
        node = Node(f"m{k}", None, {"role": rng.choice(["user", "assistant"]), "content": content})
        bound = Sizes().bound([node], 10**9)
        assert bound is not None, content
        assert bound >= estimate_tokens(node.message), content


def test_a_path_s_bound_is_at_least_its_estimate_and_remembered_across_turns_and_branches():
    rng = random.Random(7)
    trunk = Path()
    for _ in range(300):
        trunk.add(rng.choice(["user", "assistant"]), generated_content(rng))
    sizes = Sizes()
    bound = sizes.bound(trunk.nodes, 10**9)
    assert bound is not None
    assert bound >= sum(estimate_tokens(node.message) for node in trunk.nodes)
    # a sibling branch from node 150: its own nodes, none of the trunk's after the fork
    branch = trunk.nodes[:150] + [
        Node(f"b{k}", None, {"role": "user", "content": "会话" * (k + 1)}) for k in range(40)
    ]
    for turn in range(1, 41):
        nodes = branch[: 150 + turn]
        remembered, fresh = sizes.bound(nodes, 10**9), Sizes().bound(nodes, 10**9)
        exact = sum(estimate_tokens(node.message) for node in nodes)
        assert remembered is not None and fresh is not None
        # the branch's own bound: the trunk's beyond the fork is never added (each turn's
        # piece is encoded apart, its brackets and rounding up at most two tokens)
        assert exact <= remembered <= fresh + 2 * turn
    assert sizes.bound(trunk.nodes, 10**9) == bound


def test_the_bound_stops_early_past_its_limit_and_bails_on_images_and_documents():
    path = Path()
    for k in range(2_000):
        path.exchange(50, str(k))
    sizes = Sizes()
    assert sizes.bound(path.nodes, 1_000) > 1_000
    assert not sizes._bounds  # stopped before the root: nothing to remember
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    pdf = {"type": "document", "source": {"type": "base64", "data": "JVBERi0="}}
    for block in (image, pdf, {"type": "tool_result", "tool_use_id": "t", "content": [image]}):
        nodes = [*path.nodes[:4], Node("i", "n3", {"role": "user", "content": [block]})]
        assert Sizes().bound(nodes, 10**9) is None
        assert not surely_within(nodes, budget=10**9)


def test_a_path_surely_within_gets_exactly_the_request_the_exact_selection_gives():
    path = Path()
    for k in range(40):
        path.exchange(60, str(k))
        path.call(f"t{k}")
        path.results(f"t{k}")
    whole = sum(estimate_tokens(node.message) for node in path.nodes)
    extra = [{"role": "user", "content": "and now?"}]
    for budget in (whole * 4, whole + 10, whole // 2):
        if surely_within(path.nodes, extra, budget=budget, system="be brief"):
            chosen = select(path.nodes, extra, budget=budget, system="be brief")
            assert chosen.within
            assert chosen.messages == [node.message for node in path.nodes] + extra
    assert surely_within(path.nodes, extra, budget=whole * 4, system="be brief")
    assert not surely_within(path.nodes, extra, budget=whole // 2, system="be brief")


def test_a_session_request_that_surely_fits_is_the_unbudgeted_one_and_says_nothing_left_out():
    from jupyter_tree_chat.conversation import budgeting
    from jupyter_tree_chat.conversation.session import Session
    from jupyter_tree_chat.conversation.settings import ChatSettings
    from jupyter_tree_chat.providers.offline.provider import OfflineProvider

    session = Session.in_memory(OfflineProvider())
    for k in range(30):
        session.ask(f"Question {k}: " + "word " * 40)
    path = session.path()
    off = ChatSettings(context_budget="off")
    fitting = ChatSettings(context_budget=10_000_000)
    assert budgeting.fits_whole(session, path, fitting)
    assert len(session.sizes) == 0  # no node counted on the fast path
    request = session.context_request(path, fitting)
    assert request == session.context_request(path, off)
    assert request.context is None
    # %chat context's listing still counts: the whole path, within the budget
    chosen = budgeting.selection(session, path, fitting)
    assert chosen is not None and chosen.within and chosen.exchanges == 30
    cutting = ChatSettings(context_budget=500)
    assert not budgeting.fits_whole(session, path, cutting)
    assert session.context_request(path, cutting).context["dropped"] > 0
