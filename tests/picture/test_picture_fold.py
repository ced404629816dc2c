"""What a picture shows: every node is drawn or counted in a fold, and folds open by key."""

from __future__ import annotations

import random

from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.picture.fold import BUDGET, CHAIN_END, PAGE, WIDTH, Folded, fold


def message(role: str, text: str = "") -> dict:
    return {"role": role, "content": text or role}


def chain(tree: SessionTree, parent: str | None, prefix: str, length: int) -> list[str]:
    """``length`` alternating user/assistant nodes under ``parent``; returns their ids."""
    ids = []
    first = "assistant" if parent and tree.get(parent).role == "user" else "user"
    for i in range(length):
        node_id = f"{prefix}{i}"
        role = first if i % 2 == 0 else ("user" if first == "assistant" else "assistant")
        tree.add(Node(node_id, parent, message(role)), check_roles=False)
        ids.append(node_id)
        parent = node_id
    return ids


def shown(folded: Folded) -> list[str]:
    return [item.node_id for item in folded.items if item.node_id is not None]


def folds(folded: Folded) -> dict[str, tuple[int, int]]:
    return {i.key: (i.count, i.branches) for i in folded.items if i.kind != "node"}


def on_path_or_folded_in_it(tree: SessionTree, folded: Folded) -> set[str]:
    """The nodes drawn on the path, and those a chain fold on the path stands for."""
    found = set(shown(folded)) & folded.on_path
    for item in folded.items:
        if item.kind == "chain" and item.key.removeprefix("chain:") in folded.on_path:
            node_id = item.key.removeprefix("chain:")
            for _ in range(item.count):
                found.add(node_id)
                node_id = tree.children(node_id)[0].id if tree.children(node_id) else ""
    return found


def accounted(folded: Folded) -> int:
    """Nodes drawn plus nodes counted in folds: nothing may vanish from a picture."""
    return len(shown(folded)) + sum(i.count for i in folded.items if i.kind != "node")


def test_the_chapter_s_fork_is_drawn_whole_parents_before_children() -> None:
    tree = SessionTree()
    chain(tree, None, "x", 5)  # A B C D E of the chapter
    chain(tree, "x1", "y", 2)  # C' D' forking at B
    folded = fold(tree, leaf="y1")
    assert sorted(shown(folded)) == sorted(n.id for n in tree) and folds(folded) == {}
    assert folded.on_path == {"x0", "x1", "y0", "y1"}
    for index, item in enumerate(folded.items):
        assert item.parent < index and item.depth == tree.depth(item.node_id or "") - 1
        assert [folded.items[c].parent for c in item.children] == [index] * len(item.children)


def test_a_hidden_branch_folds_into_a_count_and_shows_on_request() -> None:
    tree = SessionTree()
    chain(tree, None, "r", 2)
    chain(tree, "r1", "kept", 2)
    chain(tree, "r1", "gone", 3)
    chain(tree, "r1", "also", 1)
    folded = fold(tree, leaf="kept1", hidden={"gone0", "also0"})
    assert folds(folded) == {"hidden:r1": (4, 2)}
    assert "gone0" not in shown(folded) and accounted(folded) == len(tree)
    for everything in (
        fold(tree, leaf="kept1", hidden={"gone0", "also0"}, show_hidden=True),
        fold(tree, leaf="kept1", hidden={"gone0", "also0"}, opened={"hidden:r1"}),
    ):
        assert len(shown(everything)) == len(tree) and folds(everything) == {}


def test_the_current_path_shows_even_inside_a_hidden_branch() -> None:
    tree = SessionTree()
    chain(tree, None, "r", 2)
    chain(tree, "r1", "old", 2)
    folded = fold(tree, leaf="old1", hidden={"old0"})  # switched into it after hiding
    assert "old1" in shown(folded) and folds(folded) == {}


def test_a_wide_fan_keeps_width_children_and_the_path_child_and_opens_a_page_at_a_time() -> None:
    tree = SessionTree()
    chain(tree, None, "q", 1)
    for i in range(120):
        chain(tree, "q0", f"a{i:03}.", 2)  # 120 answers, each with a follow-up
    folded = fold(tree, leaf="a033.1")
    kids = [folded.items[c] for c in folded.items[0].children]
    assert [k.node_id for k in kids[:-1]] == [f"a{i:03}.0" for i in range(WIDTH - 1)] + ["a033.0"]
    more = kids[-1]
    assert (more.key, more.count, more.branches) == (f"more:q0@{WIDTH - 1}", 2 * 114, 114)
    assert accounted(folded) == len(tree)

    opened = fold(tree, leaf="a033.1", opened={more.key})  # a click: PAGE more answers
    kids = [opened.items[c] for c in opened.items[0].children]
    assert len(kids) == WIDTH - 1 + PAGE + 1 and kids[-1].key == f"more:q0@{WIDTH - 1 + PAGE}"
    again = fold(tree, leaf="a033.1", opened={more.key, kids[-1].key})  # and another
    assert len(again.items[0].children) == WIDTH - 1 + 2 * PAGE + 1 and accounted(again) == len(
        tree
    )


