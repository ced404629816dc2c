"""One tree, two wires, on a real kernel: Claude on the fake Messages API and GPT on the fake
Chat Completions server at once, each through its real SDK and each refusing what its
real API refuses.

What a user does: a branch begun on Claude continues on GPT (``%%chat --model
openai:gpt-5-mini``) and back, through a tool loop and reasoning; fork-before-tool,
compaction, the context meter and a budgeted request on both; a fan-out over both wires
in one cell with its columns, ``%chat compare`` and ``compare_frame()``; ``--n`` as one
request where the endpoint takes ``n`` and as separate requests where it turns out not
to; and no ``openai`` package at all. What is checked is what each server received and
what the session file holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import ONE_CHOICE, FakeOpenAI
from helpers.kernel_harness import Kernel

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.providers.endpoints.config import PRESETS

pytestmark = pytest.mark.kernel

OPENAI_KEY = "sk-proj-two-wires-0123456789"
GPT = "--model openai:gpt-5-mini"
NO_KEYS = {variable: "" for endpoint in PRESETS.values() for variable in endpoint.key_env}
ADD_TOOL = (
    "from jupyter_tree_chat import tool\n"
    "@tool\n"
    "def add(a: int, b: int) -> int:\n"
    '    """Add two integers."""\n'
    "    return a + b\n"
)


class Servers:
    def __init__(self) -> None:
        self.claude = FakeAnthropic()
        self.gpt = FakeOpenAI(api_key=OPENAI_KEY)
        self.gemini = FakeOpenAI()  # Gemini's OpenAI-compatible path, no price known
        self.llama = FakeOpenAI(dialect="llama.cpp")  # refuses n, as some llama.cpp builds

    def start(self) -> Servers:
        for server in (self.claude, self.gpt, self.gemini, self.llama):
            server.start()
        return self

    def stop(self) -> None:
        for server in (self.claude, self.gpt, self.gemini, self.llama):
            server.stop()

    def endpoints(self) -> dict[str, Any]:
        return {
            "openai": {"base_url": self.gpt.base_url},
            "gemini": {"base_url": self.gemini.origin + "/v1beta/openai"},
            "local-openai": {"base_url": self.llama.base_url},
        }

    def posts(self, server: Any) -> list[Any]:
        return [r for r in server.requests if r.method == "POST"]


@pytest.fixture
def servers() -> Iterator[Servers]:
    started = Servers().start()
    yield started
    started.stop()


@pytest.fixture
def kernel(tmp_path: Path, servers: Servers) -> Iterator[Kernel]:
    env = {
        **NO_KEYS,
        "ANTHROPIC_API_KEY": "sk-ant-two-wires",
        "ANTHROPIC_BASE_URL": servers.claude.base_url,
        "OPENAI_API_KEY": OPENAI_KEY,
        "GEMINI_API_KEY": "gemini-two-wires",
    }
    with Kernel(tmp_path, env=env) as started:
        started.run(f"%config TreeChat.endpoints = {servers.endpoints()!r}").check()
        started.run(ADD_TOOL).check()
        yield started


def records(kernel: Kernel) -> list[dict[str, Any]]:
    lines = kernel.session_file().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def replies(kernel: Kernel) -> list[dict[str, Any]]:
    return [r for r in records(kernel) if r.get("message", {}).get("role") == "assistant"]


def block_types(messages: list[dict[str, Any]]) -> list[str]:
    found = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            found.append(block.get("type"))
    return found


def test_a_branch_goes_from_claude_to_gpt_and_back_through_a_tool_loop(kernel, servers):
    claude, gpt = servers.claude, servers.gpt
    claude.enqueue("Hello from Claude.")
    kernel.chat("Hello, Claude.", "c0000001").check()

    gpt.enqueue(reasoning="Add them with the tool.", tool_calls=[{"name": "add",
                "arguments": {"a": 2, "b": 3}}])  # fmt: skip
    gpt.enqueue(text="2 + 3 = 5.")
    run = kernel.chat("What is 2 + 3? Use the tool.", "c0000002", GPT).check()
    assert "2 + 3 = 5." in run.visible_text and "openai:gpt-5-mini" in run.markdown[-1]
    first, second = servers.posts(gpt)
    assert [m["role"] for m in first.body["messages"]] == ["user", "assistant", "user"]
    assert first.body["messages"][1]["content"] == "Hello from Claude."  # Claude's, as text
    assert [t["function"]["name"] for t in first.body["tools"]] == ["add"]
    call_id = second.body["messages"][3]["tool_calls"][0]["id"]
    assert second.body["messages"][4] == {"role": "tool", "tool_call_id": call_id, "content": "5"}

    claude.enqueue(thinking="GPT used the tool; 5 is right.", text="Yes, five.")
    kernel.chat("Was that right?", "c0000003", "--thinking 2048").check()
    sent = claude.last_request.body
    assert block_types(sent["messages"]).count("tool_use") == 1  # GPT's call, its id kept
    assert block_types(sent["messages"]).count("tool_result") == 1
    assert "thinking" not in block_types(sent["messages"])  # GPT's reasoning is not Claude's
    assert [t["name"] for t in sent["tools"]] == ["add"]

    gpt.enqueue(text="Back on GPT.")
    kernel.chat("And once more on GPT.", "c0000004", GPT).check()
    last = gpt.last_request.body["messages"]
    assert "Yes, five." in json.dumps(last) and "5 is right" not in json.dumps(last)
    assert not [m for m in last if m.get("reasoning_content")]  # OpenAI takes none back

    stored = replies(kernel)
    metas = [(r["meta"]["provider"], r["meta"]["endpoint"], r["meta"]["model"]) for r in stored]
    assert metas == [
        ("anthropic", "anthropic", "claude-sonnet-4-6"),
        ("openai-chat", "openai", "openai:gpt-5-mini"),
        ("openai-chat", "openai", "openai:gpt-5-mini"),
        ("anthropic", "anthropic", "claude-sonnet-4-6"),
        ("openai-chat", "openai", "openai:gpt-5-mini"),
    ]
    reasoning = stored[1]["message"]["content"][0]
    assert reasoning == {
        "type": "thinking",
        "thinking": "Add them with the tool.",
        "signature": "",
        "wire": "openai-chat",
        "field": "reasoning_content",
    }
    assert stored[1]["message"]["content"][1]["type"] == "tool_use"  # Messages API blocks

    # reloaded by a new kernel, the mixed branch goes both ways again, nothing lost
    before = kernel.session_file().read_text(encoding="utf-8")
    kernel.restart()
    kernel.run(f"%config TreeChat.endpoints = {servers.endpoints()!r}").check()
    kernel.chat("Claude, what did GPT compute?", "c0000005").check()
    to_claude = json.dumps(claude.last_request.body["messages"])
    kernel.chat("GPT, and what did Claude say?", "c0000006", GPT).check()
    to_gpt = json.dumps(gpt.last_request.body["messages"])
    for said in ("Hello from Claude.", "2 + 3 = 5.", "Yes, five.", "Back on GPT."):
        assert said in to_claude and said in to_gpt
    assert "Claude, what did GPT compute?" in to_gpt
    after = kernel.session_file().read_text(encoding="utf-8")
    assert after.startswith(before)  # appended to, never rewritten
    assert len(replies(kernel)) == 7


def test_fork_compaction_the_meter_and_a_budget_on_the_second_wire(kernel, servers):
    claude, gpt = servers.claude, servers.gpt
    kernel.run("%config TreeChat.model = 'openai:gpt-5-mini'").check()
    gpt.enqueue(tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 1}}])
    gpt.enqueue(text="Two.")
    kernel.chat("One plus one, with the tool.", "c0000001").check()

    gpt.enqueue(text="Without a tool: two.")
    kernel.run("%chat fork-before-tool").check()
    forked = gpt.last_request.body["messages"]
    assert forked == [{"role": "user", "content": "One plus one, with the tool."}]

    listing = kernel.run("%chat context How big is this").check().stdout
    assert "Context of the current path (openai:gpt-5-mini)" in listing
    assert "(estimated: openai cannot count tokens)" in listing and "of 400k" in listing
    assert not [r for r in servers.posts(gpt) if "count" in r.path]

    long = "a sentence about the branches of a session tree " * 12
    for k in range(4):
        kernel.chat(f"Question {k}: {long}", f"c000001{k}").check()
    gpt.enqueue(text="The newest only.")
    run = kernel.chat("And the first question", "c0000020", "--budget 700").check()
    sent = gpt.last_request.body["messages"]
    note = sent[0]["content"]
    note = note if isinstance(note, str) else note[0]["text"]
    assert note.endswith("earlier exchanges left out]"), note
    assert "saw " in run.markdown[-1] and " exchanges" in run.markdown[-1]
    tree = load_file(kernel.session_file()).tree
    assert tree.get(tree.leaf).meta["context"]["budget"] == 700

    gpt.enqueue(text="A summary of it all, as GPT wrote it.")
    kernel.run("%chat compact").check()
    summary_request = gpt.last_request.body["messages"]
    assert "earlier exchanges left out" not in json.dumps(summary_request)  # the whole path
    assert not any(m["role"] == "tool" for m in summary_request)  # calls as text: no tools
    tree = load_file(kernel.session_file()).tree
    root = tree.path_nodes(tree.leaf)[0]
    assert "A summary of it all, as GPT wrote it." in json.dumps(root.message)

    # the same on Claude: its meter counts with the API's count_tokens, its compaction too
    kernel.run("%config TreeChat.model = None").check()
    claude_listing = kernel.run("%chat context And now").check().stdout
    assert "tokens (counted by the API)" in claude_listing
    claude.enqueue("Claude's summary.")
    kernel.run("%chat compact").check()
    assert "A summary of it all" in json.dumps(claude.last_request.body["messages"])


def test_a_fan_out_over_both_wires_compares_endpoint_model_usage_and_cost(kernel, servers):
    servers.claude.enqueue("Claude's answer.")
    servers.gpt.enqueue("GPT's answer.", model="gpt-5-mini-2025-08-07")
    servers.gemini.enqueue("Gemini's answer.")
    models = "claude-sonnet-4-6,openai:gpt-5-mini,gemini:gemini-2.5-flash"
    run = kernel.chat("Explain prompt caching.", "c0000001", f"--models {models}").check()
    shown = run.visible_text
    for title in ("1/3 · claude-sonnet-4-6", "2/3 · openai:gpt-5-mini", "3/3 · gemini:gemini"):
        assert title in shown
    assert "openai:gpt-5-mini (served as gpt-5-mini-2025-08-07)" in shown
    heads = replies(kernel)
    assert [r["meta"]["endpoint"] for r in heads] == ["anthropic", "openai", "gemini"]
    assert heads[1]["meta"]["served_model"] == "gpt-5-mini-2025-08-07"
    assert servers.posts(servers.gemini)[0].path == "/v1beta/openai/chat/completions"

    compare = kernel.run("%chat compare").check().visible_text
    assert "Claude's answer." in compare and "GPT's answer." in compare
    frame = kernel.run(
        "import jupyter_tree_chat\n"
        "df = jupyter_tree_chat.compare_frame()\n"
        "print(df[['endpoint', 'model', 'input_tokens', 'output_tokens', 'cost']]"
        ".to_json(orient='records'))"
    ).check()
    rows = json.loads(frame.stdout)
    assert [(r["endpoint"], r["model"]) for r in rows] == [
        ("anthropic", "claude-sonnet-4-6"),
        ("openai", "openai:gpt-5-mini"),
        ("gemini", "gemini:gemini-2.5-flash"),
    ]
    assert all(r["input_tokens"] > 0 and r["output_tokens"] > 0 for r in rows)
    gpt = rows[1]
    assert gpt["cost"] == pytest.approx(
        (gpt["input_tokens"] * 0.25 + gpt["output_tokens"] * 2.00) / 1_000_000
    )  # at the preset's price, from OpenAI's model page
    assert rows[0]["cost"] > 0 and rows[2]["cost"] is None  # Gemini: tokens only, no price


def test_n_goes_as_one_request_where_taken_and_as_separate_ones_once_refused(kernel, servers):
    gpt, llama = servers.gpt, servers.llama
    run = kernel.chat("Three ideas.", "c0000001", f"{GPT} --n 3").check()
    [request] = servers.posts(gpt)
    assert request.body["n"] == 3
    heads = replies(kernel)
    assert [r["meta"]["choice"] for r in heads] == [{"index": k, "of": 3} for k in (1, 2, 3)]
    texts = {r["message"]["content"][0]["text"] for r in heads}
    assert len(texts) == 3  # three different answers from one request
    assert heads[0]["meta"]["usage"]["output_tokens"] > 0 and not heads[1]["meta"]["usage"]
    assert "tokens counted with 1/3" in run.visible_text

    first = kernel.chat("Two more, locally.", "c0000002", "--model local-openai:smollm2 --n 2")
    first.check()
    assert [r.body.get("n") for r in servers.posts(llama)] == [2, None, None]
    said = [line for line in first.visible_text.splitlines() if "lacks n" in line]
    assert len(said) == 1 and "each answer is asked in a request of its own" in said[0]
    assert said[0].startswith("Answer 1 (local-openai:smollm2")
    assert ONE_CHOICE  # what the server answered the request with n
    again = kernel.chat("Two again.", "c0000003", "--model local-openai:smollm2 --n 2").check()
    assert [r.body.get("n") for r in servers.posts(llama)] == [2, None, None, None, None]
    assert "lacks n" not in again.visible_text  # found missing once, not asked again
    assert all("choice" not in r["meta"] for r in replies(kernel)[3:])


def test_without_the_openai_package_the_cell_is_one_line_and_nothing_is_written(kernel, servers):
    kernel.run("import sys\nsys.modules['openai'] = None").check()  # as if never installed
    run = kernel.chat("Hello, GPT.", "c0000001", GPT)
    assert run.status == "error" and "Traceback" not in run.visible_text
    assert run.stderr.strip() == (
        "UsageError: openai speaks Chat Completions, which needs the openai package: "
        "pip install 'jupyter-tree-chat[openai]'"
    )
    assert not kernel.session_file().exists()
    assert not servers.posts(servers.gpt)
