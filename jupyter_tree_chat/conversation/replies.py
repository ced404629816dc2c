"""A reply as it is stored: the pieces of a streamed reply, and what its node keeps.

A single answer (``session.py``) and a fan-out's answers (``fanout.py``) store replies
by the same rules: what arrived before a cut is kept (thinking unsigned, so it is never
sent back; no half tool call), ``meta`` records what was asked and what the API said,
and a reply stopped at ``max_tokens`` or refused becomes a notice, not an error.

``meta.model`` is the model as it was asked for, by the name it goes by everywhere
(``claude-sonnet-4-6``, ``local:smollm2``), so prices, windows and a later "ask again"
find it; ``meta.endpoint`` names its endpoint, and a different name the server reported
(llama-server's model file path, a dated snapshot) is kept beside it as
``meta.served_model``.
"""

from __future__ import annotations

from typing import Any

from ..errors import ChatError, MaxTokensReached, Refused
from ..history.tree import Message
from ..i18n import _
from ..providers.base import Finished, Route, TextDelta, ThinkingDelta, ThinkingReady
from ..providers.toolbox import Toolbox
from .settings import ChatSettings


class PartialReply:
    """Collects streamed pieces so a cut reply can still be stored."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}
        self.thinking: dict[int, dict[str, Any]] = {}
        self.tools: list[dict[str, Any]] = []

    def add(self, delta: TextDelta) -> None:
        self.texts[delta.index] = self.texts.get(delta.index, "") + delta.text

    def think(self, delta: ThinkingDelta) -> None:
        """Thinking so far, unsigned until its block completes (``ThinkingReady``)."""
        block = self.thinking.setdefault(
            delta.index, {"type": "thinking", "thinking": "", "signature": ""}
        )
        block["thinking"] += delta.text

    def thought(self, ready: ThinkingReady) -> None:
        self.thinking[ready.index] = ready.block

    def message(self) -> Message | None:
        """The thinking and the text: an unanswered tool_use would make the path unsendable.

        Thinking cut short keeps an empty signature, so it is never sent back."""
        blocks: dict[int, dict[str, Any]] = dict(self.thinking)
        for index, text in self.texts.items():
            if text:
                blocks[index] = {"type": "text", "text": text}
        if not blocks:
            return None
        return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}


def reply_meta(
    route: Route,
    finished: Finished,
    settings: ChatSettings,
    seconds: float,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What a stored reply keeps beside its message (never sent to the model); ``context``
    is what a context budget left out of its request (``ReplyRequest.context``)."""
    meta = asked_meta(route)
    if finished.model and finished.model not in (route.model, route.name):
        meta["served_model"] = finished.model
    if settings.temperature is not None:
        meta["temperature"] = settings.temperature
    meta.update(
        usage=finished.usage,
        stop_reason=finished.stop_reason,
        duration_ms=round(seconds * 1000),
    )
    if context is not None:
        meta["context"] = context
    return meta | thinking_meta(settings)


def partial_meta(route: Route, settings: ChatSettings, why: str, seconds: float) -> dict[str, Any]:
    """The meta of a reply cut short: what was asked, and why it ended."""
    meta = asked_meta(route)
    if settings.temperature is not None:
        meta["temperature"] = settings.temperature
    meta.update(interrupted=True, error=why, duration_ms=round(seconds * 1000))
    return meta | thinking_meta(settings)


def asked_meta(route: Route) -> dict[str, Any]:
    """``provider``, ``endpoint`` (where there is one) and ``model`` as asked for."""
    meta: dict[str, Any] = {"provider": route.provider}
    if route.endpoint is not None:
        meta["endpoint"] = route.endpoint
    meta["model"] = route.name
    return meta


def stop_reason_error(finished: Finished, settings: ChatSettings) -> ChatError | None:
    """The notice a reply's stop reason calls for (``max_tokens``, ``refusal``), if any."""
    if finished.stop_reason == "max_tokens":
        return MaxTokensReached(
            _(
                "The reply stopped at the max_tokens limit ({max_tokens}); raise it with "
                "--max-tokens or %config TreeChat.max_tokens, or ask to continue."
            ).format(max_tokens=settings.max_tokens)
        )
    if finished.stop_reason == "refusal":
        return Refused(
            _("The model declined to answer; rephrase the question (edit it) and run again.")
        )

    return None


def thinking_meta(settings: ChatSettings) -> dict[str, Any]:
    """``{"thinking": ...}`` for a reply asked with thinking: how its turn began."""
    return {} if settings.thinking is None else {"thinking": settings.thinking}


def tool_names_meta(tools: Toolbox, message: Message, meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with ``tool_names`` (``{wire name: server:tool}``) when the reply asks for
    MCP tools, so the views show the names a person knows, on any later day."""
    names = tools.display_names(message)
    return {**meta, "tool_names": names} if names else meta
