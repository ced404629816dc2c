"""The session tree: messages linked by ``parentId``, and every operation of the chapter.

Pure data and algorithms: no I/O, no clock, no random ids. Callers pass ids and
timestamps in, so the same calls always build the same tree. Every walk is iterative:
sessions can be hundreds of thousands of nodes deep.

    A ─ B ─ C ─ D ─ E        branch 1
            └ C' ─ D'        branch 2, forked at B

The model only ever sees ``active_path(leaf)``: the messages from the root down to one
leaf. Other branches stay in the tree (and the file) and are never sent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import AmbiguousId, NodeNotFound, RoleOrderError, TreeError
from ..i18n import _
from .node import Message, Node
from .node import message_text as message_text  # its home before node.py


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def is_tool_result(message: Mapping[str, Any]) -> bool:
    """A user-role message filled in by the tool system, not typed by a person."""
    return message.get("role") == "user" and any(
        b.get("type") == "tool_result" for b in _blocks(message)
    )


def tool_uses(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool_use blocks of an assistant message, in order."""
    return [b for b in _blocks(message) if b.get("type") == "tool_use"]


def tool_shown_name(block: Mapping[str, Any], meta: Mapping[str, Any] | None) -> str:
    """The name a person knows a tool_use by: ``server:tool`` for an MCP tool (its reply's
    ``meta.tool_names`` maps the wire name), else the name the model used."""
    name = str(block.get("name", "?"))
    names = (meta or {}).get("tool_names")
    shown = names.get(name) if isinstance(names, Mapping) else None
    return shown if isinstance(shown, str) and shown else name


def is_real_user_message(message: Mapping[str, Any]) -> bool:
    """A user message a person typed (a tool_result has role user but is not one)."""
    return message.get("role") == "user" and not is_tool_result(message)


THINKING_TYPES = ("thinking", "redacted_thinking")


def is_thinking(block: Any) -> bool:
    """A ``thinking`` or ``redacted_thinking`` block (the model's reasoning, as it came)."""
    return isinstance(block, dict) and block.get("type") in THINKING_TYPES


def thinking_text(message: Mapping[str, Any]) -> str:
    """What the model thought before its answer: its thinking blocks' text, joined."""
    parts = [
        block["thinking"]
        for block in _blocks(message)
        if block.get("type") == "thinking" and isinstance(block.get("thinking"), str)
    ]
    return "\n\n".join(part for part in parts if part)


def redacted_thinking_count(message: Mapping[str, Any]) -> int:
    """How many ``redacted_thinking`` blocks (encrypted by the API, kept as they came)."""
    return sum(1 for block in _blocks(message) if block.get("type") == "redacted_thinking")


def only_thinking(message: Mapping[str, Any]) -> bool:
    """A reply that holds thinking and nothing else (no text, no tool call).

    A reply cut short while the model was still thinking is one: it is kept, but a
    question cannot follow it, since the path would send an assistant turn with nothing
    the API counts as content.
    """
    blocks = _blocks(message)
    if not any(is_thinking(block) for block in blocks):
        return False
    return all(
        is_thinking(block) or (block.get("type") == "text" and not block.get("text"))
        for block in blocks
    )


