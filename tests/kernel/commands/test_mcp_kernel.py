"""MCP tools in a real kernel: a cell offers them, the model (the fake Messages API, through
the real SDK) asks for them, the tree keeps every call and result.

Real servers (see mcp_helpers.py): server-everything, server-filesystem on a temporary
folder, and the SDK's own Streamable HTTP server, whose ``count`` tool shows how often it
ran. What a user sees is checked: the cell's lines, its one-line errors, the session file,
what was sent; and what is left running once the kernel is gone (``ps``).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import Kernel
from helpers.mcp_helpers import (
    everything,
    filesystem,
    garbage,
    http_server,
    notes,
    processes_with,
    wait_until,
    write_mcp_json,
)

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import SessionTree

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("reference_servers")]


TOKEN = "test-token"


@pytest.fixture
def counter() -> Iterator[dict[str, Any]]:
    """The Streamable HTTP server's settings, its token taken from ``${COUNTER_TOKEN}``."""
    with http_server(TOKEN) as url:
        yield {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${COUNTER_TOKEN}"}}


@pytest.fixture
def claude(tmp_path: Path, fake_anthropic: Any) -> Iterator[Kernel]:
    env = {
        "ANTHROPIC_API_KEY": "sk-test-dummy",
        "ANTHROPIC_BASE_URL": fake_anthropic.base_url,
        "COUNTER_TOKEN": TOKEN,
    }
    with Kernel(tmp_path, env=env) as kernel:
        yield kernel


def tree_of(kernel: Kernel) -> SessionTree:
    loaded = load_file(kernel.session_file())
    assert loaded.problems == []
    return loaded.tree


def path_messages(kernel: Kernel) -> list[dict[str, Any]]:
    tree = tree_of(kernel)
    return [n.message for n in tree.path_nodes(tree.leaf)]


def result_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b["type"] == "text")


# -- the loop --------------------------------------------------------------------------------


def test_an_mcp_tool_runs_in_the_tool_loop_and_its_call_and_result_are_stored(
    claude, fake_anthropic, tmp_path
):
    write_mcp_json(tmp_path, {"everything": everything()})
    fake_anthropic.enqueue(
        "Let me echo.", tool_use={"name": "everything__echo", "input": {"message": "hi"}}
    )
    fake_anthropic.enqueue("The server said hi back.")

    run = claude.chat("Echo hi, please.", "c1", "--tools everything:echo").check()

    sent = fake_anthropic.requests[0].body
    assert [t["name"] for t in sent["tools"]] == ["everything__echo"]
    assert sent["tools"][0]["description"] == "Echoes back the input string"
    assert 'tool call: everything:echo {"message": "hi"}' in run.stdout
    assert "The server said hi back." in run.markdown[-2]
    _question, asking, answered, reply = path_messages(claude)
    assert asking["content"][-1]["name"] == "everything__echo"  # the name the model used
    assert result_text(result_blocks(answered)[0]) == "Echo: hi"
    assert reply["content"][0]["text"] == "The server said hi back."
    # the second request carried the result, and the tool the call named
    second = fake_anthropic.requests[1].body
    assert result_blocks(second["messages"][-1])[0]["content"] == [
        {"type": "text", "text": "Echo: hi"}
    ]
    node = tree_of(claude).get(tree_of(claude).path_nodes(tree_of(claude).leaf)[1].id)
    assert node.meta["tool_names"] == {"everything__echo": "everything:echo"}
    exported = claude.run("%chat export md").check()
    assert "Tool call `everything:echo`" in exported.visible_text


def test_an_image_from_a_server_goes_back_to_the_model_as_an_image_block(
    claude, fake_anthropic, tmp_path
):
    write_mcp_json(tmp_path, {"everything": everything()})
    fake_anthropic.enqueue(tool_use={"name": "everything__get-tiny-image", "input": {}})
    fake_anthropic.enqueue("A tiny logo.")

    claude.chat("Show me the tiny image.", "c1", "--tools everything:*").check()

    result = result_blocks(fake_anthropic.requests[1].body["messages"][-1])[0]
    kinds = [b["type"] for b in result["content"]]
    assert "image" in kinds  # the fake refuses an image block that is not a real raster
    image = next(b for b in result["content"] if b["type"] == "image")
    assert image["source"]["media_type"] == "image/png"


def test_tools_named_in_the_config_are_offered_without_a_tools_option(
    claude, fake_anthropic, tmp_path
):
    write_mcp_json(tmp_path, {"everything": everything()})
    claude.run("%config TreeChat.tools = ['everything:get-sum']").check()
    fake_anthropic.enqueue("Hello.")

    claude.chat("Hello", "c1").check()

    assert [t["name"] for t in fake_anthropic.requests[0].body["tools"]] == ["everything__get-sum"]


