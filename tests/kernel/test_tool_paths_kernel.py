"""A path with tool calls, sent from every request path on a real kernel (tools/wire.py).

The fake Messages API refuses what the real one refuses, so a request holding
``tool_use``/``tool_result`` blocks without ``tools`` fails here as it would there. Each
test drives a real kernel through the real SDK to the fake and checks two things: every
request was answered (none refused: ``usage`` is only recorded for an answered one), and
it carried the tool history the way tools/wire.py says: as blocks, with every used tool
defined (the not-offered ones marked not callable), when the request offers tools; as
text, with no ``tools``, when it offers none. The paths: a cell, ``--tools none``,
``%chat retry``, an edited cell, the panel's retry, a fan-out, ``%chat compact``, an
imported Claude Code session asked one more question, and a model calling a tool that
is not callable. A path cut to a token budget goes through the same ``build_kwargs``
(``test_toolwire.py`` sends a cut path).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic, RecordedRequest
from helpers.import_samples import claude_code_session, jsonl
from helpers.kernel_harness import Kernel

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.providers.tools.wire import NOT_CALLABLE

pytestmark = pytest.mark.kernel

TOOLS = '''
from jupyter_tree_chat import tool
calls = []

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    calls.append(("add", a, b))
    return a + b

@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    calls.append(("mul", a, b))
    return a * b
'''


@pytest.fixture
def tools_kernel(claude: Kernel) -> Iterator[Kernel]:
    claude.run(TOOLS).check()
    yield claude


def answered(fake: FakeAnthropic) -> list[RecordedRequest]:
    """The message requests, each checked to have been answered rather than refused."""
    sent = [r for r in fake.requests if r.path.startswith("/v1/messages") and "count" not in r.path]
    refused = [r for r in sent if r.usage is None]
    assert not refused, f"refused: {refused[0].body}"
    return sent


def answered_or_refused(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.path == "/v1/messages"]


def kinds(body: dict[str, Any]) -> list[list[str]]:
    return [
        [b["type"] for b in m["content"]] if isinstance(m["content"], list) else ["str"]
        for m in body["messages"]
    ]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body.get("tools", [])]


def not_callable(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", []) if t["description"].startswith(NOT_CALLABLE)]


def ask_with_a_tool_round(kernel: Kernel, fake: FakeAnthropic) -> None:
    fake.enqueue(text="I'll add them.", tool_use={"name": "add", "input": {"a": 2, "b": 3}})
    fake.enqueue(text="2 + 3 = 5.")
    kernel.chat("Add 2 and 3.", "c0000001").check()


def test_a_cell_with_tools_then_tools_none_then_retry_then_edit(tools_kernel, fake_anthropic):
    kernel, fake = tools_kernel, fake_anthropic
    ask_with_a_tool_round(kernel, fake)
    first, loop = answered(fake)
    assert tool_names(first.body) == tool_names(loop.body) == ["add", "mul"]
    assert kinds(loop.body)[-2:] == [["text", "tool_use"], ["tool_result"]]

    # --tools none: nothing may be offered, so the tool round goes as text
    fake.enqueue(text="Five.")
    kernel.chat("Say it in words.", "c0000002", "--tools none").check()
    plain = answered(fake)[-1].body
    assert "tools" not in plain
    assert kinds(plain) == [["str"], ["text", "text"], ["text"], ["text"], ["text"]]
    assert plain["messages"][1]["content"][1]["text"] == '[tool call: add {"a": 2, "b": 3}]'
    assert plain["messages"][2]["content"][0]["text"] == "[tool result from add]\n5"

    # %chat retry of that answer (default settings: every registered tool offered)
    fake.enqueue(text="Five, again.")
    kernel.run("%chat retry").check()
    again = answered(fake)[-1].body
    assert tool_names(again) == ["add", "mul"] and not not_callable(again)
    assert kinds(again)[1][1:] == ["tool_use"]

    # the edited cell: a new question below the same tool round
    fake.enqueue(text="Cinq.")
    kernel.chat("Say it in French.", "c0000002", "--tools mul").check()
    edited = answered(fake)[-1].body
    assert tool_names(edited) == ["mul", "add"]  # add was used, is not offered now
    assert not_callable(edited) == ["add"]
    assert edited["tools"][1]["input_schema"]["required"] == ["a", "b"]  # as it was offered
    tree = load_file(kernel.session_file()).tree
    assert tree.get(tree.leaf).text == "Cinq."
    assert len([n for n in tree if n.meta and n.meta.get("edited_from")]) == 1


def test_a_model_calling_a_tool_that_is_not_callable_gets_an_error_and_nothing_runs(
    tools_kernel, fake_anthropic
):
    kernel, fake = tools_kernel, fake_anthropic
    ask_with_a_tool_round(kernel, fake)
    fake.enqueue(text="Again.", tool_use={"name": "add", "input": {"a": 1, "b": 1}})
    fake.enqueue(text="I may not add now.")
    kernel.chat("Add 1 and 1.", "c0000002", "--tools mul").check()
    request = answered(fake)[-1].body
    result = request["messages"][-1]["content"][0]
    assert result["is_error"] is True
    assert "'add' is not callable in this request" in result["content"]
    assert "Tools you may call: mul" in result["content"]
    assert kernel.run("print(calls)").check().stdout.strip() == "[('add', 2, 3)]"


def test_a_definition_is_kept_from_when_the_call_was_made(tools_kernel, fake_anthropic):
    kernel, fake = tools_kernel, fake_anthropic
    ask_with_a_tool_round(kernel, fake)
    offered_then = answered(fake)[0].body["tools"][0]
    records = [json.loads(line) for line in kernel.session_file().read_text().splitlines()]
    kept = [
        r["meta"]["tool_definitions"] for r in records if "tool_definitions" in r.get("meta", {})
    ]
    assert kept == [[{k: offered_then[k] for k in ("name", "description", "input_schema")}]]

    # the kernel restarts: add is gone, only a new tool is registered
    kernel.restart()
    kernel.run("%load_ext jupyter_tree_chat").check()
    kernel.run(
        "from jupyter_tree_chat import tool\n"
        "@tool\ndef neg(a: int) -> int:\n    '''Negate.'''\n    return -a"
    ).check()
    fake.enqueue(text="Minus five.")
    kernel.chat("And negated?", "c0000002").check()
    body = answered(fake)[-1].body
    assert tool_names(body) == ["neg", "add"]
    assert body["tools"][1]["description"] == f"{NOT_CALLABLE} Add two integers."
    assert body["tools"][1]["input_schema"] == offered_then["input_schema"]


def test_the_panels_retry_sends_the_tool_round_with_its_tools(tools_kernel, fake_anthropic):
    kernel, fake = tools_kernel, fake_anthropic
    ask_with_a_tool_round(kernel, fake)
    fake.enqueue(text="Five, from the panel.")
    shown = kernel.run(
        "from jupyter_tree_chat.kernel.sessions import current_session\n"
        "from jupyter_tree_chat.widget.widgets import TreePanel\n"
        "session = current_session()\n"
        "panel = TreePanel(session)\n"
        "message = {'a': 'retry', 'id': session.leaf, 'req': 1}\n"
        "data = {'method': 'custom', 'content': message}\n"
        "panel.comm.handle_msg({'content': {'data': data}, 'buffers': []})\n"
        "print(repr(panel.error), session.path()[-1].text)"
    ).check()
    assert shown.stdout.strip() == "'' Five, from the panel."
    body = answered(fake)[-1].body
    assert tool_names(body) == ["add", "mul"]
    assert kinds(body)[-2:] == [["text", "tool_use"], ["tool_result"]]


def test_a_fan_out_sends_each_answer_the_tool_round(tools_kernel, fake_anthropic):
    kernel, fake = tools_kernel, fake_anthropic
    ask_with_a_tool_round(kernel, fake)
    kernel.chat("Two ways to say it?", "c0000002", "--n 2").check()
    with_tools = answered(fake)[-2:]
    assert all(tool_names(r.body) == ["add", "mul"] for r in with_tools)
    kernel.chat("Two more, no tools.", "c0000003", "--n 2 --tools none").check()
    without = answered(fake)[-2:]
    assert all("tools" not in r.body for r in without)
    assert all(kinds(r.body)[1] == ["text", "text"] for r in without)


def test_compacting_a_tool_history_sends_it_as_text(tools_kernel, fake_anthropic):
    kernel, fake = tools_kernel, fake_anthropic
    ask_with_a_tool_round(kernel, fake)
    fake.enqueue(text="We added 2 and 3 with the add tool and got 5.")
    kernel.run("%chat compact").check()
    summary_request = answered(fake)[-1].body
    assert "tools" not in summary_request
    assert all("tool_use" not in k and "tool_result" not in k for k in kinds(summary_request))
    fake.enqueue(text="Yes.")
    kernel.chat("Was it 5?", "c0000002").check()
    root = answered(fake)[-1].body["messages"][0]["content"]
    assert "We added 2 and 3" in (root if isinstance(root, str) else root[0]["text"])


def test_an_imported_claude_code_session_asked_one_more_question(
    claude, fake_anthropic, tmp_path: Path
):
    source = tmp_path / "5f0c1a2e.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    claude.run(f"%chat import {source}").check()

    # no tool registered: Claude Code's calls go as text, and nothing is offered
    fake_anthropic.enqueue(text="It divided by zero.")
    claude.chat("What was the bug?", "c0000009").check()
    plain = answered(fake_anthropic)[-1].body
    assert "tools" not in plain
    assert plain["messages"][1]["content"][1]["text"] == '[tool call: Read {"file_path": "x.py"}]'

    # with a tool registered: the calls stay blocks, Read and Grep defined, not callable
    claude.run(TOOLS).check()
    fake_anthropic.enqueue(text="Add a check.")
    claude.chat("And the fix?", "c0000010").check()
    body = answered(fake_anthropic)[-1].body
    assert [b["type"] for b in body["messages"][1]["content"]] == ["text", "tool_use", "tool_use"]
    assert not_callable(body) == ["Read", "Grep"]
    read = body["tools"][2]
    assert read["input_schema"] == {
        "type": "object",
        "properties": {"file_path": {"type": "string"}},
    }


def test_a_prompt_over_the_window_is_one_line_naming_the_paths_size(claude, fake_anthropic):
    # the meter is told of a larger window, so the request leaves and the server counts
    claude.run("%config TreeChat.context_windows = {'claude-haiku-4-5': 10_000_000}").check()
    run = claude.chat("x " * 420_000, "c0000001", "--model claude-haiku-4-5")
    lines = [line for line in run.visible_text.splitlines() if "too long" in line]
    assert lines == [
        "Model error: This path is too long for claude-haiku-4-5: 1 message(s), about "
        "210,000 tokens as estimated here (the API says: prompt is too long: 210000 tokens "
        "> 200000 maximum). Run `%chat compact`, or fork from an earlier message with "
        "`%%chat --from ID`."
    ]
    assert "Traceback" not in run.visible_text
    assert answered_or_refused(fake_anthropic)[-1].usage is None  # the server refused it
