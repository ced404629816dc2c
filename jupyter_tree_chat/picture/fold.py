"""Which part of a session tree a picture shows: hidden branches and big subtrees fold.

A session can hold 100,000 nodes in one chain or a fan of hundreds of sibling answers;
a picture of all of them is a smudge. ``fold`` picks the visible *items*: real nodes,
and folds that stand for the nodes they hide, each with a count, so nothing vanishes
silently. The rules, in the order they apply to each node's children:

1. **hidden**: a child with a ``hidden`` record (and not on the current path) goes
   into a ``hidden`` fold ("2 hidden"), unless hidden branches are shown.
2. **wide**: of more than ``width`` children, the first ``width - 1`` stay and the rest
   go into a ``more`` fold ("+57"); the child on the current path always stays.
3. **budget**: once ``budget`` nodes are shown (counted breadth first, checked once per
   node), a node's children join the ``more`` fold too; the current path still shows.
4. **deep**: inside a chain of single children, a stretch of at least ``CHAIN_MIN``
   plain nodes (``CHAIN_END`` from either end of the chain, not the current leaf, not
   labelled, not the end of a compaction link) becomes one ``chain`` fold ("⋯ 99,990").

A fold's ``key`` is stable, so a view that lets the user open a fold passes the opened
keys back in: ``chain:ID`` (ID: the first node it hides) and ``more:PARENT@I`` (I: the
place of the first child it hides) then show ``PAGE`` more nodes each, the rest folding
again under a new key, so one click never asks to draw 100,000 nodes; ``hidden:PARENT``
shows that node's hidden branches. PARENT is empty for the roots.
The front end (labextension/src, same rules) is checked against this module.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from ..history.tree import SessionTree, compaction_links

WIDTH = 6
"""Children shown under one node before the rest fold into ``+N``."""
BUDGET = 400
"""Real nodes shown before further subtrees fold (the current path always shows)."""
CHAIN_END = 3
"""Nodes kept at each end of a chain of single children."""
CHAIN_MIN = 4
"""The shortest stretch of a chain that folds (a shorter one is shown whole)."""
PAGE = 50
"""How many nodes an opened fold shows; the rest of it folds again, with a new key."""


@dataclass
class Item:
    """One thing the picture draws: a node (``kind`` "node") or a fold standing for others."""

    key: str
    kind: str  # "node", "chain", "more" or "hidden"
    parent: int  # index of the parent item, -1 for a root of the picture
    depth: int
    node_id: str | None = None
    count: int = 0  # folds: how many nodes it stands for
    branches: int = 0  # more and hidden folds: how many branches
    children: list[int] = field(default_factory=list)


@dataclass
class Folded:
    """The visible items (parents before children) and the current path's ids."""

    items: list[Item]
    on_path: set[str]


def fold(
    tree: SessionTree,
    *,
    leaf: str | None = None,
    labels: Mapping[str, str] | None = None,
    hidden: Collection[str] = (),
    show_hidden: bool = False,
    opened: Collection[str] = (),
    reveal: str | None = None,
    width: int = WIDTH,
    budget: int = BUDGET,
) -> Folded:
    """The items a picture of ``tree`` shows, breadth first from the roots.

    The path to ``leaf`` is the current path (always shown, folds in long chains
    aside); ``reveal`` (a node a view has selected) is always shown too.
    """
    on_path = {n.id for n in tree.path_nodes(leaf)} if leaf is not None else set()
    keep = on_path | ({n.id for n in tree.path_nodes(reveal)} if reveal is not None else set())
    keepers = {leaf, reveal, *(labels or {}), *compaction_links(tree.roots()).values()}
    builder = _Builder(tree, keep, keepers, set(hidden), show_hidden, set(opened))
    queue: deque[tuple[str | None, int]] = deque([(None, -1)])
    while queue:
        parent_id, parent_item = queue.popleft()
        kids, hid = builder.split_hidden(parent_id)
        opened_at = builder.opened_pages(parent_id)
        room = builder.shown < budget  # the budget is checked once per node
        whole = len(kids) <= width
        shown: list[str] = []
        more: list[str] = []
        first_folded = -1
        for i, kid in enumerate(kids):
            if (
                kid in keep
                or any(start <= i < start + PAGE for start in opened_at)
                or (room and (whole or i < width - 1))
            ):
                shown.append(kid)
            else:
                more.append(kid)
                first_folded = i if first_folded < 0 else first_folded
        for kid in shown:
            queue.append(builder.add_run(kid, parent_item))
        builder.add_fold(f"hidden:{parent_id or ''}", "hidden", parent_item, hid)
        builder.add_fold(f"more:{parent_id or ''}@{first_folded}", "more", parent_item, more)
    return Folded(builder.items, on_path)


