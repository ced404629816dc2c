"""The second wire's translation (providers/openai/wire.py), both ways, on constructed paths.

Tree → wire is checked against the fake server's rules (``fake_openai_rules``: what
OpenAI refuses), wire → tree by reading it back with the one reader production uses
(``stream.ChoiceReader``, the message replayed as a stream): an answer sent and read
again is the answer as stored, less what this wire cannot carry (thinking, the order of
text around a tool call). The rest of the stream's side is in test_openai_stream.py.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from fakes.fake_openai_rules import validate
from fakes.fake_rules import validate as validate_messages_api
from helpers.content_blocks import image_block, pdf_block, url_image
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_tree_chat.providers.anthropic.provider import build_kwargs
from jupyter_tree_chat.providers.anthropic.wire import NO_RESULT
from jupyter_tree_chat.providers.base import ReplyRequest, ToolSpec
from jupyter_tree_chat.providers.endpoints.capabilities import Supports
from jupyter_tree_chat.providers.openai.stream import ChoiceReader
from jupyter_tree_chat.providers.openai.wire import (
    REASONING_FIELDS,
    WIRE,
    build_params,
    chat_messages,
    chat_tools,
    reasoning_effort,
    tree_usage,
)
from jupyter_tree_chat.providers.tools.wire import NOT_CALLABLE

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ADD = ToolSpec(
    "add",
    "Add two numbers.",
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)
VENDOR_THINKING = {
    "type": "thinking",
    "thinking": "The user wants a sum.",
    "signature": "",
    "wire": WIRE,
    "field": "reasoning_content",
}
SIGNED = {"type": "thinking", "thinking": "Claude thought.", "signature": "EqQBCgIYAhIM"}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_id: str, a: int = 2, b: int = 3) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "add", "input": {"a": a, "b": b}}


def result(tool_id: str, content: Any = "5", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


def read_back(sent: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """A Chat Completions assistant message as the stream reader stores it: replayed as the
    chunks a server streams (its reasoning, its text, each tool call by index, then the
    finish reason) through ``ChoiceReader``, the reader production uses."""
    deltas: list[dict[str, Any]] = [
        {field: sent[field]} for field in REASONING_FIELDS if sent.get(field)
    ]
    content = sent.get("content")
    if isinstance(content, str) and content:
        deltas.append({"content": content})
    elif isinstance(content, list):
        deltas += [{"content": part["text"]} for part in content]
    if sent.get("refusal"):
        deltas.append({"refusal": sent["refusal"]})
    calls = sent.get("tool_calls") or []
    deltas += [{"tool_calls": [{"index": i, **call}]} for i, call in enumerate(calls)]
    reader = ChoiceReader()
    for delta in deltas:
        reader.add({"index": 0, "delta": delta})
    reader.add({"index": 0, "delta": {}, "finish_reason": finish_reason or "stop"})
    finished = reader.finish("m", {})[-1]
    return {"role": "assistant", "content": finished.message["content"]}


def texts_joined(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as a stream carries it: a run of text blocks is one text block."""
    blocks: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "text" and blocks and blocks[-1]["type"] == "text":
            blocks[-1] = text(blocks[-1]["text"] + block["text"])
        else:
            blocks.append(dict(block))
    return {"role": "assistant", "content": blocks}


def accepted(messages: list[dict[str, Any]], **body: Any) -> bool:
    problem = validate({"model": "gpt-5-mini", "messages": messages, **body})
    assert problem is None, problem
    return True


TOOL_PATH = [
    user("What is 2 + 3 and 4 + 5?"),
    assistant(text("Let me add."), use("call_A1"), use("toolu_01XyZ", 4, 5)),
    user([result("call_A1"), result("toolu_01XyZ", "9")]),
    assistant(text("5 and 9.")),
    user("Thanks"),
]


# -- tree → wire --------------------------------------------------------------------------


