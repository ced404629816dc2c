"""``jupyter-tree-chat`` (also ``jupyter tree-chat``): read session files from a shell.

Read-only on purpose: it shows, prints, checks and exports (the path as Markdown, the
tree as an SVG picture), and never writes to a session file, so it is safe on a file a
kernel is appending to. Every user mistake (a missing file, an unknown id) is one line
on stderr and exit status 2; ``check`` exits 1 when the file has problems, so it can
guard a script or CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import ChatError, StoreError
from .picture import draw
from .store import SESSION_SUFFIX, LoadResult, parse_session, read_session_bytes
from .textview import (
    draw_tree,
    hidden_branches,
    hidden_note,
    path_markdown,
    short_id_length,
    summary,
)
from .tree import SessionTree, api_message

PROG = "jupyter-tree-chat"


class CliError(Exception):
    """A one-line message for stderr; the command exits with status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read branching chat sessions (*.chat.jsonl) written by %%chat.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = commands.add_parser("show", help="draw the tree, the current leaf marked")
    show.add_argument("file", metavar="FILE")
    show.add_argument("--all", action="store_true", help="hidden branches too")

    path = commands.add_parser("path", help="print the active path (what the model sees)")
    path.add_argument("file", metavar="FILE")
    path.add_argument("--leaf", metavar="ID", help="a node id or unique prefix")
    path.add_argument(
        "--json", action="store_true", help="the messages exactly as sent to the model"
    )

    check = commands.add_parser("check", help="list every problem; exit 1 if there is any")
    check.add_argument("file", metavar="FILE")

    export = commands.add_parser(
        "export", help="the active path as Markdown, or the tree as an SVG picture"
    )
    export.add_argument("file", metavar="FILE")
    export.add_argument("--leaf", metavar="ID", help="a node id or unique prefix")
    export.add_argument(
        "--format",
        choices=["md", "svg"],
        required=True,
        help="md (the path as Markdown) or svg (the tree drawn, the path bold)",
    )
    export.add_argument("-o", "--output", metavar="OUT", help="write to OUT, not stdout")
    export.add_argument("--all", action="store_true", help="svg: hidden branches too")
    return parser


def _load(name: str) -> LoadResult:
    try:
        data = read_session_bytes(name)
    except FileNotFoundError:
        raise CliError(f"{name}: no such file") from None
    except StoreError as exc:  # a directory, a pipe, permission denied
        raise CliError(str(exc)) from None
    result = parse_session(data)
    if data and not len(result.tree) and result.header is None and not _is_utf8(data):
        raise CliError(f"{name}: not a session file (its bytes are not UTF-8 JSON lines)")
    return result


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _leaf(tree: SessionTree, ref: str | None) -> str | None:
    if ref is None:
        return tree.leaf
    try:
        return tree.resolve(ref).id
    except ChatError as exc:
        raise CliError(str(exc)) from None


def _show(result: LoadResult, show_all: bool) -> str:
    tree = result.tree
    if not len(tree):
        return "(empty session)"
    drawing = draw_tree(
        tree, labels=result.labels, leaf=tree.leaf, hidden=result.hidden, show_hidden=show_all
    )
    count = 0 if show_all else len(hidden_branches(tree, result.hidden, tree.leaf))
    return f"{drawing}\n{hidden_note(count, '`show --all` shows them')}" if count else drawing


def _export(result: LoadResult, args: argparse.Namespace, leaf: str | None) -> str:
    """The Markdown or SVG text; with ``-o`` it goes to that file and a line says so."""
    if args.format == "md":
        text = path_markdown(result.tree, leaf).rstrip("\n")
    elif not len(result.tree):
        raise CliError(f"{args.file}: the session is empty; there is no tree to draw")
    else:
        text = draw(result, leaf=leaf, show_hidden=args.all).svg
    if args.output is None:
        return text
    target = args.output
    if target.endswith(SESSION_SUFFIX) or _same_file(target, args.file):
        raise CliError(f"{target} is a session file, which is never overwritten; choose OUT")
    try:
        with open(target, "w", encoding="utf-8") as out:
            out.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise CliError(
            f"cannot write {target}: {exc.strerror or exc}; choose another OUT"
        ) from None
    return ""


def _path(result: LoadResult, leaf: str | None, as_json: bool) -> str:
    tree = result.tree
    nodes = tree.path_nodes(leaf) if leaf is not None else []
    if as_json:
        return json.dumps([api_message(n.message) for n in nodes], ensure_ascii=False, indent=2)
    width = short_id_length(node.id for node in tree)
    return "\n".join(f"{n.id[:width]} {n.role}  {summary(n.message)}" for n in nodes)


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:  # OUT does not exist yet
        return False


def run(argv: list[str]) -> tuple[int, str]:
    """Run one command; returns the exit status and what goes to stdout."""
    args = _parser().parse_args(argv)
    result = _load(args.file)
    if args.command == "check":
        return (1 if result.problems else 0), "\n".join(str(p) for p in result.problems)
    if args.command == "show":
        return 0, _show(result, args.all)
    leaf = _leaf(result.tree, args.leaf)
    if args.command == "path":
        return 0, _path(result, leaf, args.json)
    return 0, _export(result, args, leaf)


def main(argv: list[str] | None = None) -> int:
    """The console script. Returns the exit status (0 ok, 1 problems found, 2 error)."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # a tree drawing on a Latin-1 terminal
    try:
        status, out = run(sys.argv[1:] if argv is None else argv)
    except CliError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    try:
        if out:
            print(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `jupyter tree-chat show big.chat.jsonl | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
