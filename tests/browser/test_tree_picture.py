"""The tree as a picture in a real JupyterLab: the viewer draws a file as the SVG export
draws it (the same shapes at the same places, the current path bold); a click selects,
the keys walk parent, children and siblings, hover says what a node is; a 10,000-node
session folds to a few hundred shapes and a fold opens on click; in the panel a click
switches the kernel's session and the node menu hides a branch (a ``hidden`` record in
the file) and shows it again. Screenshots in test-artifacts/browser/, named after these tests.
"""

from __future__ import annotations

import json
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from contrast import CONTRAST_JS, assert_readable, set_theme
from lab_notebooks import open_and_run_all, records, write_notebook
from page_state import wait_until_still
from playwright.sync_api import expect

from jupyter_tree_chat.history.store import load_file, parse_session
from jupyter_tree_chat.picture import draw, fold
from jupyter_tree_chat.picture.fold import PAGE
from jupyter_tree_chat.picture.svg import PALETTE

pytestmark = pytest.mark.browser

VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"
SVG = "{http://www.w3.org/2000/svg}"
DRAWN_JS = """root => [...root.querySelectorAll('.jtc-pnode')].map(g => [g.dataset.id,
  g.getAttribute('transform'), g.getAttribute('class')])"""


def open_picture(page, lab, name: str):
    page.goto(f"{lab.url}/lab/tree/{name}?reset")
    view = page.locator(VIEW)
    expect(view).to_be_visible(timeout=60_000)
    view.get_by_role("button", name="Picture").click()
    expect(view.locator(".jtc-picture-svg")).to_be_visible()
    return view


def translate(text: str) -> tuple[float, float]:
    x, y = re.fullmatch(r"translate\(([-\d.e]+),([-\d.e]+)\)", text).groups()
    return float(x), float(y)


def exported_places(svg: str) -> dict[str, tuple[float, float]]:
    """Node id -> where the SVG export draws it (the id is in each node's title)."""
    root = ET.fromstring(svg)
    places = {}
    for group in root.iter(f"{SVG}g"):
        if "node" in (group.get("class") or "").split():
            node_id = group.find(f"{SVG}title").text.splitlines()[1].split(" · ")[1]
            places[node_id] = translate(group.get("transform"))
    return places


