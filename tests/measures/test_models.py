"""models.py: which table entry a model id gets, and prices from a user's mapping."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.measures.models import (
    CONTEXT_WINDOWS,
    PRICES,
    TAKEN,
    Price,
    by_model,
    with_overrides,
)


def test_a_model_matches_its_own_entry_or_its_entry_with_a_snapshot_date():
    assert by_model(PRICES, "claude-sonnet-4-5") == Price(3, 15, 3.75, 0.30)
    assert by_model(PRICES, "claude-sonnet-4-5-20250929") == Price(3, 15, 3.75, 0.30)
    assert by_model(CONTEXT_WINDOWS, "claude-haiku-4-5-20251001") == 200_000


def test_a_longer_model_name_never_takes_a_shorter_ones_entry():
    table = {"claude-sonnet-5": 1}
    assert by_model(table, "claude-sonnet-5-5") is None
    assert by_model(table, "claude-sonnet-5-preview") is None
    assert by_model(table, None) is None
    assert by_model(table, "") is None


def test_every_listed_model_has_a_window_and_cache_writes_cost_a_quarter_more():
    assert TAKEN == "2026-12-01"
    for name, price in PRICES.items():
        assert name in CONTEXT_WINDOWS
        assert price.cache_write == pytest.approx(price.input * 1.25)
        assert price.cache_read < price.input or price.input == 0


def test_a_users_price_fills_in_the_cache_prices_by_the_apis_rule():
    assert Price.from_mapping({"input": 2, "output": 8}) == Price(2, 8, 2.5, 0.2)
    assert Price.from_mapping({"input": 2, "output": 8, "cache_read": 0.05}).cache_read == 0.05


@pytest.mark.parametrize(
    ("raw", "fix"),
    [
        ({"input": 2}, "needs at least 'input' and 'output'"),
        ({"input": 2, "output": 8, "cached": 1}, "use input, output, cache_write, cache_read"),
    ],
)
def test_a_wrong_price_says_which_fields_it_needs(raw, fix):
    with pytest.raises(ValueError, match=fix):
        Price.from_mapping(raw)


def test_overrides_add_and_replace_entries_without_changing_the_table():
    merged = with_overrides(CONTEXT_WINDOWS, {"claude-sonnet-4-6": 200_000, "my-model": 8_000})
    assert merged["claude-sonnet-4-6"] == 200_000
    assert merged["my-model"] == 8_000
    assert CONTEXT_WINDOWS["claude-sonnet-4-6"] == 1_000_000
