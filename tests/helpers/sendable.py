"""Is a stored path a request the real Messages API accepts, however it is asked?

A path is sent by ``anthropic.build_kwargs`` (anthropic/wire.py, then tools/wire.py), and what it
holds depends on whether the request offers tools (its tool calls as blocks, the used
tools defined) or not (its tool calls as text). ``refusal`` sends the path both ways
through the fake's rules (fake_rules.validate) and returns the first refusal, or None.
"""

from __future__ import annotations

from typing import Any

from fakes.fake_rules import validate

from jupyter_tree_chat.providers.anthropic.provider import build_kwargs
from jupyter_tree_chat.providers.base import ReplyRequest, ToolSpec

OFFERED = ToolSpec("lookup", "Look a word up.", {"type": "object", "properties": {}})


def refusal(messages: list[dict[str, Any]], model: str = "m") -> str | None:
    """The fake's refusal of ``messages`` asked with no tool, or with one offered; None."""
    for tools in ((), (OFFERED,)):
        body = build_kwargs(
            ReplyRequest(messages=messages, model=model, max_tokens=16, tools=tools)
        )
        problem = validate(body)
        if problem is not None:
            return f"(with tools {[t.name for t in tools]}) {problem}"
    return None