def test_the_system_prompt_goes_first_and_text_stays_text():
    chat = chat_messages([user("Hi"), assistant(text("Hello")), user("Bye")], "Be brief.")
    assert chat == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    assert accepted(chat)


def test_tool_use_becomes_tool_calls_and_results_tool_messages_with_ids_kept():
    chat = chat_messages(TOOL_PATH)
    assert chat[1] == {
        "role": "assistant",
        "content": "Let me add.",
        "tool_calls": [
            {
                "id": "call_A1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
            },
            {
                "id": "toolu_01XyZ",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 4, "b": 5}'},
            },
        ],
    }
    assert chat[2:4] == [
        {"role": "tool", "tool_call_id": "call_A1", "content": "5"},
        {"role": "tool", "tool_call_id": "toolu_01XyZ", "content": "9"},
    ]
    assert accepted(chat)


def test_a_tool_call_alone_has_null_content_and_an_error_result_says_so():
    path = [
        user("add"),
        assistant(use("call_1")),
        user([result("call_1", "ValueError: no", is_error=True)]),
    ]
    chat = chat_messages(path)
    assert chat[1]["content"] is None
    assert chat[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Error: ValueError: no"}
    assert accepted(chat)


def test_an_unanswered_tool_call_is_answered_as_the_messages_api_wire_does():
    path = [user("add"), assistant(use("call_1")), user("never mind")]
    chat = chat_messages(path)
    assert chat[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Error: " + NO_RESULT}
    assert chat[3] == {"role": "user", "content": [{"type": "text", "text": "never mind"}]}
    assert accepted(chat)


def test_a_tool_id_the_api_refuses_is_sent_the_same_in_the_call_and_its_result():
    path = [user("add"), assistant(use("call_abc|fc_123")), user([result("call_abc|fc_123")])]
    chat = chat_messages(path)
    sent_id = chat[1]["tool_calls"][0]["id"]
    assert "|" not in sent_id and chat[2]["tool_call_id"] == sent_id
    assert accepted(chat)


def test_images_go_as_data_urls_and_pdfs_as_file_parts():
    png = image_block(PNG)
    chat = chat_messages([user([text("Look:"), png, pdf_block(b"%PDF-1.4 x", "a.pdf")])])
    parts = chat[0]["content"]
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + png["source"]["data"]},
    }
    assert parts[2]["type"] == "file"
    assert parts[2]["file"]["filename"] == "a.pdf"
    assert parts[2]["file"]["file_data"].startswith("data:application/pdf;base64,")
    assert accepted(chat)


def test_an_image_by_url_keeps_its_url():
    chat = chat_messages([user([url_image("https://example.org/a.png"), text("what?")])])
    assert chat[0]["content"][0]["image_url"]["url"] == "https://example.org/a.png"


def test_an_image_a_tool_returned_follows_the_tool_messages_in_a_user_message():
    path = [
        user("draw"),
        assistant(use("call_1")),
        user([result("call_1", [text("a dot"), image_block(PNG)])]),
    ]
    chat = chat_messages(path)
    assert chat[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [{"type": "text", "text": "a dot"}],
    }
    note, image = chat[3]["content"]
    assert "call_1" in note["text"] and image["type"] == "image_url"
    assert accepted(chat)


def test_thinking_is_not_sent_on_this_wire_whoever_wrote_it():
    path = [user("q"), assistant(SIGNED, VENDOR_THINKING, text("a")), user("more")]
    assert chat_messages(path)[1] == {"role": "assistant", "content": "a"}


def test_this_wires_reasoning_goes_back_in_its_field_inside_a_tool_loop_only_when_asked():
    path = [
        user("old question"),
        assistant({**VENDOR_THINKING, "thinking": "old"}, text("old answer")),
        user("add"),
        assistant(VENDOR_THINKING, use("call_1")),
        user([result("call_1")]),
    ]
    plain = chat_messages(path)
    assert all("reasoning_content" not in message for message in plain)
    chat = chat_messages(path, send_reasoning=True)
    assert "reasoning_content" not in chat[1]  # before the question: not in the loop
    assert chat[3]["reasoning_content"] == "The user wants a sum."
    assert validate({"model": "smollm2", "messages": chat}, "llama.cpp") is None
    assert "reasoning_content" in (validate({"model": "gpt-5-mini", "messages": chat}) or "")


