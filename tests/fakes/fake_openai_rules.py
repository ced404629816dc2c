"""The rules by which Chat Completions servers refuse a request (HTTP 400), for the fake.

A test that passes against the fake should pass against the real API, so the fake refuses
what OpenAI refuses, with its words where they are known. ``validate(body, dialect)``
returns the first broken rule, or None. ``dialect`` is ``"openai"`` (OpenAI's own API:
strict about keys) or ``"llama.cpp"`` (llama-server: unknown request fields ignored,
``reasoning_content`` taken back on assistant messages, one completion choice only).

The rules (from OpenAI's API reference and the errors it returns):
- ``model`` is a non-empty string and ``messages`` a non-empty array;
- OpenAI refuses request fields it does not know ("Unrecognized request argument
  supplied") and message fields a role does not have ("Additional properties are not
  allowed"); roles are system, developer, user, assistant, tool;
- content is a string or an array of parts: text, image_url (an http(s) URL or a
  ``data:image/{png,jpeg,gif,webp};base64,`` URL) and file (a ``data:`` URL in
  ``file_data``) for a user; text (and refusal) for an assistant; text for system and
  tool messages; a text part's ``text`` is a string;
- an assistant message has content or ``tool_calls``; each tool call is ``{"id", "type":
  "function", "function": {"name", "arguments"}}`` with ``arguments`` a string;
- a ``tool`` message answers a ``tool_call_id`` of the assistant message before the run
  of tool messages it is in; an assistant message with ``tool_calls`` is followed by tool
  messages answering every id before any other message;
- tools are ``{"type": "function", "function": {"name", ...}}`` with names matching
  ``^[a-zA-Z0-9_-]{1,64}$`` and ``parameters`` an object;
- ``stream_options`` only with ``stream: true``;
- ``n`` is 1 to 128 (llama.cpp: "Only one completion choice is allowed" past 1);
- OpenAI's reasoning models (o-series, gpt-5 but its chat models) refuse ``max_tokens``
  ("Use 'max_completion_tokens' instead") and a temperature other than 1;
- ``reasoning_effort`` is one of none, minimal, low, medium, high, xhigh.
"""

from __future__ import annotations

