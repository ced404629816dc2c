"""``.mcp.json`` and ``TreeChat.mcp_servers``: the shape users already have, read purely."""

from __future__ import annotations

import json

import pytest

from jupyter_tree_chat.errors import McpServerFailed
from jupyter_tree_chat.providers.mcp.config import parse_servers, read_mcp_json

CLAUDE_CODE_SHAPE = {
    "mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]},
        "fs": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
            "env": {"DEBUG": "${DEBUG:-0}", "LEVEL": 3},
            "cwd": "data",
        },
        "docs": {
            "type": "http",
            "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
        },
    }
}


def test_the_claude_code_shape_is_read_as_it_is(tmp_path):
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(CLAUDE_CODE_SHAPE))

    configs = read_mcp_json(path)

    assert configs.problems == ()
    assert configs.names() == ["git", "fs", "docs"]
    git, fs, docs = (configs.get(n) for n in configs.names())
    assert (git.transport, git.command, git.args) == (
        "stdio",
        "uvx",
        ("mcp-server-git", "--repository", "."),
    )
    assert fs.env == (("DEBUG", "${DEBUG:-0}"), ("LEVEL", "3"))
    assert (docs.transport, docs.url) == ("http", "https://example.com/mcp")
    assert git.source == str(path)


def test_allowed_tools_are_read_from_either_transport_and_none_is_the_default():
    configs = parse_servers(
        {
            "notes": {"command": "x", "allowed_tools": ["write_note"]},
            "docs": {"url": "http://h/mcp", "allowed_tools": ["erase", "write"]},
            "plain": {"command": "y"},
        },
        ".mcp.json",
    )

    assert configs.problems == ()
    assert configs.get("notes").allowed_tools == {"write_note"}
    assert configs.get("docs").allowed_tools == {"erase", "write"}
    assert configs.get("plain").allowed_tools == frozenset()
    assert "allowed_tools" not in configs.get("notes").extra


def test_variables_are_filled_from_the_environment_only_when_expanded(tmp_path):
    configs = parse_servers(CLAUDE_CODE_SHAPE["mcpServers"], "x", str(tmp_path))

    docs = configs.get("docs").expanded({"DOCS_TOKEN": "t0k"})
    fs = configs.get("fs").expanded({})

    assert dict(docs.headers) == {"Authorization": "Bearer t0k"}
    assert configs.get("docs").headers == (("Authorization", "Bearer ${DOCS_TOKEN}"),)
    assert dict(fs.env)["DEBUG"] == "0"  # the default
    assert fs.cwd == str(tmp_path / "data")  # relative to the file's folder
    assert configs.get("git").expanded({}).cwd == str(tmp_path)  # default: the folder


def test_a_missing_variable_is_named_and_its_value_is_never_shown():
    configs = parse_servers(CLAUDE_CODE_SHAPE["mcpServers"], ".mcp.json")

    with pytest.raises(McpServerFailed) as raised:
        configs.get("docs").expanded({"OTHER": "secret-value"})

    assert "needs ${DOCS_TOKEN}, which is not set" in str(raised.value)
    assert "secret-value" not in str(raised.value)
    assert "Bearer" not in configs.get("docs").describe()  # header names only


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"args": ["x"]}, "needs a command"),
        ({"type": "http"}, "needs a url"),
        ({"type": "sse", "url": "http://h/sse"}, "SSE transport is not supported"),
        ({"type": "ws", "url": "ws://h"}, "type 'ws' is unknown"),
        ({"command": "x", "args": "a b"}, "args must be a list"),
        ({"command": "x", "env": ["A=1"]}, "env must be a JSON object"),
        ({"command": "x", "concurrent": "yes"}, "concurrent must be true or false"),
        ({"command": "x", "allowed_tools": "write_note"}, "allowed_tools must be a list"),
        ({"url": "http://h/mcp", "allowed_tools": [1]}, "allowed_tools must be a list"),
        ("mcp-server-git", "must be a JSON object"),
    ],
)
def test_each_bad_entry_is_one_problem_and_the_others_still_load(entry, said):
    configs = parse_servers({"bad": entry, "good": {"command": "ok"}}, ".mcp.json")

    assert configs.names() == ["good"]
    (problem,) = configs.problems
    assert problem.startswith(".mcp.json: MCP server bad: ")
    assert said in problem


@pytest.mark.parametrize("name", ["a:b", "a,b", "a b", "*", ""])
def test_a_server_name_the_cell_could_not_say_is_refused(name):
    configs = parse_servers({name: {"command": "x"}}, "TreeChat.mcp_servers")

    assert configs.names() == []
    assert "rename it" in configs.problems[0]


def test_the_kernel_settings_win_over_the_file_on_a_name():
    from_file = parse_servers({"git": {"command": "a"}, "fs": {"command": "b"}}, "file")
    from_config = parse_servers({"git": {"command": "c"}}, "config")

    both = from_config.over(from_file)

    assert both.get("git").command == "c" and both.get("fs").command == "b"


def test_a_file_that_is_missing_broken_or_misshapen(tmp_path):
    path = tmp_path / ".mcp.json"
    assert read_mcp_json(path).servers == {}
    assert read_mcp_json(path).problems == ()

    path.write_text("{not json")
    assert "is not valid JSON" in read_mcp_json(path).problems[0]

    path.write_text('{"servers": {"a": {"command": "x"}}}')  # VS Code's key
    assert read_mcp_json(path).names() == ["a"]

    path.write_text('{"other": 1}')
    assert 'has no "mcpServers" object' in read_mcp_json(path).problems[0]
