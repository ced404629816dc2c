"""measures/budget.py: a request built to a budget from the unchanged path (hand-built paths)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from jupyter_tree_chat.history.tree import Node
from jupyter_tree_chat.measures.budget import (
    NOTE_TOKENS,
    OVERFLOW,
    TRIMMED,
    WITHIN,
    Sizes,
    resolve_budget,
    select,
)
from jupyter_tree_chat.measures.sizes import pairs_by_id
from jupyter_tree_chat.measures.usage import estimate_tokens


def text(tokens: int, tag: str = "") -> str:
    """A text of about ``tokens`` tokens (characters / 4), starting with ``tag``."""
    return (tag + " " + "x" * (tokens * 4)).strip()[: tokens * 4]


class Path:
    """A path built node by node: ``ask``, ``answer``, tool calls and results."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []

    def add(self, role: str, content: Any, meta: dict[str, Any] | None = None) -> Node:
        parent = self.nodes[-1].id if self.nodes else None
        node = Node(f"n{len(self.nodes)}", parent, {"role": role, "content": content}, meta)
        self.nodes.append(node)
        return node

    def ask(self, tokens: int = 100, tag: str = "q") -> Node:
        return self.add("user", text(tokens, tag))

    def answer(self, tokens: int = 100, tag: str = "a") -> Node:
        return self.add("assistant", [{"type": "text", "text": text(tokens, tag)}])

    def exchange(self, tokens: int = 100, tag: str = "") -> None:
        self.ask(tokens, f"q{tag}")
        self.answer(tokens, f"a{tag}")

    def call(self, *ids: str, tokens: int = 10) -> Node:
        uses = [{"type": "tool_use", "id": i, "name": "add", "input": {"a": 1}} for i in ids]
        return self.add("assistant", [{"type": "text", "text": text(tokens)}, *uses])

    def results(self, *ids: str, tokens: int = 10) -> Node:
        blocks = [{"type": "tool_result", "tool_use_id": i, "content": text(tokens)} for i in ids]
        return self.add("user", blocks)


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def first_texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


def alternates(messages: list[dict[str, Any]]) -> bool:
    kinds = roles(messages)
    return kinds[0] == "user" and all(a != b for a, b in itertools.pairwise(kinds))


# -- the budget ----------------------------------------------------------------------------


def test_window_budget_is_the_window_less_max_tokens_and_a_tenth():
    budget = resolve_budget("window", window=200_000, max_tokens=4096)
    assert budget is not None
    assert (budget.tokens, budget.reserved_output, budget.margin) == (175_904, 4096, 20_000)
    assert resolve_budget("window", window=None, max_tokens=4096) is None  # unknown: no budget
    assert resolve_budget("off", window=200_000, max_tokens=4096) is None
    assert resolve_budget(3000, window=200_000, max_tokens=4096).tokens == 3000  # as given


@pytest.mark.parametrize("bad", [0, -5, "lots", 2.5, True])
def test_a_budget_that_is_no_number_of_tokens_is_refused(bad):
    with pytest.raises(ValueError, match="positive number of tokens, 'window' or 'off'"):
        resolve_budget(bad, window=200_000, max_tokens=10)


# -- within and over -----------------------------------------------------------------------


def test_within_the_budget_the_messages_are_the_path_exactly():
    path = Path()
    for _ in range(3):
        path.exchange()
    path.ask()
    chosen = select(path.nodes, budget=10_000)
    assert chosen.reason == WITHIN and chosen.dropped == 0 and chosen.context_meta() is None
    assert chosen.messages == [node.message for node in path.nodes]
    assert all(a is b.message for a, b in zip(chosen.messages, path.nodes, strict=True))
    assert chosen.breakdown.total == sum(estimate_tokens(n.message) for n in path.nodes)


