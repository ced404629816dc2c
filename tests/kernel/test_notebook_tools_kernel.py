"""The built-in ``notebook`` tool server in a real kernel: the fake Messages API (through
the real SDK) asks for each tool, and what the user and the model see is checked.

The model's side is read from the requests the fake received (the ``tool_result`` a
call became); the user's side from the cell's output, the kernel's namespace and the
session file. A planted key (a sentinel in an endpoint's key variable) must not leave
the kernel by any tool.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import Kernel
from helpers.mcp_helpers import wait_until

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.kernel

#: a key planted in an endpoint's key variable (llama.cpp's preset reads LLAMA_API_KEY)
PLANTED_KEY = "sk-planted-NOTEBOOK-TOOLS-7c1e9a0b3d5f-DO-NOT-LEAK-42"
KEY_PIECES = [PLANTED_KEY, PLANTED_KEY[:16], PLANTED_KEY[-16:], "NOTEBOOK-TOOLS-7c1e9a0b"]


@pytest.fixture
def claude(tmp_path: Path, fake_anthropic: Any) -> Iterator[Kernel]:
    env = {"ANTHROPIC_API_KEY": "sk-test-dummy", "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    with Kernel(tmp_path, env=env) as kernel:
        yield kernel


def results_sent(fake: Any, request: int) -> list[dict[str, Any]]:
    """The tool_result blocks the ``request``-th request carried back to the model."""
    last = fake.requests[request].body["messages"][-1]
    return [b for b in last["content"] if b["type"] == "tool_result"]


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b["type"] == "text")


def ask(fake: Any, tool: str, arguments: dict[str, Any], then: str = "Done.") -> None:
    fake.enqueue(tool_use={"name": f"notebook__{tool}", "input": arguments})
    fake.enqueue(then)


# -- offering -------------------------------------------------------------------------------


def test_the_notebook_tools_are_offered_only_when_a_cell_names_them(claude, fake_anthropic):
    fake_anthropic.enqueue("Hello.")
    fake_anthropic.enqueue("Hello again.")
    fake_anthropic.enqueue("And again.")

    loaded = "import sys\nprint('jupyter_tree_chat.kernel.notebook_tools.server' in sys.modules)"
    claude.chat("Hi", "c1").check()
    assert claude.run(loaded).check().stdout == "False\n"  # %load_ext paid nothing for it
    claude.chat("Hi", "c2", "--tools notebook:variables").check()
    assert claude.run(loaded).check().stdout == "True\n"
    claude.chat("Hi", "c3", "--tools notebook:*").check()

    assert "tools" not in fake_anthropic.requests[0].body
    assert [t["name"] for t in fake_anthropic.requests[1].body["tools"]] == ["notebook__variables"]
    assert [t["name"] for t in fake_anthropic.requests[2].body["tools"]] == [
        "notebook__variables",
        "notebook__describe",
        "notebook__cells",
        "notebook__run",
        "notebook__insert",
    ]
    bad = claude.chat("Hi", "c4", "--tools notebook:erase")
    assert bad.status == "error"
    assert bad.stderr == (
        "UsageError: %%chat: The notebook server has no tool named 'erase' "
        "(its tools: variables, describe, cells, run, insert)\n"
    )


def test_a_server_named_notebook_in_mcp_json_is_a_one_line_problem(
    claude, fake_anthropic, tmp_path
):
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"notebook": {"command": "python", "args": ["-V"]}}})
    )
    listed = claude.run("%chat mcp").check()
    lines = listed.stdout.splitlines()
    problems = [line for line in lines if line.startswith("problem:")]
    assert len(problems) == 1
    assert problems[0].endswith(
        "MCP server notebook: 'notebook' is the name of the built-in notebook tools; "
        "give this server another name"
    )
    assert lines[-1] == (
        "notebook  built in: variables, describe, cells, run, insert (run: not allowed here; "
        "%%chat --allow-run or TreeChat.allow_run allows it)"
    )
    # the built-in server still answers to the name
    ask(fake_anthropic, "variables", {})
    claude.run("x = 1", "c0").check()
    claude.chat("What is defined?", "c1", "--tools notebook:variables").check()
    assert "x: int" in text_of(results_sent(fake_anthropic, 1)[0])


# -- looking ----------------------------------------------------------------------------------


def test_variables_lists_names_types_and_sizes_never_values(claude, fake_anthropic):
    claude.run(
        "import pandas as pd\n"
        "df = pd.DataFrame({'a': range(1000), 'b': 2.0})\n"
        "word = 'secret-looking value 123'\n"
        "items = [1, 2, 3]\n"
        "_hidden = 5",
        "c0",
    ).check()
    assert claude.run("1 / 0", "c00").status == "error"  # Err now holds an error
    ask(fake_anthropic, "variables", {}, "You have a frame.")

    run = claude.chat("What do I have?", "c1", "--tools notebook:variables").check()

    listing = text_of(results_sent(fake_anthropic, 1)[0]).splitlines()
    assert "df: pandas.DataFrame, shape (1000, 2)" in listing
    assert "word: str, 24 chars" in listing
    assert "items: list, 3 items" in listing
    assert "pd: module" in listing
    assert not any(line.startswith(("_hidden", "Err", "In", "Out")) for line in listing)
    assert "secret-looking" not in "\n".join(listing)
    assert "tool call: notebook:variables" in run.stdout  # the cell says which tool ran


def test_describe_sends_a_value_exactly_as_the_field_would(claude, fake_anthropic):
    claude.run(
        "import pandas as pd\n"
        "df = pd.DataFrame({'a': range(100), 'b': [x * 2 for x in range(100)]})",
        "c0",
    ).check()
    claude.run("%config TreeChat.max_rows = 6").check()
    fake_anthropic.enqueue("A frame.")
    claude.chat("{df}", "c1").check()
    as_field = fake_anthropic.requests[0].body["messages"][-1]["content"]
    ask(fake_anthropic, "describe", {"name": "df"}, "A frame again.")

    claude.chat("Look at df.", "c2", "--tools notebook:describe").check()

    described = text_of(results_sent(fake_anthropic, 2)[0])
    field_text = as_field if isinstance(as_field, str) else as_field[0]["text"]
    assert described == field_text.strip()
    assert described.endswith("100 rows × 2 columns, 6 shown")


def test_a_figure_is_described_as_an_image(claude, fake_anthropic):
    claude.run(
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\nax.plot([1, 2, 3])",
        "c0",
    ).check()
    ask(fake_anthropic, "describe", {"name": "fig"}, "A line.")

    claude.chat("Why is my plot like this?", "c1", "--tools notebook:describe").check()

    content = results_sent(fake_anthropic, 1)[0]["content"]
    assert [b["type"] for b in content] == ["image"]  # the fake checks it is a real PNG
    assert content[0]["source"]["media_type"] == "image/png"


def test_hostile_values_are_clear_results_not_crashes(claude, fake_anthropic):
    claude.run(
        "class Hostile:\n"
        "    def __repr__(self): raise RuntimeError('no repr for you')\n"
        "    def __len__(self): raise ValueError('no len either')\n"
        "    @property\n"
        "    def shape(self): raise KeyError('nor a shape')\n"
        "bad = Hostile()\n"
        "huge = 'x' * 5_000_000\n"
        "class Endless:\n"
        "    def __repr__(self):\n"
        "        while True: pass\n"
        "endless = Endless()",
        "c0",
    ).check()
    claude.run("%config TreeChat.tool_timeout = 1.5").check()
    fake_anthropic.enqueue(
        tool_use=[
            {"name": "notebook__variables", "input": {}},
            {"name": "notebook__describe", "input": {"name": "bad"}},
            {"name": "notebook__describe", "input": {"name": "huge"}},
            {"name": "notebook__describe", "input": {"name": "nothing_here"}},
            {"name": "notebook__describe", "input": {"name": "endless"}},
        ]
    )
    fake_anthropic.enqueue("Some values are odd.")

    run = claude.chat("Check my values.", "c1", "--tools notebook:*").check()

    listed, bad, huge, missing, endless = results_sent(fake_anthropic, 1)
    assert endless["is_error"] is True
    assert text_of(endless) == "Stopped after 1.5 s (the time limit)."
    assert "notebook:describe ran longer than TreeChat.tool_timeout (1.5 s)" in run.stderr
    assert "bad: Hostile, size unknown (KeyError)" in text_of(listed)
    assert bad["is_error"] is True
    assert "could not be turned into text or an image (RuntimeError: no repr for you)" in (
        text_of(bad)
    )
    assert len(text_of(huge)) < 21_000
    assert "characters not sent" in text_of(huge)
    assert missing["is_error"] is True
    assert "No user variable named 'nothing_here'" in text_of(missing)


def test_cells_lists_the_cells_as_run_with_errors_and_chat_cells_marked(claude, fake_anthropic):
    claude.run("a = 6 * 7\na", "c0").check()
    failed = claude.run("1 / 0", "c1")
    assert failed.status == "error"
    fake_anthropic.enqueue("Hi.")
    claude.chat("Hello there", "c2").check()
    ask(fake_anthropic, "cells", {"last": 4, "outputs": True}, "I see them.")

    claude.chat("What went wrong?", "c3", "--tools notebook:cells").check()

    listing = text_of(results_sent(fake_anthropic, 2)[0])
    assert "a = 6 * 7" in listing
    assert "Out [2]: 42" in listing
    assert "In [3] (raised ZeroDivisionError):" in listing
    assert "ZeroDivisionError: division by zero" in listing
    assert "(a %%chat cell: its answer is in the chat tree)" in listing
    assert listing.index("a = 6 * 7") < listing.index("1 / 0") < listing.index("Hello there")


# -- running ----------------------------------------------------------------------------------


def test_run_is_refused_without_leave_and_allow_destructive_does_not_give_it(
    claude, fake_anthropic
):
    code = {"code": "ran = True\nprint('hello')"}
    ask(fake_anthropic, "run", code, "I could not run it.")
    ask(fake_anthropic, "run", code, "Still not.")

    first = claude.chat("Run it.", "c1", "--tools notebook:run").check()
    second = claude.chat("Run it now.", "c2", "--tools notebook:run --allow-destructive").check()

    for number, run in ((1, first), (3, second)):
        result = results_sent(fake_anthropic, number)[0]
        assert result["is_error"] is True
        assert "notebook:run was not run: the user has not allowed code to run here" in (
            text_of(result)
        )
        assert "Allow it with %%chat --allow-run" in run.stderr
    assert claude.run("print('ran' in dir())").check().stdout == "False\n"


def test_run_with_leave_runs_in_the_kernel_and_returns_what_it_showed(claude, fake_anthropic):
    code = (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "total = sum(range(10))\nprint('summing')\nplt.plot([3, 1, 2])\ntotal * 2"
    )
    ask(fake_anthropic, "run", {"code": code}, "The total is 45.")

    run = claude.chat("Sum it.", "c1", "--tools notebook:run --allow-run").check()

    result = results_sent(fake_anthropic, 1)[0]
    assert "is_error" not in result
    texts = [b["text"] for b in result["content"] if b["type"] == "text"]
    assert texts[0] == "stdout:\nsumming\n"
    assert "figure:" in texts and texts[-1] == "result:\n90"
    assert [b["type"] for b in result["content"]].count("image") == 1
    assert claude.run("print(total)").check().stdout == "45\n"  # the kernel's namespace
    assert "tool call: notebook:run" in run.stdout
    # TreeChat.allow_run opens it for every cell; IPython's syntax works as in a cell
    claude.run("%config TreeChat.allow_run = True").check()
    shell = "said = !echo shell-says-hi\ntotal + 1, said"
    fake_anthropic.enqueue(tool_use={"name": "notebook__run", "input": {"code": shell}})
    fake_anthropic.enqueue("And 46.")
    claude.chat("Once more.", "c2", "--tools notebook:run").check()
    assert text_of(results_sent(fake_anthropic, 3)[0]) == "result:\n(46, ['shell-says-hi'])"


def test_an_error_raised_by_the_code_is_its_traceback(claude, fake_anthropic):
    code = "def half(x):\n    return x / 0\n\nprint('before')\nhalf(3)"
    ask(fake_anthropic, "run", {"code": code}, "It divides by zero.")

    claude.chat("Run half.", "c1", "--tools notebook:run --allow-run").check()

    result = results_sent(fake_anthropic, 1)[0]
    assert result["is_error"] is True
    text = text_of(result)
    assert text.startswith("stdout:\nbefore\n")
    assert "return x / 0" in text  # the frame's line, from the code the model sent
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")


def test_an_endless_loop_is_stopped_by_the_timeout_and_the_next_cell_runs(claude, fake_anthropic):
    claude.run("%config TreeChat.tool_timeout = 1.5").check()
    ask(fake_anthropic, "run", {"code": "n = 0\nwhile True:\n    n += 1"}, "It never ends.")

    started = time.monotonic()
    run = claude.chat("Loop.", "c1", "--tools notebook:run --allow-run").check()

    assert time.monotonic() - started < 30
    result = results_sent(fake_anthropic, 1)[0]
    assert result["is_error"] is True
    assert "Stopped after 1.5 s (the time limit)." in text_of(result)
    assert "ran longer than TreeChat.tool_timeout (1.5 s) and was stopped" in run.stderr
    after = claude.run("print(n > 0, 'next cell')").check()
    assert after.stdout == "True next cell\n"


def test_ctrl_c_stops_the_code_and_the_turn(claude, fake_anthropic):
    ask(fake_anthropic, "run", {"code": "import time\ntime.sleep(120)"}, "never sent")

    msg_id = claude.send("%%chat --tools notebook:run --allow-run\nSleep.", "c1")
    wait_until(lambda: '"tool_use"' in _file_text(claude), what="the reply asking to run")
    time.sleep(0.5)
    claude.interrupt()
    run = claude.collect(msg_id, timeout=30)

    assert run.status == "error"
    leaf = load_file(claude.session_file()).tree.leaf
    assert run.error_lines == [
        f"Interrupted: the tool call was stopped; the reply that asked for it is kept as "
        f"{leaf[:7]}."
    ]
    assert claude.run("print('still here')").check().stdout == "still here\n"


def _file_text(kernel: Kernel) -> str:
    path = kernel.session_file()
    return path.read_text() if path.exists() else ""


# -- keys ---------------------------------------------------------------------------------------


def test_a_planted_key_never_leaves_the_kernel(claude, fake_anthropic, tmp_path):
    claude.run(f"import os\nos.environ['LLAMA_API_KEY'] = {PLANTED_KEY!r}", "c0").check()
    claude.run(f"token = {PLANTED_KEY!r}\nheader = 'Bearer ' + token[:30]", "c1").check()
    calls = [
        {"name": "notebook__variables", "input": {}},
        {"name": "notebook__describe", "input": {"name": "token"}},
        {"name": "notebook__describe", "input": {"name": "header"}},
        {"name": "notebook__cells", "input": {"last": 5, "outputs": True}},
        {"name": "notebook__run", "input": {"code": "print(os.environ['LLAMA_API_KEY'])"}},
        {"name": "notebook__run", "input": {"code": "token[-20:]"}},
    ]
    fake_anthropic.enqueue(tool_use=calls)
    fake_anthropic.enqueue("I saw no key.")

    run = claude.chat("Find my key.", "c2", "--tools notebook:* --allow-run").check()

    results = results_sent(fake_anthropic, 1)
    assert len(results) == 6
    for result in results:
        assert "[redacted]" in text_of(result) or result is results[0]
    seen = [json.dumps(request.body) for request in fake_anthropic.requests] + [
        claude.session_file().read_text(),
        run.visible_text,
    ]
    for where in seen:
        for piece in KEY_PIECES:
            assert piece not in where
    assert "Bearer [redacted]" in text_of(results[2])


# -- inserting -----------------------------------------------------------------------------------


def test_insert_proposes_a_cell_below_through_the_next_input(claude, fake_anthropic):
    fake_anthropic.enqueue(
        tool_use=[
            {"name": "notebook__insert", "input": {"code": "df.describe()"}},
            {"name": "notebook__insert", "input": {"code": "df.plot()\n"}},
        ]
    )
    fake_anthropic.enqueue("Two proposals.")

    run = claude.chat("Suggest code.", "c1", "--tools notebook:insert").check()

    assert run.payload == [
        {"source": "set_next_input", "text": "df.describe()\n\ndf.plot()", "replace": False}
    ]
    first, second = (text_of(r) for r in results_sent(fake_anthropic, 1))
    assert first.startswith("Proposed: a new cell below the asking cell holds this code")
    assert "(2 proposals of this turn, one cell)" in second
    after = claude.run("print('nothing ran')", "c2").check()
    assert after.payload == []  # the next cell proposes nothing


def test_headless_insert_tells_the_model_no_cell_was_inserted(claude, fake_anthropic):
    ask(fake_anthropic, "insert", {"code": "print(1)"}, "Then here it is: print(1).")

    run = claude.chat("Suggest code.", None, "--tools notebook:insert").check()  # no cell id

    assert run.payload == []
    result = results_sent(fake_anthropic, 1)[0]
    assert text_of(result).startswith("No cell was inserted: this kernel has no notebook front")


# -- in the tree ---------------------------------------------------------------------------------


def test_a_run_is_a_node_and_fork_before_tool_does_not_undo_kernel_state(claude, fake_anthropic):
    ask(fake_anthropic, "run", {"code": "counter = 1"}, "Set it.")

    claude.chat("Set a counter.", "c1", "--tools notebook:run --allow-run").check()

    tree = load_file(claude.session_file()).tree
    question, asking, results, _reply = tree.path_nodes(tree.leaf)
    assert asking.meta["tool_names"] == {"notebook__run": "notebook:run"}
    assert results.message["content"][0]["content"] == "(no output, no result)"
    # rewinding to before the call asks again; the kernel keeps what the run did
    fake_anthropic.enqueue("Without running anything this time.")
    claude.run("%chat fork-before-tool Do not run anything.").check()
    tree = load_file(claude.session_file()).tree
    path = tree.path_nodes(tree.leaf)
    assert [n.role for n in path] == ["user", "assistant"]
    assert path[0].parent_id == question.parent_id and path[0].id != question.id
    assert claude.run("print(counter)").check().stdout == "1\n"


def test_a_turn_started_from_a_view_inserts_nothing_and_runs_only_with_the_setting(
    claude, fake_anthropic
):
    fake_anthropic.enqueue("First answer.")
    claude.run("%config TreeChat.tools = ['notebook:*']").check()  # what a view's turn offers
    claude.chat("Hello.", "c1", "--allow-run").check()
    found = claude.run(
        "from jupyter_tree_chat.widget.turn import _controls_by_cell\n"
        "(control,) = _controls_by_cell.values()\n"
        "print(control.comm.comm_id, control.turn['r']['id'])"
    ).check()
    comm_id, reply_id = found.stdout.split()
    fake_anthropic.enqueue(
        tool_use=[
            {"name": "notebook__insert", "input": {"code": "print(1)"}},
            {"name": "notebook__run", "input": {"code": "from_view = True"}},
        ]
    )
    fake_anthropic.enqueue("Retried.")

    # the control's Retry, as the browser sends it (an anywidget custom message)
    data = {"method": "custom", "content": {"a": "retry", "id": reply_id, "req": 1}}
    message = claude.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    claude.kc.shell_channel.send(message)
    wait_until(lambda: len(fake_anthropic.requests) == 3, what="the retried turn's tool results")

    inserted, ran = results_sent(fake_anthropic, 2)
    assert text_of(inserted).startswith(
        "No cell was inserted: this turn was started from a view (a retry or an edit in the panel)"
    )
    assert "notebook:run was not run" in text_of(ran)  # the cell's --allow-run was its own
    assert claude.run("print('from_view' in dir())").check().stdout == "False\n"


def test_run_output_is_cut_with_a_note_and_displays_come_back(claude, fake_anthropic):
    claude.run("%config TreeChat.max_chars = 500").check()
    code = (
        "from IPython.display import display, Markdown\n"
        "print('x' * 5000)\n"
        "display(Markdown('**shown** by display'))\n"
        "list(range(1000))"
    )
    ask(fake_anthropic, "run", {"code": code}, "Long.")

    run = claude.chat("Print a lot.", "c1", "--tools notebook:run --allow-run").check()

    stdout, displayed, result = text_of(results_sent(fake_anthropic, 1)[0]).split("\n\n")
    assert stdout == "stdout:\n" + "x" * 500 + "\n… [cut: 4,501 of 5,001 characters not sent]"
    assert displayed == "displayed:\n**shown** by display"
    assert result.startswith("result:\n[0, 1, 2")
    assert result.endswith("… [cut: 4,390 of 4,890 characters not sent]")
    assert "x" * 600 not in run.visible_text  # nothing it printed reached the cell
