"""Reading other tools' files into records, and writing an import: ``formats``' heavy half.

The package root re-exports these names on first use, so that a command that only
reads this project's own files (``jupyter tree-chat path``) never imports the readers.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import FormatError, StoreError
from ..history.loader import gc_paused
from ..history.store import (
    SESSION_SUFFIX,
    LoadResult,
    create_session_file,
    encode_record,
    header_record,
    parse_session,
    read_session_bytes,
)
from ..i18n import _, ngettext
from . import chatgpt, claude_code, open_webui, pi
from .builder import TreeBuilder
from .common import Source, SourceProblem
from .detect import FORMATS, LABELS, NATIVE, detect

GROUPS = {
    "merged": (
        "split assistant records",
        "tool result records",
        "role-order repairs",
        "continuations moved under tool results",
        "compaction replays",
        "repeated records",
    ),
    "left out": (
        "non-message records",
        "sidechain records",
        "conversations not chosen",
        "chats not chosen",
        "system messages (in meta.system)",
    ),
    "added": ("synthetic questions",),
    "read": ("conversations", "chats"),
}
"""The counts a summary shows, by group; the keys are the readers' names for them (see
``count_label`` for the words shown)."""


def count_label(key: str) -> str:
    """The words a summary shows for one of ``GROUPS``' names (a group or a count)."""
    labels = {
        "merged": _("merged"),
        "left out": _("left out"),
        "added": _("added"),
        "read": _("read"),
        "split assistant records": _("split assistant records"),
        "tool result records": _("tool result records"),
        "role-order repairs": _("role-order repairs"),
        "continuations moved under tool results": _("continuations moved under tool results"),
        "compaction replays": _("compaction replays"),
        "repeated records": _("repeated records"),
        "non-message records": _("non-message records"),
        "sidechain records": _("sidechain records"),
        "conversations not chosen": _("conversations not chosen"),
        "chats not chosen": _("chats not chosen"),
        "system messages (in meta.system)": _("system messages (in meta.system)"),
        "synthetic questions": _("synthetic questions"),
        "conversations": _("conversations"),
        "chats": _("chats"),
    }
    return labels.get(key, key)


@dataclass
class Imported:
    """A source read into records: what an import writes and what a view shows.

    ``raw_records`` may hold message content still as the source's JSON
    (``msgspec.Raw``), written as it is; ``records`` are the same records as Python
    values, for anyone who wants to look inside.
    """

    format: str
    sources: list[str]
    raw_records: list[dict[str, Any]]
    problems: list[SourceProblem] = field(default_factory=list)
    nodes: int = 0
    roots: int = 0
    branch_points: int = 0
    leaf: str | None = None
    counts: Counter[str] = field(default_factory=Counter)

    def data(self) -> bytes:
        """The records as the lines of a session file."""
        try:
            return _ENCODER.encode_lines(self.raw_records)
        except (TypeError, ValueError, UnicodeEncodeError):  # a lone surrogate, say
            return b"".join(encode_record(_python_record(r)) for r in self.raw_records)

    @property
    def records(self) -> list[dict[str, Any]]:
        return [_python_record(record) for record in self.raw_records]

    def summary(self) -> str:
        """One line: what was read, the tree's shape, the leaf, what was merged or skipped."""
        label = LABELS.get(self.format, self.format)
        shape = ", ".join(
            [
                _("{count} nodes").format(count=self.nodes),
                ngettext("{count} root", "{count} roots", self.roots).format(count=self.roots),
                ngettext(
                    "{count} branch point", "{count} branch points", self.branch_points
                ).format(count=self.branch_points),
            ]
        )
        parts = [f"{label} ({', '.join(self.sources)}): {shape}"]
        if self.leaf:
            parts.append(_("current leaf {node}").format(node=self.leaf[:12]))
        else:
            parts.append(_("no current leaf"))
        for group, keys in GROUPS.items():
            done = [
                f"{count_label(key)} ({self.counts[key]})" for key in keys if self.counts.get(key)
            ]
            if done:
                parts.append(f"{count_label(group)}: {', '.join(done)}")
        if self.problems:
            count, first = len(self.problems), self.problems[0]
            reported = ngettext(
                "reported: {count} problem (first: {first})",
                "reported: {count} problems (first: {first})",
                count,
            )
            parts.append(reported.format(count=count, first=first))
        else:
            parts.append(_("no problems"))
        return "; ".join(parts)


_ENCODER = msgspec.json.Encoder()


