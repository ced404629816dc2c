"""The Toolbox: kernel functions by name, ``server:tool`` by its source, one way to run.

The MCP source on real servers is in test_mcp_servers.py; here it is left out or made to
fail, to show what a session without MCP servers, or a cell naming them wrongly, gets.
"""

from __future__ import annotations

import pytest

from jupyter_tree_chat.errors import ToolError
from jupyter_tree_chat.providers.tools.functions import ToolRegistry
from jupyter_tree_chat.providers.tools.toolbox import LazySource, Toolbox


@pytest.fixture
def box() -> Toolbox:
    functions = ToolRegistry()

    @functions.register
    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    @functions.register
    def shout(text: str) -> str:
        """Shout it."""
        return text.upper()

    return Toolbox(functions)


def test_every_function_is_offered_by_default_and_named_ones_in_order(box):
    assert [s.name for s in box.specs()] == ["add", "shout"]
    assert [s.name for s in box.specs(["shout", "add", "shout"])] == ["shout", "add"]
    assert box.specs([]) == ()


def test_a_function_runs_at_once_and_answers_with_a_tool_result(box):
    pending = box.start({"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2, "b": 3}})

    assert pending.done()
    answer = pending.answer()
    assert answer.result == {"type": "tool_result", "tool_use_id": "t1", "content": "5"}
    assert answer.notice is None


def test_an_unknown_function_is_a_tool_error_when_offered_and_an_error_result_when_called(box):
    with pytest.raises(ToolError, match="No tool named 'nope'"):
        box.specs(["nope"])

    result = box.run({"type": "tool_use", "id": "t", "name": "nope", "input": {}})

    assert result["is_error"] is True


def test_an_mcp_name_without_mcp_servers_says_where_they_come_from(box):
    with pytest.raises(
        ToolError, match="git:git_log names an MCP tool, and this session has no MCP"
    ):
        box.specs(["add", "git:git_log"])


def test_a_measurement_starts_nothing_and_leaves_out_what_is_not_there(box):
    assert [s.name for s in box.specs(["add", "nope", "git:*"], start=False)] == ["add"]


def test_an_old_registry_still_works_through_the_box():
    functions = ToolRegistry()
    box = Toolbox.of(functions)

    @box.register
    def ping() -> str:
        """Ping."""
        return "pong"

    assert "ping" in functions and len(box) == 1 and box.names() == ("ping",)
    assert Toolbox.of(box) is box


def test_a_lazy_source_is_made_only_when_a_cell_names_one_of_its_tools(box):
    made = []

    def make():
        made.append(True)
        raise ToolError("made now")

    lazy = Toolbox(box.functions, LazySource(make))

    assert [s.name for s in lazy.specs(["add", "git:*"], start=False)] == ["add"]
    assert (
        lazy.run({"type": "tool_use", "id": "t", "name": "add", "input": {"a": 1}})["content"]
        == "1"
    )
    assert lazy.display_names({"content": [{"type": "tool_use", "name": "git__log"}]}) == {}
    assert made == []
    with pytest.raises(ToolError, match="made now"):
        lazy.specs(["git:*"])
    assert made == [True]
