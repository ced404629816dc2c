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

import time
from collections.abc import Callable
from typing import Any

from ..errors import ChatError, MaxTokensReached, Refused
from ..history.tree import Message
from ..i18n import _
from ..providers.base import Finished, Route, TextDelta, ThinkingDelta, ThinkingReady
from ..providers.tools.toolbox import Toolbox
from .events import Event, ReplyDelta, ReplyThinking
from .settings import ChatSettings

DELTA_INTERVAL_S = 0.02
"""The least time between two announced pieces of one reply (``DeltaBatch``)."""


class PartialReply:
    """Collects streamed pieces so a cut reply can still be stored."""

    def __init__(self) -> None:
        self.texts: dict[int, list[str]] = {}  # joined once, at the end: no copy per delta
        self.thinking: dict[int, dict[str, Any]] = {}
        self.tools: list[dict[str, Any]] = []

    def add(self, delta: TextDelta) -> None:
        pieces = self.texts.get(delta.index)
        if pieces is None:
            self.texts[delta.index] = [delta.text]
        else:
            pieces.append(delta.text)

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
        for index, pieces in self.texts.items():
            text = "".join(pieces)
            if text:
                blocks[index] = {"type": "text", "text": text}
        if not blocks:
            return None
        return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}


class DeltaBatch:
    """Announces a reply's streamed pieces (``ReplyDelta``, ``ReplyThinking``) in batches.

    A fast stream brings thousands of deltas a second, and every listener (the cell, the
    panel, each turn control) would otherwise be called for each one. The first piece
    goes out at once; later ones are joined until ``interval`` has passed since the last
    announcement, and ``flush()`` (the reply's end, an error, Ctrl-C) sends the rest, so
    the listeners get all the text, in order, thinking and answer never mixed. There is
    no timer (the kernel runs no event loop during a cell): the next delta, or the end,
    sends what waits. ``interval`` 0 announces every delta.
    """

    def __init__(
        self,
        emit: Callable[[Event], None],
        parent_id: str,
        interval: float = DELTA_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._parent_id = parent_id
        self._interval = interval
        self._clock = clock
        self._pieces: list[str] = []
        self._thinking = False  # what the waiting pieces are
        self._last = float("-inf")

    def text(self, text: str) -> None:
        if self._thinking:  # the thinking so far goes first
            self.flush()
            self._thinking = False
        self._add(text)

    def think(self, text: str) -> None:
        if not self._thinking:
            self.flush()
            self._thinking = True
        self._add(text)

    def _add(self, text: str) -> None:
        self._pieces.append(text)
        now = self._clock()
        if now - self._last >= self._interval:
            self._last = now
            self.flush()

    def flush(self) -> None:
        """Announce what waits (cleared first: a listener may raise, e.g. Ctrl-C)."""
        if not self._pieces:
            return
        text = "".join(self._pieces)
        self._pieces = []
        kind = ReplyThinking if self._thinking else ReplyDelta
        self._emit(kind(self._parent_id, text))


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
    """``provider``, ``endpoint`` (where there is one) and ``model`` (what answers), with
    ``asked_model`` where the request named another (no key: the offline model)."""
    meta: dict[str, Any] = {"provider": route.provider}
    if route.endpoint is not None:
        meta["endpoint"] = route.endpoint
    meta["model"] = route.name
    if route.asked is not None:
        meta["asked_model"] = route.asked
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
