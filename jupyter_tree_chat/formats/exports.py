"""What the two JSON-export readers share: many conversations in one document.

ChatGPT and Open WebUI exports are one JSON document holding a list of conversations
(or a single one), each a tree with its own current leaf. ``read_exports`` walks them
and makes the current leaf of the most recently updated conversation the file's;
``finish_conversation`` puts a conversation's system prompt on its roots and its title
on the first, as a label.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .builder import TreeBuilder
from .common import Source
from .lines import json_document

#: reads one conversation (its value, index, file name); returns its leaf and update time,
#: or None when it was left out
Conversation = Callable[[Any, int, str], "tuple[str | None, float] | None"]


def read_exports(sources: list[Source], builder: TreeBuilder, one: Conversation) -> None:
    newest: tuple[float, str] | None = None
    for source in sources:

        def report(line: int | None, message: str, name: str = source.name) -> None:
            builder.report({"file": name, "line": line}, message)

        value = json_document(source.data, report)
        if value is None:
            continue
        for index, item in enumerate(value if type(value) is list else [value]):
            found = one(item, index, source.name)
            if found is None:
                continue
            leaf, updated = found
            if leaf is not None and (newest is None or updated >= newest[0]):
                newest = (updated, leaf)
    if newest is not None:
        builder.prefer_leaf(newest[1])


def finish_conversation(
    builder: TreeBuilder, roots: list[str], system: list[str], title: Any, where: dict[str, Any]
) -> None:
    if system:
        prompt = "\n\n".join(system)
        for root in roots:
            entry = builder.entry(root)
            if entry is not None:
                entry.meta = {**(entry.meta or {}), "system": prompt}
    if roots and type(title) is str and title:
        builder.label(roots[0], title, where)


def current(value: Any) -> str | None:
    return value if type(value) is str else None
