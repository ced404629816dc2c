"""The kernel's MCP servers and their tools, on real servers no one here wrote.

``McpServers`` and ``McpTools`` (no kernel, no model): server-everything's echo, get-sum,
image, structured content, resource links and long-running tools; server-filesystem
confined to a temporary folder (destructive tools refused and allowed); the SDK-built
notes server, a tool annotated each way and one not at all (the spec's defaults, and
``allowed_tools``); mcp-server-git on
a temporary repository; the SDK's own Streamable HTTP server with a bearer token from
``${VAR}``; servers that print garbage, exit, are killed mid-call or take too long.
The kernel's side (a cell, the tree, the notices) is in test_mcp_kernel.py.
"""

from __future__ import annotations

import base64
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.mcp_helpers import (
    everything,
    exits,
    filesystem,
    garbage,
    git,
    git_repo,
    http_server,
    notes,
    processes_with,
    wait_until,
)

from jupyter_tree_chat.errors import McpServerFailed, ToolError
from jupyter_tree_chat.providers.mcp.config import parse_servers
from jupyter_tree_chat.providers.mcp.names import API_TOOL_NAME
from jupyter_tree_chat.providers.mcp.results import raster_type
from jupyter_tree_chat.providers.mcp.servers import McpServers
from jupyter_tree_chat.providers.mcp.tools import McpTools
from jupyter_tree_chat.providers.tools.functions import ToolRegistry
from jupyter_tree_chat.providers.tools.toolbox import Toolbox

pytestmark = pytest.mark.usefixtures("reference_servers")


class Servers:
    """McpServers over a dict of configurations, and the toolbox a session would use."""

    def __init__(self, folder: Path, entries: dict[str, Any], environ: Any = None) -> None:
        self.entries = entries
        self.servers = McpServers(
            lambda: parse_servers(self.entries, "test", str(folder)),
            environ=environ,
            startup_timeout=20,
        )
        self.mcp = McpTools(self.servers, timeout=30)
        self.functions = ToolRegistry()
        self.box = Toolbox(self.functions, self.mcp)

    def call(self, name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        specs = self.box.specs([name])
        block = {"type": "tool_use", "id": "toolu_1", "name": specs[0].name, "input": arguments}
        return self.box.start(block, **kwargs).answer()


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Any]:
    made: list[Servers] = []

    def build(entries: dict[str, Any], environ: Any = None) -> Servers:
        made.append(Servers(tmp_path, entries, environ))
        return made[-1]

    yield build
    for servers in made:
        servers.servers.stop_all()


def texts(result: dict[str, Any]) -> list[str]:
    return [b["text"] for b in result["content"] if b["type"] == "text"]


# -- server-everything -----------------------------------------------------------------


def test_everything_tools_are_offered_under_valid_wire_names_and_answer(make):
    servers = make({"everything": everything()})

    specs = servers.box.specs(["everything:*"])

    names = {spec.title: spec.name for spec in specs}
    assert names["everything:echo"] == "everything__echo"
    assert names["everything:get-sum"] == "everything__get-sum"
    assert all(API_TOOL_NAME.match(spec.name) for spec in specs)
    assert specs[0].input_schema["type"] == "object"
    echo = servers.call("everything:echo", {"message": "hi there"})
    assert echo.notice is None
    assert echo.result == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "Echo: hi there"}],
    }
    total = servers.call("everything:get-sum", {"a": 2, "b": 40})
    assert "42" in texts(total.result)[0]


def test_an_image_result_is_an_image_block_of_the_type_its_bytes_say(make):
    servers = make({"everything": everything()})

    answer = servers.call("everything:get-tiny-image", {})

    images = [b for b in answer.result["content"] if b["type"] == "image"]
    assert len(images) == 1
    source = images[0]["source"]
    assert source["type"] == "base64"
    assert source["media_type"] == raster_type(base64.b64decode(source["data"])) == "image/png"


def test_structured_content_and_resource_links_keep_their_content(make):
    servers = make({"everything": everything()})

    weather = servers.call("everything:get-structured-content", {"location": "New York"})
    links = servers.call("everything:get-resource-links", {"count": 2})

    # the server sends the JSON as text too: said once, not twice
    assert len(texts(weather.result)) == 1
    assert '"temperature"' in texts(weather.result)[0]
    lines = texts(links.result)
    assert any(line.startswith("[resource link demo://resource/dynamic/") for line in lines)


def test_a_result_over_max_chars_is_cut_with_a_note(make):
    servers = make({"everything": everything()})
    servers.mcp.max_chars = 10

    answer = servers.call("everything:echo", {"message": "x" * 100})

    first, note = texts(answer.result)
    assert first == "Echo: xxxx"
    assert "[cut: the result had 106 characters of text; 96 not sent" in note


