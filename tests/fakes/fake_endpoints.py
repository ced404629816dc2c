"""The fake Messages API as other endpoints behave: what each preset's documentation says.

``FakeAnthropic(endpoint="deepseek")`` answers as DeepSeek's Anthropic-compatible API
does, so the project's routing is tested against the rules it must keep (a test passing
here should pass against the real server). Each mode is what the server's own
documentation and issue trackers say (docs/endpoints.md has the table and the sources):

- ``anthropic`` (the default): the real API's rules (fake_rules.py), and ``GET
  /v1/models`` listing a few Claude models.
- ``ollama``: no ``/v1/messages/count_tokens`` (404), ``cache_control`` refused (400),
  no PDFs or other documents, no images by URL; ``GET /v1/models`` in OpenAI's shape.
- ``deepseek``: no count_tokens (404), no model list (404); unknown model names 400; no
  ``redacted_thinking``; temperature 0.0 to 2.0, taken whatever the API version says;
  it thinks unless told ``thinking: disabled``, and in thinking mode an assistant turn
  that called a tool must carry its thinking back, or it answers 400 ("The
  `content[].thinking` in the thinking mode must be passed back to the API."). Its
  thinking blocks are its own: Anthropic's signature rules do not apply.
- ``minimax``: text and tool calls only (images and documents 400), temperature in
  (0, 1], the thinking of a tool turn sent back as DeepSeek wants it, no count_tokens.

A mode is a small value: the Anthropic rules it does not hold (by name), the rules it
adds, whether count_tokens exists, what ``GET /v1/models`` answers, and whether it thinks
when the request says nothing of thinking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fakes.fake_rules import blocks_of, marked_blocks, media_blocks, thinking_mode

Rule = Callable[[dict[str, Any]], "str | None"]

DEEPSEEK_THINKING = "The `content[].thinking` in the thinking mode must be passed back to the API."
CLAUDE_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5")
DEEPSEEK_MODELS = ("deepseek-chat", "deepseek-reasoner")
OLLAMA_MODELS = ("llama3.2:3b", "qwen3:8b")


@dataclass(frozen=True)
class EndpointMode:
    """How one endpoint differs from the Anthropic API (see the module docstring)."""

    name: str
    skips: frozenset[str] = frozenset()
    """The Anthropic rules (``fake_rules`` function names) this endpoint does not hold."""
    adds: tuple[Rule, ...] = ()
    count_tokens: bool = True
    models: tuple[dict[str, Any], int] = ({"data": []}, 200)
    """What ``GET /v1/models`` answers: (body, status)."""
    thinks_by_default: bool = False
    any_version: bool = False
    """It takes temperature whatever ``anthropic-version`` says."""

    def rules(self, rules: Sequence[Rule]) -> list[Rule]:
        return [rule for rule in rules if rule.__name__ not in self.skips] + list(self.adds)

    def answering(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as this endpoint reads it (DeepSeek thinks unless told not to)."""
        if self.thinks_by_default and "thinking" not in body:
            return {**body, "thinking": {"type": "enabled", "budget_tokens": 1024}}
        return body


# -- rules other endpoints add ------------------------------------------------------------


def no_cache_control(body: dict[str, Any]) -> str | None:
    if "cache_control" in body or any(marked for _block, marked in marked_blocks(body)):
        return "cache_control is not supported"
    return None


def no_blocks(kind: str) -> Rule:
    def rule(body: dict[str, Any]) -> str | None:
        for where, _block in media_blocks(body, kind):
            return f"{where}: {kind} content is not supported"
        return None

    rule.__name__ = f"no_{kind}_blocks"
    return rule


def no_url_images(body: dict[str, Any]) -> str | None:
    for where, block in media_blocks(body, "image"):
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") != "base64":
            return f"{where}: only base64 images are supported"
    return None


def no_redacted_thinking(body: dict[str, Any]) -> str | None:
    for n, message in enumerate(body["messages"]):
        if blocks_of(message, "redacted_thinking"):
            return f"messages.{n}: content[].redacted_thinking is not supported"
    return None


def thinking_passed_back(body: dict[str, Any]) -> str | None:
    """In thinking mode, an assistant turn that called a tool carries its thinking."""
    if thinking_mode(body) is None:
        return None
    for message in body["messages"]:
        if message.get("role") != "assistant":
            continue
        if blocks_of(message, "tool_use") and not blocks_of(message, "thinking"):
            return DEEPSEEK_THINKING
    return None


def temperature_in(low: float, high: float, *, above_low: bool = False) -> Rule:
    def rule(body: dict[str, Any]) -> str | None:
        value = body.get("temperature")
        if value is None:
            return None
        fits = (value > low if above_low else value >= low) and value <= high
        if fits:
            return None
        opening = "(" if above_low else "["
        return f"temperature: {value} is out of range {opening}{low}, {high}]"

    rule.__name__ = "temperature_range"
    return rule


def model_in(names: Sequence[str]) -> Rule:
    def rule(body: dict[str, Any]) -> str | None:
        if body.get("model") in names:
            return None
        return f"Model Not Exist: {body.get('model')!r}"

    rule.__name__ = "known_model"
    return rule


def _openai_models(names: Sequence[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "owned_by": "library"} for name in names],
    }


_NOT_FOUND = ({"error": {"type": "not_found_error", "message": "Not Found"}}, 404)
_THINKING_RULES = frozenset(
    {"thinking_signatures", "thinking_in_tool_loop", "thinking_config", "sampling_with_thinking"}
)

MODES: dict[str, EndpointMode] = {
    mode.name: mode
    for mode in (
        EndpointMode(
            "anthropic",
            models=(
                {
                    "data": [
                        {"type": "model", "id": name, "display_name": name}
                        for name in CLAUDE_MODELS
                    ],
                    "has_more": False,
                },
                200,
            ),
        ),
        EndpointMode(
            "ollama",
            adds=(no_cache_control, no_blocks("document"), no_url_images),
            count_tokens=False,
            models=(_openai_models(OLLAMA_MODELS), 200),
        ),
        EndpointMode(
            "deepseek",
            skips=_THINKING_RULES,
            adds=(
                model_in(DEEPSEEK_MODELS),
                no_redacted_thinking,
                thinking_passed_back,
                temperature_in(0.0, 2.0),
                no_blocks("image"),
                no_blocks("document"),
            ),
            count_tokens=False,
            models=_NOT_FOUND,
            thinks_by_default=True,
            any_version=True,
        ),
        EndpointMode(
            "minimax",
            skips=_THINKING_RULES,
            adds=(
                no_blocks("image"),
                no_blocks("document"),
                temperature_in(0.0, 1.0, above_low=True),
                thinking_passed_back,
            ),
            count_tokens=False,
            models=_NOT_FOUND,
            any_version=True,
        ),
    )
}


def endpoint_mode(name: str | None) -> EndpointMode:
    """The mode called ``name`` (None: the Anthropic API itself)."""
    if name is None:
        return MODES["anthropic"]
    if name not in MODES:
        raise ValueError(f"no fake endpoint mode {name!r}; there are {', '.join(MODES)}")
    return MODES[name]
