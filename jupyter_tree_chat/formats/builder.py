"""The rules every format shares: another tool's records become a faithful, sendable tree.

A reader (one module per format) turns its source into ``Entry``s in source order:
messages (``role`` user or assistant, content shaped as the Messages API shapes it) and
the other records that sit in the parent chain (``role`` None). ``TreeBuilder.build``
applies these rules and returns the records of a ``*.chat.jsonl`` file:

- ids are the source's ids; every node's ``meta.source`` names where it came from;
- an id seen again (a resumed file repeating earlier records) is taken once, the first;
- a record that is not a message is bridged: its children hang under its nearest
  ancestor that is one;
- records of one API message (same ``group``: Claude Code writes one record per content
  block, chained) become one assistant node;
- siblings repeating an earlier sibling exactly (same ``stamp`` and message: Claude
  Code's compaction replays) are taken once;
- tool results answering one assistant message become one user message, and an
  assistant record beside them (the turn's continuation) hangs under them;
- where roles still repeat (a user under a user), the child is merged into its parent
  when it is the only child, else rebuilt beside the parent with the parent's content
  first; both texts stay, ``meta.merged`` / ``meta.repeats`` say what happened;
- an orphan (parent not in the source) or a node on a parent cycle becomes a root and is
  reported; a root that is an answer gets a question above it marked ``meta.synthetic``;
- nodes are written parents first, siblings in source order; the leaf and labels, given
  as source ids, follow the merges to the nodes that hold them.

Pure and iterative (no recursion, no I/O): sessions can be 100,000 records deep.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..i18n import _
from .common import Entry, RawBlocks, SourceProblem, as_python, blocks_of, is_raw_list

SYNTHETIC_QUESTION = "(this conversation starts with an answer; its question is not in the source)"


@dataclass
class Built:
    """What ``build`` made: the records (header first) and what the summary line says."""

    records: list[dict[str, Any]]
    nodes: int
    roots: int
    branch_points: int
    leaf: str | None
    counts: Counter[str] = field(default_factory=Counter)


class _Node:
    """A message while the rules are applied; ``kids`` in source order."""

    __slots__ = (
        "content",
        "group",
        "id",
        "kids",
        "last",
        "meta",
        "owned",
        "pos",
        "role",
        "stamp",
        "timestamp",
    )

    def __init__(self, entry: Entry | None, pos: int, fmt: str = "") -> None:
        self.kids: list[_Node] = []
        self.pos = self.last = pos
        self.owned = False  # content is our own list, safe to extend
        self.id: str = ""
        self.role: str | None = None
        self.content: Any = ""
        self.meta: dict[str, Any] = {}
        self.group: str | None = None
        self.stamp: Any = None
        self.timestamp: int | None = None
        if entry is None:  # the virtual parent of the roots, or a synthetic question
            return
        self.id = entry.id
        self.role = entry.role
        self.content = entry.content
        self.group = entry.group
        self.stamp = entry.stamp
        self.timestamp = entry.timestamp
        source = entry.source
        source["format"] = fmt  # the reader's own dict: named once, never copied
        meta = entry.meta
        if meta:
            meta["source"] = source
            self.meta = meta
        else:
            self.meta = {"source": source}


def only_tool_results(content: Any) -> bool:
    content = as_python(content)
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _results_first(blocks: list[Any]) -> list[Any]:
    """Tool results lead a user message (the API wants them first); order kept otherwise."""
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results or len(results) == len(blocks):
        return blocks
    return results + [
        b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")
    ]


class TreeBuilder:
    """Collects a source's entries, then ``build()`` applies the module's rules once."""

    def __init__(self, fmt: str) -> None:
        self.format = fmt
        self.problems: list[SourceProblem] = []
        self.counts: Counter[str] = Counter()
        self.header: dict[str, Any] = {}
        self._entries: dict[str, Entry] = {}
        self._leaves: list[str] = []  # candidates, best first
        self._labels: list[tuple[str, str | None, dict[str, Any]]] = []
        self._aliases: dict[str, str] = {}
        self._above: dict[str, str | None] = {}  # record id → nearest message above it
        self._live: dict[str, _Node] = {}

    # -- collecting ---------------------------------------------------------------------

    def add(self, entry: Entry) -> bool:
        """Take the entry unless its id was seen; returns whether it was taken."""
        if entry.id in self._aliases:  # already part of another record's message
            self.counts["repeated records"] += 1
            return False
        first = self._entries.setdefault(entry.id, entry)
        if first is entry:
            return True
        if first.damaged and not entry.damaged:
            self._entries[entry.id] = entry  # keeps the first one's place in the order
            why = _("id {id}: this record replaces a damaged one")
            self.report(entry.source, why.format(id=repr(entry.id)))
            return True
        self.counts["repeated records"] += 1
        if first.role != entry.role or _first_part(first.content) != _first_part(entry.content):
            why = _("id {id} repeated with other content (first kept)")
            self.report(entry.source, why.format(id=repr(entry.id)))
        return False

    def has(self, source_id: str) -> bool:
        return source_id in self._entries or source_id in self._aliases

    def alias(self, source_id: str, holder_id: str) -> None:
        """A record a reader joined into ``holder_id``'s entry (one API message)."""
        self._aliases[source_id] = holder_id

    def entry(self, source_id: str) -> Entry | None:
        return self._entries.get(source_id)

    def message_above(self, source_id: str | None) -> str | None:
        """The nearest message at or above a record collected so far (None: a root)."""
        current = source_id
        for _step in range(len(self._entries) + 1):
            entry = self._entries.get(current) if current is not None else None
            if entry is None:
                return None
            if entry.role is not None:
                return entry.id
            current = entry.parent
        return None

    def prefer_leaf(self, source_id: str) -> None:
        """A candidate for the current leaf; later calls are preferred (newest wins)."""
        self._leaves.append(source_id)

    def label(self, source_id: str, label: str | None, where: dict[str, Any]) -> None:
        """Name a record (``None`` or "" clears); the last label of a target wins."""
        self._labels.append((source_id, label, where))

    def report(self, where: dict[str, Any], message: str) -> None:
        self.problems.append(
            SourceProblem(str(where.get("file", "")), message, where.get("line"), where.get("key"))
        )

    # -- building -----------------------------------------------------------------------

    def build(self, header: dict[str, Any]) -> Built:
        top = self._attach()
        stack: list[tuple[_Node, _Node | None]] = [(top, None)]
        push = stack.append
        while stack:
            node, parent = stack.pop()
            kids = node.kids
            if len(kids) == 1:  # the common case, a chain: an only child no rule changes
                kid = kids[0]
                role = node.role
                if (
                    role is not None
                    and kid.role != role
                    and (kid.group is None or kid.group != node.group)
                ):
                    push((kid, node))
                    continue
            hoisted = self._settle(node, parent)
            stack.extend((kid, parent) for kid in reversed(hoisted) if parent is not None)
            stack.extend((kid, node) for kid in reversed(node.kids))
        records, stats = self._records(top, header)
        leaf = self._leaf(stats.pop("_by_pos"))
        labels = self._final_labels()
        records.extend({"type": "label", "id": i, "label": name} for i, name in labels.items())
        if leaf is not None:
            records.append({"type": "leaf", "id": leaf})
        return Built(
            records,
            stats["nodes"],
            len(top.kids),
            stats["branch_points"],
            leaf,
            self.counts,
        )

    def resolve(self, source_id: str | None) -> str | None:
        """The node that holds a source id now (following merges and bridges), or None."""
        if source_id is None:
            return None
        seen = 0
        current: str | None = source_id
        while current is not None and seen < 1_000_000:
            seen += 1
            if current in self._aliases:
                current = self._aliases[current]
            elif current in self._live:
                return current
            elif current in self._above:
                current = self._above[current]
            else:
                return None
        return None

    def _attach(self) -> _Node:
        """Nodes under their nearest message ancestor; orphans and cycles become roots."""
        fmt = self.format
        entries = self._entries
        nodes: dict[str, _Node] = {}
        for pos, entry in enumerate(entries.values()):
            if entry.role is not None:
                nodes[entry.id] = _Node(entry, pos, fmt)
        self._live = nodes
        top = _Node(None, -1)
        memo: dict[str, Any] = {}  # record id (not a message) → what _nearest found above it
        holder_of: dict[str, str] = {}
        backward = False
        for node_id, node in nodes.items():
            parent = entries[node_id].parent
            target = parent if parent in nodes else self._nearest(parent, nodes, memo)
            if target is None:
                top.kids.append(node)
            elif isinstance(target, _Missing):
                self.report(
                    entries[node_id].source,
                    _(
                        "record {id}: its parent {parent} is not in the source (imported as a root)"
                    ).format(id=repr(node_id), parent=repr(target.id)),
                )
                self.counts["orphans"] += 1
                top.kids.append(node)
            else:
                holder = nodes[target]
                holder.kids.append(node)
                holder_of[node_id] = target
                if holder.pos >= node.pos:  # a parent later in the source: a cycle may hide
                    backward = True
        for entry in entries.values():  # for the leaf and labels: where a non-message points
            if entry.role is None:
                found = (
                    memo[entry.id] if entry.id in memo else self._nearest(entry.parent, nodes, memo)
                )
                self._above[entry.id] = found if isinstance(found, str) else None
        if backward:  # with every parent earlier in the source, no link can close a loop
            self._break_cycles(top, nodes, holder_of)
        return top

    def _nearest(self, parent: str | None, nodes: dict[str, _Node], memo: dict[str, Any]) -> Any:
        """The nearest message at or above ``parent``: its id, None (a root), or _Missing."""
        chain: list[str] = []
        current = parent
        found: Any = None
        aliases = self._aliases
        while current is not None:
            if current in nodes:
                found = current
                break
            if current in aliases:
                current = aliases[current]
                continue
            if current in memo:
                found = memo[current]
                break
            entry = self._entries.get(current)
            if entry is None:
                found = _Missing(current)
                break
            memo[current] = None  # a loop of non-messages ends here as a root
            chain.append(current)
            current = entry.parent
        for record_id in chain:
            memo[record_id] = found
        return found

    def _break_cycles(self, top: _Node, nodes: dict[str, _Node], holder_of: dict[str, str]) -> None:
        """Nodes not reachable from a root sit on a parent cycle: each loop gets a root."""
        reached: set[str] = set()

        def reach(start: _Node) -> None:
            todo = [start]
            while todo:
                node = todo.pop()
                reached.add(node.id)
                todo.extend(node.kids)

        for root in top.kids:
            reach(root)
        if len(reached) == len(nodes):
            return
        for node in nodes.values():
            if node.id in reached:
                continue
            nodes[holder_of[node.id]].kids.remove(node)
            top.kids.append(node)
            self.report(
                self._entries[node.id].source,
                _("record {id}: its parent link closes a cycle (imported as a root)").format(
                    id=repr(node.id)
                ),
            )
            reach(node)

    # -- the rules, at one parent ----------------------------------------------------

    def _settle(self, parent: _Node, grand: _Node | None) -> list[_Node]:
        """Apply the rules to ``parent``'s children; returns those moved up beside it."""
        while parent.kids:
            if parent.role is None:
                self._questions_for_answers(parent)
                return []
            if (
                self._join_split_message(parent)
                or self._join_same_role(parent)
                or self._drop_replays(parent)
                or self._join_tool_results(parent)
            ):
                continue
            return self._rebuild_beside(parent, grand)
        return []

    def _join_split_message(self, parent: _Node) -> bool:
        if parent.group is None:
            return False
        for index, kid in enumerate(parent.kids):
            if kid.group == parent.group and kid.role == parent.role:
                self._absorb(parent, kid, index)
                self.counts["split assistant records"] += 1
                return True
        return False

    def _join_same_role(self, parent: _Node) -> bool:
        """An only child of the parent's role is merged into it."""
        if len(parent.kids) != 1 or parent.kids[0].role != parent.role:
            return False
        self._absorb(parent, parent.kids[0], 0)
        results = parent.role == "user" and only_tool_results(parent.content)
        self.counts["tool result records" if results else "role-order repairs"] += 1
        return True

    def _drop_replays(self, parent: _Node) -> bool:
        if len(parent.kids) < 2:
            return False
        dropped = False
        seen: dict[tuple[Any, str | None], _Node] = {}
        for kid in list(parent.kids):
            if kid.stamp is None:
                continue
            key = (kid.stamp, kid.role)
            first = seen.get(key)
            if first is None:
                seen[key] = kid
            elif first.content == kid.content:
                parent.kids.remove(kid)
                self._take_children(first, kid)
                self._aliases[kid.id] = first.id
                self.counts["compaction replays"] += 1
                dropped = True
        return dropped

    def _join_tool_results(self, parent: _Node) -> bool:
        if parent.role != "assistant" or len(parent.kids) < 2:
            return False
        results = [k for k in parent.kids if k.role == "user" and only_tool_results(k.content)]
        if not results:
            return False
        holder = results[0]
        for kid in results[1:]:
            parent.kids.remove(kid)
            self._own(holder).extend(blocks_of(kid.content))
            self._note_merged(holder, kid)
            self._take_children(holder, kid)
            self.counts["tool result records"] += 1
        continuations = [k for k in parent.kids if k.role == "assistant"]
        for kid in continuations:
            parent.kids.remove(kid)
            holder.kids.append(kid)
            self.counts["continuations moved under tool results"] += 1
        if continuations:
            holder.kids.sort(key=_position)
        return len(results) > 1 or bool(continuations)

    def _rebuild_beside(self, parent: _Node, grand: _Node | None) -> list[_Node]:
        """Children repeating the parent's role, among siblings: rebuilt beside the parent."""
        same = [k for k in parent.kids if k.role == parent.role]
        if not same or grand is None:
            return []
        for kid in same:
            parent.kids.remove(kid)
            merged = blocks_of(parent.content) + blocks_of(kid.content)
            kid.content = _results_first(merged) if kid.role == "user" else merged
            kid.owned = True
            kid.meta["repeats"] = parent.id
            grand.kids.insert(grand.kids.index(parent) + 1, kid)
            self.counts["role-order repairs"] += 1
        return same

    def _questions_for_answers(self, top: _Node) -> None:
        for index, kid in enumerate(top.kids):
            if kid.role != "assistant":
                continue
            question = _Node(None, kid.pos)
            question.last = -1  # never the last node: the answer under it is
            question.id = self._fresh_id(kid.id + "-question")
            question.role = "user"
            question.content = SYNTHETIC_QUESTION
            question.meta = {"synthetic": True, "source": kid.meta["source"]}
            question.kids = [kid]
            top.kids[index] = question
            self._live[question.id] = question
            self.counts["synthetic questions"] += 1

    def _fresh_id(self, wanted: str) -> str:
        candidate, n = wanted, 1
        while candidate in self._entries or candidate in self._live:
            n += 1
            candidate = f"{wanted}-{n}"
        return candidate

    # -- merging ----------------------------------------------------------------------

    def _own(self, node: _Node) -> list[Any]:
        if not node.owned:
            node.content = blocks_of(node.content)
            node.owned = True
        content: list[Any] = node.content
        return content

    def _absorb(self, holder: _Node, kid: _Node, index: int) -> None:
        """``kid`` becomes part of ``holder``; its children take its place."""
        if holder.role == "assistant" and is_raw_list(holder.content) and is_raw_list(kid.content):
            held = (
                holder.content if type(holder.content) is RawBlocks else RawBlocks(holder.content)
            )
            held.parts.extend(
                kid.content.parts if type(kid.content) is RawBlocks else [kid.content]
            )
            holder.content = held  # still raw: joined as JSON when written
        else:
            content = self._own(holder)
            content.extend(blocks_of(kid.content))
            if holder.role == "user":
                holder.content = _results_first(content)
        for key in ("model", "usage", "stop_reason", "interrupted", "error"):
            if key in kid.meta:
                holder.meta[key] = kid.meta[key]
        self._note_merged(holder, kid)
        holder.kids[index : index + 1] = kid.kids
        if kid.kids and len(holder.kids) > len(kid.kids):
            holder.kids.sort(key=_position)

    def _note_merged(self, holder: _Node, kid: _Node) -> None:
        merged = holder.meta.setdefault("merged", [])
        merged.append(
            {"id": kid.id, **{k: v for k, v in kid.meta["source"].items() if k != "format"}}
        )
        merged.extend(kid.meta.get("merged", ()))
        self._aliases[kid.id] = holder.id
        holder.last = max(holder.last, kid.last)

    def _take_children(self, holder: _Node, kid: _Node) -> None:
        if kid.kids:
            holder.kids.extend(kid.kids)
            holder.kids.sort(key=_position)
        holder.last = max(holder.last, kid.last)

    # -- writing ----------------------------------------------------------------------

    def _records(
        self, top: _Node, header: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        records: list[dict[str, Any]] = [header]
        live: dict[str, _Node] = {}
        branch_points = 0
        by_pos: list[tuple[int, bool, str]] = []
        stack: list[tuple[_Node, str | None]] = [(k, None) for k in reversed(top.kids)]
        push, add = stack.append, records.append
        while stack:
            node, parent_id = stack.pop()
            node_id = node.id
            live[node_id] = node
            meta = node.meta
            if "compacted_from" in meta:  # a source id: the node that holds it now
                meta["compacted_from"] = self.resolve(meta["compacted_from"])
            content = node.content
            if type(content) is RawBlocks:
                content = content.raw()
            message: dict[str, Any] = {"role": node.role, "content": content}
            if node.timestamp is not None:
                message["timestamp"] = node.timestamp
            add({"id": node_id, "parentId": parent_id, "message": message, "meta": meta})
            by_pos.append((node.last, "sidechain" in meta, node_id))
            kids = node.kids
            if len(kids) == 1:
                push((kids[0], node_id))
            elif kids:
                branch_points += 1
                stack.extend((kid, node_id) for kid in reversed(kids))
        self._live = live
        return records, {"nodes": len(live), "branch_points": branch_points, "_by_pos": by_pos}

    def _leaf(self, by_pos: list[tuple[int, bool, str]]) -> str | None:
        for candidate in reversed(self._leaves):
            found = self.resolve(candidate)
            if found is not None:
                return found
        if not by_pos:
            return None
        main = [row for row in by_pos if not row[1]] or by_pos
        return max(main)[2]

    def _final_labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        for source_id, label, where in self._labels:
            target = self.resolve(source_id)
            if target is None:
                why = _("label for unknown record {id} (ignored)")
                self.report(where, why.format(id=repr(source_id)))

            elif label:
                labels[target] = label
            else:
                labels.pop(target, None)
        return labels


@dataclass(frozen=True)
class _Missing:
    """What ``_nearest`` finds when a parent id is not in the source."""

    id: str


def _first_part(content: Any) -> Any:
    """What a record itself held (a reader may have joined later records to it)."""
    return content.parts[0] if type(content) is RawBlocks else content


def _position(node: _Node) -> int:
    return node.pos
