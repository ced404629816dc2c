"""An experiment in what leaves the kernel: ``export md`` and ``export ipynb`` of a branch
through one of its rows carry its rows × versions as a table, and ``find`` finds a row by
its input on every branch. The session is made by the real Session with the offline
model (no kernel needed: these read the file), and read back by the command line."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_tree_chat.cli import main
from jupyter_tree_chat.conversation.many.experiment import Plan, RowQuestion
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.providers.offline.provider import OfflineProvider

ROWS = [{"city": "Paris"}, {"city": "Os|lo"}, {"city": "Lima"}]


def experiment_session(path: Path) -> Session:
    session = Session.open(path, OfflineProvider(delay=0))
    session.ask("Hello")
    for template in ("Describe {city}.", "Describe {city} in one word."):
        rows = [RowQuestion(template.format(**row), None, row) for row in ROWS]
        earlier = None if template.endswith("{city}.") else session.tree.get(session.leaf)
        question = None if earlier is None else session.tree.get(earlier.parent_id)
        session.run_experiment(Plan(template, rows), cell_id="c1", earlier=question)
    return session


def test_export_md_of_a_rows_branch_has_the_experiment_table(tmp_path, capsys):
    path = tmp_path / "a.chat.jsonl"
    session = experiment_session(path)

    assert main(["export", str(path), "--format", "md"]) == 0

    out = capsys.readouterr().out
    assert "Experiment `" in out and ": 3 rows × 2 versions" in out
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert table[0] == "| row | inputs | version 1 | version 2 |"
    assert table[1].startswith("| 1 | city: Paris | I was sent **3 messages**")
    assert table[2].startswith("| 2 | city: Os\\|lo | ")  # a pipe in a value is escaped
    assert len(table) == 4
    assert session.tree.leaf in out or session.tree.leaf[:7] in out


def test_export_ipynb_puts_the_table_before_the_rows_question(tmp_path, capsys):
    path = tmp_path / "a.chat.jsonl"
    experiment_session(path)
    target = tmp_path / "a.ipynb"

    assert main(["export", str(path), "--format", "ipynb", "-o", str(target)]) == 0

    cells = json.loads(target.read_text())["cells"]
    sources = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
    ]
    at = next(i for i, s in enumerate(sources) if s.startswith("Experiment `"))
    assert cells[at]["cell_type"] == "markdown"
    assert "| 3 | city: Lima |" in sources[at]
    assert sources[at + 1] == "%%chat\nDescribe Paris in one word."
    assert len({c["id"] for c in cells}) == len(cells)


def test_find_finds_a_row_by_its_input_on_every_branch(tmp_path, capsys):
    path = tmp_path / "a.chat.jsonl"
    experiment_session(path)

    assert main(["find", str(path), "Lima", "--role", "user", "--json"]) == 0

    found = json.loads(capsys.readouterr().out)
    assert sorted(m["branch"] for m in found) == ["Describe Lima in one word.", "Describe Lima."]
    assert [m["position"] for m in found] == ["3/6", "6/6"]  # rows are siblings
