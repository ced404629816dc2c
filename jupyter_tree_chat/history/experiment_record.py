"""What ``check`` says of an experiment's question whose ``meta.experiment`` is not the
format's (docs/format.md, "A row of an experiment"): the node is kept as written and
the views read it as a plain question; this only says so. Pure: it reads a tree."""

from __future__ import annotations

from typing import Any

from ..i18n import _
from .tree import Node, SessionTree

EXPERIMENT = "experiment"


def _kinds() -> dict[str, str]:
    """Each field and what it must be, in the current language."""
    return {
        "id": _("a string"),
        "version": _("a whole number of 1 or more"),
        "template": _("a string"),
        "row": _("an object"),
        "index": _("a whole number of 0 or more"),
    }


def experiment_problem(value: Any) -> str | None:
    """Why ``value`` is not a question's ``meta.experiment``, or None if it is one."""
    if type(value) is not dict:
        return _("meta.experiment is not an object (read as a plain question)")
    for name, kind in _kinds().items():
        if not _fits(name, value.get(name)):
            return _("meta.experiment.{field} is not {kind} (read as a plain question)").format(
                field=name, kind=kind
            )
    return None


def _fits(name: str, found: Any) -> bool:
    if name in ("id", "template"):
        return type(found) is str and (name == "template" or bool(found))
    if name == "row":
        return type(found) is dict
    least = 1 if name == "version" else 0
    return type(found) is int and found >= least


def experiment_of(node: Node) -> dict[str, Any] | None:
    """The ``meta.experiment`` of a row's question, or None (also for one that is not the
    format's: ``check`` reports it, the views read a plain question)."""
    found = (node.meta or {}).get(EXPERIMENT)
    if found is None or experiment_problem(found) is not None:
        return None
    return dict(found)


def experiment_problems(tree: SessionTree) -> list[tuple[int, str]]:
    """Every question in ``tree`` whose ``meta.experiment`` is not the format's, as its
    line and the problem."""
    found = []
    for node in tree:
        meta = node.meta
        if meta is None or EXPERIMENT not in meta:
            continue
        why = experiment_problem(meta[EXPERIMENT])
        if why is not None:
            line = getattr(node, "line", 0) or 0
            found.append((line, f"node {node.id!r}: {why}"))
    return found
