"""What is wrong with a line of a session file, in words: the loader's problems.

The loader (loader.py) decides each line's fate; this module says why, one ``Problem``
(a 1-based line and a message) at a time: a line that is not JSON or is torn, a record
that is not a node, a node whose role, content or meta the format does not allow, a
duplicate id, the same role twice, an orphan or a cycle. The importers (formats/lines.py)
report a damaged line with the same words, and read lone surrogate escapes the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..i18n import _
from .node import Node


@dataclass(frozen=True)
class Problem:
    """Something wrong in a session file, at a 1-based line number."""

    line: int
    message: str

    def __str__(self) -> str:
        return _("line {line}: {problem}").format(line=self.line, problem=self.message)


def is_odd(message: dict[str, Any], role: Any, meta: Any) -> bool:
    """A node read whole whose fields are not what the format says (rare)."""
    content = message.get("content")
    return (
        (role != "user" and role != "assistant")
        or (type(content) is not str and type(content) is not list)
        or (meta is not None and type(meta) is not dict)
    )


def odd_node(node: Node, meta: Any, number: int, report: Callable[[Problem], None]) -> None:
    """Report a kept node's role, content or meta that the format does not allow.

    The message stays as written (it is the user's data); a meta that is not an
    object is dropped from the node, as nothing reads it.
    """
    message, name = node.message, node.id
    if "role" not in message:
        why = _("node {node}: message has no role (kept as written)")
        report(Problem(number, why.format(node=repr(name))))
    elif (role := message["role"]) != "user" and role != "assistant":
        why = _("node {node}: role {role} is not 'user' or 'assistant' (kept as written)")
        report(Problem(number, why.format(node=repr(name), role=repr(role))))
    if "content" not in message:
        why = _("node {node}: message has no content (kept as written)")
        report(Problem(number, why.format(node=repr(name))))
    elif type(content := message["content"]) is not str and type(content) is not list:
        why = _("node {node}: content is {kind}, not a string or a list (kept as written)")
        report(Problem(number, why.format(node=repr(name), kind=kind_of(content))))
    if meta is not None and type(meta) is not dict:
        why = _("node {node}: meta is {kind}, not an object (ignored)")
        report(Problem(number, why.format(node=repr(name), kind=kind_of(meta))))
        node.meta = None


def kind_of(value: Any) -> str:
    """What a JSON value is, in words (``an array``), for a problem's message."""
    if type(value) is list:
        return _("an array")
    if type(value) is str:
        return _("a string")
    if type(value) is int or type(value) is float:
        return _("a number")
    if type(value) is bool:
        return _("a boolean")
    if value is None:
        return "null"
    if type(value) is dict:
        return _("an object")
    return type(value).__name__


def same_role_twice(node_id: str, role: Any) -> str:
    if role == "assistant":
        why = _("node {node}: an assistant message under an assistant message (kept as written)")
        return why.format(node=repr(node_id))
    why = _("node {node}: a {role} message under a {role} message (kept as written)")
    return why.format(node=repr(node_id), role=role)


def duplicate(node_id: str, first_line: int | None) -> str:
    why = _("duplicate id {node}, first on line {line} (ignored)")
    return why.format(node=repr(node_id), line=first_line)


def bom_problem() -> str:
    """What a file that starts with a byte order mark is told (this file and the importers)."""
    return _("starts with a UTF-8 byte order mark (ignored)")


def lone_surrogates_problem() -> str:
    """What a line with lone ``\\udXXX`` escapes is told (this file and the importers)."""
    return _("lone surrogate escapes (a broken emoji?) read as U+FFFD")


def why_not_json(line: bytes, is_last: bool) -> str:
    if not line.strip():
        return _("blank line (ignored)")
    if is_last:
        why = _("torn last line: an incomplete record of {size} bytes (ignored)")
        return why.format(size=len(line))
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return _("not valid UTF-8 (ignored)")
    return _("not valid JSON (ignored)")


def orphan_problems(
    orphans: list[tuple[int, str, str]], lines_of: Mapping[str, int]
) -> list[Problem]:
    """Say why each orphan was not attached: a missing parent, a late one, or a cycle.

    Orphans link to each other through ``parentId``; following those links (each node
    has one, so this is a walk, not a search) finds the ones that loop back.
    """
    parent_of: dict[str, str] = {}
    for _number, node_id, parent in orphans:
        parent_of.setdefault(node_id, parent)
    in_cycle: set[str] = set()
    done: set[str] = set()
    for start in parent_of:
        if start in done:
            continue
        walk: list[str] = []
        on_walk: dict[str, int] = {}
        current: str | None = start
        while current is not None and current in parent_of and current not in done:
            if current in on_walk:
                in_cycle.update(walk[on_walk[current] :])
                break
            on_walk[current] = len(walk)
            walk.append(current)
            current = parent_of[current]
        done.update(walk)
    found: list[Problem] = []
    for number, node_id, parent in orphans:
        if parent == node_id:
            why = _("node {node} is its own parent, which would form a cycle (not attached)")
            found.append(Problem(number, why.format(node=repr(node_id))))
        elif node_id in in_cycle:
            why = _("node {node}: parent {parent} would close a cycle (not attached)")
            found.append(Problem(number, why.format(node=repr(node_id), parent=repr(parent))))
        else:
            why = _(
                "node {node} is an orphan: its parent {parent} has not appeared earlier "
                "(not attached)"
            )
            found.append(Problem(number, why.format(node=repr(node_id), parent=repr(parent))))
    return found


def why_not_a_node(record: dict[str, Any]) -> str:
    for key in ("id", "parentId", "message"):
        if key not in record:
            why = _("not a message record: no {field} field (ignored)")
            return why.format(field=repr(key))
    if not isinstance(record.get("message"), dict):
        return _("not a message record: 'message' is not an object (ignored)")
    return _("not a message record: 'id' is not a non-empty string (ignored)")


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_surrogates(v) for v in value]
    return value


def with_lone_surrogates(line: bytes) -> Any:
    """A line orjson refused only for lone ``\\udXXX`` escapes (valid JSON, as written by
    JavaScript's ``JSON.stringify``), parsed with U+FFFD for them; else ``None``."""
    if b"\\u" not in line:
        return None
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    scrubbed = scrub_surrogates(value)
    return scrubbed if scrubbed != value else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
