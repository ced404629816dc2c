"""What the fake Messages API knows of each model: the limits the real API enforces per model.

The fake refuses a request its model would refuse (``fake_request_rules.py``) and caches
as its model caches (``fake_cache.py``), so it needs, per model, the numbers Anthropic
documents. Each column names its source:

- ``window`` and ``max_output``: each model's page, "Context window … · Max output …"
  (https://platform.claude.com/docs/en/models/<model>/overview; Sonnet 4.5: 200K / 64K,
  Sonnet 4.6 and Opus 4.6: 1M / 128K, Haiku 4.5 and Opus 4.5: 200K / 64K).
- ``min_cache``: the prompt-caching page's "minimum cacheable prompt length" (4096 tokens
  for Opus 4.6, Opus 4.5 and Haiku 4.5; 1024 for Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus
  4, Sonnet 4; 2048 for Haiku 3.5 and Haiku 3), as quoted from the docs in
  anthropics/anthropic-sdk-python#1194.
- ``prefill``: whether a final assistant message (a prefill) is accepted. "What's new in
  Claude 4.6" lists its removal as a breaking change from the 4.6 models on; they answer
  400 "This model does not support assistant message prefill. The conversation must end
  with a user message."

A model the table does not name (the tests' ``"m"``) gets no window, output or prefill
check, and caches from ``DEFAULT_MIN_CACHE`` tokens: the fake cannot know its limits and
does not guess them. A dated id (``claude-sonnet-4-5-20250929``) is its model's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MIN_CACHE = 1024
_SNAPSHOT = re.compile(r"-\d{8}")


@dataclass(frozen=True)
class ModelLimits:
    window: int
    max_output: int
    min_cache: int
    prefill: bool


MODELS: dict[str, ModelLimits] = {
    "claude-opus-4-6": ModelLimits(1_000_000, 128_000, 4096, prefill=False),
    "claude-sonnet-4-6": ModelLimits(1_000_000, 128_000, 1024, prefill=False),
    "claude-opus-4-5": ModelLimits(200_000, 64_000, 4096, prefill=True),
    "claude-sonnet-4-5": ModelLimits(200_000, 64_000, 1024, prefill=True),
    "claude-haiku-4-5": ModelLimits(200_000, 64_000, 4096, prefill=True),
    "claude-opus-4-1": ModelLimits(200_000, 32_000, 1024, prefill=True),
    "claude-sonnet-4": ModelLimits(200_000, 64_000, 1024, prefill=True),
    "claude-3-haiku": ModelLimits(200_000, 4_096, 2048, prefill=True),
}


def limits(model: object) -> ModelLimits | None:
    """The documented limits of ``model`` (by name, or name plus snapshot date), or None."""
    if not isinstance(model, str):
        return None
    if model in MODELS:
        return MODELS[model]
    for name, found in MODELS.items():
        if model.startswith(name) and _SNAPSHOT.fullmatch(model[len(name) :]):
            return found
    return None


def min_cache_tokens(model: object) -> int:
    """The shortest prefix ``model`` caches (``DEFAULT_MIN_CACHE`` for one not listed)."""
    found = limits(model)
    return found.min_cache if found is not None else DEFAULT_MIN_CACHE
