"""A session as one HTML page that opens from disk, with no network and no Jupyter.

The page is the viewer without JupyterLab: the front end's own components (the tree as
a list and as a picture, the path as a conversation, siblings side by side with their
differences, thinking folded, images as thumbnails, hidden branches folded, a search
box), read-only, built from labextension/src/page/ into ``static/page.js`` and inlined
with the components' stylesheet (``static/page.css``). So a page and the viewer show
one session the same way, and nothing a page needs lives anywhere but in the page.

What keeps it safe to open, whoever wrote the session:

- The records are data, never markup: the session's lines (as a ``*.chat.jsonl`` file
  holds them) inside ``<script type="application/x-ndjson">``, which the browser never
  runs, every ``<`` written ``\\u003c`` (the same JSON), so no text in a message can end
  that element or open a comment. The page's script reads them with the viewer's file
  reader (format/parse.ts) and renders every message through the viewer's sanitizer.
- A Content-Security-Policy in the page: nothing may load (``default-src 'none'``), the
  one script and the one style sheet run by their SHA-256 hashes, images only as
  ``data:`` URLs; no other inline script or handler, no form, no base URL.

Pure: the caller reads the session and writes the page (``history.store``'s
``refuse_session_target`` guards where).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MissingExtra
from ..history.grade_record import latest_records
from ..history.loader import LoadResult
from ..history.node import Node
from ..history.store import (
    SESSION_SUFFIX,
    encode_record,
    hidden_record,
    label_record,
    leaf_record,
)
from ..i18n import ENGLISH, FRONT_END_DOMAIN, LOCALE_DIR, _, language

if TYPE_CHECKING:
    from ..conversation.session import Session

STATIC = Path(__file__).parent / "static"
SCRIPT = STATIC / "page.js"
STYLE = STATIC / "page.css"
PAGE_SUFFIX = ".html"
#: what the page adds to the session's own bytes at most (the issue's budget)
OVERHEAD_BUDGET = 1_500_000


@dataclass(frozen=True)
class PageProblem:
    """A problem the page lists, as the viewer words it: at a line, or somewhere in
    another tool's JSON export (``where``)."""

    line: int
    message: str
    where: str | None = None

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"line": self.line, "message": self.message}
        if self.where is not None:
            found["where"] = self.where
        return found


def native_problems(result: LoadResult) -> list[PageProblem]:
    """A session file's problems, by line, as ``check`` prints them."""
    return [PageProblem(p.line, p.message) for p in result.problems]


def source_problems(problems: Iterable[Any]) -> list[PageProblem]:
    """Another tool's file's problems (``formats.SourceProblem``): by line or by key."""
    found = []
    for p in problems:
        if p.line is not None:
            found.append(PageProblem(p.line, p.message))
        else:
            found.append(PageProblem(0, p.message, p.key or p.file))
    return found


def branch_nodes(result: LoadResult, branch: str) -> list[Node]:
    """The branch through ``branch``: from its root down to the newest leaf below it."""
    tree = result.tree
    return tree.path_nodes(tree.deepest_leaf(branch))


def page_records(
    result: LoadResult, *, leaf: str | None = None, nodes: Sequence[Node] | None = None
) -> bytes:
    """The records the page holds, as a session file's lines: the nodes (all, or only
    ``nodes``), their labels, hidden marks and grades, and the leaf the page opens at.

    A node read from a file keeps its line number (blank lines stand in for the records
    between), so the page's details say the line the file has it on, as the viewer's do.
    """
    tree = result.tree
    kept = list(tree) if nodes is None else list(nodes)
    ids = {node.id for node in kept} if nodes is not None else None
    out = bytearray()
    lines = 0
    for node in kept:
        if node.line is not None and node.line > lines + 1:
            out += b"\n" * (node.line - lines - 1)
            lines = node.line - 1
        out += encode_record(node.to_record())
        lines += 1
    for node_id, label in result.labels.items():
        if ids is None or node_id in ids:
            out += encode_record(label_record(node_id, label))
    for node_id in sorted(result.hidden):
        if ids is None or node_id in ids:
            out += encode_record(hidden_record(node_id))
    for record in latest_records(result.grades, None if ids is None else ids.__contains__):
        out += encode_record(record)
    if leaf is not None:
        out += encode_record(leaf_record(leaf))
    return bytes(out)


