"""``jupyter-tree-chat`` (also ``jupyter tree-chat``): read session files from a shell.

Read-only on purpose: it shows, prints, checks and exports, and never writes to a
session file, so it is safe on a file a kernel is appending to. Every user mistake (a
missing file, an unknown id) is one line on stderr and exit status 2; ``check`` exits 1
when the file has problems, so it can guard a script or CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import ChatError, StoreError
from .store import LoadResult, load_file, read_session_bytes
from .textview import draw_tree, path_markdown, short_id_length, summary
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

    path = commands.add_parser("path", help="print the active path (what the model sees)")
    path.add_argument("file", metavar="FILE")
    path.add_argument("--leaf", metavar="ID", help="a node id or unique prefix")
    path.add_argument(
        "--json", action="store_true", help="the messages exactly as sent to the model"
    )

    check = commands.add_parser("check", help="list every problem; exit 1 if there is any")
    check.add_argument("file", metavar="FILE")

    export = commands.add_parser("export", help="write the active path as Markdown")
    export.add_argument("file", metavar="FILE")
    export.add_argument("--leaf", metavar="ID", help="a node id or unique prefix")
    export.add_argument("--format", choices=["md"], required=True, help="md (Markdown)")
    return parser


def _load(name: str) -> LoadResult:
    try:
        result = load_file(name, missing_ok=False)
        if not len(result.tree) and result.header is None:  # nothing usable: is it text?
            data = read_session_bytes(name)
            if data and not _is_utf8(data):
                raise CliError(f"{name}: not a session file (its bytes are not UTF-8 JSON lines)")
    except FileNotFoundError:
        raise CliError(f"{name}: no such file") from None
    except StoreError as exc:  # a directory, a pipe, permission denied
        raise CliError(str(exc)) from None
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


def _show(result: LoadResult) -> str:
    if not len(result.tree):
        return "(empty session)"
    return draw_tree(result.tree, labels=result.labels, leaf=result.tree.leaf)


def _path(result: LoadResult, leaf: str | None, as_json: bool) -> str:
    tree = result.tree
    nodes = tree.path_nodes(leaf) if leaf is not None else []
    if as_json:
        return json.dumps([api_message(n.message) for n in nodes], ensure_ascii=False, indent=2)
    width = short_id_length(node.id for node in tree)
    return "\n".join(f"{n.id[:width]} {n.role}  {summary(n.message)}" for n in nodes)


def run(argv: list[str]) -> tuple[int, str]:
    """Run one command; returns the exit status and what goes to stdout."""
    args = _parser().parse_args(argv)
    result = _load(args.file)
    if args.command == "check":
        return (1 if result.problems else 0), "\n".join(str(p) for p in result.problems)
    if args.command == "show":
        return 0, _show(result)
    leaf = _leaf(result.tree, args.leaf)
    if args.command == "path":
        return 0, _path(result, leaf, args.json)
    return 0, path_markdown(result.tree, leaf).rstrip("\n")


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
    if argv is None:  # the console script: a million nodes need not be freed one by one
        sys.stderr.flush()
        os._exit(status)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
