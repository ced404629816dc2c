"""``Session``: the single owner of a conversation's state, and its user actions.

A session is a tree, a store, a provider and a current leaf. It is the one place where
the chapter's operations become things a user does (ask, edit, retry, switch,
fork-before-tool-use, compact, label), and it announces every change as an event so
the views (the magic, the panel, ...) can redraw without touching the tree themselves.

Reliability: a user message is on disk (fsynced) before the request is sent; a reply
cut short by an error or by KeyboardInterrupt is kept, marked ``interrupted`` (with the
thinking that had arrived, unsigned, so it is never sent back); if the file cannot be
written, the conversation goes on in memory and says so. A request the API would refuse
(preflight.py: the thinking budget, temperature with thinking, a tool turn's thinking, a
question over the context window) is refused before anything is stored or sent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import (
    TreeError,
)
from ..history.store import (
    FileStore,
    MemoryStore,
    hidden_record,
    label_record,
    leaf_record,
)
from ..history.tree import (
    Message,
    Node,
    only_thinking,
)
from ..i18n import _
from ..language import COMPACTION, path_language
from ..providers.base import (
    Provider,
)
from . import budgeting, cellrule
from .asking import Asking
from .events import (
    LeafChanged,
    NodeAdded,
    Turn,
)
from .host import exclusive
from .many import experiment
from .many.variants import Fanout
from .settings import ChatSettings


class Session(Asking):
    """A conversation tree bound to a store and a provider; the views' only way in.

    Its state, events, requests and writes are ``SessionHost``'s (host.py), asking and
    the reply loop ``Asking``'s (asking.py); here are the tree's own actions (switch,
    fork before a tool use, compact, label, hide) and the notebook-native rule.
    """

    @classmethod
    def open(cls, path: str | Path, provider: Provider, **kwargs: Any) -> Session:
        """A session over the file at ``path`` (created on the first append)."""
        return cls(FileStore(path), provider, **kwargs)

    @classmethod
    def in_memory(cls, provider: Provider, **kwargs: Any) -> Session:
        return cls(MemoryStore(), provider, **kwargs)

    @exclusive
    def switch(self, node_ref: str, *, deepest: bool = True) -> str:
        """Make a branch current: ``node_ref``'s deepest leaf (or the node itself)."""
        node = self.resolve(node_ref)
        target = self.tree.deepest_leaf(node.id) if deepest else node.id
        self.tree.switch(target)
        self._persist([leaf_record(target)], durable=True)
        self.emit(LeafChanged(target))
        return target

    @exclusive
    def fork_before_tool_use(
        self, content: str | None = None, *, settings: ChatSettings | None = None
    ) -> Turn:
        """Ask the last real user message again, from before the tool call it led to.

        ``content`` defaults to the original text; the model decides afresh and never
        sees the old tool call or its result.
        """
        point = self.tree.fork_before_tool_use_point()
        new_content = point.message.get("content") if content is None else content
        settings = self._settings(settings)
        above = self.path(point.parent_id) if point.parent_id else []
        self._preflight(above, {"role": "user", "content": new_content}, settings)
        node = Node(
            self.new_id(),
            point.parent_id,
            {**point.message, "content": new_content, "timestamp": self.now()},
            {"forked_before_tool_use": point.id},
        )
        user = self.record(node, durable=True)
        return self._respond(user, Turn(user), settings)

    @exclusive
    def compact(
        self, instructions: str | None = None, *, settings: ChatSettings | None = None
    ) -> Turn:
        """Summarise the current path into a new root; the old branch stays, one switch away."""
        if self.tree.leaf is None:
            raise TreeError(_("the session is empty; there is nothing to compact"))
        summarised = self.tree.leaf
        path = self.path()
        while path and (path[-1].role == "user" or only_thinking(path[-1].message)):
            path.pop()  # an unanswered question cannot be followed by the request below
        # in the conversation's own language, so the summary and its frame are too
        texts = COMPACTION[path_language([n.message for n in path])]
        ask = texts.request + (" " + instructions if instructions else "")
        settings = replace(self._settings(settings), thinking=None)  # a summary needs none
        asked: Message = {"role": "user", "content": ask}
        request = self.context_request(path, settings, extra=[asked], summarize=False)
        text, error = budgeting.collect_text(
            self.provider, request, lambda line: self.notice(line, "warning")
        )
        if error is not None:
            error = self.explained(error, request.messages, settings)
            self.notice(_("Compaction failed: {error}").format(error=error), "error")
            return Turn(None, error=error)
        root, ack = self.tree.compact(
            text,
            summarised,
            self.new_id(),
            self.new_id(),
            self.now(),
            heading=texts.heading,
            acknowledgement=texts.acknowledgement,
        )
        for node in (root, ack):
            self._persist([node.to_record()], durable=node is ack)
            self.emit(NodeAdded(node))
        self.emit(LeafChanged(ack.id))
        return Turn(root, [ack])

    @exclusive
    def label(self, node_ref: str, label: str) -> Node:
        """Name a node (``""`` removes the label); labels are records, nodes stay as they are."""
        node = self.resolve(node_ref)
        self._persist([label_record(node.id, label)], durable=True)
        if label:
            self.labels[node.id] = label
        else:
            self.labels.pop(node.id, None)
        self.emit(LeafChanged(self.tree.leaf))
        return node

    @exclusive
    def hide(self, node_ref: str, hidden: bool = True) -> bool:
        """Hide (or show again) the branch from a node; the nodes stay in the file.

        Returns whether anything changed. The current path cannot be hidden: the
        conversation under way would vanish from every view.
        """
        node = self.resolve(node_ref)
        if hidden and node.id in {n.id for n in self.path()}:
            raise TreeError(
                _(
                    "{node} is on the current path, which cannot be hidden; "
                    "switch to another branch first"
                ).format(node=node.id[:7])
            )
        if hidden == (node.id in self.hidden):
            return False
        self._persist([hidden_record(node.id, hidden)], durable=True)
        if hidden:
            self.hidden.add(node.id)
        else:
            self.hidden.discard(node.id)
        self.emit(LeafChanged(self.tree.leaf))
        return True

    # -- the notebook-native rule -----------------------------------------------------

    @exclusive
    def run_experiment(self, plan: experiment.Plan, **how: Any) -> Turn:
        """One question over many rows, each row a sibling question (experiment.py)."""
        return experiment.run(self, plan, **how)

    @exclusive
    def run_cell(
        self,
        text: str | list[dict[str, Any]],
        *,
        cell_id: str | None,
        settings: ChatSettings | None = None,
        from_node: str | None = None,
        new_root: bool = False,
        continue_leaf: bool = False,
        meta: dict[str, Any] | None = None,
        fanout: Fanout | None = None,
    ) -> Turn:
        """What running a ``%%chat`` cell does (see cellrule.py); options override the rule.

        ``text`` is the question's content (a string, or blocks with images and files);
        ``meta`` goes on a new user node beside the cell id (e.g. ``context``).
        """
        meta = {**({"cell_id": cell_id} if cell_id else {}), **(meta or {})} or None
        how: dict[str, Any] = {"settings": settings, "fanout": fanout}
        if new_root:
            return self.ask(text, new_root=True, meta=meta, **how)
        if from_node is not None:
            return self.ask(text, parent=from_node, meta=meta, **how)
        if continue_leaf:
            return self.ask(text, meta=meta, **how)
        decision = cellrule.decide(self.tree, cell_id, text)
        if decision.action == "retry" and decision.node is not None:
            return self.retry(decision.node.id, **how)
        if decision.action == "edit" and decision.node is not None:
            return self.edit(decision.node.id, text, meta=meta, **how)
        return self.ask(text, meta=meta, **how)
