"""The real Messages API's rules about a request as a whole, for the fake (400s).

``fake_rules.py`` holds the rules about messages and their blocks; these are about the
rest of the body: which top-level fields exist, the ``tools`` and ``tool_choice``, what
thinking forbids, and what the model allows. Each rule's source, and the error text the
API gives (quoted from real 400s where the wording was found):

- top-level fields are those of the SDK's ``MessageCreateParams`` (``types/
  message_create_params.py``; ``message_count_tokens_params.py`` for a count; with an
  ``anthropic-beta`` header also ``types/beta/message_create_params.py``): any other is
  "NAME: Extra inputs are not permitted" (the API's pydantic wording, as for blocks);
- a request whose messages hold ``tool_use`` or ``tool_result`` blocks defines ``tools``:
  "Requests which include `tool_use` or `tool_result` blocks must define tools."
  (anthropic-sdk-python#494, worded with backticks since);
- tool names match ``^[a-zA-Z0-9_-]{1,128}$`` ("tools.N.custom.name: String should match
  pattern '^[a-zA-Z0-9_-]{1,128}$'", "… String should have at most 128 characters"), in
  tools and in ``tool_use`` blocks alike, and are unique ("tools: Tool names must be
  unique."); a custom tool has an object ``input_schema`` (the SDK's ``InputSchema``);
- with thinking on (``enabled`` or ``adaptive``), no forced ``tool_choice`` (``any`` or
  ``tool``): "Thinking may not be enabled when tool_choice forces tool use." (the
  extended-thinking page's "Feature compatibility", checked live in workglow-dev/libs#746);
  ``top_p`` only in 0.95–1 (the same section; its 400's wording was not found, so the
  text below is the fake's own); with ``enabled`` thinking no prefill: a final assistant
  message starts with a thinking block (the section's "You cannot pre-fill responses";
  the API answers with the tool-loop rule's text, ``fake_rules.thinking_in_tool_loop``);
- per model (``fake_models.py``): ``max_tokens`` at most the model's output ("max_tokens:
  N > M, which is the maximum allowed number of output tokens for MODEL"), the prompt
  within its window ("prompt is too long: N tokens > M maximum", counted as
  ``fake_cache.prompt_tokens`` counts), and no prefill for the 4.6 models on.

Left out, because no documentation or real error says what the API does: whether a
tool_use must name a defined tool, whether ``input tokens + max_tokens`` over the window
is refused, the order of mixed cache TTLs, and top-level (automatic) ``cache_control``
(accepted as a field, not cached by the fake).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from fakes.fake_cache import prompt_tokens
from fakes.fake_models import limits

MESSAGE_FIELDS = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "cache_control",
        "container",
        "inference_geo",
        "metadata",
        "output_config",
        "service_tier",
        "stop_sequences",
        "stream",
        "system",
        "temperature",
        "thinking",
        "tool_choice",
        "tools",
        "top_k",
        "top_p",
    }
)
COUNT_FIELDS = frozenset(
    {"model", "messages", "cache_control", "output_config", "system", "thinking"}
    | {"tool_choice", "tools"}
)
BETA_FIELDS = frozenset(
    {
        "context_management",
        "diagnostics",
        "fallback_credit_token",
        "fallbacks",
        "mcp_servers",
        "output_format",
        "speed",
    }
)
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_NAME_PATTERN = "^[a-zA-Z0-9_-]{1,128}$"
MAX_TOOL_NAME = 128
CUSTOM_TOOL_KEYS = frozenset(
    {
        "name",
        "input_schema",
        "description",
        "type",
        "cache_control",
        "allowed_callers",
        "defer_loading",
        "eager_input_streaming",
        "input_examples",
        "strict",
    }
)
TOOL_CHOICES = ("auto", "any", "tool", "none")
FORCED_CHOICES = ("any", "tool")
TOOLS_REQUIRED = "Requests which include `tool_use` or `tool_result` blocks must define tools."
NO_PREFILL = (
    "This model does not support assistant message prefill. The conversation must end "
    "with a user message."
)


def unknown_fields(body: dict[str, Any], allowed: frozenset[str]) -> str | None:
    for key in body:
        if key not in allowed:
            return f"{key}: Extra inputs are not permitted"
    return None


def tools_defined(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    if tools:
        return None
    for block in _message_blocks(body):
        if block.get("type") in ("tool_use", "tool_result"):
            return TOOLS_REQUIRED
    return None


def tool_definitions(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names: list[str] = []
    for n, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{n}: Input should be a valid dictionary"
        if tool.get("type") not in (None, "custom"):
            names.append(str(tool.get("name")))  # a server tool: its own schema, not checked
            continue
        where = f"tools.{n}.custom"
        for key in ("name", "input_schema"):
            if key not in tool:
                return f"{where}.{key}: Field required"
        extra = sorted(set(tool) - CUSTOM_TOOL_KEYS)
        if extra:
            return f"{where}.{extra[0]}: Extra inputs are not permitted"
        problem = name_problem(tool["name"], f"{where}.name")
        if problem:
            return problem
        schema = tool["input_schema"]
        if not isinstance(schema, dict):
            return f"{where}.input_schema: Input should be a valid dictionary"
        if schema.get("type") != "object":
            return f"{where}.input_schema.type: Input should be 'object'"
        names.append(tool["name"])
    if len(set(names)) != len(names):
        return "tools: Tool names must be unique."
    return None


def tool_use_names(body: dict[str, Any]) -> str | None:
    for n, message in enumerate(body["messages"]):
        content = message.get("content")
        for m, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                problem = name_problem(block.get("name"), f"messages.{n}.content.{m}.tool_use.name")
                if problem:
                    return problem
    return None


def name_problem(name: Any, where: str) -> str | None:
    if not isinstance(name, str):
        return f"{where}: Input should be a valid string"
    if len(name) > MAX_TOOL_NAME:
        return f"{where}: String should have at most {MAX_TOOL_NAME} characters"
    if not TOOL_NAME.match(name):
        return f"{where}: String should match pattern '{TOOL_NAME_PATTERN}'"
    return None


def tool_choice(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in TOOL_CHOICES:
        return (
            "tool_choice: Input tag found using 'type' does not match any of the expected "
            "tags: 'auto', 'any', 'tool', 'none'"
        )
    if choice["type"] == "tool" and "name" not in choice:
        return "tool_choice.tool.name: Field required"
    if choice["type"] in FORCED_CHOICES and _thinking(body) is not None:
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def top_p_with_thinking(body: dict[str, Any]) -> str | None:
    top_p = body.get("top_p")
    if top_p is None or _thinking(body) is None:
        return None
    if not isinstance(top_p, (int, float)) or not 0.95 <= top_p <= 1:
        return "`top_p` may only be set between 0.95 and 1 when thinking is enabled"
    return None


def prefill_with_thinking(body: dict[str, Any]) -> str | None:
    from fakes.fake_rules import THINKING_TYPES, final_assistant_needs_thinking

    messages = body["messages"]
    last = messages[-1]
    if _thinking(body) != "enabled" or last.get("role") != "assistant":
        return None
    content = last.get("content")
    first = content[0] if isinstance(content, list) and content else None
    kind = first.get("type") if isinstance(first, dict) else "text"
    if kind in THINKING_TYPES:
        return None
    return final_assistant_needs_thinking(len(messages) - 1, kind)


def model_limits(body: dict[str, Any]) -> str | None:
    found = limits(body.get("model"))
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    if found is None:
        return None
    if isinstance(max_tokens, int) and max_tokens > found.max_output:
        return (
            f"max_tokens: {max_tokens} > {found.max_output}, which is the maximum allowed "
            f"number of output tokens for {body['model']}"
        )
    if not found.prefill and body["messages"][-1].get("role") == "assistant":
        return NO_PREFILL
    tokens = prompt_tokens(body)
    if tokens > found.window:
        return f"prompt is too long: {tokens} tokens > {found.window} maximum"
    return None


def _thinking(body: dict[str, Any]) -> str | None:
    config = body.get("thinking")
    if isinstance(config, dict) and config.get("type") in ("enabled", "adaptive"):
        return str(config["type"])
    return None


def _message_blocks(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                yield block