def _python_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record with raw JSON content (one value, or a list of raw blocks) decoded."""
    message = record.get("message")
    if not isinstance(message, dict):
        return record
    content = message.get("content")
    if type(content) is msgspec.Raw or (
        type(content) is list and any(type(block) is msgspec.Raw for block in content)
    ):
        decoded = msgspec.json.decode(msgspec.json.encode(content))
        return {**record, "message": {**message, "content": decoded}}
    return record


def open_source(path: str | os.PathLike[str]) -> Source:
    """A source file's bytes, read once and never written (the store's regular-file check)."""
    return Source.of(path, read_session_bytes(Path(path)))


def read(
    sources: list[Source],
    fmt: str = "auto",
    *,
    conversation: str | None = None,
    sidechains: bool = True,
) -> Imported:
    """Read sources of one format into records; damage is reported, never raised.

    The cyclic garbage collector is paused meanwhile, as the store's loader pauses it.
    """
    with gc_paused():
        return _read(sources, fmt, conversation, sidechains)


def _read(sources: list[Source], fmt: str, conversation: str | None, sidechains: bool) -> Imported:
    if not sources:
        raise FormatError(_("nothing to read: give at least one source file"))
    if fmt == "auto":
        found = {source.name: detect(source.data) for source in sources}
        kinds = {kind for kind in found.values()}
        if None in kinds or NATIVE in kinds:
            name = next(n for n, k in found.items() if k in (None, NATIVE))
            if found[name] == NATIVE:
                why = _(
                    "{name} is already a jupyter-tree-chat session; give --format to read it "
                    "as one of: {formats}"
                )
            else:
                why = _(
                    "{name} is not a Claude Code, pi, ChatGPT or Open WebUI file; give --format "
                    "to read it as one of: {formats}"
                )
            raise FormatError(why.format(name=name, formats=", ".join(FORMATS)))
        if len(kinds) > 1:
            listing = ", ".join(f"{n} ({k})" for n, k in found.items())
            raise FormatError(
                _(
                    "the sources are in different formats ({listing}); import them one at a time"
                ).format(listing=listing)
            )
        fmt = kinds.pop() or ""
    if fmt not in FORMATS:
        why = _("unknown format {format}; choose one of: auto, {formats}")
        raise FormatError(why.format(format=repr(fmt), formats=", ".join(FORMATS)))
    builder = TreeBuilder(fmt)
    if fmt == claude_code.NAME:
        claude_code.read(sources, builder, sidechains=sidechains)
    elif fmt == pi.NAME:
        pi.read(sources, builder)
    elif fmt == chatgpt.NAME:
        chatgpt.read(sources, builder, conversation=conversation)
    else:
        open_webui.read(sources, builder, conversation=conversation)
    names = [source.name for source in sources]
    header = header_record(imported={"format": fmt, "sources": names}, **builder.header)
    built = builder.build(header)
    order = {name: index for index, name in enumerate(names)}
    problems = sorted(builder.problems, key=lambda p: (order.get(p.file, 0), p.line or 0))
    return Imported(
        fmt,
        names,
        built.records,
        problems,
        built.nodes,
        built.roots,
        built.branch_points,
        built.leaf,
        built.counts,
    )


def load(imported: Imported) -> LoadResult:
    """The tree of an import, built by the store's loader from the records' bytes."""
    return parse_session(imported.data())


def default_output(source: str | os.PathLike[str]) -> Path:
    """Where an import of ``source`` goes by default: beside it, named ``*.chat.jsonl``."""
    path = Path(source)
    stem = path.name[: -len(path.suffix)] if path.suffix in (".jsonl", ".json") else path.name
    return path.with_name(stem + SESSION_SUFFIX)


def import_files(
    paths: list[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    *,
    fmt: str = "auto",
    replace: bool = False,
    conversation: str | None = None,
    sidechains: bool = True,
) -> tuple[Path, Imported]:
    """Read ``paths`` and write their tree to a new session file ``out``.

    The sources are only read. ``out`` is never one of them, and an existing ``out`` is
    left alone (``FileExistsError``) unless ``replace``. Other mistakes are one-line
    ``FormatError``/``StoreError`` messages.
    """
    sources = []
    for path in paths:
        try:
            sources.append(open_source(path))
        except FileNotFoundError:
            raise FormatError(_("{path}: no such file").format(path=path)) from None
    with gc_paused():
        imported = read(sources, fmt, conversation=conversation, sidechains=sidechains)
        if not imported.nodes:
            why = _("nothing to import, no messages were found: {summary}")
            raise FormatError(why.format(summary=imported.summary()))
        target = Path(out) if out is not None else default_output(paths[0])
        if target.resolve() in {Path(path).resolve() for path in paths}:
            why = _("{path} is one of the sources, which are never written")
            raise FormatError(why.format(path=target))
        data = imported.data()
    try:
        create_session_file(target, data, replace=replace)
    except FileExistsError:
        raise
    except OSError as error:
        why = _("cannot write {path}: {error}").format(path=target, error=error.strerror or error)
        raise StoreError(why) from None

    return target, imported
