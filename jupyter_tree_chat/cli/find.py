"""``find FILE|DIR TEXT``: text on every branch of a session, or of every session under
a folder, as ``%chat find`` lists it (share/find.py does the finding for both).

A file may be any file ``show`` reads (another tool's too); a folder is searched for
``*.chat.jsonl`` files, at any depth (not into hidden folders, ``node_modules`` and the
like). Exit status 0 when something matched, 1 when nothing did, 2 on a mistake.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from ..errors import ChatError, StoreError
from ..history.store import load_file, session_files
from ..i18n import _
from ..share.find import (
    ROLES,
    Found,
    Query,
    find_in,
    hidden_line,
    match_lines,
    more_line,
    sessions_line,
    summary_line,
    text_index,
)
from .reading import CliError, load


def add_find_parser(commands: Any) -> None:
    found = commands.add_parser(
        "find", help=_("find text on every branch (thinking and tool results too)")
    )
    found.add_argument("target", metavar="FILE|DIR", help=_("a session file, or a folder of them"))
    found.add_argument("text", nargs="+", metavar="TEXT", help=_("what to find (words are joined)"))
    found.add_argument("--regex", action="store_true", help=_("TEXT is a regular expression"))
    found.add_argument("--case", action="store_true", help=_("match case (default: ignore it)"))
    found.add_argument("--role", choices=ROLES, help=_("only questions, answers or tool results"))
    found.add_argument("--all", action="store_true", help=_("hidden branches too"))
    found.add_argument("--json", action="store_true", help=_("one JSON list of the matches"))
    found.add_argument(
        "--limit", type=int, metavar="N", help=_("list at most N matches a file (all are counted)")
    )


def run_find(args: argparse.Namespace) -> tuple[int, str]:
    try:
        query = Query(
            " ".join(args.text),
            regex=args.regex,
            case_sensitive=args.case,
            role=args.role,
            include_hidden=args.all,
        )
        query.pattern()
    except ChatError as error:
        raise CliError(str(error)) from None
    if args.limit is not None and args.limit < 0:
        raise CliError(_("--limit takes a number of matches (0 or more)"))
    limit = args.limit or None
    folder = os.path.isdir(args.target)
    searched = (
        _search_folder(Path(args.target), query, limit)
        if folder
        else [_search_file(args.target, query, limit)]
    )
    matched = any(found.ids for _, found, _w in searched)
    if args.json:
        rows = [
            {**match.as_json(), "file": name}
            for name, found, _width in searched
            for match in found.matches
        ]
        return (0 if matched else 1), json.dumps(rows, ensure_ascii=False, indent=2)
    return (0 if matched else 1), "\n".join(_lines(searched, query, folder))


def _search_file(name: str, query: Query, limit: int | None) -> tuple[str, Found, int]:
    result = load(name).result
    return name, find_in(result, query, limit=limit), text_index(result.tree).id_width()


def _search_folder(folder: Path, query: Query, limit: int | None) -> list[tuple[str, Found, int]]:
    searched = []
    for path in session_files(folder):
        try:
            result = load_file(path)
        except StoreError:
            continue  # unreadable here: nothing to find in it
        found = find_in(result, query, limit=limit)
        searched.append((str(path), found, text_index(result.tree).id_width()))
    return searched


def _lines(searched: list[tuple[str, Found, int]], query: Query, folder: bool) -> list[str]:
    how_more = _("--limit N lists more, --limit 0 all")
    how_hidden = _("--all finds them too")
    if not folder:
        _name, found, width = searched[0]
        lines = [summary_line(found, query), *match_lines(found, width)]
        lines += [n for n in (more_line(found, how_more), hidden_line(found, how_hidden)) if n]
        return lines
    shown = [item for item in searched if item[1].ids or item[1].hidden]
    lines = [sessions_line([found for _n, found, _w in searched], query)]
    for name, found, width in shown:
        lines += ["", name]
        lines += ["  " + line for line in match_lines(found, width)]
        notes = (more_line(found, how_more), hidden_line(found, how_hidden))
        lines += ["  " + n for n in notes if n]
    return lines