# -- destructive tools ---------------------------------------------------------------------


def test_a_destructive_tool_is_refused_with_a_notice_then_allowed_on_the_cell(
    claude, fake_anthropic, tmp_path
):
    folder = tmp_path / "files"
    folder.mkdir()
    write_mcp_json(tmp_path, {"fs": filesystem(folder)})
    target = str(folder / "plan.txt")
    write = {"name": "fs__write_file", "input": {"path": target, "content": "step 1"}}
    fake_anthropic.enqueue(tool_use=write)
    fake_anthropic.enqueue("I could not write it.")

    refused = claude.chat("Write the plan.", "c1", "--tools fs:*").check()

    assert not (folder / "plan.txt").exists()
    assert "fs:write_file was not run" in refused.stderr
    assert "--allow-destructive" in refused.stderr
    result = result_blocks(path_messages(claude)[2])[0]
    assert result["is_error"] is True and "annotated destructive" in result_text(result)

    fake_anthropic.enqueue(tool_use=write)
    fake_anthropic.enqueue("Written.")
    allowed = claude.chat("Write the plan, you may.", "c2", "--tools fs:* --allow-destructive")

    allowed.check()
    assert (folder / "plan.txt").read_text() == "step 1"
    assert "was not run" not in allowed.stderr

    claude.run("%config TreeChat.allow_destructive = True").check()
    again = {"name": "fs__write_file", "input": {"path": target, "content": "step 2"}}
    fake_anthropic.enqueue(tool_use=again)
    fake_anthropic.enqueue("Written again.")
    claude.chat("Write step 2.", "c3", "--tools fs:*").check()
    assert (folder / "plan.txt").read_text() == "step 2"


def test_a_tool_that_says_nothing_is_refused_until_the_user_trusts_it_in_allowed_tools(
    claude, fake_anthropic, tmp_path
):
    kept = tmp_path / "notes.txt"
    write = {"name": "notes__write_note", "input": {"text": "call Ada"}}
    write_mcp_json(tmp_path, {"notes": notes(tmp_path)})
    fake_anthropic.enqueue(tool_use=write)
    fake_anthropic.enqueue("I could not write it.")

    refused = claude.chat("Note: call Ada.", "c1", "--tools notes:*").check()

    assert not kept.exists()
    assert "notes:write_note was not run: its server does not annotate it" in refused.stderr
    assert "by the MCP spec's defaults" in refused.stderr
    assert '"allowed_tools": ["write_note"]' in refused.stderr

    write_mcp_json(tmp_path, {"notes": notes(tmp_path, allowed=["write_note"])})
    fake_anthropic.enqueue(tool_use=write)
    fake_anthropic.enqueue("Noted.")
    trusted = claude.chat("Note it, it is fine.", "c2", "--tools notes:*").check()

    assert "was not run" not in trusted.stderr
    assert kept.read_text() == "call Ada\n"


def test_allowed_tools_in_the_kernel_settings_let_a_tool_run_too(claude, fake_anthropic, tmp_path):
    kept = tmp_path / "notes.txt"
    entry = notes(tmp_path, allowed=["erase_notes"])
    kept.write_text("old\n")
    claude.run(f"%config TreeChat.mcp_servers = {{'notes': {entry!r}}}").check()
    fake_anthropic.enqueue(tool_use={"name": "notes__erase_notes", "input": {}})
    fake_anthropic.enqueue("Erased.")

    run = claude.chat("Erase my notes.", "c1", "--tools notes:*").check()

    assert "was not run" not in run.stderr
    assert kept.read_text() == ""


# -- servers' lives ---------------------------------------------------------------------------


def test_a_server_that_prints_garbage_is_one_line_before_anything_is_sent_or_written(
    claude, fake_anthropic, tmp_path
):
    write_mcp_json(tmp_path, {"chatty": garbage()})

    run = claude.chat("Use the chatty tools.", "c1", "--tools chatty:*")

    assert run.status == "error"
    (line,) = run.visible_text.strip().splitlines()
    assert line.startswith("UsageError: %%chat: MCP server chatty cannot be used: ")
    assert "it does not speak MCP (its stdout said 'Welcome to my server!')" in line
    assert fake_anthropic.requests == []
    assert not claude.session_file().exists()


