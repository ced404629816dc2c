"""Plain-text views of a session: the tree as a drawing, a path as Markdown, a question
as it was typed.

Pure functions over a ``SessionTree``, shared by the command line and the ``%chat``
magic so both show a session the same way. No I/O: callers print the strings.

A question is shown as it was typed, each substitution a short chip, wherever one line
stands for it (``%chat tree``, ``branches``, ``compare``, the panel's rows, the SVG)::

    question_as_typed(node.message, node.meta)  ->  "What does [df · DataFrame 100×2] show?"

The model was sent the table; the node keeps that as its content and the typed text in
``meta.typed`` (docs/format.md, "A question as typed"). ``typed_pieces(meta)`` gives the
pieces (text and ``Chip``s) for a view that draws chips itself, ``typed_source(meta)``
the text with its fields as written (what an edit starts from). A node without
``meta.typed`` (older sessions, imported ones) shows the text that was sent.

A chain of single replies is drawn as one column; only a branch point indents, so a
conversation 100,000 messages deep stays 100,000 short lines, drawn without recursion::

    msg_001 user  hello
    msg_002 assistant  Hi! ...                   [2 replies]
    ├─ msg_003 user  continue
    └─ msg_004 user  ask another way             ← current
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from .history.experiment_record import experiment_of
from .history.plain import plain_line
from .history.tree import Message, Node, SessionTree, message_text, tool_shown_name
from .i18n import _, ngettext

MIN_SHORT = 7  # like git: ids are shown by their shortest unique prefix, at least 7 long
TEXT_WIDTH = 60
COLUMN = 56  # where the reply counts, labels and the current marker line up


def short_id_length(ids: Iterable[str]) -> int:
    """The prefix length that tells every id apart (at least ``MIN_SHORT``)."""
    ordered = sorted(ids)
    need = MIN_SHORT
    for before, after in pairwise(ordered):
        common = 0
        limit = min(len(before), len(after))
        while common < limit and before[common] == after[common]:
            common += 1
        need = max(need, common + 1)
    return need


def summary(
    message: Mapping[str, Any], width: int = TEXT_WIDTH, meta: Mapping[str, Any] | None = None
) -> str:
    """One line saying what a message holds: its first line of text as plain words (no
    Markdown syntax; a question as typed, with chips, when ``meta`` keeps that), or its
    blocks."""
    pieces = typed_pieces(meta)
    if pieces is not None:
        return _typed_line(pieces, width) or _("(empty)")
    text = message_text(message).strip()
    if not text:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        parts = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                parts.append(f"[tool_use {block.get('name', '?')}]")
            elif kind == "tool_result":
                parts.append(f"[tool_result] {_result_text(block)}".strip())
            elif kind:
                parts.append(f"[{kind}]")
        text = " ".join(parts) or _("(empty)")
    lines = text.splitlines() or [text]
    at = next((k for k, line in enumerate(lines) if plain_line(line)), 0)
    first = plain_line(lines[at]) or lines[at]  # "**1 message**" shown as the panel shows it
    more = any(line.strip() for line in lines[at + 1 :])
    if len(first) > width:
        first, more = first[: width - 1].rstrip(), True
    return first + (" …" if more else "")


def _typed_line(pieces: list[TypedPiece], width: int) -> str:
    """The first line of a question as typed, within ``width``: a chip whole or not at all."""
    line = ""
    for k, piece in enumerate(pieces):
        if isinstance(piece, Chip):
            chip = bracketed(piece) + ("" if piece.written else " ")
            if len(line) + len(chip.rstrip()) > width:
                return line.rstrip() + " …"
            line += chip
            continue
        words = piece.lstrip() if not line else piece
        first, newline, rest = words.partition("\n")
        if len(line) + len(first) > width:  # cut the words, never a chip before them
            return (line + first[: max(0, width - 1 - len(line))]).rstrip() + " …"
        line += first
        if newline and (rest.strip() or k < len(pieces) - 1):
            return line.rstrip() + " …"
    return line.strip()


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return message_text({"content": content}) if isinstance(content, list) else ""


def hidden_branches(tree: SessionTree, hidden: Collection[str], leaf: str | None) -> set[str]:
    """The hidden nodes whose branch a view folds away: in the tree, off the current
    path, and not inside another hidden branch (which already hides them)."""
    on_path = {n.id for n in tree.path_nodes(leaf)} if leaf is not None and hidden else set()
    found = set()
    for node_id in hidden:
        if node_id not in tree or node_id in on_path:
            continue
        up = tree.get(node_id).parent_id
        while up is not None and up not in on_path and up not in hidden:
            up = tree.get(up).parent_id
        if up is None or up in on_path:
            found.add(node_id)
    return found


def hidden_note(count: int, how: str) -> str:
    """The line under a view that left hidden branches out: how many, and how to see them."""
    note = ngettext(
        "({count} hidden branch is not shown; {how})",
        "({count} hidden branches are not shown; {how})",
        count,
    )
    return note.format(count=count, how=how)


def draw_tree(
    tree: SessionTree,
    labels: Mapping[str, str] | None = None,
    leaf: str | None = None,
    hidden: Collection[str] = (),
    show_hidden: bool = False,
) -> str:
    """The whole tree, one node a line: short id, role, first line, reply counts.

    A branch in ``hidden`` is left out (its parent says ``[1 hidden]``), unless
    ``show_hidden``, which marks it ``(hidden)`` instead.
    """
    labels = labels or {}
    folded = set() if show_hidden else hidden_branches(tree, hidden, leaf)
    width = short_id_length(node.id for node in tree)
    lines: list[str] = []
    hidden_mark, current_mark = _("(hidden)"), _("← current")
    # (node id, this line's prefix, the prefix its descendants continue with)
    stack = [(root.id, "", "") for root in reversed(tree.roots()) if root.id not in folded]
    while stack:
        node_id, prefix, below = stack.pop()
        node = tree.get(node_id)
        children = tree.children(node_id)
        head = f"{prefix}{node.id[:width]} {node.role}  {summary(node.message, meta=node.meta)}"
        notes = []
        if len(children) > 1:
            count = len(children)
            notes.append(
                ngettext("[{count} reply]", "[{count} replies]", count).format(count=count)
            )
        if folded:
            out_of_view = sum(1 for child in children if child.id in folded)
            children = [child for child in children if child.id not in folded]
            if out_of_view:
                notes.append(_("[{count} hidden]").format(count=out_of_view))
        if node_id in labels:
            notes.append(f"({labels[node_id]})")
        if show_hidden and node_id in hidden:
            notes.append(hidden_mark)
        if node_id == leaf:
            notes.append(current_mark)
        lines.append(f"{_pad(head, COLUMN)}  {' '.join(notes)}" if notes else head)
        if len(children) == 1:
            stack.append((children[0].id, below, below))
            continue
        for i in range(len(children) - 1, -1, -1):
            last = i == len(children) - 1
            stack.append(
                (
                    children[i].id,
                    below + ("└─ " if last else "├─ "),
                    below + ("   " if last else "│  "),
                )
            )
    return "\n".join(lines)


def _pad(text: str, column: int) -> str:
    """Pad to ``column`` terminal cells: CJK characters take two, like ``继续``."""
    cells = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * (column - cells)


@dataclass(frozen=True)
class _MarkdownWords:
    """The words of a path as Markdown: in the reader's language, or as the model reads them."""

    empty_session: str
    heading: str
    user: str
    assistant: str
    tool_result: str
    tool_call: str
    thinking: str
    encrypted: str
    block: str
    empty: str


