"""The control under a ``%%chat --over`` cell: its experiment as a clickable grid.

The grid (rows × versions, each cell an answer's first line and numbers) is sent whole
as the ``grid`` trait, in the shape the front end's grid draws
(labextension/src/components/experiment.ts, ``GridData``); a click switches the session
to that answer (the ``switch`` action every view has) and opens the answer below. It is
built again when the experiment gains a question or an answer (a retry, a new version).
Renderers without widgets (nbconvert, GitHub) show the cell's static grid instead: it
is the ``text/html`` beside the widget view in the same output.
"""

from __future__ import annotations

from typing import Any

import traitlets

from ..conversation.events import Event, LeafChanged, NodeAdded
from ..conversation.session import Session
from ..history.experiment_record import experiment_of
from ..history.node import Node
from ..measures.compare import experiment_questions
from .protocol import meta_summary
from .widgets import _SessionWidget

MAX_GRID_LINES = 2000
FIRST_LINE_CHARS = 120


def grid_data(session: Session, question_id: str) -> dict[str, Any]:
    """The experiment of ``question_id`` as ``GridData`` (experiment.ts)."""
    tree = session.tree
    questions = experiment_questions(tree, question_id)
    found: dict[int, tuple[dict[str, Any], dict[int, Node]]] = {}
    experiment = ""
    for question in questions:
        about = experiment_of(question)
        if about is None:
            continue
        experiment = str(about["id"])
        line = found.setdefault(about["index"], (about["row"], {}))
        line[1].setdefault(about["version"], question)
    versions = sorted({v for _row, by_version in found.values() for v in by_version})
    lines = []
    for index in sorted(found)[:MAX_GRID_LINES]:
        row, by_version = found[index]
        cells: list[Any] = []
        for version in versions:
            asked = by_version.get(version)
            answers = tree.children(asked.id) if asked is not None else []
            if asked is None:
                cells.append(None)
            elif not answers:
                cells.append("none")
            else:
                answer = answers[0]
                cells.append(
                    {
                        "id": answer.id,
                        "head": _first_line(answer.text),
                        "summary": _summary(meta_summary(answer, session.prices)),
                    }
                )
        lines.append({"index": index, "row": row, "cells": cells})
    return {"experiment": experiment, "versions": versions, "lines": lines}


def _first_line(text: str) -> str:
    line = next((piece.strip() for piece in text.splitlines() if piece.strip()), "")
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def _summary(meta: list[Any] | None) -> dict[str, Any] | None:
    """A reply's ``meta_summary`` as the components' ``Summary`` (store.ts: summaryOf)."""
    if meta is None:
        return None
    model, into, out, duration, interrupted = meta[:5]
    cost = meta[5] if len(meta) > 5 and isinstance(meta[5], str) else None
    return {
        "model": model,
        "inputTokens": into,
        "outputTokens": out,
        "durationMs": duration,
        "interrupted": interrupted == 1,
        "cost": cost,
    }


class ExperimentGrid(_SessionWidget):
    """The grid of one experiment, under the cell that ran it."""

    grid = traitlets.Dict().tag(sync=True)

    def __init__(
        self, session: Session, question_id: str, fallback: dict[str, str] | None = None
    ) -> None:
        self._question_id = question_id
        self._fallback = dict(fallback or {})
        self._experiment = (experiment_of(session.tree.get(question_id)) or {}).get("id")
        self._stale = False
        super().__init__(session, mode="grid")
        self.grid = grid_data(session, question_id)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget view, with the static grid beside it for renderers without widgets."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            data, metadata = bundle
            return {**self._fallback, **data}, metadata
        return {**self._fallback, **(bundle or {})}

    def _on_event(self, event: Event) -> None:
        """A new question or answer of the experiment marks the grid stale; it is built
        again when the action ends (its ``LeafChanged``), once, however many came."""
        if isinstance(event, NodeAdded):
            self._stale = self._stale or self._concerns(event.node)
        elif isinstance(event, LeafChanged):
            if self._stale:
                self._stale = False
                self.grid = grid_data(self.session, self._question_id)
        else:
            super()._on_event(event)

    def _concerns(self, node: Node) -> bool:
        """Whether ``node`` is a question of this experiment or an answer to one."""
        if node.role == "user":
            return (experiment_of(node) or {}).get("id") == self._experiment
        if node.parent_id is None or node.parent_id not in self.session.tree:
            return False
        above = self.session.tree.get(node.parent_id)
        return (experiment_of(above) or {}).get("id") == self._experiment

    def _streams(self, parent_id: str) -> bool:
        return False

    def _add_node(self, node: Node) -> None:
        """The grid is rebuilt in ``_on_event``; nothing else is kept."""

    def _follow_leaf(self, leaf: str | None) -> None:
        """A grid shows every row whatever branch is current."""