def content_security_policy(script: str, style: str) -> str:
    """Nothing loads; the page's one script and one style sheet run by their hashes."""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src '{_sha256(script)}'",
            f"style-src '{_sha256(style)}'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def page_html(
    result: LoadResult,
    *,
    title: str,
    leaf: str | None = None,
    branch: str | None = None,
    problems: Sequence[PageProblem] = (),
    source_format: str | None = None,
    version: str | None = None,
) -> str:
    """The page for a read session: the whole tree (opened at ``leaf``, default the
    session's), or only the branch through ``branch``. ``source_format`` names another
    tool's format the file was read as (its label, for people)."""
    tree = result.tree
    nodes = None
    if branch is not None:
        nodes = branch_nodes(result, branch)
        leaf = leaf or nodes[-1].id
    leaf = leaf if leaf is not None else tree.leaf
    records = page_records(result, leaf=leaf, nodes=nodes)
    if source_format:
        shown = _("{title} (read as a {format} session)").format(title=title, format=source_format)
    else:
        shown = title
    generator = f"jupyter-tree-chat {package_version() if version is None else version}".strip()
    data: dict[str, Any] = {
        "title": shown,
        "leaf": leaf,
        "problems": [p.as_json() for p in problems],
        "branch": branch,
        "generator": generator,
        "note": _(
            "A read-only copy of a jupyter-tree-chat session, exported as one page: it "
            "loads nothing and runs nothing but itself."
        ),
    }
    locale = language()
    catalog = front_end_catalog(locale)
    if catalog is not None:
        data["catalog"] = catalog
    script = _inline_script(_built(SCRIPT))
    style = _ENDS_STYLE.sub(r"<\\/", _built(STYLE))  # a comment cannot end the element
    return _TEMPLATE.format(
        lang=locale.replace("_", "-"),
        csp=html.escape(content_security_policy(script, style), quote=False),
        title=html.escape(shown),
        generator=html.escape(generator),
        style=style,
        data=_script_data(json.dumps(data, ensure_ascii=False)),
        records=_script_data(records.decode("utf-8")),
        script=script,
        noscript=html.escape(_("This page shows a chat session; it needs JavaScript.")),
    )


def session_page(session: Session) -> str:
    """A live session's page (``%chat export html``, the panel's Export HTML): the tree
    as the kernel holds it, opened at its current leaf."""
    result = LoadResult(
        session.tree,
        problems=list(session.problems),
        labels=dict(session.labels),
        hidden=set(session.hidden),
        grades=session.grades,
    )
    location = Path(session.location) if session.location else None
    return page_html(
        result,
        title=location.name if location else _("Chat session"),
        leaf=session.leaf,
        problems=native_problems(result),
    )


def front_end_catalog(locale: str) -> dict[str, Any] | None:
    """The front end's catalog for ``locale`` (the one JupyterLab loads), which the page
    carries so its own words are in the language of the title and note; ``None`` in
    English or where there is none."""
    if locale == ENGLISH:
        return None
    path = LOCALE_DIR / locale / "LC_MESSAGES" / f"{FRONT_END_DOMAIN}.json"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def package_version() -> str:
    """This package's version, for the page's generator line ('' in a bare checkout)."""
    try:
        return version("jupyter-tree-chat")
    except PackageNotFoundError:  # pragma: no cover - run from a plain checkout
        return ""


_TEMPLATE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{generator}">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<noscript>{noscript}</noscript>
<div id="jtc-page"></div>
<script type="application/json" id="jtc-page-data">{data}</script>
<script type="application/x-ndjson" id="jtc-records">{records}</script>
<script>{script}</script>
</body>
</html>
"""


def _script_data(text: str) -> str:
    """JSON (or JSON lines) safe inside a data ``<script>``: ``<`` as ``\\u003c``.

    In JSON a ``<`` can only stand inside a string, where ``\\u003c`` is the same
    character; with none left, nothing can close the element (``</script``) or start
    the parser's escaped states (``<!--``).
    """
    return text.replace("<", "\\u003c")


_ENDS_SCRIPT = re.compile(r"<(?=!--|/?script)", re.IGNORECASE)
_ENDS_STYLE = re.compile(r"</(?=style)", re.IGNORECASE)


def _inline_script(script: str) -> str:
    """The bundle as it goes between ``<script>`` tags: no ``</script``, ``<script`` or
    ``<!--`` left in it (DOMPurify and marked spell those in strings and regular
    expressions), each ``<`` of them written ``\\x3C``, which a JavaScript string,
    template or regular expression reads as the same ``<``."""
    return _ENDS_SCRIPT.sub(r"\\x3C", script)


def _built(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingExtra(
            _(
                "the exported page's {file} is not built: run `npm run build:page` in "
                "labextension/ (it writes {path})"
            ).format(file=path.name, path=path)
        ) from None


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def page_path(session_file: str | os.PathLike[str]) -> Path:
    """Where a session's page goes by default: beside it, ``analysis.chat.jsonl`` →
    ``analysis.chat.html`` (another tool's ``x.jsonl`` → ``x.html``)."""
    path = Path(session_file)
    name = path.name
    for suffix in (SESSION_SUFFIX, ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            stem = name[: -len(suffix)] + (".chat" if suffix == SESSION_SUFFIX else "")
            return path.with_name(stem + PAGE_SUFFIX)
    return path.with_name(name + PAGE_SUFFIX)
