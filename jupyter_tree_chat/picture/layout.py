"""The tidy-tree layout: where each node of a hierarchy sits, as a pure function.

This is d3-hierarchy's ``tree()`` (Reingold-Tilford "tidy" trees, laid out in linear
time with Buchheim, Jünger and Leipert's improvement of Walker's algorithm) written
out in Python, so the kernel and the command line draw exactly what the front end
draws with d3-hierarchy itself, without Node. The steps, the names (``prelim``,
``mod``, ``change``, ``shift``, ``thread``, ``ancestor``) and the order of every
floating-point operation follow d3-hierarchy 3.1, so the numbers come out identical;
tests/picture/test_picture_layout.py runs d3-hierarchy on the same trees and compares.

Both walks are loops over explicit orders, never recursion: a session tree can be
100,000 nodes deep.

The result is ``tree().nodeSize([1, 1])``: ``x`` in sibling units (1 between siblings,
2 between cousins), the root at 0; the depth is the other coordinate.
"""

from __future__ import annotations

from collections.abc import Sequence


def tidy_tree(children: Sequence[Sequence[int]], root: int) -> list[float]:
    """The x of every node reachable from ``root`` (``children[i]``: i's children in order).

    Nodes not under ``root`` get 0.0.
    """
    count = len(children)
    fake = count  # the parent d3 gives the root, so the root has a left-sibling slot
    parent = [-1] * (count + 1)
    number = [0] * (count + 1)  # position among its siblings
    kids: list[Sequence[int]] = [*children, [root]]
    order = _preorder(kids, root)
    for node in order:
        for position, child in enumerate(kids[node]):
            parent[child], number[child] = node, position
    parent[root], number[root] = fake, 0

    prelim = [0.0] * (count + 1)
    mod = [0.0] * (count + 1)
    change = [0.0] * (count + 1)
    shift = [0.0] * (count + 1)
    thread = [-1] * (count + 1)
    ancestor = list(range(count + 1))
    default_ancestor = [-1] * (count + 1)

    def separation(a: int, b: int) -> float:
        return 1.0 if parent[a] == parent[b] else 2.0

    def next_left(v: int) -> int:
        return kids[v][0] if kids[v] else thread[v]

    def next_right(v: int) -> int:
        return kids[v][-1] if kids[v] else thread[v]

    def move_subtree(wm: int, wp: int, amount: float) -> None:
        step = amount / (number[wp] - number[wm])
        change[wp] -= step
        shift[wp] += amount
        change[wm] += step
        prelim[wp] += amount
        mod[wp] += amount

    def execute_shifts(v: int) -> None:
        total = 0.0
        changed = 0.0
        for w in reversed(kids[v]):
            prelim[w] += total
            mod[w] += total
            changed += change[w]
            total += shift[w] + changed

    def apportion(v: int, w: int, default: int) -> int:
        if w < 0:
            return default
        vip = vop = v
        vim = w
        vom = kids[parent[vip]][0]
        sip, sop, sim, som = mod[vip], mod[vop], mod[vim], mod[vom]
        while True:
            vim, vip = next_right(vim), next_left(vip)
            if vim < 0 or vip < 0:
                break
            vom, vop = next_left(vom), next_right(vop)
            ancestor[vop] = v
            amount = prelim[vim] + sim - prelim[vip] - sip + separation(vim, vip)
            if amount > 0:
                left = ancestor[vim] if parent[ancestor[vim]] == parent[v] else default
                move_subtree(left, v, amount)
                sip += amount
                sop += amount
            sim += mod[vim]
            sip += mod[vip]
            som += mod[vom]
            sop += mod[vop]
        if vim >= 0 and next_right(vop) < 0:
            thread[vop] = vim
            mod[vop] += sim - sop
        if vip >= 0 and next_left(vom) < 0:
            thread[vom] = vip
            mod[vom] += sip - som
            default = v
        return default

    for v in _postorder(kids, root):  # the first walk: children first, left to right
        up = parent[v]
        siblings = kids[up]
        w = siblings[number[v] - 1] if number[v] else -1
        if kids[v]:
            execute_shifts(v)
            midpoint = (prelim[kids[v][0]] + prelim[kids[v][-1]]) / 2
            if w >= 0:
                prelim[v] = prelim[w] + separation(v, w)
                mod[v] = prelim[v] - midpoint
            else:
                prelim[v] = midpoint
        elif w >= 0:
            prelim[v] = prelim[w] + separation(v, w)
        held = default_ancestor[up]
        default_ancestor[up] = apportion(v, w, held if held >= 0 else siblings[0])
    mod[fake] = -prelim[root]

    x = [0.0] * count
    for v in order:  # the second walk: sum the modifiers from the root down
        x[v] = prelim[v] + mod[parent[v]]
        mod[v] += mod[parent[v]]
    return x


def _preorder(kids: Sequence[Sequence[int]], root: int, *, mirrored: bool = False) -> list[int]:
    """Parents before children, children left to right (d3's ``eachBefore``); ``mirrored``:
    right to left."""
    order: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(kids[node] if mirrored else reversed(kids[node]))
    return order


def _postorder(kids: Sequence[Sequence[int]], root: int) -> list[int]:
    """Children before parents, left subtrees first (d3's ``eachAfter``): the mirrored
    pre-order, backwards."""
    return _preorder(kids, root, mirrored=True)[::-1]