def _markdown_words(for_model: bool) -> _MarkdownWords:
    if for_model:  # a path quoted into a question (``--with ID --path``) is the model's text
        return _MarkdownWords(
            "# Chat session\n\n(empty)\n",
            "# Chat session\n\n{count} messages, leaf `{leaf}`.\n",
            "User",
            "Assistant",
            "Tool result",
            "Tool call `{name}`:",
            "*Thinking:*",
            "*[thinking encrypted by the API]*",
            "[{kind} block]",
            "(empty)",
        )
    return _MarkdownWords(
        _("# Chat session\n\n(empty)\n"),
        _("# Chat session\n\n{count} messages, leaf `{leaf}`.\n"),
        _("User"),
        _("Assistant"),
        _("Tool result"),
        _("Tool call `{name}`:"),
        _("*Thinking:*"),
        _("*[thinking encrypted by the API]*"),
        _("[{kind} block]"),
        _("(empty)"),
    )


def path_markdown(tree: SessionTree, leaf: str | None, *, for_model: bool = False) -> str:
    """The path from the root to ``leaf`` as a Markdown document, one section a message:
    in the reader's language, or (``for_model``) in the English a question quotes."""
    words = _markdown_words(for_model)
    if leaf is None:
        return words.empty_session
    nodes = tree.path_nodes(leaf)
    width = short_id_length(node.id for node in tree)
    out = [words.heading.format(count=len(nodes), leaf=leaf[:width])]
    titles = {"user": words.user, "assistant": words.assistant}
    for node in nodes:
        if _is_tool_result(node.message):
            title = words.tool_result
        else:
            title = titles.get(node.role) or node.role.capitalize()
        out.append(f"## {title} `{node.id[:width]}`\n")
        out.append(_content_markdown(node.message, node.meta, words))
        table = None if for_model else experiment_markdown(tree, node)
        if table is not None:
            out.append(table)
    return "\n".join(out)


