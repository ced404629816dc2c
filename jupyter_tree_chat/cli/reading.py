"""Reading a file for ``show``, ``path``, ``check`` and ``export``, whoever wrote it.

A ``*.chat.jsonl`` file is parsed as it is. A Claude Code, pi, ChatGPT or Open WebUI
file (detected from its records) is read into records in memory and parsed the same
way: nothing is written, and the problems reported are the source's, by its lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import formats
from ..errors import ChatError, StoreError
from ..formats.detect import SCAN_BYTES
from ..history.node import Node
from ..history.store import LoadResult, load_file, open_session_file, read_session_bytes
from ..history.tree import SessionTree
from ..i18n import _
from ..share.page import PageProblem, native_problems, source_problems
from ..textview import draw_tree, hidden_branches, hidden_note, short_id_length, summary


class CliError(Exception):
    """A one-line message for stderr; the command exits with status 2."""


@dataclass
class Reading:
    """A file read as a session tree: the tree, its problems as ``check`` prints them,
    and which format it was read as."""

    result: LoadResult
    problems: list[str]
    format: str
    #: the same problems as an exported page lists them (by line, or by key)
    page_problems: list[PageProblem] = field(default_factory=list)

    @property
    def foreign(self) -> bool:
        return self.format != formats.NATIVE


def load(name: str) -> Reading:
    """Read ``name``: another tool's file in memory, this project's through the store's
    chunked loader (a 1M-node file is never held as one bytes object)."""
    try:
        kind = formats.detect(_head(name))
        if kind in formats.FORMATS:
            data = read_session_bytes(name)
            imported = formats.read([formats.Source.of(name, data)], kind)
            result = formats.load(imported)
            problems = [str(p) for p in imported.problems]
            problems += [_("(as read) {problem}").format(problem=p) for p in result.problems]
            shown = source_problems(imported.problems)
            return Reading(result, problems, kind, shown)
        result = load_file(name, missing_ok=False)
        if not len(result.tree) and result.header is None:  # nothing usable: is it text?
            data = read_session_bytes(name)
            if data and not _is_utf8(data):
                raise CliError(
                    _("{name}: not a session file (its bytes are not UTF-8 JSON lines)").format(
                        name=name
                    )
                )
    except FileNotFoundError:
        raise CliError(_("{name}: no such file").format(name=name)) from None

    except StoreError as exc:  # a directory, a pipe, permission denied
        raise CliError(str(exc)) from None
    return Reading(
        result, [str(p) for p in result.problems], formats.NATIVE, native_problems(result)
    )


def _head(name: str) -> bytes:
    """The first bytes of a file, as much as format detection reads."""
    fd = open_session_file(name)
    try:
        return os.pread(fd, SCAN_BYTES, 0)
    finally:
        os.close(fd)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def leaf_of(tree: SessionTree, ref: str | None) -> str | None:
    if ref is None:
        return tree.leaf
    try:
        return tree.resolve(ref).id
    except ChatError as exc:
        raise CliError(str(exc)) from None


def show(reading: Reading, show_all: bool = False) -> str:
    """The text tree; hidden branches left out (and counted) unless ``show_all``."""
    result = reading.result
    tree = result.tree
    drawing = (
        draw_tree(
            tree, labels=result.labels, leaf=tree.leaf, hidden=result.hidden, show_hidden=show_all
        )
        if len(tree)
        else _("(empty session)")
    )
    count = 0 if show_all else len(hidden_branches(tree, result.hidden, tree.leaf))
    if count:
        drawing += "\n" + hidden_note(count, _("`show --all` shows them"))

    if not reading.foreign:
        return drawing
    label = formats.LABELS[reading.format]
    note = _(
        "(read as a {label} file, in memory; `jupyter tree-chat import` writes a session)"
    ).format(label=label)

    return f"{note}\n{drawing}"


def path(result: LoadResult, leaf: str | None, as_json: bool) -> str:
    tree = result.tree
    nodes = tree.path_nodes(leaf) if leaf is not None else []
    return path_text(nodes, (node.id for node in tree), as_json)


def path_text(nodes: list[Node], ids: Iterable[str], as_json: bool) -> str:
    """What ``path`` prints for ``nodes`` (root first); short ids tell all ``ids`` apart."""
    if as_json:
        from ..providers.anthropic.wire import api_messages  # here: only --json needs the providers

        sent = api_messages([node.message for node in nodes])
        return json.dumps(sent, ensure_ascii=False, indent=2)
    width = short_id_length(ids)
    return "\n".join(f"{n.id[:width]} {n.role}  {summary(n.message, meta=n.meta)}" for n in nodes)
