"""An experiment's question in the file (``meta.experiment``, docs/format.md): what the
kernel, ``check`` and the front end's reader (labextension/src/format/experiment.ts, run
under Node) make of good and bad ones, held against each other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.node_runner import LABEXT, node_module

from jupyter_tree_chat.cli import main
from jupyter_tree_chat.history.experiment_record import experiment_of, experiment_problem
from jupyter_tree_chat.history.node import Node

EXPERIMENT_TS = json.dumps(str(LABEXT / "src/format/experiment.ts"))
RUNNER = """
import { experimentOf, experimentProblem } from './bundle.mjs';
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString());
process.stdout.write(JSON.stringify(cases.map((value) => ({
  problem: experimentProblem(value), read: experimentOf({ experiment: value })
}))));
"""

GOOD = {"id": "e1", "version": 2, "template": "Hi {w}", "row": {"w": "x"}, "index": 0}
CASES: list[tuple[Any, str | None]] = [
    (GOOD, None),
    ("e1", "meta.experiment is not an object (read as a plain question)"),
    ({**GOOD, "id": ""}, "meta.experiment.id is not a string (read as a plain question)"),
    (
        {**GOOD, "version": 0},
        "meta.experiment.version is not a whole number of 1 or more (read as a plain question)",
    ),
    (
        {**GOOD, "version": 1.5},
        "meta.experiment.version is not a whole number of 1 or more (read as a plain question)",
    ),
    (
        {**GOOD, "template": None},
        "meta.experiment.template is not a string (read as a plain question)",
    ),
    ({**GOOD, "row": ["x"]}, "meta.experiment.row is not an object (read as a plain question)"),
    (
        {k: v for k, v in GOOD.items() if k != "index"},
        "meta.experiment.index is not a whole number of 0 or more (read as a plain question)",
    ),
]


@pytest.fixture(scope="module")
def reader_ts(tmp_path_factory: pytest.TempPathFactory):
    work: Path = tmp_path_factory.mktemp("experiment")
    (work / "entry.ts").write_text(f"export * from {EXPERIMENT_TS};\n")
    return node_module(str(work / "entry.ts"), RUNNER, work)


def test_the_kernel_and_the_front_end_read_and_refuse_the_same(reader_ts):
    found = reader_ts([value for value, _problem in CASES])
    for (value, problem), front in zip(CASES, found, strict=True):
        assert experiment_problem(value) == problem
        assert front["problem"] == problem
        node = Node("q1", None, {"role": "user", "content": "Hi x"}, {"experiment": value})
        assert experiment_of(node) == (value if problem is None else None)
        assert front["read"] == (value if problem is None else None)


def test_check_reports_a_bad_experiment_by_its_line_and_keeps_the_node(tmp_path, capsys):
    path = tmp_path / "a.chat.jsonl"
    lines = [
        {"id": "q1", "parentId": None, "message": {"role": "user", "content": "Hi x"},
         "meta": {"experiment": GOOD}},
        {"id": "a1", "parentId": "q1", "message": {"role": "assistant", "content": "x"}},
        {"id": "q2", "parentId": None, "message": {"role": "user", "content": "Hi y"},
         "meta": {"experiment": {**GOOD, "row": "w=y"}}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = path.read_bytes()

    assert main(["check", str(path)]) == 1

    assert capsys.readouterr().out.strip() == (
        "line 3: node 'q2': meta.experiment.row is not an object (read as a plain question)"
    )
    assert path.read_bytes() == before
    del lines[2]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["check", str(path)]) == 0