def test_a_server_killed_mid_call_is_an_error_result_a_notice_and_a_restart(
    claude, fake_anthropic, tmp_path
):
    marker = str(tmp_path / "killed-in-kernel")
    write_mcp_json(tmp_path, {"everything": everything(marker)})
    long_call = {"name": "everything__trigger-long-running-operation", "input": {"duration": 60}}
    fake_anthropic.enqueue(tool_use=long_call)
    fake_anthropic.enqueue("The server died.")

    msg_id = claude.send("%%chat --tools everything:*\nRun the long operation.", "c1")
    wait_until(lambda: _has_tool_use(claude), what="the reply asking for the tool")
    (pid,) = [p for p, args in processes_with(marker) if "guard.py" not in args]
    os.kill(pid, signal.SIGKILL)
    run = claude.collect(msg_id).check()

    assert "everything:trigger-long-running-operation failed" in run.stderr
    assert "starts again on its next use" in run.stderr
    result = result_blocks(path_messages(claude)[2])[0]
    assert result["is_error"] is True
    fake_anthropic.enqueue(tool_use={"name": "everything__echo", "input": {"message": "back"}})
    fake_anthropic.enqueue("It is back.")
    claude.chat("Echo back.", "c2", "--tools everything:*").check()
    assert result_text(result_blocks(path_messages(claude)[-2])[0]) == "Echo: back"
    assert pid not in [p for p, _args in processes_with(marker)]


def test_a_call_past_the_tool_timeout_is_cancelled_with_a_notice(claude, fake_anthropic, tmp_path):
    write_mcp_json(tmp_path, {"everything": everything()})
    claude.run("%config TreeChat.tool_timeout = 0.5").check()
    fake_anthropic.enqueue(
        tool_use={"name": "everything__trigger-long-running-operation", "input": {"duration": 30}}
    )
    fake_anthropic.enqueue("It took too long.")

    started = time.monotonic()
    run = claude.chat("Run the long operation.", "c1", "--tools everything:*").check()

    assert time.monotonic() - started < 20
    assert "took longer than TreeChat.tool_timeout (0.5 s)" in run.stderr
    assert "was cancelled" in result_text(result_blocks(path_messages(claude)[2])[0])


def test_stop_during_a_call_keeps_what_was_stored(claude, fake_anthropic, tmp_path, counter):
    write_mcp_json(tmp_path, {"counter": counter})
    fake_anthropic.enqueue(tool_use={"name": "counter__slow", "input": {"seconds": 60}})

    msg_id = claude.send("%%chat --tools counter:*\nTake your time.", "c1")
    wait_until(lambda: _has_tool_use(claude), what="the reply asking for the tool")
    claude.interrupt()
    run = claude.collect(msg_id)

    assert run.status == "error"
    assert run.error_lines == [
        f"Interrupted: the tool call was stopped; the reply that asked for it is kept as "
        f"{tree_of(claude).leaf[:7]}."
    ]
    messages = path_messages(claude)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    fake_anthropic.enqueue("Fine, no waiting.")
    claude.chat("Never mind.", "c2").check()  # the unanswered call is sent as "no result"


def test_the_kernel_leaves_no_server_behind(tmp_path, fake_anthropic):
    folder = tmp_path / "orphan-check-folder"
    folder.mkdir()
    write_mcp_json(tmp_path, {"fs": filesystem(folder)})
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    kernel = Kernel(tmp_path, env=env).start()
    try:
        fake_anthropic.enqueue("Hello.")
        kernel.chat("Hi", "c1", "--tools fs:list_directory").check()
        assert len(processes_with(str(folder))) == 2  # the guard and the server
    finally:
        kernel.stop()  # the kernel is killed: nothing of it runs its exit handlers

    wait_until(lambda: not processes_with(str(folder)), timeout=15, what="the servers to end")


# -- the tree: forks, fan-outs, replays ------------------------------------------------------


def test_fork_before_an_mcp_call_tries_another_way_and_runs_nothing_again(
    claude, fake_anthropic, tmp_path, counter
):
    write_mcp_json(tmp_path, {"counter": counter})
    fake_anthropic.enqueue(tool_use={"name": "counter__count", "input": {"label": "first"}})
    fake_anthropic.enqueue("Counted once.")
    claude.chat("Count this.", "c1", "--tools counter:*").check()
    first_leaf = tree_of(claude).leaf

    fake_anthropic.enqueue("Without counting, then.")
    claude.run("%chat fork-before-tool").check()
    forked = path_messages(claude)
    claude.run(f"%chat switch {first_leaf}").check()
    switched_back = path_messages(claude)

    assert [m["role"] for m in forked] == ["user", "assistant"]
    assert forked[1]["content"][0]["text"] == "Without counting, then."
    assert result_text(result_blocks(switched_back[2])[0]) == "call 1: first"
    assert len(fake_anthropic.requests) == 3  # switching sent nothing
    fake_anthropic.enqueue(tool_use={"name": "counter__count", "input": {"label": "again"}})
    fake_anthropic.enqueue("Twice now.")
    claude.chat("Count once more.", "c2", "--tools counter:*").check()
    assert result_text(result_blocks(path_messages(claude)[-2])[0]) == "call 2: again"


