"""One question over many rows (an experiment): where its questions go, and its versions.

A ``%%chat --over NAME`` cell asks its question once per row of a table, each filled
from its row (the kernel fills them: kernel/experiment_cell.py). Every row's question is
a sibling under the node the cell ran from: the rows share the path before it and
nothing of each other. Their answers are one run of the fan-out (fanout.py), bounded by
``concurrency``; a fan-out is the same run with one row.

Each row's question keeps what made it in ``meta.experiment``: the experiment's ``id``,
its ``version``, the ``template`` as typed, the ``row`` it was filled from and the row's
``index``. The notebook-native rule, for an experiment (``place``):

- the first run is version 1 under the current leaf (or where ``--from``/``--new`` say);
- running the cell again with the template unchanged is one more sample per row: each
  row's question gets another answer, no new question (a row that is new gets one);
- running it with the template edited is a new version: new questions for every row,
  siblings of the old ones (a fork), each naming the old one in ``edited_from``;
- afterwards the first row's first answer is current, so a plain next cell continues
  from it.

Pure apart from ``run``, which stores the questions (in one durable append: the
questions are on disk before any is sent) and hands them to the fan-out.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import TreeError
from ...history.experiment_record import EXPERIMENT, experiment_of
from ...history.tree import Node, SessionTree, is_real_user_message, is_tool_result
from ...i18n import _
from ...providers.base import Message
from .. import cellrule
from ..events import Turn
from ..settings import ChatSettings, with_root_system
from .batch import BatchHost, send, wires_for
from .batch_poll import watch
from .fanout import answer_rows
from .variants import Fanout

DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class RowQuestion:
    """One row's question: its content (filled in), its meta (``context``, ``typed``) and
    the row's values (JSON values: ``row_values``)."""

    content: str | list[Any]
    meta: dict[str, Any] | None
    row: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """What an experiment cell asks: ``template`` as typed, one question per row."""

    template: str
    rows: Sequence[RowQuestion]
    concurrency: int = DEFAULT_CONCURRENCY


@dataclass
class Placement:
    """Where the rows' questions go: under ``parent``, as ``version`` of experiment
    ``experiment_id``; ``reused`` maps a row's index to its existing question (a sample)."""

    parent: str | None
    experiment_id: str
    version: int
    reused: dict[int, Node] = field(default_factory=dict)
    forked_from: dict[int, Node] = field(default_factory=dict)


class ExperimentHost(BatchHost, Protocol):
    """What running an experiment needs of the session (``Session`` is one)."""

    provider: Any

    def _settings(self, settings: ChatSettings | None) -> ChatSettings: ...

    def _preflight(
        self,
        path: list[Node],
        question: Message | None,
        settings: ChatSettings,
        fanout: Fanout | None = None,
    ) -> None: ...


def row_values(row: Mapping[Any, Any]) -> dict[str, Any]:
    """A row as JSON values: names as strings, numpy and pandas scalars as Python ones,
    a missing value (NaN, None, pandas' NA) as None, anything else as its text."""
    values: dict[str, Any] = {}
    for name, value in row.items():
        item = getattr(value, "item", None)
        if callable(item) and not isinstance(value, (str, bytes)):
            with contextlib.suppress(TypeError, ValueError):
                value = item()
        if isinstance(value, float) and not math.isfinite(value):
            value = None if math.isnan(value) else str(value)
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            value = None if _is_missing(value) else str(value)
        values[str(name)] = value
    return values


def _is_missing(value: Any) -> bool:
    try:
        return bool(value != value)  # NaN and pandas' NA/NaT are not equal to themselves
    except (TypeError, ValueError):
        return False


