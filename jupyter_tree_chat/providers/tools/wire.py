"""The tools a request's path used, sent as the Messages API accepts them: one rule.

The API refuses a request whose messages hold ``tool_use`` or ``tool_result`` blocks and
that defines no tools ("Requests which include `tool_use` or `tool_result` blocks must
define tools."), and a path keeps its tool calls wherever it goes: a retry or an edit
below a tool round, a fan-out, ``%chat compact`` over a tool history, an imported Claude
Code session asked one more question, a question asked with ``--tools none``, the
panel's actions, a request cut to a budget. So every request passes through
``request_tools`` once it is final (after anything that cut its path), where the
provider builds the wire request (``anthropic.build_kwargs``; a second wire calls it
too). What it does depends on one thing, whether the request offers tools:

- **It offers tools** (at least one): the tool blocks stay as they are, and every tool
  the path used that the request does not offer is defined beside the offered ones,
  marked not callable (its description begins with ``NOT_CALLABLE``). The definition is
  the one kept from when the call was made (the session keeps each round's offered
  definitions in that round's ``meta.tool_definitions``), else the registered one, both
  passed as ``ReplyRequest.known_tools``; for a tool nothing defines (an imported
  session's ``Bash``), a minimal one made from the calls' names and inputs. The model
  reads the conversation exactly as it happened; if it calls a not-callable tool, the
  tool loop answers with an error result and runs nothing (``ToolRegistry.run`` is given
  the offered names).
- **It offers none** (``--tools none``, no tool registered, a compaction's summary
  request): no tool may be offered, so none is. Each ``tool_use`` becomes a text block
  saying which tool was called with what input, each ``tool_result`` a text block with
  what came back (its images and documents kept beside it), so the model still reads
  what happened and has nothing it could call.

A used name the API refuses (it takes ``^[a-zA-Z0-9_-]{1,128}$``; other tools' files hold
names like ``caldav.create``) is sent as a stable name made from it, the same in its
blocks and its definition. Pure: messages and tools in, new messages and tools out; the
inputs are not changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

Message = dict[str, Any]
Definition = dict[str, Any]

NOT_CALLABLE = (
    "NOT CALLABLE in this request: this tool was used earlier in the conversation and is "
    "not offered now; a call to it returns an error."
)
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def request_tools(
    messages: Sequence[Message],
    offered: Sequence[Definition],
    known: Sequence[Definition] = (),
) -> tuple[list[Message], list[Definition]]:
    """The messages and the ``tools`` to send (see the module docstring).

    ``messages`` are already in the API's shape (``wire.api_messages``); ``offered`` are
    the tools the request lets the model call; ``known`` are definitions of other tools
    (kept from past calls first, then the registered ones; the first of a name counts).
    """
    used = used_tools(messages)
    if not used and not any(_results(message) for message in messages):
        return list(messages), list(offered)
    if not offered:
        return [_as_text(message, names) for message, names in _with_names(messages)], []
    callable_names = {str(tool.get("name")) for tool in offered}
    definitions: dict[str, Definition] = {}
    for tool in known:
        definitions.setdefault(str(tool.get("name")), tool)
    sent_name = {name: api_tool_name(name) for name in used}
    extra = [
        not_callable(definitions.get(name) or minimal_definition(name, inputs), sent_name[name])
        for name, inputs in used.items()
        if name not in callable_names
    ]
    renamed = {raw: sent for raw, sent in sent_name.items() if raw != sent}
    sent = [_renamed(message, renamed) for message in messages] if renamed else list(messages)
    return sent, [*offered, *extra]


def used_tools(messages: Sequence[Message]) -> dict[str, list[dict[str, Any]]]:
    """Each tool name the messages call, in order of first use, with the inputs given."""
    used: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        for block in _blocks(message, "tool_use"):
            given = block.get("input")
            inputs = used.setdefault(str(block.get("name")), [])
            inputs.append(given if isinstance(given, dict) else {})
    return used


def api_tool_name(raw: str) -> str:
    """A tool name the API accepts: the name itself, or a stable one made from it."""
    if TOOL_NAME.fullmatch(raw):
        return raw
    digest = hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    cleaned = re.sub(r"[^a-zA-Z0-9_-]+", "_", raw).strip("_")[:100]
    return f"{cleaned}_{digest}" if cleaned else f"tool_{digest}"


def not_callable(definition: Definition, name: str) -> Definition:
    """``definition`` sent under ``name``, its description saying it may not be called."""
    described = str(definition.get("description") or "").strip()
    schema = definition.get("input_schema")
    return {
        "name": name,
        "description": f"{NOT_CALLABLE} {described}".strip(),
        "input_schema": schema if isinstance(schema, dict) else {"type": "object"},
    }


def minimal_definition(name: str, inputs: Sequence[dict[str, Any]]) -> Definition:
    """A definition made from the history alone: the properties its calls were given."""
    properties: dict[str, Any] = {}
    for given in inputs:
        for key, value in given.items():
            properties.setdefault(key, _schema_of(value))
    return {
        "name": name,
        "description": f"The tool {name}, as called earlier in this conversation.",
        "input_schema": {"type": "object", "properties": properties},
    }


def _schema_of(value: Any) -> dict[str, Any]:
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return {"type": name}
    return {}


# -- turning tool blocks into text (no tools offered) -------------------------------------


def _with_names(messages: Sequence[Message]) -> Iterator[tuple[Message, dict[str, str]]]:
    """Each message with the names of the tool uses its results may answer (by id)."""
    names: dict[str, str] = {}
    for message in messages:
        for block in _blocks(message, "tool_use"):
            names[str(block.get("id"))] = str(block.get("name"))
        yield message, names


def _as_text(message: Message, names: dict[str, str]) -> Message:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks: list[Any] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_use":
            given = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            blocks.append(_text(f"[tool call: {block.get('name')} {given}]"))
        elif kind == "tool_result":
            blocks.extend(_result_as_text(block, names))
        else:
            blocks.append(block)
    return {**message, "content": blocks}


def _result_as_text(result: dict[str, Any], names: dict[str, str]) -> list[Any]:
    name = names.get(str(result.get("tool_use_id")), "a tool")
    heading = "tool error from" if result.get("is_error") else "tool result from"
    inner = result.get("content")
    items = [{"type": "text", "text": inner}] if isinstance(inner, str) else inner or []
    texts, others = [], []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "text":
            texts.append(str(item.get("text", "")))
        elif item.get("type") == "tool_reference":
            texts.append(f"[tool reference: {item.get('tool_name')}]")
        else:  # an image, a document or a search result reads the same outside a result
            others.append(item)
    body = "\n".join(text for text in texts if text.strip()) or "(no text)"
    return [_text(f"[{heading} {name}]\n{body}"), *others]


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


# -- plumbing ------------------------------------------------------------------------------


def _renamed(message: Message, renamed: dict[str, str]) -> Message:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = [
        {**block, "name": renamed.get(str(block.get("name")), block.get("name"))}
        if isinstance(block, dict) and block.get("type") == "tool_use"
        else block
        for block in content
    ]
    return {**message, "content": blocks}


def _blocks(message: Message, kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == kind]


def _results(message: Message) -> list[dict[str, Any]]:
    return _blocks(message, "tool_result")