def test_the_viewer_draws_the_file_as_the_export_does_and_click_selects(
    lab, page, page_log, screenshot
):
    name = lab.put("branches.chat.jsonl")
    loaded = parse_session((lab.root / name).read_bytes())
    view = open_picture(page, lab, name)
    nodes = view.locator(".jtc-pnode")
    expect(nodes).to_have_count(len(loaded.tree))

    drawn = {i: (translate(t), c.split()) for i, t, c in view.evaluate(DRAWN_JS)}
    exported = exported_places(draw(loaded).svg)
    assert drawn.keys() == exported.keys()
    for node_id, (place, _) in drawn.items():  # the same drawing: the same places
        assert place == pytest.approx(exported[node_id], abs=0.01), node_id
    path = [n.id for n in loaded.tree.path_nodes(loaded.tree.leaf)]
    assert sorted(i for i, (_, c) in drawn.items() if "jtc-on-path" in c) == sorted(path)
    expect(view.locator(".jtc-edge-path")).to_have_count(len(path) - 1)
    expect(view.locator(".jtc-edge")).to_have_count(len(loaded.tree) - len(loaded.tree.roots()))
    expect(view.locator('.jtc-pnode[data-id="a3"]')).to_have_class(re.compile("jtc-leaf"))
    expect(view.locator('.jtc-pnode[data-id="a2"] .jtc-tag text')).to_have_text("concise")
    expect(view.locator('.jtc-pnode[data-id="a3"]')).to_have_class(re.compile("jtc-interrupted"))
    fills = {  # answers coloured by model, in the order the models first appear (as exported)
        answer: view.locator(f'.jtc-pnode[data-id="{answer}"] rect.jtc-shape').get_attribute("fill")
        for answer in ("a1", "a2", "a3")
    }
    assert fills == {"a1": PALETTE[0], "a2": PALETTE[1], "a3": PALETTE[0]}

    view.locator('.jtc-pnode[data-id="a2"] .jtc-shape').hover()  # hover: line, id, model
    tip = view.locator(".jtc-picture-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("A session tree keeps each branch")
    expect(tip).to_contain_text("assistant · a2")
    expect(tip).to_contain_text("claude-haiku")

    view.locator('.jtc-pnode[data-id="a2"] .jtc-shape').click()  # the viewer selects
    expect(view.locator(".jtc-pnode.jtc-selected")).to_have_attribute("data-id", "a2")
    expect(view.locator(".jtc-conversation .jtc-msg").last).to_have_attribute("data-id", "a2")
    screenshot("selected")

    focus = view.locator(".jtc-pnode.jtc-focus")
    view.locator(".jtc-picture-svg").press("ArrowUp")  # siblings: a2 -> a1
    expect(focus).to_have_attribute("data-id", "a1")
    view.locator(".jtc-picture-svg").press("ArrowRight")  # a child: u2
    expect(focus).to_have_attribute("data-id", "u2")
    view.locator(".jtc-picture-svg").press("ArrowLeft")  # the parent again
    view.locator(".jtc-picture-svg").press("ArrowLeft")  # and its parent: u1
    expect(focus).to_have_attribute("data-id", "u1")
    expect(view.locator(".jtc-conversation .jtc-msg").last).to_have_attribute("data-id", "u1")
    view.locator(".jtc-picture-svg").press("ArrowDown")  # the next root
    expect(focus).to_have_attribute("data-id", "u1b")
    assert not page_log.page_errors


FAN = 120  # answers to one question (a fan-out), folded a page at a time


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_picture_reads_well_in_jupyterlab_light_and_dark(lab, page, screenshot, theme):
    name = lab.put("branches.chat.jsonl", f"picture-{theme}.chat.jsonl")
    view = open_picture(page, lab, name)
    try:
        set_theme(page, theme)
        view.locator('.jtc-pnode[data-id="a1"] .jtc-shape').hover()  # with its tooltip
        wait_until_still(page)  # the theme's stylesheet and fonts are in
        screenshot(theme)
        needed = ["text", "div.jtc-picture-tip", "button.jtc-button.jtc-quiet.jtc-mode"]
        assert_readable(view.evaluate(CONTRAST_JS), needed)
    finally:
        set_theme(page, "light")  # the theme is a setting: leave it as the other tests expect


def random_session(path: Path, size: int, seed: int = 16) -> str:
    """``size`` nodes: long conversations, forks everywhere, one fan of ``FAN`` answers."""
    rng = random.Random(seed)
    lines, ids, roles = [], [], {}
    for i in range(size):
        if not ids:
            parent = None
        elif 5000 <= i < 5000 + FAN:
            parent = "n00000"  # answers to the first question
        elif rng.random() < 0.6:
            parent = ids[-1]
        else:
            parent = rng.choice(ids)
        role = "user" if parent is None or roles[parent] == "assistant" else "assistant"
        node_id = f"n{i:05d}"
        meta = {"model": rng.choice(["claude-a", "claude-b"])} if role == "assistant" else None
        record = {"id": node_id, "parentId": parent, "message": {"role": role, "content": f"m{i}"}}
        lines.append(json.dumps({**record, **({"meta": meta} if meta else {})}))
        ids.append(node_id)
        roles[node_id] = role
    path.write_text("\n".join(lines) + "\n")
    return path.name


def test_a_10000_node_session_folds_and_a_fold_opens_on_click(lab, page, page_log, screenshot):
    name = random_session(lab.root / "big.chat.jsonl", 10_000)
    tree = load_file(lab.root / name).tree
    expected = fold(tree, leaf=tree.leaf)
    shown = sum(1 for item in expected.items if item.kind == "node")
    view = open_picture(page, lab, name)
    expect(view.locator(".jtc-pnode")).to_have_count(shown)
    expect(view.locator(".jtc-pfold")).to_have_count(len(expected.items) - shown)
    assert shown < 1_000  # a picture of 10,000 nodes, folded to a few hundred shapes
    screenshot("folded")

    fan = max((i for i in expected.items if i.kind == "more"), key=lambda i: i.branches)
    assert fan.branches > PAGE
    view.locator(f'.jtc-pfold[data-key="{fan.key}"]').dispatch_event("click")
    opened = fold(tree, leaf=tree.leaf, opened={fan.key})
    grown = sum(1 for item in opened.items if item.kind == "node")
    expect(view.locator(".jtc-pnode")).to_have_count(grown)
    start = int(fan.key.rsplit("@", 1)[1])  # one page opened, the rest folded again:
    rest = view.locator(f'.jtc-pfold[data-key="{fan.key.rsplit("@", 1)[0]}@{start + PAGE}"]')
    expect(rest).to_have_count(1)

    canvas = view.locator(".jtc-picture-view")
    before = canvas.get_attribute("transform")
    view.locator(".jtc-picture-svg").hover()
    page.mouse.wheel(0, -300)  # zoom
    expect(canvas).not_to_have_attribute("transform", before or "")
    box = view.locator(".jtc-picture-svg").bounding_box()
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 320, box["y"] + 260, steps=5)  # pan
    page.mouse.up()
    assert canvas.get_attribute("transform") != before
    screenshot("zoomed")

    view.get_by_role("button", name="List").click()  # the list is a toggle away
    expect(view.locator(".jtc-tree .jtc-row").first).to_be_visible()
    expect(view.locator(".jtc-picture")).to_be_hidden()
    assert not page_log.page_errors