MAX_TABLE_ROWS = 200


def experiment_markdown(tree: SessionTree, question: Node) -> str | None:
    """The experiment ``question`` is a row of, as a Markdown table of rows × versions
    (each cell the first line of that version's first answer), or None."""
    mine = experiment_of(question)
    if mine is None:
        return None
    grid: dict[int, dict[int, Node]] = {}
    rows: dict[int, dict[str, Any]] = {}
    for node in tree.children(question.parent_id):
        about = experiment_of(node)
        if about is None or about["id"] != mine["id"]:
            continue
        grid.setdefault(about["index"], {}).setdefault(about["version"], node)
        rows.setdefault(about["index"], about["row"])
    versions = sorted({v for line in grid.values() for v in line})
    head = [_("row"), _("inputs"), *(_("version {number}").format(number=v) for v in versions)]
    out = [
        _("Experiment `{id}`: {rows} rows × {versions} versions").format(
            id=str(mine["id"])[:8], rows=len(grid), versions=len(versions)
        ),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for index in sorted(grid)[:MAX_TABLE_ROWS]:
        inputs = ", ".join(f"{k}: {v}" for k, v in rows[index].items())
        cells = [str(index + 1), inputs]
        for version in versions:
            asked = grid[index].get(version)
            answers = [n for n in tree.children(asked.id) if n.role == "assistant"] if asked else []
            cells.append(_first_line(answers[0].text) if answers else "")
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if len(grid) > MAX_TABLE_ROWS:
        out.append("")
        out.append(_("… {count} more rows").format(count=len(grid) - MAX_TABLE_ROWS))
    return "\n".join(out) + "\n"


def _first_line(text: str) -> str:
    line = next((piece.strip() for piece in text.splitlines() if piece.strip()), "")
    return line if len(line) <= 120 else line[:119] + "…"


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, its pipes escaped."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def _is_tool_result(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _content_markdown(
    message: Message, meta: Mapping[str, Any] | None, words: _MarkdownWords
) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content.rstrip() + "\n"
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")).rstrip() + "\n")
        elif kind == "tool_use":
            body = json.dumps(block.get("input", {}), ensure_ascii=False, indent=2)
            name = tool_shown_name(block, meta)
            parts.append(f"{words.tool_call.format(name=name)}\n\n{fence(body, 'json')}")
        elif kind == "tool_result":
            parts.append(fence(_result_text(block)))
        elif kind == "thinking" and block.get("thinking"):
            quoted = "\n".join(f"> {line}".rstrip() for line in str(block["thinking"]).splitlines())
            parts.append(f"{words.thinking}\n\n{quoted}\n")
        elif kind == "redacted_thinking":
            parts.append(words.encrypted + "\n")
        else:
            parts.append(words.block.format(kind=kind) + "\n")
    return "\n".join(parts) if parts else words.empty + "\n"


