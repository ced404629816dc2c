"""``export``: the path as Markdown or a notebook, the tree as an SVG picture or one HTML
page, to stdout or -o.

The one command that writes, and never a session file: ``-o`` refuses a ``*.chat.jsonl``
and the file being read, so an export cannot replace the data it came from. Another
tool's file exports like a session file, read in memory (reading.py).
"""

from __future__ import annotations

import json
import os

from .. import formats
from ..errors import StoreError
from ..history.store import refuse_session_target
from ..i18n import _
from ..picture import draw
from ..share.files import write_like
from ..share.notebook import branch_notebook
from ..share.page import page_html
from ..textview import path_markdown
from .reading import CliError, Reading


def export_text(
    reading: Reading,
    fmt: str,
    leaf: str | None,
    *,
    source: str,
    show_all: bool,
    branch: str | None = None,
) -> str:
    """What ``export`` writes: the path to ``leaf`` (or through ``branch``) as Markdown or
    a notebook, the tree drawn with that path bold, or the tree as a page."""
    result = reading.result
    tree = result.tree
    name = os.path.basename(source)
    if fmt == "html":
        return page_html(
            result,
            title=name,
            leaf=None if branch else leaf,
            branch=branch,
            problems=reading.page_problems,
            source_format=formats.LABELS[reading.format] if reading.foreign else None,
        )
    if branch is not None:
        leaf = tree.deepest_leaf(branch)
    if fmt == "md":
        return path_markdown(tree, leaf).rstrip("\n")
    if not len(tree) and fmt == "ipynb":
        raise CliError(
            _("{source}: the session is empty; there is no branch to write as a notebook").format(
                source=source
            )
        )
    if not len(tree):
        raise CliError(
            _("{source}: the session is empty; there is no tree to draw").format(source=source)
        )
    if fmt == "ipynb" and leaf is not None:
        session_file = formats.default_output(name).name if reading.foreign else name
        notebook = branch_notebook(
            tree,
            leaf,
            session_file=session_file,
            labels=result.labels,
            imported_from=name if reading.foreign else None,
        )
        return json.dumps(notebook, ensure_ascii=False, indent=1)
    return draw(result, leaf=leaf, show_hidden=show_all).svg


def write_output(text: str, target: str, source: str) -> None:
    """Write ``text`` to ``target``, which may be neither a session file nor ``source``,
    with ``source``'s permission bits (an export is no more readable than its session)."""
    try:
        refuse_session_target(target, source)
    except StoreError as exc:
        raise CliError(_("{error}; choose OUT").format(error=exc)) from None
    try:
        write_like(target, text if text.endswith("\n") else text + "\n", source)
    except OSError as exc:
        raise CliError(
            _("cannot write {target}: {reason}; choose another OUT").format(
                target=target, reason=exc.strerror or exc
            )
        ) from None
