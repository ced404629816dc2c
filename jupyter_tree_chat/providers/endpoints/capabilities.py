"""What an endpoint supports, and the two things that follow from it for each request.

Servers that speak the Messages API each lack something: no ``count_tokens``, no
``cache_control``, no images or PDFs, no extended thinking, a temperature range of their
own, thinking blocks that must come back (DeepSeek) or mean nothing to them. A request
must never carry what its endpoint refuses, and a request that needs what the endpoint
lacks must be refused before anything is stored, in one line that says the fix. So, for a
request and the endpoint's ``Supports``:

- ``refusal`` says why the request cannot go there at all (an image to a server that
  reads none, a temperature outside its range, thinking it lacks), or None;
- ``fitted_messages`` makes the path what the endpoint takes back of thinking: Anthropic's
  rule (signed blocks only, ``wire.sends_thinking``), DeepSeek's and MiniMax's (every
  ``thinking`` block of the assistant's turns, signed or not, and, with thinking on, one
  in front of every tool call: they answer 400 without), or none at all (an endpoint
  without thinking);
- ``anthropic.build_kwargs`` leaves out ``cache_control`` and tools where they are lacking.

Pure: plain values in, plain values out, so each rule is testable on its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ...history.tree import THINKING_TYPES
from ...i18n import _
from ..anthropic.wire import EMPTY
from ..base import ADAPTIVE, Message, ReplyRequest

THINKING_SIGNED = "signed"
"""Thinking blocks go back only with their proof (Anthropic's rule, ``wire.sends_thinking``)."""
THINKING_ALL = "all"
"""Every ``thinking`` block of an assistant turn goes back, signed or not (DeepSeek, MiniMax)."""
THINKING_REPLAYS = (THINKING_SIGNED, THINKING_ALL)

#: the features a preset says yes or no to, in the order ``%chat models`` lists them
FEATURES = (
    "tools",
    "count_tokens",
    "cache_control",
    "images",
    "documents",
    "thinking",
    "adaptive_thinking",
    "models_list",
)
#: what only a Chat Completions endpoint says yes or no to (``%chat models`` adds these there)
CHAT_FEATURES = ("n", "send_reasoning")


@dataclass(frozen=True)
class Supports:
    """What one endpoint takes. The defaults are the Anthropic API's."""

    tools: bool = True
    count_tokens: bool = True
    """``POST /v1/messages/count_tokens``; without it the meter estimates."""
    cache_control: bool = True
    """Prompt-cache breakpoints; without them none is sent."""
    images: bool = True
    documents: bool = True
    """PDF (and text) document blocks."""
    thinking: bool = True
    """Extended thinking with a budget of tokens."""
    adaptive_thinking: bool = True
    """``--thinking adaptive`` (the model decides how much): Claude's newer models only."""
    thinking_replay: str = THINKING_SIGNED
    """Which thinking blocks of the path go back (see the module docstring)."""
    thinking_off: bool = False
    """Say ``thinking: disabled`` when no thinking is asked for (DeepSeek's newer models
    think unless told not to, and then want their thinking sent back)."""
    temperature: tuple[float, float] = (0.0, 1.0)
    """The temperatures it takes, both ends included (unless ``temperature_above_low``)."""
    temperature_above_low: bool = False
    """The low end is excluded: MiniMax takes (0, 1]."""
    default_temperature_only: str = ""
    """The models (a regular expression matched at the start of the name) that take no
    temperature but their default, 1: OpenAI's reasoning models refuse any other."""
    models_list: bool = True
    """``GET /v1/models`` lists the models it serves."""
    n: bool = False
    """Several answers in one request (Chat Completions' ``n``): a fan-out's samples of one
    model go as one request; without it, as one request each."""
    send_reasoning: bool = False
    """The reasoning a Chat Completions server sent goes back to it, in the field it came
    in, within the current tool loop (llama.cpp takes ``reasoning_content`` back; OpenAI
    refuses message fields it does not know)."""

    def has(self, feature: str) -> bool:
        return bool(getattr(self, feature))

    def without(self, feature: str) -> Supports:
        """The same, with ``feature`` missing (an endpoint answered 404 or 400 for it)."""
        changes: dict[str, Any] = {feature: False}
        return replace(self, **changes)

    def features(self, names: Sequence[str] = FEATURES) -> tuple[list[str], list[str]]:
        """(what it has, what it lacks) of ``names`` (default ``FEATURES``)."""
        have = [name for name in names if self.has(name)]
        return have, [name for name in names if name not in have]

    def takes_temperature(self, value: float, model: str | None = None) -> bool:
        """Whether ``value`` may go as the temperature (of ``model``, where it is known)."""
        if model and self.default_only(model):
            return value == 1
        low, high = self.temperature
        above = value > low if self.temperature_above_low else value >= low
        return math.isfinite(value) and above and value <= high

    def default_only(self, model: str) -> bool:
        """Whether ``model`` takes no temperature but its default (1)."""
        pattern = self.default_temperature_only
        return bool(pattern) and re.match(pattern, model) is not None

    def temperature_range(self) -> str:
        """``0 to 2``, or ``above 0, up to 1``."""
        low, high = self.temperature
        if self.temperature_above_low:
            return _("above {low}, up to {high}").format(low=f"{low:g}", high=f"{high:g}")
        return _("{low} to {high}").format(low=f"{low:g}", high=f"{high:g}")

    @classmethod
    def merged(cls, base: Supports, changes: Mapping[str, Any]) -> Supports:
        """``base`` with ``changes`` (from ``TreeChat.endpoints``) applied, key by key;
        ``ValueError`` naming the fix for a key or value it does not know."""
        known = {f.name for f in fields(cls)}
        updates: dict[str, Any] = {}
        for key, value in changes.items():
            if key not in known:
                raise ValueError(
                    _("unknown capability {key!r} in supports: use {names}").format(
                        key=key, names=", ".join(sorted(known))
                    )
                )
            if key == "temperature":
                updates[key] = _temperature_pair(value)
            elif key == "default_temperature_only":
                if not isinstance(value, str) or not _compiles(value):
                    raise ValueError(
                        _(
                            "supports.default_temperature_only must be a regular expression "
                            "of model names, e.g. '^(o[0-9]|gpt-5)', not {value!r}"
                        ).format(value=value)
                    )
                updates[key] = value
            elif key == "thinking_replay":
                if value not in THINKING_REPLAYS:
                    raise ValueError(
                        _("thinking_replay must be one of {names}, not {value!r}").format(
                            names=", ".join(THINKING_REPLAYS), value=value
                        )
                    )
                updates[key] = value
            elif isinstance(value, bool):
                updates[key] = value
            else:
                raise ValueError(
                    _("supports.{key} must be true or false, not {value!r}").format(
                        key=key, value=value
                    )
                )
        return replace(base, **updates)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _temperature_pair(value: Any) -> tuple[float, float]:
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        and 0 <= value[0] <= value[1]
    ):
        return float(value[0]), float(value[1])
    raise ValueError(
        _("supports.temperature must be [LOW, HIGH] (e.g. [0, 2]), not {value!r}").format(
            value=value
        )
    )


