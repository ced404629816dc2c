"""``%chat import``: another tool's session as a new session of this notebook, then used.

The file goes beside the notebook as session NAME (``analysis.NAME.chat.jsonl``; NAME
defaults to the source's name), written once by ``formats.import_files``; the source is
only read, and an existing session is never overwritten. The kernel's sessions then
switch to it, so the next ``%%chat`` continues the imported current branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from IPython.core.error import UsageError

from ... import formats
from ...errors import ChatError
from ...i18n import _
from ..sessions import KernelSessions


@dataclass
class ImportOptions:
    sources: list[str]
    session: str | None = None
    format: str = "auto"
    conversation: str | None = None
    sidechains: bool = True


IMPORT_SYNTAX = (
    "import SRC... [--session NAME] [--format auto|"
    + "|".join(formats.FORMATS)
    + "] [--conversation ID] [--no-sidechains]"
)


def import_usage() -> str:
    return _("usage: %chat {usage}").format(usage=IMPORT_SYNTAX)


def parse_import(args: list[str]) -> ImportOptions:
    """``%chat import``'s words; a mistake is a UsageError with the usage line."""
    options = ImportOptions([])
    words = iter(args)
    for word in words:
        if word in ("--session", "--format", "--conversation"):
            value = next(words, None)
            if value is None:
                raise UsageError(
                    _("%chat import: {option} needs a value; {usage}").format(
                        option=word, usage=import_usage()
                    )
                )
            setattr(options, word[2:], value)
        elif word == "--no-sidechains":
            options.sidechains = False
        elif word.startswith("--"):
            raise UsageError(
                _("%chat import: unknown option {option}; {usage}").format(
                    option=repr(word), usage=import_usage()
                )
            )
        else:
            options.sources.append(word)
    if not options.sources:
        raise UsageError(import_usage())
    if options.format not in ("auto", *formats.FORMATS):
        raise UsageError(
            _("%chat import: unknown format {format}; {usage}").format(
                format=repr(options.format), usage=import_usage()
            )
        )
    return options


def import_session_name(source: str) -> str:
    """A session name from a source's file name: ``abc.jsonl`` → ``abc``."""
    stem = Path(source).name.split(".")[0]
    name = re.sub(r"[^\w-]+", "-", stem).strip("-")[:60]
    return name or "imported"


def import_session(sessions: KernelSessions, args: list[str]) -> list[str]:
    """Import, switch to the new session, and say what happened (lines to print)."""
    options = parse_import(args)
    name = options.session or import_session_name(options.sources[0])
    try:
        target = sessions.session_file(name)
    except ChatError as error:
        raise UsageError(
            _("%chat import: {error}; choose another --session NAME").format(error=error)
        ) from None
    if target.exists():
        raise UsageError(
            _(
                "%chat import: session {name} exists ({path}); "
                "choose another name with --session NAME"
            ).format(name=repr(name), path=target)
        )
    try:
        _written, imported = formats.import_files(
            [Path(source).expanduser() for source in options.sources],
            target,
            fmt=options.format,
            conversation=options.conversation,
            sidechains=options.sidechains,
        )
    except FileExistsError:
        raise UsageError(
            _("%chat import: {path} appeared meanwhile; run it again").format(path=target)
        ) from None
    except ChatError as error:
        raise UsageError(f"%chat import: {error}") from None
    sessions.config.session = name
    session = sessions.session()
    lines = [
        _("Imported into session {name} ({path}): {summary}").format(
            name=repr(name), path=target, summary=imported.summary()
        )
    ]
    if session.leaf is not None:
        leaf = session.tree.get(session.leaf)
        text = " ".join(leaf.text.split())
        lines.append(
            _("Using it now; the next %%chat continues from {node} ({role}): {text}").format(
                node=leaf.id[:7], role=leaf.role, text=text[:60] + "…" if len(text) > 60 else text
            )
        )

    return lines