def place(
    tree: SessionTree,
    plan: Plan,
    *,
    cell_id: str | None,
    new_id: str,
    parent: str | None = None,
    chosen: bool = False,
    earlier: Node | None = None,
) -> Placement:
    """Apply the rule (module docstring); ``chosen`` means the options named ``parent``
    (``--from``, ``--new``, ``--continue``) and the rule steps aside; ``earlier`` is the
    question the cell asked before, when the caller knows it (``--same-experiment``)."""
    if earlier is None and not chosen and cell_id:
        earlier = cellrule.cell_node_on_path(tree, cell_id)
    if earlier is None:
        start = parent if chosen else tree.leaf
        return Placement(_asking_point(tree, start), new_id, 1)
    before = experiment_of(earlier)
    if before is None:  # the cell asked one question before: its rows fork there
        return Placement(earlier.parent_id, new_id, 1)
    same = [
        (found, about)
        for found in tree.children(earlier.parent_id)
        if (about := experiment_of(found)) is not None and about.get("id") == before.get("id")
    ]
    version = int(before.get("version") or 1)
    of_version = {
        about.get("index"): found for found, about in same if about.get("version") == version
    }
    placement = Placement(earlier.parent_id, str(before.get("id")), version)
    if before.get("template") == plan.template:
        for index, row in enumerate(plan.rows):
            old = of_version.get(index)
            if old is not None and (experiment_of(old) or {}).get("row") == row.row:
                placement.reused[index] = old
        return placement
    placement.version = 1 + max(int(about.get("version") or 1) for _found, about in same)
    placement.forked_from = {i: n for i, n in of_version.items() if isinstance(i, int)}
    return placement


def experiment_on_path(tree: SessionTree) -> Node | None:
    """The last experiment question on the current path (``--same-experiment``'s)."""
    if tree.leaf is None:
        return None
    return next(
        (n for n in reversed(tree.path_nodes(tree.leaf)) if experiment_of(n) is not None), None
    )


def _asking_point(tree: SessionTree, start: str | None) -> str | None:
    """Where a question asked at ``start`` hangs: beside an unanswered question, never
    under a tool round the model has not answered (as ``Session.ask``)."""
    if start is None:
        return None
    node = tree.get(start)
    if is_tool_result(node.message):
        raise TreeError(
            _(
                "the last tool round got no answer from the model; run `%chat retry` "
                "to let the model continue, or fork from an earlier reply"
            )
        )
    if node.role == "user" and is_real_user_message(node.message):
        return node.parent_id
    return start


def run(
    session: ExperimentHost,
    plan: Plan,
    *,
    cell_id: str | None,
    settings: ChatSettings | None = None,
    fanout: Fanout | None = None,
    parent: str | None = None,
    chosen: bool = False,
    earlier: Node | None = None,
    batch: bool = False,
) -> Turn:
    """Store the rows' new questions and ask every row (each variant of ``fanout``); with
    ``batch``, as vendor batches answered later (batch.py)."""
    if not plan.rows:
        raise TreeError(_("the experiment has no rows"))
    settings = session._settings(settings)
    placement = place(
        session.tree,
        plan,
        cell_id=cell_id,
        new_id=session.new_id(),
        parent=parent,
        chosen=chosen,
        earlier=earlier,
    )
    above = session.tree.path_nodes(placement.parent) if placement.parent else []
    longest = max(plan.rows, key=lambda r: len(str(r.content)))
    session._preflight(above, {"role": "user", "content": longest.content}, settings, fanout)
    variants = (fanout or Fanout()).variants(
        with_root_system(settings, above), session.provider.default_model
    )
    batch = batch or (fanout is not None and fanout.batch)
    wires = wires_for(session, variants) if batch else None  # refused before any write
    questions: list[Node] = []
    new: list[Node] = []
    for index, row in enumerate(plan.rows):
        if index in placement.reused:
            questions.append(placement.reused[index])
            continue
        about = {
            "id": placement.experiment_id,
            "version": placement.version,
            "template": plan.template,
            "row": row.row,
            "index": index,
        }
        meta: dict[str, Any] = {**({"cell_id": cell_id} if cell_id else {}), **(row.meta or {})}
        meta[EXPERIMENT] = about
        if index in placement.forked_from:
            meta["edited_from"] = placement.forked_from[index].id
        message = {"role": "user", "content": row.content, "timestamp": session.now()}
        node = Node(session.new_id(), placement.parent, message, meta)
        questions.append(node)
        new.append(node)
    first_new = new[0] if new and new[0] is questions[0] else None
    turn = Turn(first_new, experiment=placement.experiment_id)
    if wires is not None:
        send(session, questions, new, turn, variants, cell_id=cell_id, wires=wires)
        watch(session)
        return turn
    session.record_all(new)
    return answer_rows(session, questions, turn, variants, plan.concurrency)
