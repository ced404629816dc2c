"""What the views have said of the page they render in: whether it has the lab's
Insert below command (the lab extension's, through bridge.ts).

The notebook server's ``insert`` asks this (through the package root, which wires the
kernel to the widget) to choose between the turn control's Insert below and IPython's
next input. It is set by the first view that says so and stays set: a page reloaded
without the extension is not noticed, and its proposals then stay in the tree's
``notebook:insert`` calls (docs/notebook-tools.md).
"""

from __future__ import annotations

from typing import Any

_said = {"inserts_below": False}


def lab_said(content: dict[str, Any]) -> None:
    """A view's ``language`` message: ``insert`` says its page has the lab's command."""
    if content.get("insert"):
        _said["inserts_below"] = True


def lab_inserts_below() -> bool:
    return _said["inserts_below"]