class _Builder:
    """Appends items; keeps the rules' inputs in one place for ``fold``'s loop."""

    def __init__(
        self,
        tree: SessionTree,
        keep: set[str],
        keepers: set[str | None],
        hidden: set[str],
        show_hidden: bool,
        opened: set[str],
    ) -> None:
        self.tree, self.keep, self.keepers = tree, keep, keepers
        self.hidden, self.show_hidden, self.opened = hidden, show_hidden, opened
        self.items: list[Item] = []
        self.shown = 0  # real nodes so far, for the budget

    def kid_ids(self, node_id: str | None) -> list[str]:
        return [n.id for n in self.tree.children(node_id)]

    def folds_away(self, node_id: str, parent_id: str | None) -> bool:
        return (
            node_id in self.hidden
            and not self.show_hidden
            and node_id not in self.keep
            and f"hidden:{parent_id or ''}" not in self.opened
        )

    def split_hidden(self, parent_id: str | None) -> tuple[list[str], list[str]]:
        kids: list[str] = []
        hid: list[str] = []
        for kid in self.kid_ids(parent_id):
            (hid if self.folds_away(kid, parent_id) else kids).append(kid)
        return kids, hid

    def opened_pages(self, parent_id: str | None) -> list[int]:
        """Where the opened ``more`` folds under this node began (each shows ``PAGE``)."""
        prefix = f"more:{parent_id or ''}@"
        starts = []
        for key in self.opened:
            rest = key[len(prefix) :] if key.startswith(prefix) else ""
            if rest.isascii() and rest.isdigit():  # as the front end reads it: ASCII digits
                starts.append(int(rest))
        return starts

    def add(self, item: Item) -> int:
        index = len(self.items)
        self.items.append(item)
        if item.parent >= 0:
            self.items[item.parent].children.append(index)
        return index

    def depth_under(self, parent_item: int) -> int:
        return 0 if parent_item < 0 else self.items[parent_item].depth + 1

    def add_run(self, first: str, parent_item: int) -> tuple[str, int]:
        """``first`` and the chain of single children below it, its middle folded.

        Returns the chain's last node and its item: the next place to branch.
        """
        run = [first]
        while len(kids := self.kid_ids(run[-1])) == 1 and not self.folds_away(kids[0], run[-1]):
            run.append(kids[0])
        last = len(run) - 1
        index, at = parent_item, 0
        while at <= last:
            end = at  # the stretch of plain nodes that starts here, maybe empty
            while CHAIN_END <= end <= last - CHAIN_END and run[end] not in self.keepers:
                end += 1
            stop = max(end, at + 1)  # a short stretch (or a keeper) is shown whole
            if end - at >= CHAIN_MIN:
                if f"chain:{run[at]}" not in self.opened:
                    item = Item(f"chain:{run[at]}", "chain", index, self.depth_under(index))
                    item.count = end - at
                    index, at = self.add(item), end
                    continue
                stop = at + PAGE  # an opened fold shows a page; the rest folds again
            for node_id in run[at:stop]:
                item = Item(node_id, "node", index, self.depth_under(index), node_id=node_id)
                index = self.add(item)
                self.shown += 1
            at = stop
        return run[-1], index

    def add_fold(self, key: str, kind: str, parent_item: int, ids: list[str]) -> None:
        if not ids:
            return
        item = Item(key, kind, parent_item, self.depth_under(parent_item))
        item.count, item.branches = self.subtree_size(ids), len(ids)
        self.add(item)

    def subtree_size(self, ids: list[str]) -> int:
        """How many nodes the subtrees under ``ids`` hold (a loop: trees run deep)."""
        stack, size = list(ids), 0
        while stack:
            size += 1
            stack.extend(self.kid_ids(stack.pop()))
        return size
