"""The compact control under one ``%%chat`` turn, and showing it in the cell.

It is a view like the panel (``base.SessionWidget``) that follows one place of the
active path: which question and answer the path takes there, and their siblings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import traitlets

from ..conversation.events import Event, NodeAdded, Turn
from ..conversation.session import Session
from ..history.tree import Node, is_real_user_message
from ..textview import question_as_typed
from .actions import question_of
from .base import SessionWidget, peek_state
from .protocol import display_text, head, meta_summary, streamed_meta, summary


class TurnControl(SessionWidget):
    """The compact control under one ``%%chat`` turn: ``‹ 2/3 ›``, retry, edit.

    It follows its turn as the session changes: when the active path goes through
    another answer (or another version of the question) at this turn's place, the
    control shows that one, and the browser shows its text below the cell's own.
    """

    turn = traitlets.Dict().tag(sync=True)
    inserts = traitlets.Dict().tag(sync=True)  # {"cell", "codes"}: notebook:insert's cells

    def __init__(self, session: Session, reply_id: str, **kwargs: Any) -> None:
        reply = session.tree.get(reply_id)
        question = question_of(session, reply)
        self._question: Node = question
        self._depth = len(session.path(question.id)) - 1
        self._reply: Node | None = reply if reply.role == "assistant" else None
        self._shown = self._reply.id if self._reply is not None else None
        self.session = session
        self._place = question.parent_id or ""
        #: what it shows is its place's, kept once in the session's state (base.py)
        self._shared = False
        first = _first_at(session, self._place)
        if first is not None:  # another control is at this place: they share what it shows
            first._share()
            self._shared = True
        # described before the comm opens, so its first message carries it (not a second)
        turn = self._reference() if self._shared else self._describe()
        super().__init__(session, mode="turn", turn=turn, **kwargs)
        self.session_state.members.setdefault(self._place, []).append(self)

    def close(self) -> None:
        """Leave its place: the next control there keeps it, the last one forgets it."""
        state = getattr(self, "session_state", None)
        members = state.members.get(self._place, []) if state is not None else []
        if state is not None and self in members:
            leading = members[0] is self
            members.remove(self)
            if not members:
                del state.members[self._place]
                state.forget_place(self._place)
            elif leading and members[0]._shared:
                members[0]._follow(self.session.leaf)
                members[0]._refresh()
        super().close()

    @property
    def shown_turn(self) -> dict[str, Any]:
        """What the control shows (``{q, r, shown, onPath}``), its place's where it shares
        one: what the front end reads (store.ts, ``turnInfo``)."""
        if not self._shared:
            return dict(self.turn)
        return {**self.session_state.places.get(self._place, {}), "shown": self._shown}

    def _reference(self) -> dict[str, Any]:
        return {"place": self._place, "shown": self._shown}

    def _share(self) -> None:
        """A second control comes to this place: say the place once, and point at it."""
        if self._shared:
            return
        self._shared = True
        self._follow(self.session.leaf)
        self.session_state.show_place(self._place, self._place_described())
        self.turn = self._reference()

    def _leads(self) -> bool:
        """Whether this control keeps its place's description (the first one there)."""
        members = self.session_state.members.get(self._place, [])
        return bool(members) and members[0] is self

    @classmethod
    def for_turn(cls, session: Session, turn: Turn) -> TurnControl | None:
        """The control for what a ``%%chat`` run produced (``None`` if nothing was stored)."""
        last = turn.last
        return None if last is None else cls(session, last.id)

    def _describe(self) -> dict[str, Any]:
        tree = self.session.tree
        question, reply = self._question, self._reply
        qpos = tree.sibling_position(question.id)
        described: dict[str, Any] = {
            "q": {
                "id": question.id,
                "pos": qpos.index,
                "count": qpos.count,
                "sibs": [n.id for n in tree.siblings(question.id)],
                "head": head(question_as_typed(question.message, question.meta)),
            },
            "r": None,
            "shown": self._shown,
            "onPath": False,
        }
        if reply is not None:
            rpos = tree.sibling_position(reply.id)
            described["r"] = {
                "id": reply.id,
                "pos": rpos.index,
                "count": rpos.count,
                "sibs": [n.id for n in tree.siblings(reply.id)],
                "parent": reply.parent_id,
                "meta": meta_summary(reply, self.session.prices),
            }
        leaf = tree.leaf
        focus = reply or question
        described["onPath"] = leaf is not None and focus.id in _path_to(self.session, leaf)[1]
        return described

    def _place_described(self) -> dict[str, Any]:
        described = self._describe()
        del described["shown"]  # each control's own: its reference says it
        return described

    def _refresh(self) -> None:
        if self._shared:
            if self._leads():
                self.session_state.show_place(self._place, self._place_described())
            return
        described = self._describe()
        if described != self.turn:
            self.turn = described

    def _idle(self) -> bool:
        """A control that only points at a place another keeps: no work per event."""
        return self._shared and not self.acting and not self._leads()

    def _follow(self, leaf: str | None) -> None:
        """Move to the question/answer the active path now takes at this turn's place."""
        if leaf is None:
            return
        path = _path_to(self.session, leaf)[0]
        depth = self._depth
        if len(path) <= depth:
            return
        at = path[depth]
        if at.parent_id != self._question.parent_id or not is_real_user_message(at.message):
            return
        changed_question = at.id != self._question.id
        self._question = at
        found = None
        for node in path[depth + 1 :]:
            if is_real_user_message(node.message):
                break
            if node.role == "assistant":
                found = node
        if found is not None:
            self._reply = found
        elif changed_question:
            self._reply = None

    def _streams(self, parent_id: str) -> bool:
        """Only a reply this control's own action started (a retry, an edit) streams into
        it: one started elsewhere (the panel, another cell, a ``--new`` cell whose new
        question this control's place now takes) is said in its bar once it is stored,
        and its text is the other place's to show."""
        if not self.acting:
            return False
        self._follow(self.session.leaf)
        if parent_id == self._question.id:
            return True
        return self._reply is not None and parent_id == self._reply.parent_id

    def _on_event(self, event: Event) -> None:
        if isinstance(event, NodeAdded) and event.more:
            return  # one of an append's many nodes (never streamed): looked at with its last
        super()._on_event(event)

    def _add_node(self, node: Node) -> None:
        if self._idle():
            return
        streamed = self._streamed_text_matches(node)
        before = (self._question.id, self._reply.id if self._reply is not None else None)
        self._follow(self.session.leaf)
        if is_real_user_message(node.message) and not self.acting:
            # asked elsewhere: the bar follows with its answer, or at the turn's end
            # (``LeafChanged``): one update a cell, not one for the question and one for
            # the answer, to every earlier control the question moves
            return
        after = (self._question.id, self._reply.id if self._reply is not None else None)
        near = (self._question.parent_id, self._question.id)
        if not streamed and before == after and node.parent_id not in near:
            return  # a node elsewhere (a batch's answer, another row): nothing here changed
        if streamed:
            self.send(
                {
                    "t": "n",
                    "r": [
                        node.id,
                        -1,
                        "a",
                        summary(display_text(node.message, node.meta)),
                        meta_summary(node, self.session.prices),
                    ],
                    "s": 1,
                    **streamed_meta(node),
                }
            )
        self._refresh()

    def _follow_leaf(self, leaf: str | None) -> None:
        if self._idle():
            return
        self._follow(leaf)
        self._refresh()


