"""``server:tool`` for people, a name the API accepts on the wire, and back."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.errors import ToolError
from jupyter_tree_chat.providers.mcp.names import API_TOOL_NAME, WireNames, parse_selector


def test_a_plain_pair_goes_on_the_wire_with_two_underscores():
    names = WireNames()

    assert names.wire("git", "git_log") == "git__git_log"
    assert names.wire("everything", "get-sum") == "everything__get-sum"
    assert names.pair("git__git_log") == ("git", "git_log")
    assert names.wire("git", "git_log") == "git__git_log"  # asked again: the same


@pytest.mark.parametrize(
    ("server", "tool"),
    [("my.server", "read"), ("fs", "read file"), ("s", "t" * 200), ("数据", "查询")],
)
def test_a_pair_that_is_not_a_valid_name_gets_a_valid_stable_one(server, tool):
    first = WireNames().wire(server, tool)
    second = WireNames().wire(server, tool)

    assert API_TOOL_NAME.match(first)
    assert first == second  # the same in every kernel


def test_names_never_collide_with_each_other_or_the_kernels_functions():
    names = WireNames(taken=lambda name: name == "fs__read")

    clash = names.wire("fs", "read")
    a = names.wire("a_", "b")  # "a___b"
    b = names.wire("a", "_b")  # also "a___b" if nothing were done

    assert clash != "fs__read" and API_TOOL_NAME.match(clash)
    assert a != b
    assert {names.pair(a), names.pair(b)} == {("a_", "b"), ("a", "_b")}


@pytest.mark.parametrize(
    ("text", "pair"), [("git:git_log", ("git", "git_log")), (" git : * ", ("git", "*"))]
)
def test_selectors(text, pair):
    assert parse_selector(text) == pair


@pytest.mark.parametrize("text", ["git:", ":log", "git"])
def test_a_selector_without_a_server_or_a_tool_says_how_to_write_one(text):
    with pytest.raises(ToolError, match="write server:tool"):
        parse_selector(text)
