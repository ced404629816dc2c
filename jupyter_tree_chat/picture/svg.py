"""The picture as SVG: shapes for nodes and folds, edges, tags, a legend.

Everything taken from the session (message text, labels, ids, model names) becomes
the text of a ``<text>`` or ``<title>`` element through ``xml.etree``, which escapes it;
attribute values are this module's own numbers, colours and class names. So the SVG
carries no markup from the session, and nothing executable at all: no script, no event
attribute, no ``foreignObject``, no link, no style sheet (colours are presentation
attributes, which also keeps an SVG inlined in an HTML page from styling the page).

Drawn left to right, as the chapter draws its trees (``A → B → C``): depth across,
siblings down. The layout is ``layout.tidy_tree`` on the items ``fold.fold`` chose.
"""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..history.tree import SessionTree, compaction_links, node_kind
from ..i18n import _, ngettext
from ..textview import short_id_length, summary
from .fold import Folded, Item

DEPTH_STEP = 64.0  # px between a parent's column and its children's
BREADTH_STEP = 46.0  # px per layout unit (siblings are 1 apart, cousins 2): room for tags
MARGIN = 28.0
RIGHT_ROOM = 120.0  # a tag or a fold's text to the right of the deepest column
LEGEND_LINE = 16.0
PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
NO_MODEL = "#9aa0a6"
INK, FAINT, PATH_INK, CURRENT = "#333333", "#b4b4b4", "#1f1f1f", "#d62728"
UNSEEN_OPACITY = "0.3"  # a node a context budget left out of the answer's request
TAG_CHARS = 12
CHAR_WIDTH = 5.6  # px, about, of a 10px sans-serif character
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def model_colours(items: Sequence[Item], tree: SessionTree) -> dict[str, str]:
    """A colour per model, in the order models first appear among the drawn answers."""
    colours: dict[str, str] = {}
    for item in items:
        model = _model(tree, item)
        if model is not None and model not in colours:
            colours[model] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def write_svg(
    folded: Folded,
    x: Sequence[float],
    tree: SessionTree,
    *,
    leaf: str | None,
    labels: Mapping[str, str],
    hidden_count: int,
    unseen: Collection[str] = (),
) -> str:
    """The SVG document for items already folded (``folded``) and laid out (``x``);
    the nodes in ``unseen`` (left out of an answer's request) are faded."""
    items = folded.items
    top = min(x, default=0.0)
    colours = model_colours(items, tree)
    svg = ET.Element("svg", xmlns="http://www.w3.org/2000/svg", role="img")
    svg.set("font-family", "sans-serif")
    svg.set("font-size", "10")
    shown = sum(1 for item in items if item.kind == "node")
    _text(
        ET.SubElement(svg, "title"),
        _("Session tree: {shown} of {total} messages shown").format(shown=shown, total=len(tree)),
    )

    def at(index: int) -> tuple[float, float]:
        return MARGIN + items[index].depth * DEPTH_STEP, MARGIN + (x[index] - top) * BREADTH_STEP

    edges = ET.SubElement(svg, "g", {"class": "edges"})
    for index, item in enumerate(items):
        if item.parent >= 0:
            bold = _on_path(items[item.parent], folded) and _on_path(item, folded)
            _edge(edges, at(item.parent), at(index), bold)
    _compaction_links(svg, items, tree, at)
    shapes = ET.SubElement(svg, "g", {"class": "nodes"})
    id_width = short_id_length(node.id for node in tree)
    present: set[str] = {"path"} if folded.on_path else set()
    for index, item in enumerate(items):
        group = ET.SubElement(shapes, "g")
        px, py = at(index)
        group.set("transform", f"translate({_num(px)},{_num(py)})")
        if item.kind == "node":
            present.update(_node(group, item, tree, folded, leaf, labels, colours, id_width))
            if item.node_id in unseen:
                group.set("class", group.get("class", "") + " unseen")
                group.set("opacity", UNSEEN_OPACITY)
                present.add("unseen")
        else:
            _fold(group, item)
            present.add("fold")
    legend_top = 2 * MARGIN + (max(x, default=0.0) - top) * BREADTH_STEP + 8
    legend_width, legend_height = _legend(svg, present, colours, hidden_count, legend_top)
    deepest = max((item.depth for item in items), default=0)
    width = max(2 * MARGIN + deepest * DEPTH_STEP + RIGHT_ROOM, legend_width + 2 * MARGIN)
    height = legend_top + legend_height + 4
    svg.set("width", _num(width))
    svg.set("height", _num(height))
    svg.set("viewBox", f"0 0 {_num(width)} {_num(height)}")
    return ET.tostring(svg, encoding="unicode")


def _on_path(item: Item, folded: Folded) -> bool:
    if item.kind == "chain":  # a fold in the path's chain is part of the path
        return item.parent >= 0 and _on_path(folded.items[item.parent], folded)
    return item.node_id is not None and item.node_id in folded.on_path


Point = tuple[float, float]