def fence(text: str, info: str = "") -> str:
    """A code fence longer than any run of backticks inside ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}\n"


# -- a question as typed -------------------------------------------------------------------

#: a chip's kinds, as ``meta.context`` names them; the first two were typed as ``{field}``,
#: the others came from an option (``--attach``, ``--with``) and lead the question
TYPED_KINDS = ("variable", "cell")
CHIP_KINDS = (*TYPED_KINDS, "attachment", "node")


@dataclass(frozen=True)
class Chip:
    """One substitution of a question: ``{df}``, ``{In[3]}``, ``{Err}``, an ``--attach``
    file, a ``--with`` quote; one line shows it as ``[df · DataFrame 100×2]``."""

    field: str
    """``df``, ``In[3]``, ``Err``, ``results.pdf``, a node's short id"""
    kind: str
    """``variable``, ``cell``, ``attachment`` or ``node`` (``CHIP_KINDS``)"""
    about: str = ""
    """the short description: ``DataFrame 100×2``, ``PDF 1.2 MB``, ``KeyError``"""
    sent: tuple[int, int] | None = None
    """where its text stands in the message's text (start, end, in code points), or None
    for an image or a document (its block is what was sent)"""

    @property
    def label(self) -> str:
        """``df · DataFrame 100×2``, ``Err · KeyError``, ``from 3f2a9c1``."""
        if self.kind == "node":
            return _("from {node}").format(node=self.field)
        return f"{self.field} · {self.about}" if self.about else self.field

    @property
    def written(self) -> str:
        """The chip as it was typed (``{df}``); one that came from an option has none."""
        return "{" + self.field + "}" if self.kind in TYPED_KINDS else ""

    def to_meta(self) -> dict[str, Any]:
        item: dict[str, Any] = {"field": self.field, "kind": self.kind, "about": self.about}
        if self.sent is not None:
            item["sent"] = list(self.sent)
        return item

    @classmethod
    def from_meta(cls, item: Any) -> Chip | None:
        """The chip a ``meta.typed`` object describes, or None if it is not one."""
        if not isinstance(item, Mapping):
            return None
        field, kind, about = item.get("field"), item.get("kind"), item.get("about", "")
        if not isinstance(field, str) or kind not in CHIP_KINDS or not isinstance(about, str):
            return None
        span = item.get("sent")
        sent = None
        if (
            isinstance(span, list)
            and len(span) == 2
            and all(type(n) is int for n in span)
            and 0 <= span[0] <= span[1]
        ):
            sent = (span[0], span[1])
        return cls(field, kind, about, sent)


TypedPiece = str | Chip


def bracketed(chip: Chip) -> str:
    """A chip in one line of plain text: ``[df · DataFrame 100×2]``."""
    return f"[{chip.label}]"


def typed_pieces(meta: Mapping[str, Any] | None) -> list[TypedPiece] | None:
    """A question as typed: its text and a ``Chip`` per substitution, in order (the chips
    of files and quotes first), from ``meta.typed``; None when the node keeps none."""
    typed = meta.get("typed") if isinstance(meta, Mapping) else None
    if not isinstance(typed, list):
        return None
    pieces: list[TypedPiece] = []
    for item in typed:
        piece = item if isinstance(item, str) else Chip.from_meta(item)
        if piece is None:
            return None  # not this project's shape: the sent text is shown instead
        pieces.append(piece)
    return pieces


def question_as_typed(
    message: Mapping[str, Any],
    meta: Mapping[str, Any] | None,
    *,
    chip: Callable[[Chip], str] = bracketed,
) -> str:
    """A question as it was typed, each substitution a chip (``chip(c)``, by default
    ``[df · DataFrame 100×2]``), files and quotes first; the text that was sent when the
    node keeps no typed text (an older session, another tool's, an answer)."""
    pieces = typed_pieces(meta)
    if pieces is None:
        return message_text(message)
    shown = []
    for piece in pieces:
        if isinstance(piece, str):
            shown.append(piece)
        else:  # a file or a quote leads, set apart from the words that follow it
            shown.append(chip(piece) + ("" if piece.written else " "))
    return "".join(shown)


def typed_source(meta: Mapping[str, Any] | None) -> str | None:
    """The question's text as typed, its fields as written (``What does {df} show?``):
    what an edit starts from. None when the node keeps no typed text."""
    pieces = typed_pieces(meta)
    if pieces is None:
        return None
    return "".join(piece if isinstance(piece, str) else piece.written for piece in pieces)


def chip_text(chip: Chip, message: Mapping[str, Any]) -> str | None:
    """What was sent in the chip's place (the table, the file, the traceback), or None for
    an image or a document, or when the message's text does not reach that far."""
    if chip.sent is None:
        return None
    start, end = chip.sent
    text = message_text(message)
    return text[start:end] if end <= len(text) else None