def test_over_the_budget_whole_exchanges_are_kept_newest_first_with_a_note():
    path = Path()
    for k in range(10):
        path.exchange(100, str(k))
    path.ask(100, "now")
    stored = copy.deepcopy([n.message for n in path.nodes])
    chosen = select(path.nodes, budget=700)
    assert chosen.reason == TRIMMED and chosen.exchanges == 11
    assert chosen.breakdown.total <= 700
    assert alternates(chosen.messages) and roles(chosen.messages)[-1] == "user"
    sent = chosen.sent
    assert chosen.dropped == 11 - sent and chosen.left_out == chosen.dropped
    assert chosen.first == chosen.kept[0] and path.nodes[-1].id == chosen.kept[-1]
    assert len(chosen.kept) == 2 * sent - 1  # whole exchanges: question and answer together
    assert first_texts(chosen.messages[0])[0] == f"[{chosen.dropped} earlier exchanges left out]"
    assert first_texts(chosen.messages[0])[1] == path.nodes[-2 * sent + 1].message["content"]
    assert [n.message for n in path.nodes] == stored  # the path itself never changes
    meta = chosen.context_meta()
    assert meta == {
        "from": chosen.first,
        "dropped": chosen.dropped,
        "exchanges": 11,
        "tokens": chosen.breakdown.total,
        "budget": 700,
        "reason": TRIMMED,
    }


def test_the_system_prompt_and_the_tools_are_counted_first():
    path = Path()
    for k in range(10):
        path.exchange(100, str(k))
    path.ask()
    alone = select(path.nodes, budget=1600)
    tools = [{"name": "add", "description": text(100), "input_schema": {"type": "object"}}]
    with_system = select(path.nodes, budget=1600, system=text(400), tools=tools)
    assert with_system.sent < alone.sent
    assert with_system.breakdown.system == 400 and with_system.breakdown.tools > 100
    assert with_system.breakdown.total <= 1600


def test_the_newest_exchange_is_kept_even_when_it_alone_does_not_fit():
    path = Path()
    path.exchange()
    path.ask(5_000, "huge")
    chosen = select(path.nodes, budget=1_000)
    assert chosen.reason == OVERFLOW and chosen.sent == 1 and chosen.dropped == 1
    assert chosen.kept == (path.nodes[-1].id,)
    assert first_texts(chosen.messages[0])[0] == "[1 earlier exchange left out]"


def test_a_question_not_stored_yet_is_the_newest_exchange():
    path = Path()
    for k in range(6):
        path.exchange(100, str(k))
    question = {"role": "user", "content": text(100, "new")}
    chosen = select(path.nodes, [question], budget=500)
    assert chosen.exchanges == 7 and chosen.messages[-1]["content"] == question["content"]
    alone = select(path.nodes, [{"role": "user", "content": text(900)}], budget=500)
    assert alone.reason == OVERFLOW and alone.first is None and alone.kept == ()


# -- tools ---------------------------------------------------------------------------------


def test_parallel_tool_calls_answered_out_of_order_stay_one_exchange():
    path = Path()
    path.ask(100, "q0")
    path.call("t1", "t2", "t3")
    path.results("t3", "t1", "t2")  # answered in another order: paired by id
    path.answer()
    for k in range(3):
        path.exchange(100, str(k))
    path.ask()
    exchanges = [n.message for n in path.nodes[:4]]
    assert pairs_by_id(exchanges)
    total = sum(estimate_tokens(n.message) for n in path.nodes)
    chosen = select(path.nodes, budget=total - 1)  # just over: the oldest goes, whole
    assert chosen.reason == TRIMMED
    tool_ids = {n.id for n in path.nodes[1:3]}
    assert not tool_ids & set(chosen.kept)  # the call and its results left together
    kept_all = select(path.nodes, budget=10_000)
    assert tool_ids <= set(kept_all.kept)


def test_a_cut_never_separates_a_tool_call_from_its_result():
    path = Path()
    for k in range(4):
        path.ask(100, f"q{k}")
        path.call(f"t{k}", tokens=100)
        path.results(f"t{k}", tokens=100)
        path.answer(100)
    path.ask()
    for budget in range(300, 1800, 37):
        chosen = select(path.nodes, budget=budget)
        kept = set(chosen.kept)
        for k in range(4):
            call, result = path.nodes[4 * k + 1].id, path.nodes[4 * k + 2].id
            assert (call in kept) == (result in kept), (budget, k)
        assert chosen.messages[0]["role"] == "user"
        assert not first_texts(chosen.messages[0])[-1].startswith("x")  # a question first