def _edge(parent: ET.Element, start: Point, end: Point, bold: bool) -> None:
    (x1, y1), (x2, y2) = start, end
    middle = (x1 + x2) / 2
    path = ET.SubElement(parent, "path", {"class": "edge path" if bold else "edge"})
    path.set("d", f"M{_num(x1)},{_num(y1)}C{_num(middle)},{_num(y1)} {_num(middle)},{_num(y2)} "
                  f"{_num(x2)},{_num(y2)}")  # fmt: skip
    path.set("fill", "none")
    path.set("stroke", PATH_INK if bold else FAINT)
    path.set("stroke-width", "2.6" if bold else "1.2")


def _compaction_links(svg: ET.Element, items: Sequence[Item], tree: SessionTree, at: Any) -> None:
    """A dashed line from the summarised leaf to the root a compaction made, both shown."""
    where = {item.node_id: index for index, item in enumerate(items) if item.node_id}
    summarised = compaction_links(tree.roots())
    links = ET.SubElement(svg, "g", {"class": "compaction-links"})
    for index, item in enumerate(items):
        if item.parent >= 0 or item.node_id is None:
            continue
        target = summarised.get(item.node_id)
        if target is not None and target in where:
            (x1, y1), (x2, y2) = at(where[target]), at(index)
            path = ET.SubElement(links, "path", {"class": "compaction"})
            path.set("d", f"M{_num(x1)},{_num(y1)}C{_num(x1 + 60)},{_num(y1)} "
                          f"{_num(x2 - 60)},{_num(y2)} {_num(x2)},{_num(y2)}")  # fmt: skip
            path.set("fill", "none")
            path.set("stroke", "#7f7f7f")
            path.set("stroke-dasharray", "5 3")
            _text(ET.SubElement(path, "title"), _("compacted: the summary of this branch"))


def _node(
    group: ET.Element,
    item: Item,
    tree: SessionTree,
    folded: Folded,
    leaf: str | None,
    labels: Mapping[str, str],
    colours: Mapping[str, str],
    id_width: int,
) -> list[str]:
    """Draw one message node; returns the legend entries it needs."""
    node = tree.get(item.node_id or "")
    meta = node.meta or {}
    kind = node_kind(node)
    classes = ["node", kind]
    bold = node.id in folded.on_path
    if bold:
        classes.append("path")
    if meta.get("interrupted"):
        classes.append("interrupted")
    if node.id == leaf:
        classes.append("current")
    group.set("class", " ".join(classes))
    model = _model(tree, item)
    about = [
        summary(node.message, 80, node.meta),  # a question as typed, with chips
        f"{kind} · {node.id}" + (f" · {model}" if model else ""),
    ]
    if meta.get("interrupted"):
        about.append(_("interrupted: the reply was cut short"))
    if isinstance(meta.get("compacted_from"), str):
        about.append(_("compaction of {node}").format(node=meta["compacted_from"]))
    _text(ET.SubElement(group, "title"), "\n".join(about))
    if node.id == leaf:
        ring = ET.SubElement(group, "circle", {"class": "current-ring", "r": "12"})
        ring.set("fill", "none")
        ring.set("stroke", CURRENT)
        ring.set("stroke-width", "2")
    fill = colours.get(model, NO_MODEL) if model else NO_MODEL
    _shape(group, kind, fill, bold, bool(meta.get("interrupted")))
    caption = ET.SubElement(group, "text", {"class": "caption", "y": "21", "text-anchor": "middle"})
    caption.set("fill", "#555555")
    caption.set("font-size", "9")
    _text(caption, node.id[:id_width])
    if node.id in labels:
        _tag(group, labels[node.id])
    return classes[1:]


def _shape(group: ET.Element, kind: str, fill: str, bold: bool, interrupted: bool) -> None:
    """A question is a circle, an answer a square in its model's colour, a tool result a
    small grey circle; the current path's outlines are bold, a cut reply's dashed."""
    if kind == "assistant":
        shape = ET.SubElement(group, "rect", x="-6", y="-6", width="12", height="12", rx="3")
        shape.set("fill", fill)
    else:
        shape = ET.SubElement(group, "circle", r="7" if kind == "user" else "5")
        shape.set("fill", "#ffffff" if kind == "user" else "#d0d0d0")
    shape.set("class", "shape")
    shape.set("stroke", INK)
    shape.set("stroke-width", "2.6" if bold else "1.2")
    if interrupted:
        shape.set("stroke-dasharray", "3 2")


def _tag(group: ET.Element, label: str) -> None:
    shown = label if len(label) <= TAG_CHARS else label[: TAG_CHARS - 1] + "…"
    tag = ET.SubElement(group, "g", {"class": "tag", "transform": "translate(-6,-15)"})
    box = ET.SubElement(tag, "rect", y="-9", height="12", rx="3")
    box.set("width", _num(CHAR_WIDTH * 0.9 * len(shown) + 8))
    box.set("fill", "#fff3bf")
    box.set("stroke", "#c9a400")
    text = ET.SubElement(tag, "text", x="4", y="0.5")
    text.set("font-size", "9")
    _text(text, shown)
    _text(ET.SubElement(tag, "title"), _("label: {label}").format(label=label))


