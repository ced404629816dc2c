"""``jupyter-tree-chat`` (also ``jupyter tree-chat``): read session files, import others'.

``show``, ``path``, ``check``, ``find`` and ``export`` only read: they never write to a
session file (``export -o`` writes its Markdown, SVG picture, HTML page or notebook
elsewhere), so they are safe on
one a kernel is appending to, and they read Claude Code, pi, ChatGPT
and Open WebUI files directly (detected, converted in memory). ``import`` writes one new
``*.chat.jsonl`` and never touches its sources. Every user mistake (a missing file, an
unknown id, an output that exists) is one line on stderr and exit status 2; ``check``
exits 1 when the file has problems, and ``find`` when nothing matched, so either can
guard a script or CI. ``serve-local`` runs a small real model on this machine
(serve_local.py) until Ctrl-C. The messages follow the locale (``LC_ALL``,
``LC_MESSAGES``, ``LANG``): ``LANG=zh_CN.UTF-8 jupyter tree-chat check FILE`` is Chinese.

Modules: ``reading`` (a file by path, any format), ``quickpath`` (``path`` without loading
the whole file), ``find``, ``export`` and ``budget`` (those commands), ``serve_local``,
``local_model`` and ``llama_process`` (a small real model on this machine), ``__main__``
(``python -m``). May import the core, ``providers`` and ``share``, never another view.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import formats, i18n
from ..errors import ChatError
from ..history.experiment_record import experiment_problems
from ..history.loader import Problem
from ..i18n import _
from . import serve_local
from .find import add_find_parser, run_find
from .quickpath import quick_path
from .reading import CliError, leaf_of, load, path, path_text, show

PROG = "jupyter-tree-chat"

__all__ = ["PROG", "CliError", "main", "run"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_(
            "Read branching chat sessions (*.chat.jsonl, or Claude Code, pi, ChatGPT "
            "and Open WebUI files) and import other tools' sessions."
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show_ = commands.add_parser("show", help=_("draw the tree, the current leaf marked"))
    show_.add_argument("file", metavar="FILE")
    show_.add_argument("--all", action="store_true", help=_("hidden branches too"))

    path_ = commands.add_parser("path", help=_("print the active path (what the model sees)"))
    path_.add_argument("file", metavar="FILE")
    path_.add_argument("--leaf", metavar="ID", help=_("a node id or unique prefix"))
    path_.add_argument(
        "--json", action="store_true", help=_("the messages exactly as sent to the model")
    )
    path_.add_argument(
        "--budget",
        metavar="N",
        help=_(
            "build the request to N tokens, as a session would: whole exchanges, newest "
            "first, a note for the rest (the listing marks what is sent)"
        ),
    )

    check = commands.add_parser("check", help=_("list every problem; exit 1 if there is any"))
    check.add_argument("file", metavar="FILE")

    export = commands.add_parser(
        "export",
        help=_("the path as Markdown or a notebook, the tree as an SVG picture or an HTML page"),
    )
    export.add_argument("file", metavar="FILE")
    where = export.add_mutually_exclusive_group()
    where.add_argument("--leaf", metavar="ID", help=_("a node id or unique prefix"))
    where.add_argument(
        "--branch",
        metavar="ID",
        help=_("the branch through ID (to its newest leaf); html: only that branch in the page"),
    )
    export.add_argument(
        "--format",
        choices=["md", "svg", "html", "ipynb"],
        required=True,
        help=_(
            "md (the path as Markdown), svg (the tree drawn, the path bold), html (one "
            "page with the whole tree that opens anywhere) or ipynb (the path as a notebook "
            "that continues the session)"
        ),
    )
    export.add_argument("-o", "--output", metavar="OUT", help=_("write to OUT, not stdout"))
    export.add_argument("--all", action="store_true", help=_("svg: hidden branches too"))

    add_find_parser(commands)

    imports = commands.add_parser(
        "import", help=_("write another tool's session as a new *.chat.jsonl (SRC is only read)")
    )
    imports.add_argument("sources", nargs="+", metavar="SRC", help=_("files of one session"))
    imports.add_argument(
        "-o", "--output", metavar="OUT", help=_("the new file (default: SRC's name, .chat.jsonl)")
    )
    imports.add_argument(
        "--format", choices=["auto", *formats.FORMATS], default="auto", help=_("default: auto")
    )
    imports.add_argument("--force", action="store_true", help=_("replace OUT if it exists"))
    imports.add_argument(
        "--conversation",
        metavar="ID",
        help=_("only this conversation of a ChatGPT or Open WebUI export (id, prefix or title)"),
    )
    imports.add_argument(
        "--no-sidechains", action="store_true", help=_("leave Claude Code's subagent runs out")
    )
    serve_local.add_parser(commands)
    return parser


def _import(args: argparse.Namespace) -> tuple[int, str]:
    try:
        target, imported = formats.import_files(
            args.sources,
            args.output,
            fmt=args.format,
            replace=args.force,
            conversation=args.conversation,
            sidechains=not args.no_sidechains,
        )
    except FileExistsError:
        out = args.output or formats.default_output(args.sources[0])
        raise CliError(
            _("{out} exists; give --force to replace it, or -o another file").format(out=out)
        ) from None
    except ChatError as error:
        raise CliError(str(error)) from None
    return 0, _("Wrote {target}: {summary}").format(target=target, summary=imported.summary())


def run(
    argv: list[str], *, quick: bool = True, keep: list[object] | None = None
) -> tuple[int, str]:
    """Run one command; returns the exit status and what goes to stdout.

    ``path --json`` on a clean session file reads only the path's lines in full
    (quickpath.py) unless ``quick`` is off; the answer is the full loader's either way.
    ``keep`` holds what the process need not free before ``os._exit``.
    """
    args = _parser().parse_args(argv)
    if args.command == "serve-local":
        return serve_local.run(args), ""
    if args.command == "import":
        return _import(args)
    if args.command == "find":
        return run_find(args)
    if args.command == "path" and args.budget is not None:
        from .budget import budgeted_path  # here: a path need not import the budgeting

        return 0, budgeted_path(load(args.file).result, args.leaf, args.budget, args.json)
    if args.command == "path" and args.json and quick:
        nodes = quick_path(args.file, args.leaf, keep)
        if nodes is not None:
            return 0, path_text(nodes, [], as_json=True)
    reading = load(args.file)
    result = reading.result
    if args.command == "check":
        found = experiment_problems(result.tree)
        problems = reading.problems + [str(Problem(line, why)) for line, why in found]
        return (1 if problems else 0), "\n".join(problems)
    if args.command == "show":
        return 0, show(reading, args.all)
    leaf = leaf_of(result.tree, args.leaf)
    if args.command == "path":
        return 0, path(result, leaf, args.json)
    from .export import export_text, write_output  # here: path need not import the picture

    branch = leaf_of(result.tree, args.branch) if args.branch else None
    text = export_text(
        reading, args.format, leaf, source=args.file, show_all=args.all, branch=branch
    )
    if args.output is None:
        return 0, text
    write_output(text, args.output, args.file)
    return 0, ""


def main(argv: list[str] | None = None, *, quick: bool = True) -> int:
    """The console script. Returns the exit status (0 ok, 1 problems found, 2 error);
    ``quick=False`` makes ``path`` use the full loader (tests compare the two)."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # a tree drawing on a Latin-1 terminal
    i18n.follow_environment(os.environ)  # LANG=zh_CN.UTF-8: the messages in Chinese
    try:
        keep: list[object] | None = [] if argv is None else None  # the console script
        # ends by os._exit (below): what ``keep`` holds is never freed one by one
        status, out = run(sys.argv[1:] if argv is None else argv, quick=quick, keep=keep)
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
