"""The SVG, parsed back: one shape per drawn item, the edges of a tree, the path bold,
answers coloured by model, and the session's text only ever as text (hostile or not)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from helpers import DATA

from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.picture import draw
from jupyter_tree_chat.picture.svg import PALETTE

SVG = "{http://www.w3.org/2000/svg}"
PAYLOADS = [p["payload"] for p in json.loads((DATA / "xss_payloads.json").read_text())["payloads"]]
EXECUTABLE = {"script", "foreignObject", "a", "iframe", "image", "use", "style", "set", "animate"}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def answer(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def chapter_tree() -> SessionTree:
    """A → B → C → D → E, and C' → D' forking at B (the current branch)."""
    tree = SessionTree()
    for node_id, make in (("A", user), ("B", answer), ("C", user), ("D", answer), ("E", user)):
        tree.append(node_id, make(node_id))
    tree.fork("B", "C'", user("C'"))
    tree.append("D'", answer("D'"))
    return tree


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # strict XML: a stray '<' or control character fails here


def groups(root: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if kind in (g.get("class") or "").split()]


def edges(root: ET.Element) -> list[ET.Element]:
    return [p for p in root.iter(f"{SVG}path") if "edge" in (p.get("class") or "").split()]


def titles(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}title")]


def test_one_shape_per_node_edges_are_nodes_minus_roots_and_the_path_is_bold() -> None:
    tree = chapter_tree()
    tree.fork(None, "R", user("another root"))
    tree.switch("D'")
    root = parse(draw(tree).svg)
    nodes = groups(root, "node")
    assert len(nodes) == len(tree) == 8
    assert len(edges(root)) == len(nodes) - 2  # two roots
    bold = [e for e in edges(root) if "path" in e.get("class", "").split()]
    assert len(bold) == 3  # A-B, B-C', C'-D'
    assert {titles(g)[0].splitlines()[1].split(" · ")[1] for g in groups(root, "path")} == {
        "A",
        "B",
        "C'",
        "D'",
    }
    assert [titles(g)[0].splitlines()[1] for g in groups(root, "current")] == ["assistant · D'"]
    assert sorted(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "caption") == sorted(
        n.id for n in tree
    )


def test_questions_and_answers_differ_in_shape_and_fan_out_answers_by_model() -> None:
    tree = SessionTree()
    tree.append("q", user("Which is best?"))
    for i, model in enumerate(["claude-opus", "claude-haiku", "claude-opus", "claude-sonnet"]):
        tree.fork("q", f"a{i}", answer(f"answer {i}"), {"model": model})
    root = parse(draw(tree).svg)
    shapes = {g.get("class").split()[1]: g for g in groups(root, "node")}
    assert shapes["user"].find(f"{SVG}circle") is not None
    answers = groups(root, "assistant")
    fills = [g.find(f"{SVG}rect").get("fill") for g in answers]
    assert fills == [PALETTE[0], PALETTE[1], PALETTE[0], PALETTE[2]]
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    assert [t.text for t in legend.iter(f"{SVG}text")][-3:] == [
        "claude-opus", "claude-haiku", "claude-sonnet"
    ]  # fmt: skip


def test_labels_are_tags_and_interrupted_replies_and_compaction_links_are_marked() -> None:
    tree = chapter_tree()
    tree.add(Node("cut", "E", answer("half a rep"), {"interrupted": True}))
    tree.compact("the gist", "cut", "S", "S2")
    root = parse(draw(tree, labels={"B": "fork point"}).svg)
    tags = [g for g in root.iter(f"{SVG}g") if g.get("class") == "tag"]
    assert [t.find(f"{SVG}text").text for t in tags] == ["fork point"]
    (cut,) = groups(root, "interrupted")
    assert cut.find(f"{SVG}rect").get("stroke-dasharray") and "cut short" in titles(cut)[0]
    (link,) = [p for p in root.iter(f"{SVG}path") if p.get("class") == "compaction"]
    assert link.get("stroke-dasharray") and len(edges(root)) == len(tree) - 2


def test_folds_are_shapes_with_counts_and_hidden_branches_are_said() -> None:
    tree = SessionTree()
    tree.append("q0", user("q"))
    for i in range(1, 60):
        tree.append(f"q{i}", answer("a") if i % 2 else user("q"))
    tree.fork("q0", "old", answer("old answer"))
    tree.switch("q59")
    root = parse(draw(tree, hidden={"old"}).svg)
    (chain,) = groups(root, "chain")
    (hidden,) = groups(root, "hidden")
    assert [t.text for t in chain.iter(f"{SVG}text")] == ["⋯ 53"]
    assert [t.text for t in hidden.iter(f"{SVG}text")] == ["1 hidden"]
    drawn = len(groups(root, "node")) + len(groups(root, "fold"))
    assert drawn == 7 + 2 and len(edges(root)) == drawn - 1
    assert "1 hidden branch is not shown (nothing was deleted)" in [
        t.text for t in root.iter(f"{SVG}text")
    ]
    everything = parse(draw(tree, hidden={"old"}, show_hidden=True).svg)
    assert not groups(everything, "hidden") and len(groups(everything, "node")) == 8


def test_hostile_text_labels_ids_and_model_names_stay_text() -> None:
    tree = SessionTree()
    parent = None
    for i, payload in enumerate(PAYLOADS):
        node_id = f"{i}{payload}"  # ids are the user's data too
        tree.add(Node(node_id, parent, user(payload) if i % 2 == 0 else answer(payload),
                      None if i % 2 == 0 else {"model": payload}))  # fmt: skip
        parent = node_id
    control = "\x00\x01\x1b[31m\ufffe\ud800 ]]> <!-- &amp; &#x3c;"
    tree.fork(None, control, user(control))
    labels = {n.id: n.text for n in tree}
    svg = draw(tree, labels=labels, budget=10_000).svg
    root = parse(svg)
    for element in root.iter():
        name = element.tag.removeprefix(SVG)
        assert name not in EXECUTABLE
        assert not [a for a in element.attrib if a.lower().startswith("on") or "href" in a]
    assert "<script" not in svg and "javascript:" not in "".join(root.attrib.values())
    texts = "\n".join(t for t in root.itertext())
    for payload in PAYLOADS:
        assert payload in texts  # shown as written, in a title
    assert "\ufffd\ufffd\ufffd[31m" in texts  # what XML cannot hold becomes U+FFFD
