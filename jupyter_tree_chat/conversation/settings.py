"""``ChatSettings``: how to ask the model, one frozen value per request.

Kept apart from ``session.py`` so the fan-out (which makes one set of settings per
variant) and the views can name them without the session's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..history.tree import Node
from ..providers.base import Thinking

DEFAULT_MAX_TOOL_ROUNDS = 10


@dataclass(frozen=True)
class ChatSettings:
    """How to ask the model. ``None`` means the provider's default."""

    model: str | None = None
    max_tokens: int = 4096
    system: str | None = None
    temperature: float | None = None
    tools: tuple[str, ...] | None = None  # functions, server:tool, server:*; None = all functions
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS
    thinking: Thinking = None  # a budget of tokens, "adaptive", or None for no thinking
    allow_destructive: bool = False  # may MCP tools annotated destructive run?
    allow_run: bool = False  # may the notebook server's run tool run code in the kernel?
    context_budget: int | str = "window"  # tokens a request may hold, "window" or "off"
    summarize_dropped: bool = False  # what the budget leaves out: a summary, not a note

    def merged(self, **changes: Any) -> ChatSettings:
        """These settings with every non-``None`` change applied."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def with_root_system(settings: ChatSettings, path: list[Node]) -> ChatSettings:
    """An imported conversation's system prompt (its root's ``meta.system``) when the
    settings name none: a continued ChatGPT or Open WebUI chat keeps its instructions."""
    if settings.system is not None or not path or not path[0].meta:
        return settings
    system = path[0].meta.get("system")
    return settings.merged(system=system) if isinstance(system, str) and system else settings
