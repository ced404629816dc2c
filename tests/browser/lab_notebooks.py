"""Notebooks for the browser tests: write one, open it in the test's JupyterLab, run it.

Shared by every test that drives cells, so the waits that make them reliable (the
workspace restores earlier tests' tabs) live in one place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells with fixed ids and a python3 kernelspec (no kernel dialog)."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell{i:04d}",
                "metadata": {},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
            for i, source in enumerate(cells)
        ],
    }
    path.write_text(json.dumps(notebook))


def open_and_run_all(
    page: Any, lab: Any, name: str, *, wait: bool = True, app: str = "lab/tree", reset: bool = False
) -> Any:
    """Open the notebook ``name``, run all its cells; returns the locator of its tab.

    With ``wait`` this returns when every cell has run, else as soon as they are queued.
    ``app="notebooks"`` opens it in Jupyter Notebook 7 (served by the same server).

    The workspace brings back earlier tests' tabs, and one of them may be current for a
    moment: wait for this notebook to be the current one before running anything.
    ``reset`` opens it alone (``?reset``: no earlier tab, and so no other kernel's frames).
    """
    page.goto(f"{lab.url}/{app}/{name}" + ("?reset" if reset else ""))
    page.wait_for_function(
        "name => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.context && w.context.path === name && w.sessionContext"
        " && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }",
        arg=name,
        timeout=180_000,  # a ceiling: a kernel starts slowly on a loaded machine
    )
    widget_id = page.evaluate("window.jupyterapp.shell.currentWidget.id")
    run = "window.jupyterapp.commands.execute('notebook:run-all-cells')"
    page.evaluate(run if wait else f"() => {{ {run}; }}")
    return page.locator(f"[id='{widget_id}']")


def records(path: Path) -> list[dict]:
    """Every record of a session file, in order."""
    return [json.loads(line) for line in path.read_text().splitlines()]
