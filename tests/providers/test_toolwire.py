"""tools.wire.request_tools: a path's tool history sent with its tools defined, or as text.

Each case is checked against the fake's rules (fake_rules.validate), which refuse what the
real Messages API refuses, so "accepted here" means "accepted there"."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from fakes.fake_rules import validate

from jupyter_tree_chat.providers.anthropic.provider import build_kwargs
from jupyter_tree_chat.providers.base import ReplyRequest, ToolSpec
from jupyter_tree_chat.providers.tools.functions import ToolRegistry
from jupyter_tree_chat.providers.tools.wire import (
    NOT_CALLABLE,
    api_tool_name,
    minimal_definition,
    request_tools,
)

ADD = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"a": {}, "b": {}}})
MUL = ToolSpec("mul", "Multiply.", {"type": "object", "properties": {}})


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def use(name: str, tool_id: str, **given: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": given}


def result(tool_id: str, content: Any = "5", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


PATH = [
    user("Add 2 and 3"),
    assistant([{"type": "text", "text": "Adding."}, use("add", "t1", a=2, b=3)]),
    user([result("t1")]),
    assistant("5."),
    user("And now?"),
]


def accepted(request: ReplyRequest) -> bool:
    kwargs = build_kwargs(request)
    return validate({**kwargs, "model": "m"}) is None


def test_without_tool_blocks_nothing_changes():
    messages = [user("hi"), assistant("hello"), user("bye")]
    assert request_tools(messages, []) == (messages, [])
    assert request_tools(messages, [MUL.to_api()]) == (messages, [MUL.to_api()])


def test_an_offered_tool_the_path_used_is_sent_once_and_callable():
    messages, tools = request_tools(PATH, [ADD.to_api()], [ADD.to_api()])
    assert messages == PATH
    assert tools == [ADD.to_api()]


def test_a_used_tool_not_offered_is_defined_beside_and_marked_not_callable():
    kept = ToolSpec("add", "Add (as offered then).", ADD.input_schema)
    messages, tools = request_tools(PATH, [MUL.to_api()], [kept.to_api(), ADD.to_api()])
    assert messages == PATH
    assert [t["name"] for t in tools] == ["mul", "add"]
    assert tools[1] == {
        "name": "add",
        "description": f"{NOT_CALLABLE} Add (as offered then).",  # the first known counts
        "input_schema": ADD.input_schema,
    }


def test_a_tool_nothing_defines_gets_a_minimal_definition_from_its_calls():
    path = [
        user("look"),
        assistant([use("Read", "t1", file_path="a.py"), use("Read", "t2", limit=5)]),
        user([result("t1", "x"), result("t2", "y")]),
    ]
    _, tools = request_tools(path, [MUL.to_api()])
    assert tools[1]["name"] == "Read"
    assert tools[1]["input_schema"] == {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
    }
    assert minimal_definition("x", [{"flag": True, "n": 1.5, "v": None}])["input_schema"] == {
        "type": "object",
        "properties": {"flag": {"type": "boolean"}, "n": {"type": "number"}, "v": {}},
    }


def test_with_no_tool_offered_the_blocks_become_text_and_images_stay():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    path = [
        user("plot"),
        assistant([use("plot", "t1", kind="bar")]),
        user([result("t1", [{"type": "text", "text": "drawn"}, image], is_error=False)]),
        assistant([use("plot", "t2")]),
        user([result("t2", "no data", is_error=True), {"type": "text", "text": "why?"}]),
    ]
    before = copy.deepcopy(path)
    messages, tools = request_tools(path, [], [ADD.to_api()])
    assert tools == []
    assert path == before  # the inputs are never changed
    assert messages[1]["content"] == [{"type": "text", "text": '[tool call: plot {"kind": "bar"}]'}]
    assert messages[2]["content"] == [
        {"type": "text", "text": "[tool result from plot]\ndrawn"},
        image,
    ]
    assert messages[4]["content"] == [
        {"type": "text", "text": "[tool error from plot]\nno data"},
        {"type": "text", "text": "why?"},
    ]


def test_a_name_the_api_refuses_is_sent_as_a_stable_one_in_blocks_and_definition():
    path = [user("q"), assistant([use("caldav.create", "t1")]), user([result("t1")])]
    messages, tools = request_tools(path, [MUL.to_api()])
    sent = api_tool_name("caldav.create")
    assert sent == api_tool_name("caldav.create") and sent.startswith("caldav_create_")
    assert messages[1]["content"][0]["name"] == sent
    assert tools[1]["name"] == sent
    assert path[1]["content"][0]["name"] == "caldav.create"
    request = ReplyRequest(messages=path, model="m", tools=(MUL,))
    assert accepted(request)


def test_every_shape_is_accepted_by_the_rules_of_the_real_api():
    for offered in [(), (ADD,), (MUL,), (ADD, MUL)]:
        request = ReplyRequest(messages=PATH, model="m", tools=offered, known_tools=(ADD,))
        assert accepted(request), offered
    assert accepted(ReplyRequest(messages=PATH, model="m", tools=(MUL,)))  # minimal add


def test_a_path_cut_below_a_tool_round_goes_out_whole_and_accepted():
    """A token budget cuts the path before the request is built; the rule runs after."""
    cut = PATH[1:]  # as if the first question were cut away (the wire adds what it needs)
    for offered in [(), (MUL,)]:
        request = ReplyRequest(messages=[user("(earlier messages left out)"), *cut], model="m")
        assert accepted(replace(request, tools=offered))


def test_the_registry_runs_only_what_was_offered():
    registry = ToolRegistry()
    ran: list[int] = []

    @registry.register
    def add(a: int, b: int) -> int:
        """Add."""
        ran.append(a + b)
        return a + b

    refused = registry.run(use("add", "t9", a=1, b=1), offered={"mul"})
    assert refused["is_error"] is True and "not callable" in refused["content"]
    assert ran == []
    assert registry.run(use("add", "t9", a=1, b=1), offered={"add"})["content"] == "2"
    assert ran == [2]
