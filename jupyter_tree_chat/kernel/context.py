"""Kernel values as context: what ``{name}``, ``{In[3]}``, ``--attach`` and ``--with`` put
into a question.

The conversion itself is pure and lives in ``jupyter_tree_chat.context``; this module
knows where things are in a kernel: variables in the user namespace, cells in IPython's
history, errors in ``Err`` (history.py), files beside the notebook, other nodes in the
session. Every mistake is one ``UsageError`` line that names the field and the fix, and
is raised before anything is written or sent.

Fields, in a ``%%chat`` cell and in ``%chat edit``::

    {name}      the variable, by its type (a table, an image, numpy's repr, text)
    {In[3]}     the source of cell 3          {Out[3]}   its result, by type
    {Err[3]}    the error cell 3 raised       {Err}      the last error
    {{name}}    a literal {name}; any other brace is left as written
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..context import Limits, QuestionParts, Sent, attachment, convert_value
from ..context.files import MAX_FILE_BYTES
from ..context.images import megabytes
from ..context.sent import Block, Converted, cut
from ..conversation.session import Session
from ..errors import AmbiguousId, ContextRefused, NodeNotFound
from ..history.node import Node
from ..i18n import _
from ..textview import Chip, fence, path_markdown, typed_pieces
from .history import CellError, CellErrors, cell_output, cell_source, counts

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CELL = r"(?:In|Out|Err)\[\d+\]"
#: ``{{field}}`` (a literal), ``{In[3]}``-style cell fields, ``{name}``; nothing else
FIELD = re.compile(rf"\{{\{{({_CELL}|{_NAME})\}}\}}|\{{(?:(In|Out|Err)\[(\d+)\]|({_NAME}))\}}")
_IDENTIFIER = r"[^\W\d]\w*"
#: in a ``--over`` cell: also any Python identifier (``{价格}``) and ``{row[any name]}``
ROW_FIELD = re.compile(
    rf"\{{\{{({_CELL}|{_IDENTIFIER})\}}\}}"
    rf"|\{{(?:(In|Out|Err)\[(\d+)\]|({_IDENTIFIER})|row\[([^\[\]{{}}]+)\])\}}"
)


@dataclass(frozen=True)
class Question:
    """A question's content (a string, or blocks), what went into it (``meta.context``)
    and how it was typed (``meta.typed``: see ``textview.question_as_typed``)."""

    content: str | list[Block]
    context: list[dict[str, str]]
    typed: list[Any] | None = None
    note: str = ""
    """for an edit of what was typed: the line saying which fields were filled in again"""

    @property
    def meta(self) -> dict[str, Any] | None:
        meta: dict[str, Any] = {}
        if self.context:
            meta["context"] = self.context
        if self.typed is not None:
            meta["typed"] = self.typed
        return meta or None


class QuestionBuilder:
    """Turns a cell's text and options into a ``Question``, reading the kernel's state."""

    def __init__(
        self,
        shell: Any,
        errors: CellErrors,
        limits: Callable[[], Limits],
        substitute: Callable[[], bool] = lambda: True,
    ) -> None:
        self.shell = shell
        self.errors = errors
        self._limits = limits  # read at each question: %config may change them
        self.substitute = substitute  # TreeChat.substitute_variables, read at each edit

    @property
    def limits(self) -> Limits:
        return self._limits()

    def question(
        self,
        text: str,
        *,
        where: str = "%%chat",
        substitute: bool = True,
        attach: Sequence[str] = (),
        folder: Path | None = None,
        with_refs: Sequence[str] = (),
        with_path: bool = False,
        session: Session | None = None,
        row: dict[str, Any] | None = None,
        kernel_values: bool = True,
    ) -> Question:
        """The question ``text`` asks, with its fields filled in and its files and nodes;
        with ``row`` (an experiment's), ``{column}`` is that row's value first, and the
        other fields kernel values only if ``kernel_values`` (else left as written)."""
        parts = QuestionParts()
        for ref in with_refs:
            assert session is not None, "--with needs the session"
            parts.lead(self._node(where, session, ref, with_path))
        for path in attach:
            parts.lead(self._file(where, path, folder or Path.cwd()))
        if substitute:
            self._fill(where, text, parts, row, kernel_values)
        else:
            parts.text(text)
        return self._finish(where, parts)

    def refill(self, original: Node, text: str, *, where: str = "edit") -> Question:
        """An edit of what ``original`` was typed as: ``text`` with its fields filled in
        from the kernel's values now, after the files and quotes ``original`` carried
        (kept as they were sent); ``note`` says which fields were filled in again."""
        parts = QuestionParts()
        kept = _leading(original)
        for blocks, chip in kept:
            parts.keep(blocks, chip)
        for item in (original.meta or {}).get("context") or []:
            if isinstance(item, dict) and item.get("kind") in ("attachment", "node"):
                parts.sent.append(_sent_of(item))
        if self.substitute():
            self._fill(where, text, parts)
        else:
            parts.text(text)
        question = self._finish(where, parts)
        filled = [p for p in parts.typed if isinstance(p, Chip) and p.written]
        if not filled:
            return question
        note = _("Filled in again from the kernel's values now: {fields}.").format(
            fields=", ".join(f"{chip.written} ({chip.about})" for chip in filled)
        )
        return replace(question, note=note)

    def _finish(self, where: str, parts: QuestionParts) -> Question:
        content = parts.content()
        if not content:
            raise UsageError(
                _("{where}: the question is empty once its fields are filled in").format(
                    where=where
                )
            )
        return Question(content, parts.context(), parts.typed_meta())

    # -- {fields} ------------------------------------------------------------------------

    def _fill(
        self,
        where: str,
        text: str,
        parts: QuestionParts,
        row: dict[str, Any] | None = None,
        kernel_values: bool = True,
    ) -> None:
        at = 0
        for match in (FIELD if row is None else ROW_FIELD).finditer(text):
            parts.text(text[at : match.start()])
            at = match.end()
            escaped, cell_kind, cell_number, name, *spelled = match.groups()
            if escaped is not None:
                parts.text("{" + escaped + "}", typed=match.group(0))
                continue
            column = spelled[0] if spelled and spelled[0] is not None else name
            if row is not None and column in row:
                parts.text(row_text(row[column]))
                continue
            if not kernel_values:  # TreeChat.substitute_variables off: the rest as written
                parts.text(match.group(0))
                continue
            namespace = getattr(self.shell, "user_ns", None) or {}
            unknown = cell_kind is None and name != "Err" and name not in namespace
            if row is not None and (unknown or (spelled and spelled[0] is not None)):
                raise UsageError(
                    _(
                        "{where}: {field} names no column of the rows and no Python variable "
                        "(columns: {columns}); write {{{{ }}}} for literal braces"
                    ).format(
                        where=where, field=match.group(0), columns=", ".join(map(str, row or ()))
                    )
                )
            try:
                if cell_kind is not None:
                    parts.value(self._cell(where, cell_kind, int(cell_number)))
                elif name == "Err":
                    parts.value(self._error(where, self.errors.last(), "Err"))
                else:
                    parts.value(self._variable(where, name))
            except ContextRefused as error:
                raise UsageError(f"{where}: {error}") from None
        parts.text(text[at:])

    def _variable(self, where: str, name: str) -> Converted:
        namespace = getattr(self.shell, "user_ns", None) or {}
        if name not in namespace:
            raise UsageError(
                _(
                    "{where}: {{{name}}} names no Python variable; define {name}, write "
                    "{{{{{name}}}}} for literal braces, or use %%chat --raw"
                ).format(where=where, name=name)
            )
        return convert_value(name, namespace[name], self.limits)

    def _cell(self, where: str, kind: str, number: int) -> Converted:
        field = f"{kind}[{number}]"
        if kind == "In":
            source = cell_source(self.shell, number)
            if source is None:
                raise UsageError(
                    _("{where}: {{{field}}}: there is no cell {number} yet").format(
                        where=where, field=field, number=number
                    )
                )
            kept, note = cut(source.rstrip(), self.limits.max_chars)
            lines = source.rstrip().count("\n") + 1
            text = f"In [{number}]:\n\n{fence(kept, 'python')}{note}"
            sent = Sent(field, "code", f"{lines:,} line{'s' if lines != 1 else ''}", kind="cell")
            return Converted((text,), sent, paragraph=True)
        if kind == "Out":
            found, value = cell_output(self.shell, number)
            if not found:
                outputs = getattr(getattr(self.shell, "history_manager", None), "output_hist", {})
                raise UsageError(
                    _(
                        "{where}: {{{field}}}: cell {number} has no result (cells with one: "
                        "{cells})"
                    ).format(where=where, field=field, number=number, cells=counts(outputs))
                )
            converted = convert_value(field, value, self.limits)
            return replace(converted, sent=replace(converted.sent, kind="cell"))
        error = self.errors.errors.get(number)
        if error is None:
            raise UsageError(
                _(
                    "{where}: {{{field}}}: cell {number} raised no error (cells that did: {cells})"
                ).format(where=where, field=field, number=number, cells=counts(self.errors.errors))
            )
        return self._error(where, error, field)

    def _error(self, where: str, error: CellError | None, field: str) -> Converted:
        if error is None:
            raise UsageError(
                _(
                    "{where}: {{Err}}: no cell has failed since the extension was loaded; "
                    "run the failing cell again first"
                ).format(where=where)
            )
        text = f"The error cell {error.count} raised:\n\n{fence(error.traceback)}"
        sent = Sent(field, error.type, "", f"traceback of In[{error.count}]", "cell")
        return Converted((text,), sent, paragraph=True)

    # -- --attach and --with ---------------------------------------------------------------

    def _file(self, where: str, written: str, folder: Path) -> Converted:
        path = Path(written).expanduser()
        if not path.is_absolute():
            path = folder / path
        problem = _unreadable(path)
        if problem is None:
            try:
                data = path.read_bytes()
            except OSError as error:
                problem = _cannot_read(error)
        if problem is not None:
            raise UsageError(f"{where} --attach {written}: {problem}")
        try:
            return attachment(written, data, self.limits)
        except ContextRefused as error:
            raise UsageError(f"{where} --attach: {error}") from None

    def _node(self, where: str, session: Session, ref: str, whole_path: bool) -> Converted:
        try:
            node = session.resolve(ref)
        except AmbiguousId as error:
            raise UsageError(f"{where} --with {ref}: {error}") from None
        except NodeNotFound:
            raise UsageError(
                _(
                    "{where} --with {ref}: no node id or label starts with {quoted}; "
                    "`%chat tree` shows the ids"
                ).format(where=where, ref=ref, quoted=repr(ref))
            ) from None
        short = node.id[:7]
        if whole_path:
            nodes = session.tree.path_nodes(node.id)
            words = path_markdown(session.tree, node.id, for_model=True)
            kept, note = cut(words, self.limits.max_chars)
            text = f"From branch {short}, the whole path to it:\n\n{kept}{note}"
            sent = Sent(short, "path", f"{len(nodes):,} messages", "Markdown", "node")
        else:
            kept, note = cut(node.text, self.limits.max_chars)
            role = "answer" if node.role == "assistant" else "question"
            said = "an answer" if role == "answer" else "a question"
            text = f"From branch {short} ({said}):\n\n{_quote(kept + note)}"
            sent = Sent(short, role, f"{len(node.text):,} chars", "quote", "node")
        return Converted((text,), sent)


def row_text(value: Any) -> str:
    """A row's value as it goes into the question: its text, a missing value empty."""
    return "" if value is None else str(value)


def _leading(original: Node) -> list[tuple[list[str | Block], Chip]]:
    """The files and quotes that led ``original``: each one's block and chip, as sent."""
    pieces = typed_pieces(original.meta) or []
    chips = [p for p in pieces if isinstance(p, Chip) and not p.written]
    content = original.message.get("content")
    blocks = content if isinstance(content, list) else []
    if len(blocks) < len(chips):
        return []
    kept: list[tuple[list[str | Block], Chip]] = []
    for block, chip in zip(blocks, chips, strict=False):
        if block.get("type") == "text":
            kept.append(([str(block.get("text", ""))], chip))
        else:
            kept.append(([block], chip))
    return kept


def _sent_of(item: dict[str, Any]) -> Sent:
    return Sent(
        str(item.get("name", "?")),
        str(item.get("type", "")),
        str(item.get("size", "")),
        str(item.get("became", "")),
        str(item.get("kind", "variable")),
    )


def _unreadable(path: Path) -> str | None:
    """Why ``path`` cannot be attached, judged without reading it, or None."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return _(
            "no such file (looked for {path}); give a path relative to the notebook's folder"
        ).format(path=path)
    except OSError as error:
        return _cannot_read(error)
    if path.is_dir():
        return _("is a folder; attach its files one by one")
    if not path.is_file():
        return _("is not a regular file")
    if status.st_size > MAX_FILE_BYTES:
        return _("is {size}; files over {limit} are not read: attach a smaller copy").format(
            size=megabytes(status.st_size), limit=megabytes(MAX_FILE_BYTES)
        )
    return None


def _cannot_read(error: OSError) -> str:
    return _("cannot be read ({reason})").format(reason=error.strerror or error)


def _quote(text: str) -> str:
    if not text.strip():
        return "> (no text)"
    return "\n".join(f"> {line}".rstrip() for line in text.splitlines())
