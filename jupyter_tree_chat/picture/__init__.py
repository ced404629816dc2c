"""The session tree as a picture: a tidy tree drawn as SVG, for cells, files and slides.

Three pure steps, each its own module: ``fold`` chooses what is shown (hidden branches
and big subtrees fold, with counts), ``layout`` places it (d3-hierarchy's tidy tree,
the same numbers the front end gets from d3-hierarchy), ``svg`` draws it. ``draw``
runs them over a tree, a ``Session`` or a loaded file::

    draw(tree)                  # a SessionTree: the picture of its current leaf's path
    draw(session)               # labels and hidden branches come along
    draw(result, leaf="3f2a")   # a LoadResult from the store
    draw(session, seen_by=answer_id)  # the messages that answer's request left out, faded

A ``TreePicture`` shows itself in a notebook (``_repr_svg_``) and saves to a file.
``%chat tree --svg`` and ``jupyter tree-chat export FILE --format svg`` use this.

May import ``history``, ``textview`` and ``i18n``; never the session nor Jupyter.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..history.store import refuse_session_target
from ..history.tree import SessionTree
from ..measures.seen import unseen_ids
from ..textview import hidden_branches
from .fold import BUDGET, WIDTH, Folded, fold
from .layout import tidy_tree
from .svg import write_svg

__all__ = ["TreePicture", "draw", "fold", "place", "tidy_tree"]


@dataclass(frozen=True)
class TreePicture:
    """An SVG drawing of a session tree; how many messages it shows and hides."""

    svg: str
    shown: int
    total: int
    hidden: int

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the SVG to ``path`` (never over a session file)."""
        target = Path(path)
        refuse_session_target(target)
        target.write_text(self.svg, encoding="utf-8")
        return target


def place(folded: Folded) -> list[float]:
    """The tidy-tree x of every item; the picture's roots hang under one unseen root."""
    items = folded.items
    children = [item.children for item in items]
    children.append([index for index, item in enumerate(items) if item.parent < 0])
    return tidy_tree(children, len(items))[: len(items)]


def draw(
    source: Any,
    *,
    leaf: str | None = None,
    labels: Mapping[str, str] | None = None,
    hidden: Collection[str] | None = None,
    show_hidden: bool = False,
    opened: Collection[str] = (),
    width: int = WIDTH,
    budget: int = BUDGET,
    seen_by: str | None = None,
) -> TreePicture:
    """The picture of a ``SessionTree``, or of anything holding one as ``.tree`` (a
    ``Session``, a ``LoadResult``), whose ``labels`` and ``hidden`` are then used.

    The current path (to ``leaf``, default the tree's current leaf) is drawn bold. With
    ``seen_by`` (an answer), the messages a context budget left out of its request are
    faded: what it saw is what stays solid (see measures/budget.py).
    """
    tree: SessionTree = source if isinstance(source, SessionTree) else source.tree
    labels = getattr(source, "labels", {}) if labels is None else labels
    hidden = getattr(source, "hidden", set()) if hidden is None else hidden
    leaf = tree.leaf if leaf is None else leaf
    folded = fold(
        tree,
        leaf=leaf,
        labels=labels,
        hidden=hidden,
        show_hidden=show_hidden,
        opened=opened,
        width=width,
        budget=budget,
    )
    hidden_count = 0 if show_hidden else len(hidden_branches(tree, hidden, leaf))
    unseen: set[str] = set()
    if seen_by is not None:
        answer = tree.resolve(seen_by)
        unseen = unseen_ids(tree.path_nodes(answer.id), (answer.meta or {}).get("context"))
    svg = write_svg(
        folded,
        place(folded),
        tree,
        leaf=leaf,
        labels=labels,
        hidden_count=hidden_count,
        unseen=unseen,
    )
    shown = sum(1 for item in folded.items if item.kind == "node")
    return TreePicture(svg, shown, len(tree), hidden_count)
