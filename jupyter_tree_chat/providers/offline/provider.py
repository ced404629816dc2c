"""The offline teaching model: a deterministic provider that says what it was sent.

It exists so the chapter's lesson can be run with no API key and no network: every
reply states how many messages were on the active path, their roles in order, how many
exchanges they make (fewer than the path's when a context budget left some out) and the
last user message, so switching branches visibly changes what "the model" knows. The
same request always gives the same reply in the same chunks, which also makes it the
provider for tests and demos. It answers in the language of the last real user message
(English or Chinese, by the rule in ``language.py``; every sentence is in
``offline/phrases.py``).

Its reply also states the settings it was given (model, temperature, max_tokens, system
prompt, tools), so answers asked with different settings (a fan-out over models or
temperatures) differ exactly there.

It behaves like the real provider where a session can tell: it streams ``TextDelta``
chunks (a few words each, a Han character counting as a word, optionally ``delay``
seconds apart), asks for a tool when the last user message names one (``call add(2, 3)``,
``use get_weather for Paris``), reports a tool's result after a tool_result, stops at
``max_tokens`` (one such word ≈ one token), and ends with a ``Finished`` carrying usage
and a stop_reason. It never runs tools itself. Asked to think, it streams a short
thinking block first; it cannot sign one, so the block's signature is empty and it is
never sent to a real model (``wire.sends_thinking``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import operator
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import BadRequest
from ...history.tree import is_real_user_message, is_tool_result, message_text, tool_uses
from ...i18n import _
from ...language import HAN, count_words, is_left_out_note, path_language
from ..base import (
    Began,
    Finished,
    Message,
    ReplyEvent,
    ReplyRequest,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolSpec,
    ToolUseReady,
)
from .phrases import PHRASES, Phrases

#: paths longer than this show their first and last roles around an ellipsis
_MAX_ROLES_SHOWN = 12
#: the quoted last user message is cut after this many characters
_MAX_QUOTE = 600


def offline_notice() -> str:
    """The one line a session prints once when it falls back to this provider."""
    return _(
        "No ANTHROPIC_API_KEY set: using the offline teaching model "
        "(deterministic, no network). Set the key to use Claude."
    )


class OfflineProvider:
    """A ``Provider`` that needs no key: deterministic replies describing the path.

    ``words_per_chunk`` sets the size of each ``TextDelta``; ``delay`` (seconds) is
    slept between chunks so a demo looks like streaming. ``sleep`` is injectable.
    """

    name = "offline"
    default_model = "offline-teacher"

    def __init__(
        self,
        *,
        delay: float = 0.0,
        words_per_chunk: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if words_per_chunk < 1:
            raise ValueError("words_per_chunk must be at least 1")
        self.delay = delay
        self.words_per_chunk = words_per_chunk
        self._sleep = sleep

    def stream(self, request: ReplyRequest) -> Iterator[ReplyEvent]:
        reply = compose_reply(request)
        model = request.model or self.default_model
        yield Began(model)
        content: list[dict[str, Any]] = []
        if request.thinking is not None:
            thought = thinking_text(request)
            for chunk in split_into_chunks(thought, self.words_per_chunk):
                yield ThinkingDelta(chunk, index=0)
                self._pause()
            block = {"type": "thinking", "thinking": thought, "signature": ""}
            yield ThinkingReady(block, index=0)
            content.append(block)
        index = len(content)
        for number, chunk in enumerate(split_into_chunks(reply.text, self.words_per_chunk)):
            if number:
                self._pause()
            yield TextDelta(chunk, index=index)
        content.append({"type": "text", "text": reply.text})
        if reply.tool_use is not None:
            yield ToolUseReady(reply.tool_use)
            content.append(reply.tool_use)
        yield Finished(
            message={"role": "assistant", "content": content},
            model=model,
            stop_reason=reply.stop_reason,
            usage=estimate_usage(request, content),
        )

    def _pause(self) -> None:
        if self.delay > 0:
            self._sleep(self.delay)

    def __repr__(self) -> str:
        return f"OfflineProvider(delay={self.delay!r}, words_per_chunk={self.words_per_chunk!r})"


@dataclass(frozen=True)
class OfflineReply:
    """What the offline model answers, before it is streamed."""

    text: str
    stop_reason: str
    tool_use: dict[str, Any] | None = None


def compose_reply(request: ReplyRequest) -> OfflineReply:
    """The whole reply to a request: a pure function of the request."""
    messages = request.messages
    if not messages:
        raise BadRequest(_("The request has no messages: ask something first."))

    phrases = PHRASES[path_language(messages)]
    last = messages[-1]
    tool_use: dict[str, Any] | None = None
    if is_tool_result(last):
        text = _after_tool_result(messages, phrases)
    else:
        call = _requested_tool(last, request.tools)
        if call is not None:
            spec, tool_input = call
            tool_use = {
                "type": "tool_use",
                "id": "toolu_offline_" + _digest([messages, spec.name, tool_input])[:20],
                "name": spec.name,
                "input": tool_input,
            }
            calling = phrases.calling_tool.format(
                name=spec.name, input=json.dumps(tool_input, ensure_ascii=False)
            )
            text = f"{_seen(messages, phrases)}\n\n{calling}"
        else:
            text = _teaching_reply(request, phrases)
    words = split_into_chunks(text, 1)
    if len(words) > request.max_tokens:
        truncated = "".join(words[: max(request.max_tokens, 0)]).rstrip()
        return OfflineReply(text=truncated, stop_reason="max_tokens")
    if tool_use is not None:
        return OfflineReply(text=text, stop_reason="tool_use", tool_use=tool_use)
    return OfflineReply(text=text, stop_reason="end_turn")


def thinking_text(request: ReplyRequest) -> str:
    """What the offline model "thinks" before it answers: what it was given, again."""
    phrases = PHRASES[path_language(request.messages)]
    if isinstance(request.thinking, str):
        budget = phrases.thinking_adaptive
    else:
        budget = phrases.thinking_budget.format(tokens=request.thinking)
    return phrases.thinking.format(budget=budget, count=len(request.messages))


#: a word: a Han character, or a run of other non-space characters; with its spaces
_WORD = re.compile(rf"\s*(?:[{HAN}]|[^\s{HAN}]+)\s*")


def split_into_chunks(text: str, words_per_chunk: int) -> list[str]:
    """Pieces of ``text`` holding ``words_per_chunk`` words each; joined, they are ``text``."""
    words = _WORD.findall(text)
    if not words:
        return [text] if text else []
    return ["".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]


#: what an image or a document is counted as: about what a 1568 px image costs; base64
#: characters / 4 would count a small figure as a long book
MEDIA_TOKENS = 1_600


def estimate_usage(request: ReplyRequest, content: list[dict[str, Any]]) -> dict[str, Any]:
    """Token counts estimated as characters / 4: deterministic, and about right."""
    messages, media = _without_media(request.messages)
    sent = _canonical([request.system, messages, [t.to_api() for t in request.tools]])
    return {
        "input_tokens": math.ceil(len(sent) / 4) + media * MEDIA_TOKENS,
        "output_tokens": math.ceil(len(_canonical(content)) / 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _without_media(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """The messages with image and document blocks left out, and how many there were."""
    kept: list[Message] = []
    media = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            blocks = [b for b in content if not _is_media(b)]
            media += len(content) - len(blocks)
            message = {**message, "content": blocks}
        kept.append(message)
    return kept, media


def _is_media(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in ("image", "document")


# --- the teaching reply ----------------------------------------------------------------


def _teaching_reply(request: ReplyRequest, phrases: Phrases) -> str:
    messages = request.messages
    last_user = next((m for m in reversed(messages) if is_real_user_message(m)), None)
    # The first line is what trees and summaries show: make it the lesson itself.
    parts = [_seen(messages, phrases), _exchanges(messages, phrases), phrases.header]
    if last_user is not None:
        texts = _text_blocks(last_user)
        quoted = "\n>\n".join(_quote(text, phrases) for text in texts) if texts else None
        parts.append(phrases.last_user + "\n\n" + (quoted or _quote("", phrases)))
        question = "\n\n".join(text for text in texts if not is_left_out_note(text))
        carried = _attached(last_user, phrases)
        if carried:
            parts.append(phrases.carried.format(items=carried))
        parts.append(phrases.answer.format(answer=_answer(question, phrases)))
    if request.attempt > 1:
        parts.append(phrases.another_try.format(attempt=request.attempt))
    parts.append(phrases.only_this_path)
    parts.append(_settings(request, phrases))
    return "\n\n".join(parts)


def _text_blocks(message: Message) -> list[str]:
    """Each text of ``message`` apart (a budget's note is a block of its own, never glued
    to the question it stands before)."""
    content = message.get("content")
    if not isinstance(content, list):
        return [message_text(message)]
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def _attached(message: Message, phrases: Phrases) -> str:
    """``1 image (image/png), 1 document (report.pdf)``: the blocks that are not text."""
    content = message.get("content")
    found: dict[str, list[str]] = {}
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") in ("image", "document"):
            source = block.get("source")
            media_type = source.get("media_type") if isinstance(source, dict) else None
            label = block.get("title") or media_type or "?"
            found.setdefault(str(block["type"]), []).append(str(label))
    nouns = {
        "image": (phrases.image, phrases.images),
        "document": (phrases.document, phrases.documents),
    }
    return phrases.list_separator.join(
        f"{len(labels)} {nouns[kind][len(labels) > 1]} ({', '.join(labels)})"
        for kind, labels in found.items()
    )


def _seen(messages: Sequence[Message], phrases: Phrases) -> str:
    count = len(messages)
    noun = phrases.message if count == 1 else phrases.messages
    return phrases.seen.format(count=count, noun=noun, roles=_roles(messages, phrases))


def _exchanges(messages: Sequence[Message], phrases: Phrases) -> str:
    """How many exchanges the request holds: a context budget may have left some out."""
    count = sum(1 for message in messages if is_real_user_message(message))
    if messages and not is_real_user_message(messages[0]):
        count += 1
    noun = phrases.exchange_noun if count == 1 else phrases.exchanges_noun
    return phrases.exchanges.format(count=count, noun=noun)


def _roles(messages: Sequence[Message], phrases: Phrases) -> str:
    labels = [_role_label(m) for m in messages]
    if len(labels) > _MAX_ROLES_SHOWN:
        head, tail = labels[:4], labels[-6:]
        labels = [*head, phrases.more_roles.format(count=len(messages) - 10), *tail]
    return " → ".join(labels)


def _role_label(message: Message) -> str:
    role = str(message.get("role", "?"))
    if is_tool_result(message):
        return f"{role}(tool_result)"
    if tool_uses(message):
        return f"{role}(tool_use)"
    return role


def _quote(text: str, phrases: Phrases) -> str:
    if not text.strip():
        return "> " + phrases.no_text
    if len(text) > _MAX_QUOTE:
        text = text[:_MAX_QUOTE].rstrip() + " …"
    return "\n".join(f"> {line}".rstrip() for line in text.splitlines())


def _settings(request: ReplyRequest, phrases: Phrases) -> str:
    temperature = (
        phrases.default_temperature if request.temperature is None else f"{request.temperature:g}"
    )
    system = (
        phrases.system_prompt.format(system=_shorten(request.system, 120))
        if request.system
        else phrases.no_system_prompt
    )
    tools = phrases.list_separator.join(f"`{t.name}`" for t in request.tools) or phrases.no_tools
    return phrases.settings.format(
        model=request.model or OfflineProvider.default_model,
        temperature=temperature,
        max_tokens=request.max_tokens,
        system=system,
        tools=tools,
    )


def _answer(question: str, phrases: Phrases) -> str:
    """A small deterministic answer: arithmetic if the message holds some, else a count."""
    result = _arithmetic(question)
    if result is not None:
        return result
    words = count_words(question, phrases.language)
    if not words:
        return phrases.nothing_to_answer
    longest = max(words, key=len)
    noun = phrases.word if len(words) == 1 else phrases.words
    return phrases.word_count.format(count=len(words), noun=noun, longest=_shorten(longest, 40))


_EXPRESSION = re.compile(r"[-+*/%().\d\s]*\d[-+*/%().\d\s]*")
_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _arithmetic(text: str) -> str | None:
    """``"2 + 3 = 5"`` for the longest arithmetic expression in ``text``, if any."""
    candidates = [m.group().strip() for m in _EXPRESSION.finditer(text)]
    candidates = [c for c in candidates if re.search(r"\d\s*[-+*/%]+\s*[\d(-]", c)]
    for expression in sorted(candidates, key=len, reverse=True):
        try:
            value = _evaluate(ast.parse(expression, mode="eval").body)
        except (SyntaxError, ValueError, ArithmeticError, TypeError, RecursionError):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return f"`{expression} = {value}`"
    return None


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large for an offline answer")
        return _OPERATORS[type(node.op)](left, right)
    raise ValueError("not arithmetic")


# --- tools -----------------------------------------------------------------------------


def _after_tool_result(messages: Sequence[Message], phrases: Phrases) -> str:
    names = {
        block.get("id"): block.get("name")
        for message in messages[-2:-1]
        for block in tool_uses(message)
    }
    blocks = [
        b for b in messages[-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    lines = []
    for block in blocks:
        result = _result_text(block.get("content"))
        shown = f"\n\n```\n{result}\n```" if "\n" in result else f" {result}"
        verb = phrases.tool_failed if block.get("is_error") else phrases.tool_returned
        name = names.get(block.get("tool_use_id"))
        named = len(blocks) > 1 and name
        subject = phrases.the_named_tool.format(name=name) if named else phrases.the_tool
        lines.append(verb.format(tool=subject) + shown)
    lines.append(_seen(messages, phrases))
    return "\n\n".join(lines)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return message_text({"content": content})
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _requested_tool(
    message: Message, tools: Sequence[ToolSpec]
) -> tuple[ToolSpec, dict[str, Any]] | None:
    """The first offered tool the user message names, and the input built from it."""
    if not tools or not is_real_user_message(message):
        return None
    text = message_text(message)
    found: list[tuple[int, ToolSpec, re.Match[str]]] = []
    for spec in tools:
        for name in (spec.name, spec.title):  # an MCP tool also by server:tool
            match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) if name else None
            if match:
                found.append((match.start(), spec, match))
                break
    if not found:
        return None
    _, spec, match = min(found, key=lambda item: item[0])
    return spec, tool_input(spec, text[match.end() :])


def tool_input(spec: ToolSpec, rest: str) -> dict[str, Any]:
    """Input for ``spec`` from the words after its name: ``(2, 3)``, ``a=2 b=3``, or text."""
    properties = list(spec.input_schema.get("properties", {}))
    call = _call_arguments(rest)
    if call is not None:
        positional, keywords = call
        # positional values beyond the schema's properties are dropped
        return {**dict(zip(properties, positional, strict=False)), **keywords}
    pairs = re.findall(r"(\w+)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s,;]+)", rest)
    if pairs:
        return {key: _literal(value) for key, value in pairs}
    words = re.sub(r"^\W*(?:(?:for|with|on|about|in|to|of)\b\W*)?", "", rest).strip()
    words = words.rstrip(".?!").strip()
    first_string = next(
        (
            name
            for name, schema in spec.input_schema.get("properties", {}).items()
            if isinstance(schema, Mapping) and _accepts_string(schema)
        ),
        None,
    )
    return {first_string: words} if words and first_string else {}


def _call_arguments(rest: str) -> tuple[list[Any], dict[str, Any]] | None:
    """``(2, "x", k=1)`` right after the tool name → positional and keyword values."""
    rest = rest.lstrip()
    if not rest.startswith("("):
        return None
    end = _closing_parenthesis(rest)
    if end < 0:
        return None
    source = "f" + rest[: end + 1]
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    positional = [_node_value(arg, source) for arg in call.args]
    keywords = {k.arg: _node_value(k.value, source) for k in call.keywords if k.arg}
    return positional, keywords


def _closing_parenthesis(text: str) -> int:
    """The index of the ``)`` closing the ``(`` at ``text[0]``, or -1."""
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return index
    return -1


def _node_value(node: ast.AST, source: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):  # a bare word like Paris: its text
        return ast.get_source_segment(source, node)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _accepts_string(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


# --- helpers ---------------------------------------------------------------------------


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def _digest(value: Any) -> str:
    return hashlib.sha256(_canonical(value).encode("utf-8")).hexdigest()
