"""usage.py: the context meter from the API's usage figures, and what replies cost."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.context.files import attachment
from jupyter_tree_chat.context.sent import Limits
from jupyter_tree_chat.history.tree import Node
from jupyter_tree_chat.measures.models import Price
from jupyter_tree_chat.measures.usage import (
    IMAGE_TOKENS,
    PDF_PAGE_TOKENS,
    breakdown,
    counted_tokens,
    dollars,
    estimate_tokens,
    meter,
    meter_label,
    node_cost,
    nodes_cost,
    totals,
    window_label,
)

WINDOWS = {"m": 10_000}
PRICES = {"m": Price(3, 15, 3.75, 0.30)}


def question(node_id: str, text: str, parent: str | None = None) -> Node:
    return Node(node_id, parent, {"role": "user", "content": text})


def reply(node_id: str, parent: str, usage: dict | None, model: str = "m", text="ok") -> Node:
    meta = {"model": model, **({"usage": usage} if usage is not None else {})}
    return Node(
        node_id, parent, {"role": "assistant", "content": [{"type": "text", "text": text}]}, meta
    )


USAGE = {
    "input_tokens": 100,
    "cache_creation_input_tokens": 2_000,
    "cache_read_input_tokens": 5_000,
    "output_tokens": 400,
}


def test_estimates_are_characters_over_four_and_images_a_fixed_size():
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("abcdefghi") == 3
    assert estimate_tokens({"role": "user", "content": "abcd"}) == 1
    assert estimate_tokens("会话树 tree") == 3 + 2  # a Han character a token; " tree" / 4
    assert estimate_tokens("セッション") == 5 and estimate_tokens("café") == 1
    image = {"type": "image", "source": {"type": "base64", "data": "x" * 100_000}}
    assert estimate_tokens([image]) == IMAGE_TOKENS


def pdf(pages: int, padding: int = 0) -> bytes:
    """A PDF of ``pages`` page objects (as a writer without object streams keeps them)."""
    page = b"%d 0 obj << /Type /Page /Parent 1 0 R >> endobj\n"
    objects = b"".join(page % (k + 2) for k in range(pages))
    head = b"%PDF-1.4\n" + b"1 0 obj << /Type /Pages /Count %d >> endobj\n" % pages
    return head + objects + bytes(padding)


def test_a_pdf_counts_by_its_pages_not_its_base64_characters():
    (three_pages,) = attachment("a.pdf", pdf(3, padding=1_200_000), Limits()).parts
    assert estimate_tokens([three_pages]) == 3 * PDF_PAGE_TOKENS
    question_with_pdf = {"role": "user", "content": [three_pages, "What does it say?"]}
    reading = meter([], model="claude-sonnet-4-5", extra=[question_with_pdf])
    assert reading.fits  # its 1.6 MB of base64 / 4 would be 400,000 tokens, over the window
    (compressed,) = attachment("b.pdf", b"%PDF-1.7\n" + bytes(249_000), Limits()).parts
    assert estimate_tokens([compressed]) == 5 * PDF_PAGE_TOKENS  # no page to count: by size
    text = {"type": "document", "source": {"type": "text", "data": "abcd" * 10}}
    assert estimate_tokens([text]) == 10


def test_a_path_ending_at_a_reply_holds_exactly_what_the_api_counted():
    path = [question("q", "hello"), reply("a", "q", USAGE)]
    reading = meter(path, model="m", windows=WINDOWS)
    assert counted_tokens(path[1]) == 7_500  # 100 + 2,000 + 5,000 in, 400 out
    assert (reading.tokens, reading.counted, reading.estimated) == (7_500, 7_500, 0)
    assert reading.exact and reading.counted_by == "a"
    assert reading.share == 0.75 and not reading.full and reading.fits
    assert meter_label(reading) == "context 75% of 10k"


def test_what_follows_the_last_counted_reply_is_estimated_and_marked_so():
    path = [question("q", "hello"), reply("a", "q", USAGE), question("q2", "x" * 400, "a")]
    reading = meter(path, model="m", windows=WINDOWS, extra=[{"role": "user", "content": "y" * 40}])
    assert (reading.counted, reading.estimated, reading.tokens) == (7_500, 110, 7_610)
    assert not reading.exact
    assert meter_label(reading) == "context ≈76% of 10k"


def test_a_path_never_counted_is_estimated_whole_with_its_system_prompt_and_tools():
    tool = {"name": "add", "description": "Add.", "input_schema": {"type": "object"}}
    reading = meter(
        [question("q", "x" * 40)], model="m", windows=WINDOWS, system="s" * 80, tools=[tool]
    )
    assert reading.counted == 0 and reading.counted_by is None
    assert reading.tokens == 10 + 20 + estimate_tokens([tool])


def test_an_interrupted_reply_without_usage_is_skipped_for_the_one_before_it():
    path = [
        question("q", "hello"),
        reply("a", "q", USAGE),
        question("q2", "more", "a"),
        reply("a2", "q2", None, text="cut sh"),
    ]
    reading = meter(path, model="m", windows=WINDOWS)
    assert reading.counted_by == "a"
    assert reading.tokens == 7_500 + 1 + 2


def test_eighty_percent_is_full_and_more_than_the_window_does_not_fit():
    usage = {"input_tokens": 7_900, "output_tokens": 100}
    path = [question("q", "hi"), reply("a", "q", usage)]
    assert meter(path, model="m", windows=WINDOWS).full
    over = meter(path, model="m", windows=WINDOWS, extra=["z" * 8_004])
    assert over.tokens == 10_001 and not over.fits


def test_an_unknown_window_shows_tokens_only():
    reading = meter([question("q", "hi"), reply("a", "q", USAGE)], model="other", windows=WINDOWS)
    assert reading.window is None and reading.share is None and reading.fits
    assert meter_label(reading) == "context 7,500 tokens"


def test_window_labels_read_as_people_say_them():
    assert [window_label(n) for n in (200_000, 1_000_000, 1_500_000, 512)] == [
        "200k",
        "1M",
        "1.5M",
        "512",
    ]


def test_the_breakdown_lists_the_largest_messages_first():
    path = [
        question("q", "a" * 40),
        reply("a", "q", USAGE, text="b" * 400),
        question("q2", "c", "a"),
    ]
    parts = breakdown(path, system="s" * 8, top=2)
    assert parts.system == 2 and parts.tools == 0
    assert parts.messages == 10 + 100 + 1
    assert [(node.id, size) for node, size in parts.largest] == [("a", 100), ("q", 10)]


def test_a_replys_cost_is_each_kind_of_token_at_its_own_price():
    cost = node_cost(reply("a", "q", USAGE), PRICES)
    expected = (100 * 3 + 400 * 15 + 2_000 * 3.75 + 5_000 * 0.30) / 1_000_000
    assert cost == pytest.approx(expected)
    assert dollars(expected) == "$0.0153"
    assert node_cost(reply("b", "q", USAGE, model="unpriced"), PRICES) is None
    assert node_cost(question("q", "hi"), PRICES) is None


def test_totals_add_up_per_model_and_count_unpriced_replies_apart():
    nodes = [
        question("q", "hi"),
        reply("a", "q", USAGE),
        reply("b", "q", {"input_tokens": 10, "output_tokens": 20}),
        reply("c", "q", {"input_tokens": 1_000, "output_tokens": 1_000}, model="unpriced"),
        reply("d", "q", None),
    ]
    result = totals(nodes, PRICES)
    assert result.all.replies == 3 and result.all.unpriced == 1
    assert (result.all.input, result.all.output) == (1_110, 1_420)
    assert (result.all.cache_write, result.all.cache_read) == (2_000, 5_000)
    priced = node_cost(nodes[1], PRICES) + node_cost(nodes[2], PRICES)
    assert result.all.cost == pytest.approx(priced)
    assert list(result.by_model) == ["m", "unpriced"]
    assert result.by_model["m"].replies == 2 and result.by_model["unpriced"].unpriced == 1


def test_dollars_are_shown_to_the_cent_above_a_dollar():
    assert [dollars(c) for c in (0, 0.00004, 0.5, 12.345)] == [
        "$0",
        "<$0.0001",
        "$0.5000",
        "$12.35",
    ]


def test_an_answer_with_tool_rounds_costs_the_sum_of_its_replies_or_nothing_if_one_is_unpriced():
    first, second = (
        reply("a", "q", USAGE),
        reply("b", "t", {"input_tokens": 10, "output_tokens": 20}),
    )
    assert nodes_cost([question("q", "hi"), first, second], PRICES) == pytest.approx(
        node_cost(first, PRICES) + node_cost(second, PRICES)
    )
    assert nodes_cost([first, reply("c", "t", USAGE, model="unpriced")], PRICES) is None
    assert nodes_cost([question("q", "hi"), reply("d", "q", None)], PRICES) is None
