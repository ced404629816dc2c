"""Find a node: text on every branch of a session, and where each match stands.

A session is a tree, so a node found by scrolling is a node found on one branch only.
``find`` looks at every node of every branch, in the file's order: the text of
questions and answers, and also (marked as such) the model's thinking, tool results and
tool calls. Each match says what a person needs to go there: the short id, the role,
the ``2/3`` place among its siblings, the branch's name (its label, or the question
where it left the others) and the words around the match. Nodes in hidden branches are
found only when asked (``include_hidden``); otherwise they are counted.

Pure, over a ``SessionTree``: the kernel (``%chat find``), the command line
(``jupyter tree-chat find``) and the panel's search box all call ``find``. The front
end's own port (labextension/src/components/find.ts) follows the same rules on a file
the viewer or an exported page has read, and a test holds the two to one answer.

Speed: each node's searchable text is pulled out of its message once and kept, lowered,
in a ``TextIndex`` that lives as long as the tree and grows with it (the tree is append
only, so nothing in it goes stale); a literal search is then one ``in`` per node.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from ..errors import QueryError
from ..history.node import decode_json
from ..history.tree import Node, SessionTree, is_real_user_message, node_kind
from ..i18n import _, ngettext
from ..textview import MIN_SHORT, hidden_branches, short_id_length
from .naming import question_text

#: where in a message a match was found; ``text`` is what a person wrote or read
TEXT, THINKING, TOOL_RESULT, TOOL_CALL = "text", "thinking", "tool result", "tool call"
#: the order fields are searched in: a match in the answer's words wins over its thinking
WHERE_ORDER = (TEXT, THINKING, TOOL_RESULT, TOOL_CALL)
ROLES = ("user", "assistant", "tool")
BEFORE, AFTER = 30, 50  # characters of context shown around a match
BRANCH_WIDTH = 40
_JOIN = "\x00"  # between a node's fields in its lowered text: no query holds one


@dataclass(frozen=True)
class Query:
    """What to look for. ``role`` is ``user``, ``assistant`` or ``tool`` (a tool's result)."""

    text: str
    regex: bool = False
    case_sensitive: bool = False
    role: str | None = None
    include_hidden: bool = False

    def __post_init__(self) -> None:
        if not self.text:
            raise QueryError(_("nothing to find: give the text to look for"))
        if self.role is not None and self.role not in ROLES:
            raise QueryError(
                _("unknown role {role!r}; give --role user, assistant or tool").format(
                    role=self.role
                )
            )

    def pattern(self) -> re.Pattern[str]:
        """The query as a compiled pattern (a literal is escaped); a bad one is one line."""
        flags = 0 if self.case_sensitive else re.IGNORECASE
        source = self.text if self.regex else re.escape(self.text)
        try:
            return re.compile(source, flags)
        except re.error as error:
            raise QueryError(
                _(
                    "{query!r} is not a regular expression ({error}); fix it or leave out --regex"
                ).format(query=self.text, error=error)
            ) from None


@dataclass(frozen=True)
class Match:
    """One node that matched, and what a list of matches shows of it."""

    node_id: str
    role: str
    where: str
    position: str
    branch: str
    before: str
    found: str
    after: str
    hidden: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.node_id,
            "role": self.role,
            "where": self.where,
            "position": self.position,
            "branch": self.branch,
            "before": self.before,
            "match": self.found,
            "after": self.after,
            "hidden": self.hidden,
        }


@dataclass
class Found:
    """What ``find`` found: every matching node's id in the tree's order, the first
    ones described (up to the limit asked for), and how many hidden ones were left out."""

    ids: list[str] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    hidden: int = 0