def test_an_exchange_whose_calls_are_unanswered_is_not_sent():
    path = Path()
    path.exchange(100, "old")
    path.ask(50, "broken")
    path.call("t1", "t2")
    path.results("t1")  # t2 was never answered (a reply cut short, an imported file)
    path.answer(50)
    path.exchange(50, "after")
    path.ask(50, "now")
    total = sum(estimate_tokens(n.message) for n in path.nodes)
    assert select(path.nodes, budget=total).skipped == ()  # within: today's request
    chosen = select(path.nodes, budget=total - 150)  # the old exchange must go
    broken = [n.id for n in path.nodes[2:6]]
    assert chosen.skipped == tuple(broken) and not set(broken) & set(chosen.kept)
    assert chosen.context_meta()["skipped"] == broken
    assert alternates(chosen.messages)
    assert chosen.dropped == chosen.exchanges - chosen.sent == 2  # the old one and the broken


# -- thinking ------------------------------------------------------------------------------


def test_thinking_goes_with_its_answer_and_counts_toward_the_budget():
    path = Path()
    path.ask(50, "q0")
    thinking = {"type": "thinking", "thinking": text(600), "signature": "sig"}
    path.add("assistant", [thinking, {"type": "text", "text": "short"}])
    for k in range(3):
        path.ask(50, f"q{k + 1}")
        signed = {"type": "thinking", "thinking": "brief", "signature": f"s{k}"}
        path.add("assistant", [signed, {"type": "text", "text": text(50)}])
    path.ask(50)
    chosen = select(path.nodes, budget=600)
    assert path.nodes[1].id not in chosen.kept  # its thinking made the first exchange large
    sent_thinking = [b for m in chosen.messages if m["role"] == "assistant" for b in m["content"]]
    assert {"type": "thinking", "thinking": "brief", "signature": "s2"} in sent_thinking


# -- compactions ---------------------------------------------------------------------------


def test_a_compaction_root_stands_for_the_path_it_summarised():
    path = Path()
    path.add("user", "Summary of our conversation so far:\n\nwe spoke.", {"compacted_from": "x"})
    path.add("assistant", [{"type": "text", "text": "Understood."}], {"synthetic": True})
    for k in range(8):
        path.exchange(100, str(k))
    path.ask()
    chosen = select(path.nodes, budget=800)
    assert chosen.summary == path.nodes[0].id and chosen.covered == 1
    texts = first_texts(chosen.messages[0])
    assert texts[0].startswith("Summary of our conversation so far:")
    assert texts[1] == f"[{chosen.left_out} earlier exchanges left out]"
    assert path.nodes[1].id not in chosen.kept  # the acknowledgement is not sent
    assert alternates(chosen.messages)


def test_a_compaction_of_part_of_the_path_stands_for_that_part():
    path = Path()
    for k in range(6):
        path.exchange(100, str(k))
    path.ask()
    summarised = path.nodes[7]  # the end of the 4th exchange
    root = Node("c1", None, {"role": "user", "content": "Summary: four exchanges."})
    chosen = select(path.nodes, budget=1_000, compactions={summarised.id: root})
    assert chosen.summary == "c1" and chosen.covered == 4 and chosen.left_out == 0
    assert chosen.kept == tuple(n.id for n in path.nodes[8:])
    assert first_texts(chosen.messages[0])[:2] == ["Summary: four exchanges.", text(100, "q4")]
    # a compaction of another branch (its node not on this path) is no help
    other = select(path.nodes, budget=1_000, compactions={"elsewhere": root})
    assert other.summary is None and other.left_out > 0


def test_the_newest_compaction_on_the_path_is_the_one_used():
    path = Path()
    for k in range(6):
        path.exchange(100, str(k))
    path.ask()
    older = Node("c1", None, {"role": "user", "content": "Summary of two."})
    newer = Node("c2", None, {"role": "user", "content": "Summary of five."})
    chosen = select(
        path.nodes, budget=1_000, compactions={path.nodes[3].id: older, path.nodes[9].id: newer}
    )
    assert chosen.summary == "c2" and chosen.covered == 5
    assert "Summary of two." not in str(chosen.messages)


