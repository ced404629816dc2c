"""Run a TypeScript module of the front end under Node, from Python tests.

The module is bundled with the project's own esbuild (from ``npm ci`` in labextension/)
next to a small runner script; each call sends JSON on stdin and reads JSON back, so a
test can push hundreds of cases through one Node process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

LABEXT = Path(__file__).resolve().parents[2] / "labextension"


def node_module(entry: str, runner: str, work: Path) -> Callable[[Any], Any]:
    """Bundle ``labextension/<entry>`` into ``work`` and return ``call(payload) -> result``.

    ``runner`` is an ES module that imports the bundle as ``./bundle.mjs``, reads JSON
    from stdin and writes JSON to stdout. Without Node or esbuild the test fails (never
    skips) and says what to install.
    """
    esbuild = LABEXT / "node_modules" / ".bin" / "esbuild"
    node = shutil.which("node")
    if node is None or not esbuild.exists():
        pytest.fail(
            f"{entry} cannot be run: needs Node and `npm ci` in labextension/ "
            f"(node: {node}, esbuild: {esbuild.exists()})"
        )
    subprocess.run(
        [str(esbuild), str(LABEXT / entry), "--bundle", "--format=esm", "--platform=node",
         f"--outfile={work / 'bundle.mjs'}", "--log-level=warning"],
        check=True,
    )  # fmt: skip
    (work / "run.mjs").write_text(runner)

    def call(payload: Any) -> Any:
        done = subprocess.run(
            [node, str(work / "run.mjs")],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout)

    return call