def test_a_call_past_the_timeout_is_cancelled_with_an_error_result_and_a_notice(make):
    servers = make({"everything": everything()})
    servers.mcp.timeout = 0.5

    started = time.monotonic()
    answer = servers.call("everything:trigger-long-running-operation", {"duration": 20, "steps": 4})

    assert time.monotonic() - started < 10
    assert answer.result["is_error"] is True
    assert "was cancelled" in answer.result["content"]
    assert "TreeChat.tool_timeout" in answer.notice
    # the server is still there for the next call
    assert texts(servers.call("everything:echo", {"message": "still"}).result) == ["Echo: still"]


def test_an_unknown_tool_of_a_server_is_a_one_line_error_naming_its_tools(make):
    servers = make({"everything": everything()})

    with pytest.raises(ToolError, match=r"no tool named 'nope' \(its tools: echo, .*get-sum"):
        servers.box.specs(["everything:nope"])


# -- server-filesystem: destructive tools --------------------------------------------------


def test_a_destructive_tool_is_refused_unless_allowed(make, tmp_path):
    folder = tmp_path / "files"
    folder.mkdir()
    servers = make({"fs": filesystem(folder)})
    target = str(folder / "note.txt")

    refused = servers.call("fs:write_file", {"path": target, "content": "hello"})

    assert refused.result["is_error"] is True
    assert "annotated destructive" in refused.result["content"]
    assert "--allow-destructive" in refused.notice
    assert "TreeChat.allow_destructive" in refused.notice
    assert not (folder / "note.txt").exists()

    allowed = servers.call(
        "fs:write_file", {"path": target, "content": "hello"}, allow_destructive=True
    )

    assert allowed.notice is None and not allowed.result.get("is_error")
    assert (folder / "note.txt").read_text() == "hello"
    read = servers.call("fs:read_text_file", {"path": target})  # read-only: never asked
    assert texts(read.result) == ["hello"]


def test_the_filesystem_server_stays_in_its_folder(make, tmp_path):
    folder = tmp_path / "inside"
    folder.mkdir()
    servers = make({"fs": filesystem(folder)})

    outside = servers.call("fs:read_text_file", {"path": "/etc/hostname"})

    assert outside.result.get("is_error") is True
    assert "denied" in " ".join(texts(outside.result)).lower()


# -- the spec's defaults: the notes server, built on the SDK ------------------------------


def test_each_tool_is_read_only_not_destructive_or_destructive_by_the_specs_defaults(
    make, tmp_path
):
    servers = make({"notes": notes(tmp_path)})

    listed = {t.name: (t.safety, t.annotated) for t in servers.servers.tools("notes")}

    assert listed == {
        "read_notes": ("read-only", True),
        "append_note": ("not destructive", True),
        "erase_notes": ("destructive", True),
        "write_note": ("destructive", False),  # says nothing: destructive by default
        "hold": ("read-only", True),
    }


def test_only_tools_annotated_read_only_or_not_destructive_run_without_the_flag(make, tmp_path):
    servers = make({"notes": notes(tmp_path)})
    kept = tmp_path / "notes.txt"

    appended = servers.call("notes:append_note", {"text": "milk"})
    read = servers.call("notes:read_notes", {})
    erased = servers.call("notes:erase_notes", {})
    written = servers.call("notes:write_note", {"text": "only this"})

    assert appended.notice is None and read.notice is None
    assert texts(read.result) == ["milk\n"]
    assert erased.result["is_error"] is True and "annotates it destructive" in erased.notice
    assert written.result["is_error"] is True
    assert "does not annotate it" in written.notice
    assert "readOnlyHint: true or destructiveHint: false" in written.notice
    assert '"allowed_tools": ["write_note"]' in written.notice
    assert kept.read_text() == "milk\n"  # neither refused tool touched the file

    allowed = servers.call("notes:write_note", {"text": "only this"}, allow_destructive=True)

    assert allowed.notice is None and not allowed.result.get("is_error")
    assert kept.read_text() == "only this\n"


def test_tools_the_user_names_in_allowed_tools_run_whatever_the_server_says(make, tmp_path):
    servers = make({"notes": notes(tmp_path, allowed=["write_note", "erase_notes"])})
    kept = tmp_path / "notes.txt"

    written = servers.call("notes:write_note", {"text": "kept"})
    assert written.notice is None and kept.read_text() == "kept\n"
    erased = servers.call("notes:erase_notes", {})

    assert erased.notice is None and not erased.result.get("is_error")
    assert kept.read_text() == ""
    trusted = {t.name for t in servers.servers.tools("notes") if t.trusted}
    assert trusted == {"write_note", "erase_notes"}


# -- mcp-server-git -------------------------------------------------------------------------


def test_git_log_on_a_temporary_repository(make, tmp_path):
    repo = git_repo(tmp_path / "repo")
    servers = make({"git": git(repo)})

    log = servers.call("git:git_log", {"repo_path": str(repo), "max_count": 5})

    text = "\n".join(texts(log.result))
    assert "second: add b" in text and "first: add a" in text
    assert text.index("second: add b") < text.index("first: add a")
    reset = servers.box.specs(["git:git_reset"])[0]
    assert servers.mcp.owns(reset.name)
    assert servers.servers.tools("git")[
        [t.name for t in servers.servers.tools("git")].index("git_reset")
    ].destructive