# -- what cannot be sent ----------------------------------------------------------------


def refusal(request: ReplyRequest, supports: Supports, endpoint: str) -> str | None:
    """Why ``request`` cannot go to ``endpoint`` (its name), with the fix; None if it can."""
    thinking = request.thinking
    if thinking is not None and not supports.thinking:
        return _(
            "{endpoint} has no extended thinking: drop --thinking, or use --thinking off"
        ).format(endpoint=endpoint)
    if thinking == ADAPTIVE and not supports.adaptive_thinking:
        return _(
            "{endpoint} takes no adaptive thinking: give a budget instead, e.g. --thinking 2048"
        ).format(endpoint=endpoint)
    temperature = request.temperature
    if temperature is not None and not supports.takes_temperature(temperature, request.model):
        if request.model and supports.default_only(request.model):
            return _(
                "{model} at {endpoint} takes no temperature but its default (1): drop "
                "--temperature, or ask another model"
            ).format(model=request.model, endpoint=endpoint)
        return _(
            "temperature {value} is outside what {endpoint} takes ({range}): give one in it"
        ).format(value=f"{temperature:g}", endpoint=endpoint, range=supports.temperature_range())
    for kind, allowed in (("image", supports.images), ("document", supports.documents)):
        count = 0 if allowed else sum(1 for _block in media_blocks(request.messages, kind))
        if count:
            return _(
                "{endpoint} reads no {kind} blocks and this request holds {count}: ask a model "
                "that reads them (--model), or ask without (a new branch: %%chat --new); if "
                "this server does read them, say so: %config TreeChat.endpoints = "
                "{{'{endpoint}': {{'supports': {{'{feature}': True}}}}}}"
            ).format(endpoint=endpoint, kind=kind, count=count, feature=f"{kind}s")
    return None


def media_blocks(messages: Sequence[Message], kind: str) -> Iterator[dict[str, Any]]:
    """Every block of ``kind`` (``image``, ``document``) in the messages, tool results too."""
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == kind:
                yield block
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for item in inner if isinstance(inner, list) else []:
                if isinstance(item, dict) and item.get("type") == kind:
                    yield item


# -- what thinking goes back -------------------------------------------------------------


def fitted_messages(
    sent: list[Message], stored: Sequence[Message], supports: Supports, thinking_on: bool
) -> list[Message]:
    """``sent`` (``wire.api_messages`` of ``stored``, one message for one) with the
    thinking blocks this endpoint takes back (see the module docstring)."""
    if (supports.thinking and supports.thinking_replay == THINKING_SIGNED) or len(sent) != len(
        stored
    ):
        return sent
    fitted = []
    for message, original in zip(sent, stored, strict=False):
        content = message["content"]
        if message["role"] != "assistant" or not isinstance(content, list):
            fitted.append(message)
            continue
        rest = [b for b in content if b.get("type") not in THINKING_TYPES]
        if not supports.thinking:
            fitted.append({**message, "content": rest or [{"type": "text", "text": EMPTY}]})
            continue
        thoughts = _own_thinking(original)
        if thinking_on and not thoughts and any(b.get("type") == "tool_use" for b in rest):
            thoughts = [{"type": "thinking", "thinking": "", "signature": ""}]
        fitted.append({**message, "content": [*thoughts, *rest]})
    return fitted


def _own_thinking(message: Message) -> list[dict[str, Any]]:
    """The message's ``thinking`` blocks as the API shapes them, signed or not."""
    content = message.get("content")
    found = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "thinking":
            text = block.get("thinking")
            signature = block.get("signature")
            found.append(
                {
                    "type": "thinking",
                    "thinking": text if isinstance(text, str) else "",
                    "signature": signature if isinstance(signature, str) else "",
                }
            )
    return found