import re
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool")
MESSAGE_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio", "function_call"},
    "tool": {"role", "content", "tool_call_id"},
}
LLAMA_EXTRA_KEYS = {"assistant": {"reasoning_content"}}
REQUEST_KEYS = {
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n",
    "stream", "stream_options", "stop", "tools", "tool_choice", "parallel_tool_calls",
    "reasoning_effort", "response_format", "seed", "user", "metadata", "store", "logprobs",
    "top_logprobs", "presence_penalty", "frequency_penalty", "logit_bias", "modalities",
    "prediction", "service_tier", "audio", "web_search_options", "verbosity",
    "prompt_cache_key", "safety_identifier",
}  # fmt: skip
PART_TYPES = {
    "user": {"text", "image_url", "input_audio", "file"},
    "system": {"text"},
    "developer": {"text"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
IMAGE_URL = re.compile(r"^(https?://.+|data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+)$")
FILE_DATA = re.compile(r"^data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/=]+$")
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)(?!.*chat)")
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
ONE_CHOICE = "Only one completion choice is allowed"


def validate(body: Any, dialect: str = "openai") -> str | None:
    """The first rule ``body`` breaks, as the server words it, or None."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    strict = dialect == "openai"
    if strict:
        unknown = sorted(set(body) - REQUEST_KEYS)
        if unknown:
            return f"Unrecognized request argument supplied: {unknown[0]}"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': empty array. Expected an array with minimum length 1."
    for check in (_check_messages, _check_tool_order, _check_tools, _check_options):
        problem = check(body, strict)
        if problem:
            return problem
    if not strict and isinstance(body.get("n"), int) and body["n"] > 1:
        return ONE_CHOICE
    return None


def _check_messages(body: dict[str, Any], strict: bool) -> str | None:
    for index, message in enumerate(body["messages"]):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            role = message.get("role") if isinstance(message, dict) else None
            return f"Invalid value: '{role}'. Supported values are: {', '.join(ROLES)}."
        role = message["role"]
        allowed = MESSAGE_KEYS[role] | (set() if strict else LLAMA_EXTRA_KEYS.get(role, set()))
        extra = sorted(set(message) - allowed)
        if extra:
            return (
                f"Additional properties are not allowed ('{extra[0]}' was unexpected) - '{where}'"
            )
        problem = _check_content(message, where)
        if problem:
            return problem
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            return f"Missing required parameter: '{where}.tool_call_id'."
        if role == "assistant" and message.get("tool_calls") is not None:
            problem = _check_calls(message["tool_calls"], where)
            if problem:
                return problem
    return None


def _check_content(message: dict[str, Any], where: str) -> str | None:
    role, content = message["role"], message.get("content")
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return None
        return f"Invalid value for '{where}.content': expected a string, got null."
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"Invalid type for '{where}.content': expected one of a string or array."
    if not content and role != "assistant":
        return f"Invalid '{where}.content': empty array. Expected an array with minimum length 1."
    for position, part in enumerate(content):
        at = f"{where}.content[{position}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in PART_TYPES[role]:
            allowed = ", ".join(sorted(PART_TYPES[role]))
            return f"Invalid value: '{kind}'. Supported values are: {allowed}. - '{at}.type'"
        if kind == "text" and not isinstance(part.get("text"), str):
            return f"Missing required parameter: '{at}.text'."
        if kind == "image_url":
            url = (part.get("image_url") or {}).get("url")
            if not isinstance(url, str) or not IMAGE_URL.match(url):
                return (
                    f"Invalid image URL: '{at}.image_url.url'. Expected a base64-encoded data "
                    "URL with an image MIME type (e.g. "
                    "'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), "
                    "but got a value that does not match."
                )
        if kind == "file":
            data = (part.get("file") or {}).get("file_data")
            if not isinstance(data, str) or not FILE_DATA.match(data):
                return f"Invalid value for '{at}.file.file_data': expected a base64 data URL."
    return None


def _check_calls(calls: Any, where: str) -> str | None:
    if not isinstance(calls, list) or not calls:
        return (
            f"Invalid '{where}.tool_calls': empty array. Expected an array with minimum length 1."
        )
    for position, call in enumerate(calls):
        at = f"{where}.tool_calls[{position}]"
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            return f"Missing required parameter: '{at}.id'."
        if call.get("type") != "function":
            return f"Missing required parameter: '{at}.type'."
        function = call.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return f"Missing required parameter: '{at}.function.name'."
        if not isinstance(function.get("arguments"), str):
            return (
                f"Invalid type for '{at}.function.arguments': expected a string, "
                "but got an object instead."
            )
    return None


def _check_tool_order(body: dict[str, Any], strict: bool) -> str | None:
    """Tool messages answer the tool calls of the assistant message just before them."""
    waiting: list[str] = []  # ids of the last assistant's calls not yet answered
    offered: set[str] = set()
    for index, message in enumerate(body["messages"]):
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in offered:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls'. - 'messages[{index}]'"
                )
            if message["tool_call_id"] in waiting:
                waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
        offered = set()
        if role == "assistant" and message.get("tool_calls"):
            waiting = [call["id"] for call in message["tool_calls"]]
            offered = set(waiting)
    if waiting:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(waiting)}"
        )
    return None


def _check_tools(body: dict[str, Any], strict: bool) -> str | None:
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "Invalid type for 'tools': expected an array."
    for position, tool in enumerate(tools):
        at = f"tools[{position}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            return f"Missing required parameter: '{at}.type'."
        function = tool.get("function")
        if not isinstance(function, dict):
            return f"Missing required parameter: '{at}.function'."
        name = function.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            return (
                f"Invalid '{at}.function.name': string does not match pattern. Expected a "
                "string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            )
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            return f"Invalid type for '{at}.function.parameters': expected an object."
    return None


def _check_options(body: dict[str, Any], strict: bool) -> str | None:
    if "stream_options" in body and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    n = body.get("n", 1)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128:
        return (
            f"Invalid 'n': integer above maximum value. Expected a value <= 128, "
            f"but got {n} instead."
        )
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in EFFORTS:
        return f"Invalid value: '{effort}'. Supported values are: {', '.join(EFFORTS)}."
    if strict and REASONING_MODEL.match(body["model"]):
        if "max_tokens" in body:
            return (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return (
                f"Unsupported value: 'temperature' does not support {temperature} with this "
                "model. Only the default (1) value is supported."
            )
    return None
