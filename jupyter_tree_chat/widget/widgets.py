"""The anywidget views of a ``Session``: the full tree panel here, the per-turn control in
``turn``, what both share (the subscription, streaming, actions) in ``base``, and how
their front end reaches the page in ``loader``.

Costs are kept flat in the size of the session: the tree summary is sent once, then only
small custom messages (see ``protocol``), and a node's full text travels only when it is
opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import traitlets

from ..conversation.session import Session
from ..history.tree import Node, compaction_links
from .actions import BUSY_TEXT
from .base import SessionWidget
from .grading import grades_payload
from .protocol import RowIndex, context_reading, streamed_meta
from .turn import TurnControl, show_turn_control

__all__ = ["BUSY_TEXT", "TreePanel", "TurnControl", "show_turn_control"]


class TreePanel(SessionWidget):
    """The whole session: tree, active path, inline edit, retry, switch, compare.

    ``nodes`` is the compact summary (see ``protocol``). It is sent once and then
    kept current *in place* on this side, so a page reload gets the current tree while
    each change travels only as a small message.
    """

    nodes: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    labels = traitlets.Dict().tag(sync=True)
    #: ids whose branch is hidden (``hidden`` records): the views fold them away
    hidden: traitlets.List[str] = traitlets.List().tag(sync=True)
    #: each answer's latest grades and every preference (grading.grades_payload)
    grades = traitlets.Dict().tag(sync=True)
    #: compaction root id -> the leaf it summarised, for the picture's dashed links
    links = traitlets.Dict().tag(sync=True)
    leaf = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    context = traitlets.Dict().tag(sync=True)  # protocol.context_reading: the window's use
    compare_models: traitlets.List[str] = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The models "Ask other models…" offers (``TreeChat.compare_models``)."""
    compare_temperatures: traitlets.List[float] = traitlets.List(traitlets.Float()).tag(sync=True)

    def __init__(self, session: Session, **kwargs: Any) -> None:
        rows = RowIndex(session.prices)
        for node in session.tree:
            rows.add(node)
        self._rows = rows
        super().__init__(
            session,
            mode="panel",
            nodes=rows.rows,
            labels=dict(session.labels),
            hidden=sorted(session.hidden),
            grades=grades_payload(session.grades),
            links=compaction_links(session.tree.roots()),
            leaf=session.leaf,
            title=Path(session.location).name if session.location else "",
            context=context_reading(session),
            **kwargs,
        )
        self._rows.rows = self.nodes  # the trait's own list, so in-place appends stay current

    def _streams(self, parent_id: str) -> bool:
        return True

    def _send_rows(self, start: Any) -> None:
        rows = self._rows.rows
        begin = start if isinstance(start, int) and 0 <= start <= len(rows) else len(rows)
        self.send({"t": "rows", "from": begin, "rows": rows[begin:]})

    def _row_positions(self) -> Mapping[str, int]:
        return self._rows.index

    def _add_node(self, node: Node) -> None:
        row = self._rows.add(node)
        if row is None:
            return
        message: dict[str, Any] = {"t": "n", "r": row, "i": self._rows.index[node.id]}
        if self._streamed_text_matches(node):
            message["s"] = 1
            message.update(streamed_meta(node))  # what a budget left out, if it did
        self.send(message)
        if node.parent_id is None and (link := compaction_links([node])):
            self.links = {**self.links, **link}

    def _follow_leaf(self, leaf: str | None) -> None:
        self.leaf = leaf
        if self.labels != self.session.labels:
            self.labels = dict(self.session.labels)
        self.context = context_reading(self.session)
        if set(self.hidden) != self.session.hidden:
            self.hidden = sorted(self.session.hidden)
        grades = grades_payload(self.session.grades)
        if grades != self.grades:
            self.grades = grades