@dataclass(frozen=True)
class SiblingPosition:
    """Where a node stands among its parent's children: ``index`` of ``count``, 1-based."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


#: the frame of a compacted root, in English (``language.COMPACTION`` has the others)
COMPACTION_HEADING = "Summary of our conversation so far:"
COMPACTION_ACKNOWLEDGEMENT = "Understood. I'll continue from this summary."


class SessionTree:
    """Nodes indexed by id, children in append order, and a current leaf.

    ``add`` is the only way in; nothing is ever removed or re-parented. The children
    lists are built on first need, in one pass over the nodes in append order: a
    loaded tree that is only asked for one path never builds them.
    """

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        self._roots: list[str] = []  # children live on their parent node: no second index
        self._linked = True  # False while the children lists are still to be built
        self._linking = threading.Lock()
        self.leaf: str | None = None

    # -- building -----------------------------------------------------------------

    def add(self, node: Node, *, check_roles: bool = True) -> Node:
        """Attach ``node`` under its parent, which must already be in the tree.

        With ``check_roles`` (every user-facing operation), a user message may not
        follow a user message, nor an assistant an assistant, and a root must be a user.
        The loader passes ``check_roles=False``: a file's history is kept as written.
        """
        if node.id in self._nodes:
            why = _("node id {node} is already in the tree; ids are never reused")
            raise TreeError(why.format(node=repr(node.id)))
        parent = node.parent_id
        if parent is not None and parent not in self._nodes:
            why = _("parent {parent} of node {node} is not in the tree")
            raise NodeNotFound(why.format(parent=repr(parent), node=repr(node.id)))
        if check_roles:
            check_role_order(None if parent is None else self._nodes[parent].message, node.message)
        if node.kids is not None or node.line is not None:  # a node of another tree
            node = Node(node.id, node.parent_id, node.message, node.meta, node.line)
        with self._linking:
            self._nodes[node.id] = node
            if self._linked:
                self._link(node)
        return node

    def _link(self, node: Node) -> None:
        parent = node.parent_id
        if parent is None:
            self._roots.append(node.id)
        elif (siblings := self._nodes[parent].kids) is None:
            self._nodes[parent].kids = [node.id]
        else:
            siblings.append(node.id)

    def _unlinked(self) -> None:
        """For the loader: it fills ``_nodes`` itself; children are linked on first need."""
        self._linked = False

    def _ensure_linked(self) -> None:
        if self._linked:
            return
        with self._linking:  # a view thread may ask at the same time as the kernel
            if self._linked:
                return
            self._roots = []
            for node in list(self._nodes.values()):
                self._link(node)
            self._linked = True

    def _new(
        self, new_id: str, parent_id: str | None, message: Message, meta: dict[str, Any] | None
    ) -> Node:
        node = self.add(Node(new_id, parent_id, message, meta))
        self.leaf = node.id
        return node

    # -- reading ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def __iter__(self) -> Iterator[Node]:
        """Nodes in append order."""
        # a snapshot (one C-level copy): a view thread may iterate while a turn appends
        return iter(list(self._nodes.values()))

    def get(self, node_id: str) -> Node:
        try:
            return self._nodes[node_id]
        except KeyError:
            raise NodeNotFound(_("no node with id {node}").format(node=repr(node_id))) from None

    def resolve(self, ref: str) -> Node:
        """A node by whole id or unique prefix; a whole id always wins over a prefix."""
        node = self._nodes.get(ref)
        if node is not None:
            return node
        if not ref:
            raise NodeNotFound(_("empty node id; give an id or a unique prefix of one"))
        matches = [nid for nid in list(self._nodes) if nid.startswith(ref)]
        if not matches:
            why = _("no node id starts with {ref}; `show` lists the ids")
            raise NodeNotFound(why.format(ref=repr(ref)))
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
            raise AmbiguousId(
                _("{ref} matches {count} nodes ({shown}); give more characters").format(
                    ref=repr(ref), count=len(matches), shown=shown
                )
            )
        return self._nodes[matches[0]]

    def children(self, node_id: str | None) -> list[Node]:
        """Children in append order; ``None`` gives the roots."""
        return [self._nodes[c] for c in self._kids(node_id)]

    def _kids(self, node_id: str | None) -> list[str]:
        self._ensure_linked()
        if node_id is None:
            return self._roots
        node = self._nodes.get(node_id)
        return (node.kids or []) if node is not None else []

    def roots(self) -> list[Node]:
        return self.children(None)

    def branches(self, node_id: str) -> list[Node]:
        """The branches that leave a node: its children, oldest first."""
        self.get(node_id)
        return self.children(node_id)

    def has_children(self, node_id: str) -> bool:
        return bool(self._kids(node_id))

    def leaves(self) -> list[Node]:
        """Every node with no children, in append order: one per branch."""
        self._ensure_linked()
        return [n for n in list(self._nodes.values()) if not n.kids]

    def path_nodes(self, leaf_id: str) -> list[Node]:
        """Nodes from the root down to ``leaf_id``. Cost grows with depth, not tree size."""
        nodes = self._nodes
        path: list[Node] = []
        current: str | None = leaf_id
        while current is not None:
            node = nodes.get(current)
            if node is None:
                raise NodeNotFound(_("no node with id {node}").format(node=repr(current)))
            path.append(node)
            current = node.parent_id
        path.reverse()
        return path

    def active_path(self, leaf_id: str | None = None) -> list[Message]:
        """The messages the model sees for ``leaf_id`` (default: the current leaf)."""
        leaf_id = self.leaf if leaf_id is None else leaf_id
        if leaf_id is None:
            return []
        return [node.message for node in self.path_nodes(leaf_id)]

    def depth(self, node_id: str) -> int:
        """Number of nodes from the root to ``node_id``, both included."""
        return len(self.path_nodes(node_id))

    def sibling_position(self, node_id: str) -> SiblingPosition:
        """``2/3`` means the second of three children of the same parent."""
        node = self.get(node_id)
        siblings = self._kids(node.parent_id)
        return SiblingPosition(siblings.index(node_id) + 1, len(siblings))

    def siblings(self, node_id: str) -> list[Node]:
        """The node and its siblings, in append order."""
        return self.children(self.get(node_id).parent_id)

    def deepest_leaf(self, node_id: str) -> str:
        """Follow the newest child at each step down to a leaf."""
        node = self.get(node_id)
        nodes = self._nodes
        self._ensure_linked()
        while node.kids:
            node = nodes[node.kids[-1]]
        return node.id

    # -- the chapter's operations -----------------------------------------------

    def switch(self, node_id: str) -> None:
        """Make ``node_id`` the current leaf; the active path follows it."""
        self.get(node_id)
        self.leaf = node_id

    def append(self, new_id: str, message: Message, meta: dict[str, Any] | None = None) -> Node:
        """Continue the active path: a child of the current leaf (or a root if empty)."""
        return self._new(new_id, self.leaf, message, meta)

    def fork(
        self,
        from_id: str | None,
        new_id: str,
        message: Message,
        meta: dict[str, Any] | None = None,
    ) -> Node:
        """A new node under ``from_id`` (a new root for ``None``); it becomes the leaf."""
        if from_id is not None:
            self.get(from_id)
        return self._new(new_id, from_id, message, meta)

    def edit(
        self,
        node_id: str,
        new_id: str,
        content: Any,
        timestamp: int | float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Node:
        """A new sibling of ``node_id`` with new content; the original stays as it was."""
        original = self.get(node_id)
        message = {**original.message, "content": content}
        if timestamp is not None:
            message["timestamp"] = timestamp
        return self._new(new_id, original.parent_id, message, meta)

    def retry_point(self, node_id: str) -> Node:
        """The user node a new answer hangs under.

        For a user node (or a tool result) that is the node itself; for an assistant
        node it is its parent, so the new answer becomes a sibling of the old one.
        """
        node = self.get(node_id)
        if node.role == "assistant":
            if node.parent_id is None:
                why = _("assistant node {node} has no user message to retry")
                raise TreeError(why.format(node=repr(node_id)))
            return self.get(node.parent_id)
        return node

    def retry(self, node_id: str) -> Node:
        """Move the leaf back to ``node_id``'s retry point; the next reply is a sibling.

        No user node is duplicated: the new assistant answer hangs under the same user
        node as the old one (the chapter's "retry").
        """
        point = self.retry_point(node_id)
        self.leaf = point.id
        return point

    def fork_before_tool_use_point(self, leaf_id: str | None = None) -> Node:
        """The last message on the path that a person wrote (never a tool_result).

        A new attempt goes under this node's *parent*, so the model decides afresh and
        never sees the old tool call or its result.
        """
        leaf_id = self.leaf if leaf_id is None else leaf_id
        if leaf_id is None:
            raise TreeError(_("the session is empty; there is no user message to fork from"))
        for node in reversed(self.path_nodes(leaf_id)):
            if is_real_user_message(node.message):
                return node
        raise TreeError(_("no user message on the current path to fork from"))

    def fork_before_tool_use(
        self,
        new_id: str,
        content: Any = None,
        leaf_id: str | None = None,
        timestamp: int | float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Node:
        """A new user message beside the last real one, before the tool call it caused.

        ``content`` defaults to the original question; the chapter appends a hint
        ("the last approach did not work, try another"). The new node becomes the leaf.
        """
        point = self.fork_before_tool_use_point(leaf_id)
        return self.edit(
            point.id,
            new_id,
            point.message.get("content") if content is None else content,
            timestamp,
            meta,
        )

    def compact(
        self,
        summary: str,
        summarised_leaf: str,
        root_id: str,
        ack_id: str,
        timestamp: int | float | None = None,
        *,
        heading: str = COMPACTION_HEADING,
        acknowledgement: str = COMPACTION_ACKNOWLEDGEMENT,
    ) -> tuple[Node, Node]:
        """Compaction is a fork: a new root holding the summary, linked to the old leaf.

        The root is a user message (the API wants one first): ``heading``, then the
        summary; a short assistant ``acknowledgement``, marked ``synthetic``, follows so the
        next question can be asked under it. Switching back to ``summarised_leaf`` restores
        the full history.
        """
        self.get(summarised_leaf)
        for new_id in (root_id, ack_id):
            if new_id in self._nodes:
                why = _("node id {node} is already in the tree; ids are never reused")
                raise TreeError(why.format(node=repr(new_id)))
        root, ack = compaction_pair(
            summary,
            summarised_leaf,
            root_id,
            ack_id,
            timestamp,
            heading=heading,
            acknowledgement=acknowledgement,
        )
        self.add(root)
        self.add(ack)
        self.leaf = ack.id
        return root, ack


def compaction_pair(
    summary: str,
    summarised: str,
    root_id: str,
    ack_id: str,
    timestamp: int | float | None = None,
    *,
    heading: str = COMPACTION_HEADING,
    acknowledgement: str = COMPACTION_ACKNOWLEDGEMENT,
    meta: Mapping[str, Any] | None = None,
) -> tuple[Node, Node]:
    """The two nodes of a compaction, not yet in any tree: a root holding ``heading`` and
    the summary (``meta.compacted_from``: the node it summarises, plus ``meta``), and a
    ``synthetic`` acknowledgement under it."""
    if root_id == ack_id:
        why = _("compaction needs two different ids, got {node} twice")
        raise TreeError(why.format(node=repr(root_id)))
    stamp: dict[str, Any] = {} if timestamp is None else {"timestamp": timestamp}
    root = Node(
        root_id,
        None,
        {"role": "user", "content": heading + "\n\n" + summary, **stamp},
        {"compacted_from": summarised, **(meta or {})},
    )
    ack = Node(
        ack_id,
        root_id,
        {"role": "assistant", "content": [{"type": "text", "text": acknowledgement}], **stamp},
        {"synthetic": True},
    )
    return root, ack


def check_role_order(parent: Mapping[str, Any] | None, child: Mapping[str, Any]) -> None:
    """Raise ``RoleOrderError`` if ``child`` cannot follow ``parent`` in a conversation."""
    role = child.get("role")
    if role not in ("user", "assistant"):
        why = _("a message role must be 'user' or 'assistant', not {role}")
        raise RoleOrderError(why.format(role=repr(role)))
    if parent is None:
        if role != "user":
            raise RoleOrderError(
                _("a conversation must start with a user message, not an assistant one")
            )
        return
    parent_role = parent.get("role")
    if parent_role == role:
        if role == "assistant":
            why = _(
                "a assistant message cannot follow another assistant message; "
                "retry the user message instead"
            )
        else:
            why = _(
                "a user message cannot follow another user message; "
                "fork from the assistant reply or edit the question"
            )
        raise RoleOrderError(why)
    if is_tool_result(child) and not tool_uses(parent):
        raise RoleOrderError(_("a tool_result must follow an assistant message that used a tool"))


def node_kind(node: Node) -> str:
    """``user`` (a person's question), ``assistant`` or ``tool`` (a tool's result)."""
    if node.role == "assistant":
        return "assistant"
    return "tool" if is_tool_result(node.message) else "user"


def compaction_links(roots: Iterable[Node]) -> dict[str, str]:
    """Root id -> the leaf it summarises, for the roots a compaction made."""
    links = {}
    for root in roots:
        target = (root.meta or {}).get("compacted_from")
        if isinstance(target, str):
            links[root.id] = target
    return links
