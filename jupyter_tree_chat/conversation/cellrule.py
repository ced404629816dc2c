"""The notebook-native rule: what running a ``%%chat`` cell does to the tree.

The notebook is a view of one branch. Each user node remembers the cell that made it.
Running a cell whose earlier node is on the active path forks there: changed text is an
edit (a sibling user node), unchanged text a retry (a sibling answer). Any other cell
appends under the current leaf. So "Run All" after editing cell 1 builds a fresh branch
top to bottom, and the old branch stays one click away.

Pure: it reads the tree and returns a decision; the session carries it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..history.tree import Node, SessionTree, is_real_user_message

Action = Literal["append", "edit", "retry"]


@dataclass(frozen=True)
class CellDecision:
    """``append`` under the leaf, ``edit`` = new user node beside ``node``, or ``retry`` it."""

    action: Action
    node: Node | None = None  # the cell's earlier user node, for edit and retry


def cell_node_on_path(tree: SessionTree, cell_id: str) -> Node | None:
    """The user node this cell made that lies on the active path, if any (newest first).

    A question asked outside a notebook cell (the panel, ``%chat edit``, an import) has
    no cell id; a notebook exported from the branch (share/notebook.py) names its cell
    by the question's node id, so that cell is this question's too.
    """
    if tree.leaf is None:
        return None
    for node in reversed(tree.path_nodes(tree.leaf)):
        if node.role != "user":
            continue
        recorded = node.meta.get("cell_id") if node.meta else None
        if recorded == cell_id or (
            recorded is None and node.id == cell_id and is_real_user_message(node.message)
        ):
            return node
    return None


def decide(tree: SessionTree, cell_id: str | None, content: str | list[Any]) -> CellDecision:
    """Apply the rule for one run of a cell with this id and (substituted) content.

    The same content is a retry: the same text, or for a question with images or files,
    the same blocks (the same figure, re-rendered, is the same PNG).
    """
    if not cell_id:
        return CellDecision("append")
    earlier = cell_node_on_path(tree, cell_id)
    if earlier is None:
        return CellDecision("append")
    if _as_blocks(earlier.message.get("content")) == _as_blocks(content):
        return CellDecision("retry", earlier)
    return CellDecision("edit", earlier)


def _as_blocks(content: Any) -> Any:
    """A string content as the one text block it stands for, so both forms compare."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content