# -- Streamable HTTP ----------------------------------------------------------------------


def test_a_streamable_http_server_gets_its_headers_with_variables_from_the_environment(make):
    with http_server("s3cret") as url:
        entry = {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${TOKEN}"}}
        servers = make({"counter": entry}, environ={"TOKEN": "s3cret"})

        first = servers.call("counter:count", {"label": "a"})
        second = servers.call("counter:count", {"label": "b"})

        assert texts(first.result) == ["call 1: a"]
        assert texts(second.result) == ["call 2: b"]
        config = servers.servers.configs().get("counter")
        assert "s3cret" not in config.describe()  # %chat mcp shows header names only


def test_a_wrong_token_is_a_one_line_failure_before_any_call(make):
    with http_server("s3cret") as url:
        entry = {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${TOKEN}"}}
        servers = make({"counter": entry}, environ={"TOKEN": "wrong"})

        with pytest.raises(McpServerFailed, match="MCP server counter cannot be used"):
            servers.box.specs(["counter:*"])


def test_a_missing_variable_names_itself_and_never_its_value(make):
    entry = {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "${NOPE}"}}
    servers = make({"remote": entry}, environ={})

    with pytest.raises(McpServerFailed, match=r"needs \$\{NOPE\}, which is not set"):
        servers.box.specs(["remote:*"])


def test_calls_to_one_server_run_one_at_a_time_unless_it_says_concurrent(make):
    with http_server("t") as url:
        entry = {"type": "http", "url": url, "headers": {"Authorization": "Bearer t"}}
        servers = make({"one": entry, "many": {**entry, "concurrent": True}})
        box = servers.box

        for name, expected in (("one", "at most 1 at once"), ("many", "at most 2 at once")):
            spec = box.specs([f"{name}:slow"])[0]
            blocks = [
                {"type": "tool_use", "id": f"t{i}", "name": spec.name, "input": {"seconds": 0.5}}
                for i in range(2)
            ]
            pending = [box.start(b) for b in blocks]
            answers = [p.answer() for p in pending]
            assert expected in texts(answers[1].result)[0]


# -- servers that cannot be used ---------------------------------------------------------


def test_a_server_that_prints_garbage_is_a_one_line_error_quoting_it(make):
    servers = make({"chatty": garbage()})

    started = time.monotonic()
    with pytest.raises(McpServerFailed) as raised:
        servers.box.specs(["chatty:*"])

    assert time.monotonic() - started < 15  # not the startup timeout
    message = str(raised.value)
    assert "\n" not in message
    assert "MCP server chatty cannot be used: it does not speak MCP" in message
    assert "Welcome to my server!" in message
    assert servers.servers.state("chatty").state == "failed"


def test_a_server_that_exits_is_a_one_line_error_with_its_stderr_tail(make):
    servers = make({"broken": exits()})

    with pytest.raises(McpServerFailed) as raised:
        servers.box.specs(["broken:*"])

    message = str(raised.value)
    assert "\n" not in message
    assert "it exited before answering" in message
    assert "its stderr ends: config file missing: /etc/nothing" in message


def test_a_command_that_is_not_there_says_so(make):
    servers = make({"ghost": {"command": "no-such-mcp-server-anywhere"}})

    with pytest.raises(McpServerFailed, match="'no-such-mcp-server-anywhere' is not found"):
        servers.box.specs(["ghost:*"])


def test_a_server_killed_mid_call_gives_an_error_result_and_starts_again(make, tmp_path):
    folder = tmp_path / "killed-mid-call"
    folder.mkdir()
    servers = make({"notes": notes(folder)})
    spec = servers.box.specs(["notes:hold"])[0]
    pid = wait_until(lambda: _server_pid(str(folder)), what="the server to run")

    block = {"type": "tool_use", "id": "t", "name": spec.name, "input": {"seconds": 60}}
    pending = servers.box.start(block)
    wait_until((folder / "held").exists, what="the call to reach the server")  # mid-call
    os.kill(pid, signal.SIGKILL)
    answer = pending.answer()

    assert answer.result["is_error"] is True
    assert "stopped before answering" in answer.result["content"]
    assert "starts again on its next use" in answer.notice
    assert servers.servers.state("notes").state == "failed"
    again = servers.call("notes:read_notes", {})
    assert texts(again.result) == ["(no notes)"]
    assert _server_pid(str(folder)) not in (None, pid)


def test_stopping_leaves_no_process_behind(make, tmp_path):
    folder = tmp_path / "unique-folder-for-stop"
    folder.mkdir()
    servers = make({"fs": filesystem(folder)})
    servers.box.specs(["fs:*"])
    assert processes_with(str(folder))  # the guard and the server

    servers.servers.stop_all()

    wait_until(lambda: not processes_with(str(folder)), what="the server to stop")


def _server_pid(path: str) -> int | None:
    """The pid of the server process running with ``path`` (not its guard)."""
    for pid, args in processes_with(path):
        if "guard.py" not in args:
            return pid
    return None
