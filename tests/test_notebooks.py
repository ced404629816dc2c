"""The three notebooks: committed without outputs, and run top to bottom in a real kernel.

Each notebook is copied into a temporary folder and executed there by nbclient through
the ``python3`` kernel, with every ``ANTHROPIC_*`` variable removed (so the offline
teaching model answers) and ``JPY_SESSION_NAME`` set to the copy's path, as JupyterLab
sets it, so the magic finds the notebook and writes its session file beside it. A cell
that raises (a failed ``assert`` included) fails the test. Then the test checks what a
user would see: the session files each notebook leaves behind and the trees in them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jupyter_tree_chat.store import load_file
from jupyter_tree_chat.tree import is_tool_result

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NAMES = ("session-tree-chapter", "quickstart", "compare")
CELL_TIMEOUT = 120


def kernel_env(notebook: Path) -> dict[str, str]:
    """The environment a headless kernel gets: no API key, the notebook's path, this repo."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["JPY_SESSION_NAME"] = str(notebook)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def execute(name: str, folder: Path) -> nbformat.NotebookNode:
    """Run notebooks/NAME.ipynb in ``folder`` (a copy); raise on the first failing cell."""
    from nbclient import NotebookClient

    notebook = folder / f"{name}.ipynb"
    shutil.copy(NOTEBOOKS / notebook.name, notebook)
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute(env=kernel_env(notebook))
    nbformat.write(nb, notebook)
    return nb


def outputs_text(nb: nbformat.NotebookNode) -> str:
    parts: list[str] = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output["text"])
            elif "data" in output:
                data = output["data"]
                parts.append(data.get("text/plain") or "")
    return "\n".join(parts)


# -- committed notebooks ---------------------------------------------------------------


def dirty_cells(nb: nbformat.NotebookNode) -> list[str]:
    """The ids of code cells that carry outputs or an execution count."""
    return [
        str(cell.get("id", index))
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_has_no_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    dirty = dirty_cells(nb)
    assert not dirty, f"{name}.ipynb has outputs in cells {dirty}; clear them before committing"
    assert "widgets" not in nb.metadata, f"{name}.ipynb carries saved widget state"
    assert nb.metadata["kernelspec"]["name"] == "python3"


def test_the_no_outputs_check_catches_an_executed_cell() -> None:
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    code = next(cell for cell in nb.cells if cell.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    code.execution_count = 1
    assert dirty_cells(nb) == [code.id]


# -- executed through a real kernel ----------------------------------------------------


@pytest.mark.kernel
def test_chapter_notebook_runs_and_leaves_the_lesson_tree(tmp_path: Path) -> None:
    nb = execute("session-tree-chapter", tmp_path)
    shown = outputs_text(nb)
    assert "I was sent **3 messages**" in shown

    # the chapter's four lines, as the project wrote them (header + nodes + one fork)
    lines = (tmp_path / "session-tree-chapter.format.chat.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    assert [json.loads(line)["id"] for line in lines[1:]] == [
        "msg_001",
        "msg_002",
        "msg_003",
        "msg_004",
        "msg_005",
    ]

    lesson = load_file(tmp_path / "session-tree-chapter.lesson.chat.jsonl")
    tree = lesson.tree
    assert lesson.problems == []
    assert len(tree.roots()) == 5 and len(tree.leaves()) == 8
    metas = [node.meta or {} for node in tree]
    assert sum("edited_from" in m for m in metas) == 1
    assert sum("forked_before_tool_use" in m for m in metas) == 1
    assert sum("compacted_from" in m for m in metas) == 1
    assert sum(is_tool_result(node.message) for node in tree) == 2
    # the retry scenario: three sibling answers under one question
    assert any(len(tree.children(node.id)) == 3 for node in tree if node.role == "user")
    # the notebook ends on the pre-compaction branch it switched back to
    assert [m["content"] for m in tree.active_path() if m["role"] == "user"][:1] == [
        "I am learning Python. What is a list?"
    ]


@pytest.mark.kernel
def test_quickstart_runs_and_leaves_its_session_beside_it(tmp_path: Path) -> None:
    nb = execute("quickstart", tmp_path)
    session_file = tmp_path / "quickstart.chat.jsonl"
    assert session_file.exists()
    assert not (tmp_path / "jupyter-tree-chat.chat.jsonl").exists()  # no fallback file
    loaded = load_file(session_file)
    tree = loaded.tree
    assert loaded.problems == []
    assert list(loaded.labels.values()) == ["first-answer"]
    assert len(tree.roots()) == 2  # the first question and its edit
    user_texts = [m["content"] for m in tree.active_path() if m["role"] == "user"]
    assert user_texts == [
        "What is 2 + 3 * 4?",
        "Good. Now what is 14 * 14?",
        "And what is 196 - 14?",
    ]
    edited = tree.roots()[1]
    assert edited.text == "What is (2 + 3) * 4?" and len(tree.children(edited.id)) == 2
    assert "using the offline teaching model" in outputs_text(nb)
    assert "sk-ant" not in session_file.read_text()


@pytest.mark.kernel
def test_compare_notebook_runs(tmp_path: Path) -> None:
    nb = execute("compare", tmp_path)
    tree = load_file(tmp_path / "compare.chat.jsonl").tree
    # one fan-out cell per kind: 3 samples, 3 temperatures, 2 models
    roots = tree.roots()
    assert [len(tree.children(root.id)) for root in roots] == [3, 3, 2]
    models = tree.children(roots[2].id)
    assert [a.meta["model"] for a in models] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
    follow_up = next(n for n in tree if n.text == "Say that again, shorter.")
    assert follow_up.parent_id in {a.id for a in models}  # continued from the best answer
    html = [
        out["data"]["text/html"]
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "text/html" in out.get("data", {})
    ]
    assert sum('class="jtc-fanout"' in h for h in html) == 3
    assert sum('<details class="jtc-differences">' in h for h in html) == 3
    source = "".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "<" not in source  # no hand-written HTML


@pytest.mark.kernel
def test_demo_execution_step_leaves_notebook_session_and_tree(tmp_path: Path) -> None:
    """``scripts/demo.sh --no-setup DIR``: what the README's demo does after the setup."""
    out = tmp_path / "demo"
    env = kernel_env(out / "quickstart.ipynb")
    env.pop("JPY_SESSION_NAME")  # the script sets it itself
    env["DEMO_PYTHON"] = sys.executable
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh"), "--no-setup", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    executed = nbformat.read(out / "quickstart.ipynb", as_version=4)
    assert all(
        cell.execution_count is not None for cell in executed.cells if cell.cell_type == "code"
    )
    assert (out / "quickstart.chat.jsonl").exists()
    assert "What is 2 + 3 * 4?" in result.stdout  # the printed tree
    assert "jupyter lab" in result.stdout