def test_this_wires_reasoning_is_never_sent_to_the_messages_api():
    path = [
        user("add"),
        assistant(VENDOR_THINKING, use("call_1")),
        user([result("call_1")]),
    ]
    kwargs = build_kwargs(ReplyRequest(messages=path, model="claude-sonnet-4-6", tools=(ADD,)))
    sent = kwargs["messages"][1]["content"]
    assert [block["type"] for block in sent] == ["tool_use"]
    body = {k: kwargs[k] for k in ("model", "max_tokens", "messages", "tools")}
    assert validate_messages_api(json.loads(json.dumps(body))) is None


def test_build_params_names_the_tools_the_limit_and_the_settings():
    request = ReplyRequest(
        messages=[user("hi")], model="gpt-5-mini", max_tokens=300, temperature=0.4, tools=(ADD,)
    )
    params = build_params(request)
    assert params["max_completion_tokens"] == 300 and "max_tokens" not in params
    assert params["temperature"] == 0.4
    assert params["tools"] == chat_tools([ADD])
    assert params["tools"][0]["function"]["parameters"] == ADD.input_schema
    assert "reasoning_effort" not in params
    assert build_params(request, max_tokens_field="max_tokens")["max_tokens"] == 300


def test_a_thinking_budget_becomes_a_reasoning_effort():
    assert [reasoning_effort(t) for t in (None, "adaptive", 1024, 4096, 16384, 32000)] == [
        None,
        None,
        "low",
        "medium",
        "high",
        "high",
    ]
    request = ReplyRequest(messages=[user("hi")], model="o4-mini", thinking=2048)
    assert build_params(request)["reasoning_effort"] == "low"


def test_stored_messages_are_not_changed():
    path = json.loads(json.dumps(TOOL_PATH))
    chat_messages(path, "s", send_reasoning=True)
    assert path == TOOL_PATH


# -- wire → tree --------------------------------------------------------------------------


def test_a_response_message_becomes_blocks_with_its_reasoning_marked_as_this_wires():
    message = {
        "role": "assistant",
        "content": "It is 5.",
        "reasoning": "2 + 3 = 5",
        "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "add", "arguments": "{}"}}
        ],
    }
    assert read_back(message, "tool_calls")["content"] == [
        {"type": "thinking", "thinking": "2 + 3 = 5", "signature": "", "wire": WIRE,
         "field": "reasoning"},
        {"type": "text", "text": "It is 5."},
        {"type": "tool_use", "id": "call_9", "name": "add", "input": {}},
    ]  # fmt: skip


def test_reasoning_details_keep_their_structure():
    details = [{"type": "reasoning.text", "text": "Step one.", "index": 0}]
    block = read_back({"role": "assistant", "content": "x", "reasoning_details": details})
    thinking = block["content"][0]
    assert thinking["thinking"] == "Step one." and thinking["field"] == "reasoning_details"
    assert thinking["details"] == details


def test_usage_counts_cached_prompt_tokens_as_cache_reads():
    usage = {
        "prompt_tokens": 2000,
        "completion_tokens": 50,
        "total_tokens": 2050,
        "prompt_tokens_details": {"cached_tokens": 1536},
    }
    assert tree_usage(usage) == {
        "input_tokens": 464,
        "output_tokens": 50,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1536,
    }
    assert tree_usage(None) == {}


def test_the_tool_path_goes_there_and_back():
    chat = chat_messages(TOOL_PATH, "Be exact.")
    assert chat[0] == {"role": "system", "content": "Be exact."}
    assert_read_back_as_stored(TOOL_PATH, chat)


