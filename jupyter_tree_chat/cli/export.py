"""``export``: the active path as Markdown, or the tree as an SVG picture, to stdout or -o.

The one command that writes, and never a session file: ``-o`` refuses a ``*.chat.jsonl``
and the file being read, so an export cannot replace the data it came from.
"""

from __future__ import annotations

from ..errors import StoreError
from ..history.store import LoadResult, refuse_session_target
from ..picture import draw
from ..textview import path_markdown
from .reading import CliError


def export_text(
    result: LoadResult, fmt: str, leaf: str | None, *, source: str, show_all: bool
) -> str:
    """The Markdown of the path to ``leaf``, or the SVG of the tree with that path bold."""
    if fmt == "md":
        return path_markdown(result.tree, leaf).rstrip("\n")
    if not len(result.tree):
        raise CliError(f"{source}: the session is empty; there is no tree to draw")
    return draw(result, leaf=leaf, show_hidden=show_all).svg


def write_output(text: str, target: str, source: str) -> None:
    """Write ``text`` to ``target``, which may be neither a session file nor ``source``."""
    try:
        refuse_session_target(target, source)
    except StoreError as exc:
        raise CliError(f"{exc}; choose OUT") from None
    try:
        with open(target, "w", encoding="utf-8") as out:
            out.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise CliError(
            f"cannot write {target}: {exc.strerror or exc}; choose another OUT"
        ) from None