def test_the_viewer_folds_hidden_branches_and_shows_them_on_request(lab, page, screenshot):
    source = (lab.root / lab.put("branches.chat.jsonl")).read_bytes()
    (lab.root / "tidied.chat.jsonl").write_bytes(
        source.rsplit(b"\n", 1)[0] + b"\n" + b'{"type":"hidden","id":"u1b"}\n'
    )
    view = open_picture(page, lab, "tidied.chat.jsonl")
    expect(view.locator('.jtc-pnode[data-id="u1b"]')).to_have_count(0)
    expect(view.locator(".jtc-pfold-hidden text")).to_have_text("1 hidden")
    toggle = view.get_by_role("button", name="Show 1 hidden branch")
    toggle.click()
    expect(view.locator('.jtc-pnode[data-id="u1b"]')).to_have_class(re.compile("jtc-hidden-node"))
    view.get_by_role("button", name="List").click()
    expect(view.locator('.jtc-row[data-id="u1b"] .jtc-hidden-badge')).to_have_text("hidden")
    view.get_by_role("button", name="Fold hidden branches").click()
    expect(view.locator('.jtc-row[data-id="u1b"]')).to_have_count(0)
    screenshot("list")


def test_a_compaction_is_linked_to_the_branch_it_summarised(lab, page):
    lines = [
        {"id": "q", "parentId": None, "message": {"role": "user", "content": "a long talk"}},
        {"id": "a", "parentId": "q", "message": {"role": "assistant", "content": "yes"}},
        {"id": "s", "parentId": None, "message": {"role": "user", "content": "Summary: ..."},
         "meta": {"compacted_from": "a"}},
        {"id": "k", "parentId": "s", "message": {"role": "assistant", "content": "Understood."},
         "meta": {"synthetic": True}},
    ]  # fmt: skip
    (lab.root / "compacted.chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    view = open_picture(page, lab, "compacted.chat.jsonl")
    expect(view.locator(".jtc-pnode")).to_have_count(4)
    expect(view.locator(".jtc-compaction")).to_have_count(1)  # dashed, from a to s
    expect(view.locator(".jtc-edge")).to_have_count(2)  # the tree's own edges: nodes - roots


def test_the_panel_s_picture_switches_on_click_and_hides_a_branch(lab, page, page_log, screenshot):
    write_notebook(
        lab.root / "drawn.ipynb",
        [
            "%load_ext jupyter_tree_chat\n%config TreeChat.provider = 'offline'",
            "%%chat\nWhat is a session tree?",
            "%chat edit 1 Say briefly what a session tree is",
            "%%chat\nAnd what is a branch?",
            "%chat panel",
        ],
    )
    session_file = lab.root / "drawn.chat.jsonl"
    cells = open_and_run_all(page, lab, "drawn.ipynb").locator(".jp-Cell")
    panel = cells.nth(4).locator(".jtc-panel")
    expect(panel.locator(".jtc-tree .jtc-row")).to_have_count(6, timeout=60_000)
    panel.get_by_role("button", name="Picture").click()
    nodes = panel.locator(".jtc-pnode")
    expect(nodes).to_have_count(6)
    tree = load_file(session_file).tree
    first_root, edited_root = tree.roots()
    expect(panel.locator(".jtc-edge-path")).to_have_count(3)  # the edited branch, 4 nodes
    panel.scroll_into_view_if_needed()
    screenshot("panel")

    panel.locator(f'.jtc-pnode[data-id="{first_root.id}"] .jtc-shape').click()  # switch
    old_answer = tree.children(first_root.id)[0].id
    expect(panel.locator(".jtc-pnode.jtc-leaf")).to_have_attribute("data-id", old_answer)
    expect(panel.locator(".jtc-edge-path")).to_have_count(1)
    assert records(session_file)[-1] == {"type": "leaf", "id": old_answer}

    # the current branch cannot be hidden; the other one can, and comes back
    panel.locator(f'.jtc-pnode[data-id="{first_root.id}"] .jtc-shape').click(button="right")
    expect(panel.get_by_role("menuitem", name="Hide this branch")).to_be_disabled()
    page.keyboard.press("Escape")
    expect(panel.locator(".jtc-menu")).to_have_count(0)
    panel.locator(f'.jtc-pnode[data-id="{edited_root.id}"] .jtc-shape').click(button="right")
    panel.get_by_role("menuitem", name="Hide this branch").click()
    expect(panel.locator(".jtc-pfold-hidden")).to_have_count(1)
    expect(nodes).to_have_count(2)
    assert records(session_file)[-1] == {"type": "hidden", "id": edited_root.id, "hidden": True}
    screenshot("hidden")

    panel.get_by_role("button", name="Show 1 hidden branch").click()
    hidden_root = panel.locator(f'.jtc-pnode[data-id="{edited_root.id}"]')
    expect(hidden_root).to_have_class(re.compile("jtc-hidden-node"))
    hidden_root.locator(".jtc-shape").click(button="right")
    panel.get_by_role("menuitem", name="Show this branch again").click()
    expect(nodes).to_have_count(6)
    expect(hidden_root).not_to_have_class(re.compile("jtc-hidden-node"))
    assert records(session_file)[-1] == {"type": "hidden", "id": edited_root.id, "hidden": False}

    # keys: walk to the edited branch's answer and switch there with Enter
    svg = panel.locator(".jtc-picture-svg")
    svg.focus()
    svg.press("ArrowLeft")  # from the leaf (the old answer) to its question
    svg.press("ArrowDown")  # the next root: the edited question
    expect(panel.locator(".jtc-pnode.jtc-focus")).to_have_attribute("data-id", edited_root.id)
    svg.press("Enter")
    expect(panel.locator(".jtc-pnode.jtc-leaf")).not_to_have_attribute("data-id", old_answer)
    assert load_file(session_file).tree.leaf != old_answer
    assert len(load_file(session_file).tree) == 6  # nothing was ever deleted
    assert not page_log.page_errors