def test_an_imported_pi_compaction_stands_for_what_comes_before_its_first_kept_entry():
    path = Path()
    for k in range(4):
        path.exchange(100, str(k))
    first_kept = path.nodes[4]  # the 3rd exchange's question
    pi_text = "The conversation history before this point was compacted...\n<summary>s</summary>"
    path.add(
        "user",
        [{"type": "text", "text": pi_text}],
        {"pi": "compaction", "first_kept": first_kept.id},
    )
    for k in range(4, 8):
        path.exchange(100, str(k))
    path.ask()
    whole = select(path.nodes, budget=100_000)
    assert whole.reason == WITHIN  # within the budget, today's request: the pi node in place
    chosen = select(path.nodes, budget=1_200)
    assert chosen.summary == path.nodes[8].id and chosen.covered == 2
    assert path.nodes[8].id not in chosen.kept  # sent as the summary, not in place
    assert first_texts(chosen.messages[0])[0] == pi_text
    assert alternates(chosen.messages)
    assert chosen.exchanges == 9  # the compaction is no exchange of its own


# -- steps and the cache ---------------------------------------------------------------------


def test_the_cut_moves_in_steps_of_at_least_a_quarter_of_the_budget():
    path = Path()
    sizes = Sizes()
    cuts: list[int] = []
    firsts: list[Any] = []
    for k in range(40):
        path.ask(60, f"q{k}")
        chosen = select(path.nodes, budget=2_000, sizes=sizes)
        assert chosen.breakdown.total <= 2_000
        cuts.append(chosen.cut)
        firsts.append(chosen.messages[0])
        path.answer(60, f"a{k}")
    moves = [(a, b) for a, b in itertools.pairwise(cuts) if a != b]
    assert 2 <= len(moves) <= 12  # a sliding cut would move on nearly every one of 40 turns
    available = 2_000 - NOTE_TOKENS
    for before, after in moves:
        moved = sum(estimate_tokens(n.message) for n in path.nodes[before:after])
        assert moved >= available / 4
    # between two moves the first message sent is the same: the prefix is shared
    same = [
        a == b for a, b, c, d in zip(firsts, firsts[1:], cuts, cuts[1:], strict=False) if c == d
    ]
    assert same and all(same)


def test_a_reserve_for_a_summary_lists_what_to_summarise_and_adds_no_note():
    path = Path()
    for k in range(8):
        path.exchange(100, str(k))
    path.ask()
    chosen = select(path.nodes, budget=1_000, summary_reserve=200)
    assert chosen.left_out > 0 and chosen.breakdown.summary == 200
    assert [n.id for n in chosen.summarise] == [n.id for n in path.nodes[: chosen.cut]]
    assert not any("left out" in t for t in first_texts(chosen.messages[0]))


def test_a_question_merged_into_a_pi_compaction_is_sent_after_the_summary():
    path = Path()
    for k in range(4):
        path.exchange(100, str(k))
    summary = {"type": "text", "text": "<summary>the first two</summary>"}
    merged = {"type": "text", "text": text(100, "q-merged")}  # as the import joins them
    path.add("user", [summary, merged], {"pi": "compaction", "first_kept": path.nodes[4].id})
    path.answer(100, "a-merged")
    path.exchange(100, "last")
    path.ask()
    chosen = select(path.nodes, budget=1_000)
    assert chosen.summary == path.nodes[8].id and chosen.exchanges == 7
    sent = [t for m in chosen.messages for t in first_texts(m)]
    assert sent[0] == summary["text"] and sent.count(merged["text"]) == 1
    assert sent.count(summary["text"]) == 1 and alternates(chosen.messages)


def test_a_window_budget_s_breakdown_says_what_was_held_back():
    path = Path()
    for k in range(12):
        path.exchange(1_000, str(k))
    path.ask()
    window = resolve_budget("window", window=20_000, max_tokens=4_096)
    assert window is not None
    chosen = select(path.nodes, budget=window)
    parts = chosen.breakdown
    assert (parts.budget, parts.reserved_output, parts.margin) == (13_904, 4_096, 2_000)
    assert parts.total <= parts.budget
    assert parts.budget + parts.reserved_output + parts.margin == 20_000  # the whole window
    assert parts.total == parts.system + parts.tools + parts.summary + parts.note + parts.messages
