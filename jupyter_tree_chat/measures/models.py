"""What this project knows about each model: its context window and its prices.

Two small tables, taken by hand from Anthropic's documentation on ``TAKEN`` (each
model's page under https://platform.claude.com/docs/en/models/ and the pricing page
https://platform.claude.com/docs/en/about-claude/pricing). Prices change and new models
appear: in a notebook ``%config TreeChat.prices`` and ``%config TreeChat.context_windows``
add or override entries (see kernel/config.py); a model in neither table shows tokens
only, never a made-up figure.

Prices are US dollars per million tokens. ``cache_write`` is the 5-minute cache write
(the only cache this project asks for: ``cache_control`` ``{"type": "ephemeral"}``),
1.25 times the input price on every model listed; ``cache_read`` is what a cache hit
costs. Left out on purpose: tiered prices (Claude Haiku 5.5 charges more for prompts
over 100k tokens), the Batch API's discount and fast mode, which this project never uses.

A model id matches an entry when it is the entry's name, or the name with a snapshot
date (``claude-sonnet-4-5-20250929`` is ``claude-sonnet-4-5``); never by a shorter
prefix, so ``claude-sonnet-5-5`` is not priced as ``claude-sonnet-5``.

Models of other endpoints are named ``endpoint:model`` here as everywhere
(``local:smollm2``); the endpoint presets (providers/endpoints/config.py) add the windows and
prices they know to these tables under such names, and an entry ``endpoint:*`` stands for
every model of that endpoint that has no entry of its own (``local:*`` costs nothing: a
model on your own machine is not billed by the token).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from ..i18n import _

TAKEN = "2026-12-01"
"""The day the two tables were read from Anthropic's documentation."""

PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"

OFFLINE_MODEL = "offline-teacher"

ANY_MODEL = "*"
"""``endpoint:*`` in a table: every model of that endpoint without an entry of its own."""

V = TypeVar("V")
_SNAPSHOT = re.compile(r"-\d{8}")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens, by kind of token."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    @classmethod
    def from_mapping(cls, raw: Mapping[str, float]) -> Price:
        """A price from ``{"input": .., "output": .., "cache_write": .., "cache_read": ..}``;
        missing cache prices follow the API's rule (write 1.25x input, read 0.1x)."""
        unknown = sorted(set(raw) - {"input", "output", "cache_write", "cache_read"})
        if unknown:
            raise ValueError(
                _("unknown price field {field}: use input, output, cache_write, cache_read").format(
                    field=repr(unknown[0])
                )
            )
        if "input" not in raw or "output" not in raw:
            raise ValueError(
                _("a price needs at least 'input' and 'output' (dollars per million tokens)")
            )

        base = float(raw["input"])
        return cls(
            input=base,
            output=float(raw["output"]),
            cache_write=float(raw.get("cache_write", base * 1.25)),
            cache_read=float(raw.get("cache_read", base * 0.1)),
        )


def _p(input: float, output: float, cache_write: float, cache_read: float) -> Price:
    return Price(input, output, cache_write, cache_read)


PRICES: dict[str, Price] = {
    "claude-fable-5-1": _p(10, 50, 12.50, 0.25),
    "claude-opus-5-5": _p(4, 20, 5, 0.20),
    "claude-opus-5": _p(5, 25, 6.25, 0.50),
    "claude-sonnet-5": _p(2, 10, 2.50, 0.20),
    "claude-opus-4-8": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-7": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-6": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-5": _p(5, 25, 6.25, 0.50),
    "claude-sonnet-4-6": _p(3, 15, 3.75, 0.30),
    "claude-sonnet-4-5": _p(3, 15, 3.75, 0.30),
    "claude-haiku-4-5": _p(1, 5, 1.25, 0.10),
    OFFLINE_MODEL: _p(0, 0, 0, 0),  # the offline teaching model runs here, for nothing
}

CONTEXT_WINDOWS: dict[str, int] = {
    "claude-fable-5-1": 1_000_000,
    "claude-opus-5-5": 1_000_000,
    "claude-opus-5": 1_000_000,
    "claude-sonnet-5-5": 1_000_000,
    "claude-sonnet-5": 1_000_000,
    "claude-haiku-5-5": 1_000_000,
    "claude-opus-4-8": 1_000_000,
    "claude-opus-4-7": 1_000_000,
    "claude-opus-4-6": 1_000_000,
    "claude-opus-4-5": 200_000,
    "claude-sonnet-4-6": 1_000_000,
    "claude-sonnet-4-5": 200_000,  # 1M with the context-1m beta header, never sent here
    "claude-haiku-4-5": 200_000,
    OFFLINE_MODEL: 200_000,  # pretends to the common window, so the meter can be taught
}


def by_model(table: Mapping[str, V], model: str | None) -> V | None:
    """The entry for ``model``: by its name, or its name without a snapshot date."""
    if not model:
        return None
    found = table.get(model)
    if found is not None:
        return found
    for name, value in table.items():
        if model.startswith(name) and _SNAPSHOT.fullmatch(model[len(name) :]):
            return value
    endpoint, colon, _ = model.partition(":")
    return table.get(f"{endpoint}:{ANY_MODEL}") if colon else None


def with_overrides(table: Mapping[str, V], overrides: Mapping[str, V] | None) -> dict[str, V]:
    """``table`` with the user's entries added or replacing its own."""
    return {**table, **(overrides or {})}