_last_path: tuple[object, str, list[Node], frozenset[str]] | None = None


def _path_to(session: Session, leaf: str) -> tuple[list[Node], frozenset[str]]:
    """The nodes from the root to ``leaf``, and their ids. Every control hears each event
    and asks for the same leaf's path, so it is walked once per event, not once per
    control (a cost that grew with controls × depth); a leaf's path never changes, since
    the tree only grows."""
    global _last_path
    last = _last_path
    if last is not None and last[0] is session.tree and last[1] == leaf:
        return last[2], last[3]
    path = session.path(leaf)
    ids = frozenset(node.id for node in path)
    _last_path = (session.tree, leaf, path, ids)
    return path, ids


def _first_at(session: Session, place: str) -> TurnControl | None:
    """The live control that keeps ``place`` of ``session``'s tree, if any."""
    state = peek_state(session)
    members = state.members.get(place) if state is not None else None
    return members[0] if members else None


_controls_by_cell: dict[tuple[int, str], TurnControl] = {}


def show_turn_control(
    session: Session, turn: Turn, *, cell_id: str | None = None, inserts: Sequence[str] = ()
) -> TurnControl | None:
    """Display the control for ``turn``; the cell's previous control (a re-run) is closed.

    A re-run replaces the cell's output, but the old widget would live on in the kernel,
    subscribed to the session, so it is closed here.
    """
    from IPython.display import display

    control = TurnControl.for_turn(session, turn)
    if control is None:
        return None
    if cell_id:
        key = (id(session), cell_id)
        previous = _controls_by_cell.pop(key, None)
        if previous is not None:
            previous.close()
        _controls_by_cell[key] = control
    if inserts and cell_id:
        control.inserts = {"cell": cell_id, "codes": list(inserts)}
    display(control)
    return control