def message_fields(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The searchable text of a message, each piece with where it is (``WHERE_ORDER``)."""
    content = message.get("content")
    if type(content) is str:
        return [(TEXT, content)] if content else []
    return _block_fields(content if isinstance(content, list) else ())


def node_fields(node: Node) -> list[tuple[str, str]]:
    """``message_fields`` of a node, reading its raw blocks without decoding the message
    (a text or thinking block is read for its one field; a tool block whole)."""
    content = node.held_content()
    if type(content) is not tuple:
        return message_fields(node.message)
    blocks = []
    for raw in content:
        try:
            block = _BLOCK.decode(raw)
        except msgspec.ValidationError:  # not an object, a type that is not a string, ...
            blocks.append(decode_json(raw))
            continue
        if block.type in ("tool_use", "tool_result"):
            blocks.append(decode_json(raw))
        else:
            blocks.append({"type": block.type, "text": block.text, "thinking": block.thinking})
    return _block_fields(blocks)


class _SearchBlock(msgspec.Struct):
    """What find reads of a text or thinking block (the rest of the block is skipped)."""

    type: str | None = None
    text: Any = None
    thinking: Any = None


_BLOCK = msgspec.json.Decoder(_SearchBlock)


def _block_fields(blocks: Iterable[Any]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    others: list[tuple[str, str]] = []  # thinking and tools: after the words, in their order
    for block in blocks:
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if type(text) is str and text:
                found.append((TEXT, text))
        elif kind == "thinking":
            text = block.get("thinking")
            if type(text) is str and text:
                others.append((THINKING, text))
        elif kind == "tool_result":
            text = _result_text(block.get("content"))
            if text:
                others.append((TOOL_RESULT, text))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            others.append((TOOL_CALL, f"{block.get('name', '?')} {arguments}"))
    if len(others) > 1:
        others.sort(key=lambda pair: _RANK[pair[0]])
    return found + others if others else found


_RANK = {where: rank for rank, where in enumerate(WHERE_ORDER)}


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n".join(parts)


class TextIndex:
    """Every node's fields and their lowered text, in the tree's order, built once."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.fields: list[list[tuple[str, str]]] = []
        self.lowered: list[str] = []
        self._lock = threading.Lock()
        self._width = (0, MIN_SHORT)  # (for how many ids, the short id length)

    def update(self, tree: SessionTree) -> None:
        """Take in the nodes appended since the last call (a tree only ever grows)."""
        with self._lock:
            known = len(self.ids)
            if len(tree) == known:
                return
            for node in list(tree)[known:]:
                pieces = node_fields(node)
                self.ids.append(node.id)
                self.fields.append(pieces)
                self.lowered.append(_JOIN.join(text for _, text in pieces).lower())

    def id_width(self) -> int:
        """How many characters of an id tell this tree's ids apart (kept per size)."""
        size, width = self._width
        if size != len(self.ids):
            width = short_id_length(self.ids)
            self._width = (len(self.ids), width)
        return width


_indexes: weakref.WeakKeyDictionary[SessionTree, TextIndex] = weakref.WeakKeyDictionary()
_indexes_lock = threading.Lock()


def text_index(tree: SessionTree) -> TextIndex:
    """The tree's index, made on first use and kept up to date (one per tree)."""
    with _indexes_lock:
        index = _indexes.get(tree)
        if index is None:
            index = _indexes[tree] = TextIndex()
    index.update(tree)
    return index


def find(
    tree: SessionTree,
    query: Query,
    *,
    labels: Mapping[str, str] | None = None,
    hidden: Collection[str] = (),
    leaf: str | None = None,
    limit: int | None = None,
) -> Found:
    """The nodes matching ``query`` on every branch, in the tree's order.

    ``hidden`` and ``leaf`` say which branches are folded away (``hidden_branches``):
    matches there are only counted unless ``query.include_hidden``. Only the first
    ``limit`` matches are described (``limit=0``: ids only, as the panel's search box
    wants them); ``found.ids`` has them all.
    """
    index = text_index(tree)
    candidates = _candidates(index, query)
    if query.role is not None:
        wanted = query.role
        candidates = [i for i in candidates if node_kind(tree.get(index.ids[i])) == wanted]
    folded = _folded_nodes(tree, hidden, leaf) if hidden else set()
    pattern = query.pattern()
    literal = query.text.lower() if not query.regex and not query.case_sensitive else None
    found = Found()
    namer = _BranchNamer(tree, labels or {})
    positions = _Positions(tree)
    for i in candidates:
        node_id = index.ids[i]
        in_hidden = node_id in folded
        if in_hidden and not query.include_hidden:
            found.hidden += 1
            continue
        found.ids.append(node_id)
        if limit is not None and len(found.matches) >= limit:
            continue
        where, text, start, end = _locate(index.fields[i], pattern, literal)
        node = tree.get(node_id)
        before, after = _context(text, start, end)
        found.matches.append(
            Match(
                node_id=node_id,
                role=node_kind(node),
                where=where,
                position=positions.of(node),
                branch=namer.name(node),
                before=before,
                found=" ".join(text[start:end].split()) or text[start:end],
                after=after,
                hidden=in_hidden,
            )
        )
    return found


class Held(Protocol):
    """What holds a tree with its labels and hidden marks: a loaded file, a ``Session``."""

    @property
    def tree(self) -> SessionTree: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def hidden(self) -> Collection[str]: ...


def find_in(held: Held, query: Query, *, limit: int | None = None) -> Found:
    """``find`` over a loaded file or a session, its branches folded as its views fold them."""
    return find(
        held.tree,
        query,
        labels=held.labels,
        hidden=held.hidden,
        leaf=held.tree.leaf,
        limit=limit,
    )


def _candidates(index: TextIndex, query: Query) -> list[int]:
    """The nodes that match: a literal ignoring case where the lowered text holds it,
    anything else where the pattern finds it in one of the node's fields."""
    if not query.regex and not query.case_sensitive:
        needle = query.text.lower()
        return [i for i, text in enumerate(index.lowered) if needle in text]
    search = query.pattern().search
    return [i for i, pieces in enumerate(index.fields) if any(search(text) for _, text in pieces)]


def _locate(
    pieces: list[tuple[str, str]], pattern: re.Pattern[str], literal: str | None
) -> tuple[str, str, int, int]:
    """Where a match is: the field and the span. A literal ignoring case matches where
    the lowered text holds it (that is the rule, here and in find.ts); the span is read
    from the lowered text, or found again with the pattern where lowering moved the
    characters (``İ`` lowers to two), or left empty at the field's start."""
    for where, text in pieces:
        if literal is not None:
            lowered = text.lower()
            at = lowered.find(literal)
            if at < 0:
                continue
            if len(lowered) == len(text):
                return where, text, at, at + len(literal)
        hit = pattern.search(text)
        if hit is not None:
            return where, text, hit.start(), hit.end()
        if literal is not None:
            return where, text, 0, 0
    where, text = pieces[0] if pieces else (TEXT, "")
    return where, text, 0, 0


def _context(text: str, start: int, end: int) -> tuple[str, str]:
    """The words before and after a match, on one line, cut with ``…``."""
    before = " ".join(text[max(0, start - BEFORE * 2) : start].split())
    after = " ".join(text[end : end + AFTER * 2].split())
    if text[:start].rstrip() != text[:start] and before:
        before += " "
    if text[end:].lstrip() != text[end:] and after:
        after = " " + after
    if len(before) > BEFORE or start > BEFORE * 2:
        before = "…" + before[-BEFORE:]
    if len(after) > AFTER or end + AFTER * 2 < len(text):
        after = after[:AFTER] + "…"
    return before, after


def _folded_nodes(tree: SessionTree, hidden: Collection[str], leaf: str | None) -> set[str]:
    """Every node inside a branch the views fold away (a walk down from each)."""
    inside: set[str] = set()
    stack = list(hidden_branches(tree, hidden, leaf))
    while stack:
        node_id = stack.pop()
        inside.add(node_id)
        stack.extend(child.id for child in tree.children(node_id))
    return inside


class _Positions:
    """``2/3`` for a node among its siblings (each parent's children indexed once)."""

    def __init__(self, tree: SessionTree) -> None:
        self.tree = tree
        self.places: dict[str | None, dict[str, int]] = {}

    def of(self, node: Node) -> str:
        places = self.places.get(node.parent_id)
        if places is None:
            kids = self.tree.children(node.parent_id)
            places = self.places[node.parent_id] = {k.id: n for n, k in enumerate(kids, 1)}
        return f"{places[node.id]}/{len(places)}"


class _BranchNamer:
    """A branch's name: the nearest label on the way up, else the question where the
    branch left the others (the first question below the nearest fork above the node;
    for a node above that question, the question before the fork).

    What each node's name is built from is worked out once, from its parent's, so
    naming every match of a 100,000-deep chain walks the chain once, not once a match.
    """

    def __init__(self, tree: SessionTree, labels: Mapping[str, str]) -> None:
        self.tree = tree
        self.labels = labels
        #: node id -> (label, the segment's first question, the question above the
        #: segment, the nearest question at or above the node)
        self.facts: dict[str, tuple[str | None, Node | None, Node | None, Node | None]] = {}

    def name(self, node: Node) -> str:
        label, first, above, _nearest = self._facts(node)
        if label:
            return label
        question = first or above
        return question_text(question, BRANCH_WIDTH) if question is not None else ""

    def _facts(self, node: Node) -> tuple[str | None, Node | None, Node | None, Node | None]:
        tree, facts = self.tree, self.facts
        chain = []
        current: Node | None = node
        while current is not None and current.id not in facts:
            chain.append(current)
            current = None if current.parent_id is None else tree.get(current.parent_id)
        for step in reversed(chain):
            parent = None if step.parent_id is None else facts[step.parent_id]
            question = step if is_real_user_message(step.message) else None
            label = self.labels.get(step.id) or (parent[0] if parent else None)
            if parent is None or len(tree.children(step.parent_id)) > 1:  # a branch starts
                first, above = question, (parent[3] if parent else None)
            else:
                first, above = parent[1] or question, parent[2]
            nearest = question or (parent[3] if parent else None)
            facts[step.id] = (label, first, above, nearest)
        return facts[node.id]


# -- what a list of matches looks like -------------------------------------------------


def match_lines(
    found: Found,
    width: int,
    *,
    mark: Callable[[str], str] = lambda text: f"«{text}»",
) -> list[str]:
    """One line per described match: id, role, place, branch, where, the words around."""
    lines = []
    for m in found.matches:
        where = "" if m.where == TEXT else f"[{_where_name(m.where)}] "
        hidden = _(" (hidden)") if m.hidden else ""
        lines.append(
            _(
                "{id}  {role:<9} {position:>5}  {branch}  {where}{before}{match}{after}{hidden}"
            ).format(
                id=m.node_id[:width].ljust(width),
                role=m.role,
                position=m.position,
                branch=f"“{m.branch}”" if m.branch else "—",
                where=where,
                before=m.before,
                match=mark(m.found),
                after=m.after,
                hidden=hidden,
            )
        )
    return lines


def _where_name(where: str) -> str:
    names = {
        THINKING: _("in thinking"),
        TOOL_RESULT: _("in a tool result"),
        TOOL_CALL: _("in a tool call"),
    }
    return names.get(where, where)


def summary_line(found: Found, query: Query) -> str:
    """``3 matches for 'tree'.``, or that there is none."""
    count = len(found.ids)
    if not count:
        return _("No match for {query!r}.").format(query=query.text)
    return ngettext("{count} match for {query!r}.", "{count} matches for {query!r}.", count).format(
        count=count, query=query.text
    )


def sessions_line(searched: list[Found], query: Query) -> str:
    """``5 matches for 'tree' in 2 of 3 session files.``"""
    total = sum(len(found.ids) for found in searched)
    files = sum(1 for found in searched if found.ids)
    return ngettext(
        "{count} match for {query!r} in {files} of {searched} session file(s).",
        "{count} matches for {query!r} in {files} of {searched} session file(s).",
        total,
    ).format(count=total, query=query.text, files=files, searched=len(searched))


def hidden_line(found: Found, how: str) -> str | None:
    """How many matches sit in hidden branches, and how to see them (None if none)."""
    if not found.hidden:
        return None
    return ngettext(
        "({count} more match in a hidden branch; {how})",
        "({count} more matches in hidden branches; {how})",
        found.hidden,
    ).format(count=found.hidden, how=how)


def more_line(found: Found, how: str) -> str | None:
    """How many matches were found but not listed, and how to list them (None if none)."""
    left = len(found.ids) - len(found.matches)
    if left <= 0:
        return None
    return _("({count} more not listed; {how})").format(count=left, how=how)