def assert_read_back_as_stored(path: list[dict[str, Any]], chat: list[dict[str, Any]]) -> None:
    """Each answer of ``path`` sent in ``chat`` and read back by the stream reader is the
    answer as stored; each tool result went as a tool message for its call, in order."""
    sent = [m for m in chat if m["role"] == "assistant"]
    stored = [m for m in path if m["role"] == "assistant"]
    assert [read_back(m) for m in sent] == [texts_joined(m) for m in stored]
    results = [
        block["tool_use_id"]
        for message in path
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert [m["tool_call_id"] for m in chat if m["role"] == "tool"] == results


# -- both ways, on many paths ----------------------------------------------------------------

words = st.text(alphabet="abc xyz,.é中", min_size=1, max_size=12).filter(str.strip)


@st.composite
def paths(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A stored path this wire carries whole: questions (text, images, PDFs), answers
    (text, then tool calls), and tool results answering them (text, or an error)."""
    path: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            question: Any = draw(words)
        else:
            question = [text(draw(words))]
            if draw(st.booleans()):
                question.append(image_block(PNG))
            if draw(st.booleans()):
                question.append(pdf_block(b"%PDF-1.4 " + draw(words).encode(), "p.pdf"))
        path.append(user(question))
        texts = [text(draw(words)) for _ in range(draw(st.integers(0, 2)))]
        calls = [use(f"call_{turn}_{k}", k, turn) for k in range(draw(st.integers(0, 2)))]
        if not texts and not calls:
            texts = [text(draw(words))]
        path.append(assistant(*texts, *calls))
        if calls:
            results = [
                result(call["id"], draw(words), is_error=True)
                if draw(st.booleans())
                else result(call["id"], draw(st.one_of(words, st.just([text("r1"), text("r2")]))))
                for call in calls
            ]
            path.append(user(results))
            path.append(assistant(text(draw(words))))
    return path


@settings(max_examples=150, deadline=None)
@given(paths(), st.one_of(st.none(), words))
def test_a_path_sent_and_read_back_is_the_path_as_stored(path, system):
    chat = chat_messages(path, system)
    assert validate({"model": "gpt-5-mini", "messages": chat}) is None
    assert (chat[0] == {"role": "system", "content": system}) == (system is not None)
    assert_read_back_as_stored(path, chat)


def test_what_the_endpoint_supports_decides_reasoning_and_tools():
    path = [user("add"), assistant(VENDOR_THINKING, use("call_1")), user([result("call_1")])]
    request = ReplyRequest(messages=path, model="smollm2", tools=(ADD,))
    llama = Supports(count_tokens=False, send_reasoning=True)
    assert build_params(request, llama)["messages"][1]["reasoning_content"]
    assert "reasoning_content" not in build_params(request)["messages"][1]  # OpenAI's: none
    without_tools = build_params(request, Supports(tools=False))
    assert "tools" not in without_tools  # none offered: the calls and results go as text
    assert [m["role"] for m in without_tools["messages"]] == ["user", "assistant", "user"]
    assert "[tool call: add" in json.dumps(without_tools["messages"][1])
    assert validate({"model": "gpt-5-mini", "messages": without_tools["messages"]}) is None


def test_a_tool_the_path_used_but_the_request_does_not_offer_is_defined_not_callable():
    path = [user("add"), assistant(use("call_1")), user([result("call_1")]), user("next")]
    other = ToolSpec("mul", "Multiply.", {"type": "object", "properties": {}})
    request = ReplyRequest(messages=path, model="gpt-5-mini", tools=(other,), known_tools=(ADD,))
    params = build_params(request)
    names = [t["function"]["name"] for t in params["tools"]]
    assert names == ["mul", "add"]
    assert params["tools"][1]["function"]["description"].startswith(NOT_CALLABLE)
    assert params["tools"][1]["function"]["parameters"] == ADD.input_schema
    assert validate({"model": "gpt-5-mini", **params}) is None
