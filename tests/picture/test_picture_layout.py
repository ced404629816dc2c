"""The tidy-tree layout gives d3-hierarchy's numbers exactly, on any shape, at any depth.

d3-hierarchy itself runs under Node (the version in labextension/package-lock.json, the
one the front end draws with) on the same trees; every x must be equal, not close.
"""

from __future__ import annotations

import random

import pytest
from helpers.node_runner import node_module

from jupyter_tree_chat.picture.layout import tidy_tree

# d3's hierarchy() also computes every node's height, which costs depth x nodes on a
# chain (minutes at 100,000 deep); tree() never reads heights, so the deep case builds
# the same nodes (hierarchy.prototype, public API) with a loop of its own.
RUNNER = """
import { hierarchy, tree } from "./bundle.mjs";
const make = (data, depth, parent) =>
  Object.assign(Object.create(hierarchy.prototype), { data, depth, height: 0, parent });
function nodes(kids, root) {
  const top = make(root, 0, null);
  const stack = [top];
  while (stack.length) {
    const node = stack.pop();
    if (!kids[node.data].length) continue;
    node.children = kids[node.data].map((data) => make(data, node.depth + 1, node));
    stack.push(...node.children);
  }
  return top;
}
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(({ kids, root, fast }) => {
    const built = fast ? nodes(kids, root) : hierarchy(root, (i) => kids[i]);
    const laid = tree().nodeSize([1, 1])(built);
    const x = new Array(kids.length).fill(0);
    laid.each((node) => { x[node.data] = node.x; });
    return x;
  });
  process.stdout.write(JSON.stringify(out));
});
"""


@pytest.fixture(scope="module")
def d3_tree(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("d3")
    return node_module("node_modules/d3-hierarchy/dist/d3-hierarchy.mjs", RUNNER, work)


def random_tree(size: int, shape: str, rng: random.Random) -> list[list[int]]:
    """Children lists of ``size`` nodes under node 0: bushy, stringy or top-heavy."""
    kids: list[list[int]] = [[] for _ in range(size)]
    for node in range(1, size):
        if shape == "bushy":
            parent = rng.randrange(node)
        elif shape == "stringy":  # mostly continue the newest node: long chains, some forks
            parent = max(0, node - 1 - int(rng.expovariate(1.5)))
        else:
            parent = rng.randrange(max(1, node // 4))
        kids[parent].append(node)
    return kids


def test_the_layout_matches_d3_hierarchy_on_random_trees(d3_tree) -> None:
    rng = random.Random(16)
    cases = [
        {"kids": random_tree(size, shape, rng), "root": 0}
        for size in (1, 2, 3, 4, 7, 12, 40, 150, 600, 2500)
        for shape in ("bushy", "stringy", "top-heavy")
        for _ in range(6 if size < 1000 else 1)
    ]
    expected = d3_tree(cases)
    for case, want in zip(cases, expected, strict=True):
        assert tidy_tree(case["kids"], case["root"]) == want


def test_the_layout_matches_d3_on_a_fan_a_forest_and_a_100000_deep_chain(d3_tree) -> None:
    fan = [[*range(1, 2001)]] + [[] for _ in range(2000)]
    chain = [[i + 1] for i in range(99_999)] + [[]]
    chain[500].append(len(chain))  # one fork deep down
    chain.append([])
    forest = [[1, 4, 6], [2, 3], [], [], [5], [], [7], []]  # node 0 plays the unseen root
    cases = [{"kids": kids, "root": 0, "fast": kids is chain} for kids in (fan, chain, forest)]
    for case, want in zip(cases, d3_tree(cases), strict=True):
        assert tidy_tree(case["kids"], case["root"]) == want


def test_siblings_sit_one_apart_and_a_parent_centres_over_its_children() -> None:
    #     0
    #   / | \
    #  1  2  3
    #        |
    #        4
    x = tidy_tree([[1, 2, 3], [], [], [4], []], 0)
    assert x == [0.0, -1.0, 0.0, 1.0, 1.0]


def test_nodes_outside_the_root_s_subtree_stay_at_zero() -> None:
    assert tidy_tree([[1], [], [3], []], 0) == [0.0, 0.0, 0.0, 0.0]
