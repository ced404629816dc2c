"""``%chat find``: text on every branch of the notebook's session, or of every session
beside the notebook (``--sessions``).

The words of the command are read here (options anywhere, the rest is the text to
find); the search is ``share.find``'s, the same as the command line's and the panel's.
The session in use is searched as the kernel holds it (with what other kernels
appended); the others are read from their files, read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ...errors import ChatError, StoreError
from ...history.store import load_file, session_files
from ...i18n import _
from ...share.find import (
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
from ..sessions import KernelSessions

USAGE = (
    "find TEXT [--regex] [--all] [--role user|assistant|tool] [--case] [--sessions] "
    "[--json] [--limit N]"
)
#: matches listed in a cell unless --limit says otherwise (all are counted)
LIMIT = 50
FLAGS = ("--regex", "--all", "--case", "--sessions", "--json")


class FindOptions:
    """The words of ``%chat find`` read: the query and how to show what it finds."""

    def __init__(self, args: list[str]) -> None:
        words: list[str] = []
        role: str | None = None
        self.limit: int | None = LIMIT
        flags: set[str] = set()
        rest = list(args)
        while rest:
            word = rest.pop(0)
            if word in FLAGS:
                flags.add(word)
            elif word in ("--role", "--limit"):
                if not rest:
                    raise UsageError(
                        _("%chat find: {option} needs a value; usage: %chat {usage}").format(
                            option=word, usage=USAGE
                        )
                    )
                value = rest.pop(0)
                if word == "--role":
                    role = value
                else:
                    self.limit = _count(value)
            elif word.startswith("--"):
                raise UsageError(
                    _("%chat find: unknown option {option!r}; usage: %chat {usage}").format(
                        option=word, usage=USAGE
                    )
                )
            else:
                words.append(word)
        if not words:
            raise UsageError(_("usage: %chat {usage}").format(usage=USAGE))
        try:
            self.query = Query(
                " ".join(words),
                regex="--regex" in flags,
                case_sensitive="--case" in flags,
                role=role,
                include_hidden="--all" in flags,
            )
            self.query.pattern()  # a bad regular expression says so before any file is read
        except ChatError as error:
            raise UsageError(_("%chat find: {error}").format(error=error)) from None
        self.sessions = "--sessions" in flags
        self.json = "--json" in flags
        if self.json:
            self.limit = None  # a script gets every match


def _count(value: str) -> int | None:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise UsageError(
            _("%chat find: --limit takes a number of matches, not {value!r}").format(value=value)
        )
    return number or None  # 0: no limit


def find_command(sessions: KernelSessions, args: list[str]) -> Any:
    """Run ``%chat find`` (``args``: the words after ``find``); prints, or returns the
    matches as a list of dicts with ``--json``."""
    options = FindOptions(args)
    session = sessions.session()
    current = Path(session.location).resolve() if session.location else None
    searched: list[tuple[Path | None, Found, int]] = []
    if options.sessions:
        folder = sessions.notebook().parent
        for path in session_files(folder, recursive=False):
            if current is not None and path.resolve() == current:
                continue
            try:
                result = load_file(path)
            except StoreError:
                continue  # unreadable: nothing to find in it
            found = find_in(result, options.query, limit=options.limit)
            searched.append((path, found, text_index(result.tree).id_width()))
    found = find_in(session, options.query, limit=options.limit)
    searched.insert(0, (current, found, text_index(session.tree).id_width()))
    if options.json:
        return [
            {**match.as_json(), "file": str(path) if path else None}
            for path, found, _width in searched
            for match in found.matches
        ]
    _print_found(searched, options)
    return None


def _print_found(searched: list[tuple[Path | None, Found, int]], options: FindOptions) -> None:
    query = options.query
    if not options.sessions:
        _path, found, width = searched[0]
        print(summary_line(found, query))
        for line in match_lines(found, width):
            print(line)
        _print_notes(found)
        return
    with_matches = [item for item in searched if item[1].ids or item[1].hidden]
    print(sessions_line([found for _p, found, _w in searched], query))
    for path, found, width in with_matches:
        print("\n" + (path.name if path else _("(in memory)")))
        for line in match_lines(found, width):
            print("  " + line)
        _print_notes(found, indent="  ")


def _print_notes(found: Found, indent: str = "") -> None:
    for note in (
        more_line(found, _("--limit N lists more, --limit 0 all")),
        hidden_line(found, _("--all finds them too")),
    ):
        if note:
            print(indent + note)