def test_a_100000_deep_chain_folds_its_middle_and_keeps_the_leaf_and_labels() -> None:
    tree = SessionTree()
    ids = chain(tree, None, "n", 100_000)
    labels = {ids[50_000]: "half way"}
    folded = fold(tree, leaf=ids[-1], labels=labels)
    assert shown(folded) == [*ids[:CHAIN_END], ids[50_000], *ids[-CHAIN_END:]]
    assert folds(folded) == {
        f"chain:{ids[CHAIN_END]}": (50_000 - CHAIN_END, 0),
        f"chain:{ids[50_001]}": (100_000 - 50_001 - CHAIN_END, 0),
    }
    assert accounted(folded) == len(tree)
    opened = fold(tree, leaf=ids[-1], labels=labels, opened={f"chain:{ids[50_001]}"})
    assert shown(opened)[3 : 4 + PAGE] == ids[50_000 : 50_001 + PAGE]  # a click: one page
    assert folds(opened) == {
        f"chain:{ids[CHAIN_END]}": (50_000 - CHAIN_END, 0),
        f"chain:{ids[50_001 + PAGE]}": (100_000 - 50_001 - PAGE - CHAIN_END, 0),
    }


def test_a_node_a_view_selected_shows_wherever_it_is() -> None:
    tree = SessionTree()
    chain(tree, None, "q", 1)
    for i in range(20):
        chain(tree, "q0", f"a{i:02}.", 30)  # 20 long branches: folded wide and deep
    deep_in_a_folded_branch = "a17.15"
    assert deep_in_a_folded_branch not in shown(fold(tree, leaf="a00.29"))
    folded = fold(tree, leaf="a00.29", reveal=deep_in_a_folded_branch)
    assert deep_in_a_folded_branch in shown(folded) and "a17.0" in shown(folded)
    assert folded.on_path == {n.id for n in tree.path_nodes("a00.29")}  # bold: the leaf's
    assert accounted(folded) == len(tree)


def test_a_short_chain_is_not_folded() -> None:
    tree = SessionTree()
    ids = chain(tree, None, "n", 2 * CHAIN_END + 3)  # a stretch of 3 is shown whole
    assert shown(fold(tree, leaf=ids[-1])) == ids


def test_past_the_budget_subtrees_fold_breadth_first_and_the_path_still_shows() -> None:
    rng = random.Random(5)
    tree = SessionTree()
    chain(tree, None, "root", 1)
    ids = ["root0"]
    for i in range(10_000):
        parent = rng.choice(ids)
        tree.add(Node(f"n{i}", parent, message("user")), check_roles=False)
        ids.append(f"n{i}")
    leaf = max(ids, key=tree.depth)
    folded = fold(tree, leaf=leaf)
    path = [n.id for n in tree.path_nodes(leaf)]
    assert on_path_or_folded_in_it(tree, folded) == set(path)
    assert len(shown(folded)) <= BUDGET + len(path)
    assert accounted(folded) == len(tree)
    depths = [
        item.depth for item in folded.items if item.kind == "node" and item.node_id not in path
    ]
    assert max(depths) <= max(tree.depth(i) for i in ids[: BUDGET + 1])  # shallow ones first


def test_nothing_vanishes_from_random_trees_with_random_hidden_branches() -> None:
    rng = random.Random(16)
    for case in range(60):
        tree = SessionTree()
        ids: list[str] = []
        for i in range(rng.randrange(1, 400)):
            parent = rng.choice(ids) if ids and rng.random() < 0.9 else None
            if parent and rng.random() < 0.7:
                parent = ids[-1]  # long chains
            tree.add(Node(f"c{case}.{i}", parent, message("user")), check_roles=False)
            ids.append(f"c{case}.{i}")
        hidden = set(rng.sample(ids, min(len(ids), rng.randrange(4))))
        leaf = rng.choice(ids)
        folded = fold(tree, leaf=leaf, hidden=hidden, width=rng.randrange(2, 8), budget=50)
        assert accounted(folded) == len(tree)
        assert leaf in shown(folded)
        assert on_path_or_folded_in_it(tree, folded) == {n.id for n in tree.path_nodes(leaf)}
        assert len(set(shown(folded))) == len(shown(folded))  # each node drawn once