def test_each_answer_of_a_fan_out_makes_its_own_calls(claude, fake_anthropic, tmp_path, counter):
    write_mcp_json(tmp_path, {"counter": counter})
    for label in ("a", "b"):
        fake_anthropic.enqueue(tool_use={"name": "counter__count", "input": {"label": label}})
    fake_anthropic.enqueue("Done, one.")
    fake_anthropic.enqueue("Done, two.")

    run = claude.chat("Count.", "c1", "--n 2 --tools counter:*").check()

    tree = tree_of(claude)
    question = next(n for n in tree if n.text == "Count.")
    answers = tree.children(question.id)
    assert len(answers) == 2
    results = []
    for answer in answers:
        (tool_result,) = tree.children(answer.id)
        (final,) = tree.children(tool_result.id)
        results.append(result_text(result_blocks(tool_result.message)[0]))
        assert final.text.startswith("Done")
        assert answer.meta["tool_names"] == {"counter__count": "counter:count"}
    assert sorted(results) == ["call 1: a", "call 2: b"] or sorted(results) == [
        "call 1: b",
        "call 2: a",
    ]
    assert len(fake_anthropic.requests) == 4
    assert "cannot" not in run.visible_text


# -- what the kernel says, and pays -----------------------------------------------------------


def test_chat_mcp_lists_servers_states_tools_and_annotations(claude, tmp_path):
    folder = tmp_path / "files"
    folder.mkdir()
    write_mcp_json(tmp_path, {"fs": filesystem(folder), "chatty": garbage()})

    before = claude.run("%chat mcp").check().stdout
    started = claude.run("%chat mcp fs").check().stdout
    failed = claude.run("%chat mcp chatty")
    after = claude.run("%chat mcp").check().stdout

    assert "fs  not started  stdio:" in before and "chatty  not started" in before
    assert "fs:write_file" in started
    write_line = next(line for line in started.splitlines() if "fs:write_file " in line)
    read_line = next(line for line in started.splitlines() if "fs:read_text_file " in line)
    assert "destructive (annotated)" in write_line and "read-only (annotated)" in read_line
    assert failed.status == "error" and "does not speak MCP" in failed.visible_text
    assert "fs  running" in after
    assert "chatty  failed" in after and "Welcome to my server!" in after


def test_chat_mcp_says_what_each_tool_may_do_and_on_whose_word(claude, tmp_path):
    write_mcp_json(tmp_path, {"notes": notes(tmp_path, allowed=["erase_notes"])})

    listed = claude.run("%chat mcp notes").check().stdout

    lines = {line.split()[0]: line for line in listed.splitlines() if "notes:" in line}
    assert "read-only (annotated)" in lines["notes:read_notes"]
    assert "not destructive (annotated)" in lines["notes:append_note"]
    assert "destructive (annotated), allowed" in lines["notes:erase_notes"]
    assert "destructive (by default)" in lines["notes:write_note"]
    assert "allowed" not in lines["notes:write_note"]


def test_load_ext_and_a_cell_without_mcp_tools_do_not_import_the_sdk(tmp_path):
    with Kernel(tmp_path) as kernel:
        kernel.run(
            "from jupyter_tree_chat import tool\n"
            "@tool\n"
            "def add(a: int, b: int) -> int:\n"
            "    return a + b"
        ).check()
        kernel.chat("call add(2, 3)", "c1").check()
        loaded = kernel.run(
            "import sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'"
            " or m.startswith('jupyter_tree_chat.providers.mcp')))"
        ).check()
        assert loaded.stdout.strip() == "[]"


def test_without_the_mcp_package_a_server_is_one_line_saying_how_to_get_it(
    tmp_path, fake_anthropic
):
    blocker = tmp_path / "no-mcp"
    (blocker / "mcp").mkdir(parents=True)
    (blocker / "mcp" / "__init__.py").write_text("raise ImportError('No module named mcp')\n")
    write_mcp_json(tmp_path, {"everything": everything()})
    env = {
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": fake_anthropic.base_url,
        "PYTHONPATH": str(blocker),
    }
    with Kernel(tmp_path, env=env) as kernel:
        run = kernel.chat("Echo.", "c1", "--tools everything:echo")

    assert run.status == "error"
    assert run.visible_text.strip() == (
        "UsageError: %%chat: MCP servers need the mcp package: pip install 'jupyter-tree-chat[mcp]'"
    )
    assert fake_anthropic.requests == []


def _has_tool_use(kernel: Kernel) -> bool:
    path = kernel.session_file()
    if not path.exists():
        return False
    return any(
        '"tool_use"' in line and json.loads(line).get("message", {}).get("role") == "assistant"
        for line in path.read_text().splitlines()
    )
