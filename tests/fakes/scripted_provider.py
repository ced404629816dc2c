"""A scriptable model for session tests: queue replies, faults and interrupts; see requests.

Like simonw/llm's mock model: ``enqueue`` what the next calls should stream, and read
``requests`` to check what the model was shown. Real providers are tested against the
fake Messages API server; this one exists to put a fault at an exact point in a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jupyter_tree_chat.errors import ProviderError
from jupyter_tree_chat.history.tree import message_text
from jupyter_tree_chat.providers.base import (
    Finished,
    ReplyEvent,
    ReplyRequest,
    TextDelta,
    ThinkingDelta,
    ToolUseReady,
)


@dataclass
class Script:
    text: str = ""
    tool_use: dict[str, Any] | None = None
    stop_reason: str | None = None
    fail_after: int | None = None  # chunks sent before the fault
    fault: BaseException | None = None
    thinking: str | None = None  # streamed (unsigned) before the text when set


@dataclass
class ScriptedProvider:
    name: str = "scripted"
    default_model: str = "scripted-1"
    scripts: list[Script] = field(default_factory=list)
    requests: list[ReplyRequest] = field(default_factory=list)
    on_request: Callable[[ReplyRequest], None] | None = None

    def enqueue(self, text: str = "", **kwargs: Any) -> None:
        self.scripts.append(Script(text, **kwargs))

    def seen_texts(self, call: int = -1) -> list[str]:
        """The text of each message the model was shown in one call."""
        return [message_text(m) for m in self.requests[call].messages]

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]:
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        last = message_text(request.messages[-1]) if request.messages else ""
        script = self.scripts.pop(0) if self.scripts else Script(f"echo: {last}")
        words = [w + " " for w in script.text.split(" ")] if script.text else []
        if words:
            words[-1] = words[-1][:-1]
        if script.thinking is not None:
            yield ThinkingDelta(script.thinking)
        for number, word in enumerate(words):
            if script.fail_after is not None and number == script.fail_after:
                raise script.fault or ProviderError("scripted failure")
            yield TextDelta(word)
        if script.fail_after is not None and script.fail_after >= len(words):
            raise script.fault or ProviderError("scripted failure")
        content: list[dict[str, Any]] = []
        if script.text:
            content.append({"type": "text", "text": script.text})
        stop = script.stop_reason or "end_turn"
        if script.tool_use is not None:
            block = {"type": "tool_use", "id": f"toolu_{len(self.requests)}", **script.tool_use}
            content.append(block)
            yield ToolUseReady(block)
            stop = "tool_use"
        yield Finished(
            {"role": "assistant", "content": content},
            request.model,
            stop,
            {"input_tokens": 10, "output_tokens": len(words)},
        )