def _fold(group: ET.Element, item: Item) -> None:
    group.set("class", f"fold {item.kind}")
    if item.kind == "chain":
        shown = f"⋯ {item.count:,}"
        about = _("{count} messages folded").format(count=f"{item.count:,}")
    elif item.kind == "more":
        shown = f"+{item.count:,}"
        about = _("{branches} more branches ({count} messages) folded").format(
            branches=f"{item.branches:,}", count=f"{item.count:,}"
        )
    else:
        shown = _("{branches} hidden").format(branches=f"{item.branches:,}")
        about = _("{branches} hidden branches ({count} messages), not deleted").format(
            branches=f"{item.branches:,}", count=f"{item.count:,}"
        )
    _text(ET.SubElement(group, "title"), about)
    box = ET.SubElement(group, "rect", x="-8", y="-8", height="16", rx="8")
    box.set("width", _num(CHAR_WIDTH * columns(shown) + 16))

    box.set("fill", "#f3f3f3")
    box.set("stroke", "#888888")
    if item.kind == "hidden":
        box.set("stroke-dasharray", "3 2")
    text = ET.SubElement(group, "text", x="0", y="3.5")
    text.set("fill", INK)
    _text(text, shown)


LEGEND = ("user", "assistant", "tool", "interrupted", "current", "path", "fold", "unseen")


def legend_meanings() -> dict[str, str]:
    """What each drawn kind means, in the reader's language."""
    return {
        "user": _("question"),
        "assistant": _("answer"),
        "tool": _("tool result"),
        "interrupted": _("cut short"),
        "current": _("current"),
        "path": _("current path"),
        "fold": _("folded"),
        "unseen": _("not sent to the answer"),
    }


def _legend(
    svg: ET.Element, present: set[str], colours: Mapping[str, str], hidden: int, top: float
) -> tuple[float, float]:
    """What the drawn shapes mean, the models' colours, how many branches are hidden.

    Returns the legend's width and height.
    """
    legend = ET.SubElement(svg, "g", {"class": "legend"})
    legend.set("transform", f"translate({_num(MARGIN)},{_num(top)})")
    offset = 0.0
    meanings = legend_meanings()
    for kind in LEGEND:
        if kind not in present:
            continue
        meaning = meanings[kind]
        key = ET.SubElement(legend, "g", {"transform": f"translate({_num(offset + 6)},0)"})
        if kind == "current":
            ring = ET.SubElement(key, "circle", r="6", fill="none", stroke=CURRENT)
            ring.set("stroke-width", "2")
        elif kind == "path":
            ET.SubElement(key, "path", d="M-6,0H8", stroke=PATH_INK).set("stroke-width", "2.6")
        elif kind == "unseen":
            faded = ET.SubElement(key, "circle", r="7", fill="#ffffff", stroke=INK)
            faded.set("opacity", UNSEEN_OPACITY)
        elif kind == "fold":
            box = ET.SubElement(key, "rect", x="-6", y="-5", width="16", height="10", rx="5")
            box.set("fill", "#f3f3f3")
            box.set("stroke", "#888888")
        else:
            shape = "user" if kind == "interrupted" else kind
            _shape(key, shape, NO_MODEL, False, kind == "interrupted")
        offset = _legend_text(legend, offset + 18, 0.0, meaning) + 12
    widest, y = offset, LEGEND_LINE
    if colours:
        offset = 0.0
        for model, colour in colours.items():
            swatch = ET.SubElement(legend, "rect", y=_num(y - 5), width="10", height="10", rx="2")
            swatch.set("x", _num(offset + 1))
            swatch.set("fill", colour)
            offset = _legend_text(legend, offset + 16, y, model[:40]) + 14
        widest, y = max(widest, offset), y + LEGEND_LINE
    if hidden:
        note = ngettext(
            "{count} hidden branch is not shown (nothing was deleted)",
            "{count} hidden branches are not shown (nothing was deleted)",
            hidden,
        ).format(count=hidden)

        widest, y = max(widest, _legend_text(legend, 0.0, y, note)), y + LEGEND_LINE
    return widest, y


def _legend_text(legend: ET.Element, left: float, y: float, text: str) -> float:
    """One piece of legend text; returns where it ends (an estimate: no font metrics)."""
    element = ET.SubElement(legend, "text", x=_num(left), y=_num(y + 3.5), fill="#555555")
    _text(element, text)
    return left + CHAR_WIDTH * columns(text)


def columns(text: str) -> int:
    """How wide ``text`` is in character widths: a Han character is two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _model(tree: SessionTree, item: Item) -> str | None:
    if item.node_id is None:
        return None
    node = tree.get(item.node_id)
    model = (node.meta or {}).get("model")
    return model if node.role == "assistant" and isinstance(model, str) else None


def _text(element: ET.Element, text: str) -> None:
    """Session text as an element's text node, minus what XML cannot hold (U+FFFD)."""
    element.text = _NOT_XML.sub("\ufffd", text)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")
