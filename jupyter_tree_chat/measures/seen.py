"""What a request saw of its path, in words: the footer's ``saw 12 of 40 exchanges``, and
the listing of ``%chat context`` and ``jupyter tree-chat path --budget``.

``budget.select`` decides; this module only says what it decided, the same way in the
kernel and on the command line (neither may import the other).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..history.tree import Message, Node, is_real_user_message
from ..i18n import _, ngettext
from ..textview import summary
from .budget import OVERFLOW, WITHIN, Budget, Selection, Sizes
from .usage import estimate_tokens, window_label

SUMMARISED, LEFT_OUT, BROKEN, SENT = "summarised", "left out", "broken", "sent"
RUN = 4
"""Runs of more exchanges than this with the same fate are listed as one line."""
LAST_SENT = 12
"""The newest exchanges sent, listed one a line; earlier ones sent make one line."""


def seen_label(context: Any) -> str | None:
    """``saw 12 of 40 exchanges``: what an answer's ``meta.context`` says its request kept
    (None for an answer whose request held the whole path)."""
    if not isinstance(context, Mapping):
        return None
    exchanges, dropped = context.get("exchanges"), context.get("dropped")
    if type(exchanges) is not int or type(dropped) is not int:
        return None
    return ngettext(
        "saw {sent} of {exchanges} exchange", "saw {sent} of {exchanges} exchanges", exchanges
    ).format(sent=f"{exchanges - dropped:,}", exchanges=f"{exchanges:,}")


@dataclass(frozen=True)
class Exchange:
    """One exchange of a path and what a selection did with it."""

    first: Node | None  # None: a question not stored yet
    nodes: int  # how many nodes (and unsaved messages) it holds
    tokens: int
    status: str  # SUMMARISED, LEFT_OUT, BROKEN or SENT
    text: str  # its question, shortened


def exchanges(
    path: Sequence[Node], extra: Sequence[Message], chosen: Selection, sizes: Sizes
) -> list[Exchange]:
    """Every exchange of ``path`` and ``extra``, oldest first, with what ``chosen`` did."""
    sizes.ensure(path)
    n = len(path)
    end = n + len(extra)
    skipped = set(chosen.skipped)

    def message(position: int) -> Message:
        return path[position].message if position < n else extra[position - n]

    def opens(position: int) -> bool:
        if position < n:
            return sizes.of(path[position]).opens
        return is_real_user_message(extra[position - n])

    def tokens(position: int) -> int:
        return (
            sizes.of(path[position]).tokens if position < n else estimate_tokens(message(position))
        )

    found: list[Exchange] = []
    start = 0
    while start < end:
        stop = next((p for p in range(start + 1, end) if opens(p)), end)
        first = path[start] if start < n else None
        if chosen.within or start >= chosen.cut:
            status = BROKEN if first is not None and first.id in skipped else SENT
        elif start < chosen.anchor:
            status = SUMMARISED
        else:
            status = LEFT_OUT
        size = sum(tokens(p) for p in range(start, stop))
        text = summary(message(start), 48)
        found.append(Exchange(first, stop - start, size, status, text))
        start = stop
    return found


def budget_line(budget: Budget) -> str:
    """``Budget: 175,904 tokens (the 200k window less max_tokens 4,096 and a 20,000 margin)``."""
    if budget.window is None:
        return _("Budget: {tokens} tokens a request may hold").format(tokens=f"{budget.tokens:,}")
    return _(
        "Budget: {tokens} tokens a request may hold (the {window} window less max_tokens "
        "{reserved} and a margin of {margin})"
    ).format(
        tokens=f"{budget.tokens:,}",
        window=window_label(budget.window),
        reserved=f"{budget.reserved_output:,}",
        margin=f"{budget.margin:,}",
    )


def selection_line(chosen: Selection) -> str:
    """One line: what a request keeps, how big it is, and why."""
    parts = chosen.breakdown
    if chosen.reason == WITHIN:
        return _(
            "The request sends the whole path: {exchanges} within the budget, ~{tokens} tokens."
        ).format(exchanges=_exchanges(chosen.exchanges), tokens=f"{parts.total:,}")
    line = _(
        "The request keeps {sent} of {exchanges}, ~{tokens} tokens (system ~{system}, "
        "tools ~{tools}, summary ~{summary}, note ~{note}, messages ~{messages})."
    ).format(
        sent=f"{chosen.sent:,}",
        exchanges=_exchanges(chosen.exchanges),
        tokens=f"{parts.total:,}",
        system=f"{parts.system:,}",
        tools=f"{parts.tools:,}",
        summary=f"{parts.summary:,}",
        note=f"{parts.note:,}",
        messages=f"{parts.messages:,}",
    )
    if chosen.reason == OVERFLOW:
        line += " " + _("The newest exchange alone is over the budget: it is sent anyway.")
    return line


def exchange_lines(found: Iterable[Exchange]) -> list[str]:
    """One line an exchange (``✓ 3f2a9c1 ~250 question…``), long runs folded into one."""
    rows = list(found)
    sent_at = [i for i, row in enumerate(rows) if row.status == SENT]
    listed = set(sent_at[-LAST_SENT:])
    lines: list[str] = []
    start = 0
    while start < len(rows):
        status = rows[start].status
        stop = start + 1
        while stop < len(rows) and rows[stop].status == status and stop not in listed:
            stop += 1
        run = rows[start:stop]
        if start in listed or len(run) <= RUN:
            lines += [_row(row) for row in run]
        else:
            lines.append(_run(run))
        start = stop
    return lines


MARKS = {SUMMARISED: "≈", LEFT_OUT: "✗", BROKEN: "✗", SENT: "✓"}


def _row(row: Exchange) -> str:
    ident = row.first.id[:7] if row.first is not None else _("(new)")
    return (
        f"{MARKS[row.status]} {ident:<7}  ~{row.tokens:>7,}  {_status(row.status):<12} {row.text}"
    )


def _run(rows: Sequence[Exchange]) -> str:
    first, last = rows[0].first, rows[-1].first
    span = f"{first.id[:7] if first else '?'} … {last.id[:7] if last else '?'}"
    tokens = sum(row.tokens for row in rows)
    return f"{MARKS[rows[0].status]} {span}  ~{tokens:>7,}  {_status(rows[0].status):<12} " + _(
        "{exchanges}"
    ).format(exchanges=_exchanges(len(rows)))


def _status(status: str) -> str:
    return {
        SUMMARISED: _("summarised"),
        LEFT_OUT: _("left out"),
        BROKEN: _("left out (a tool call without its result)"),
        SENT: _("sent"),
    }[status]


def _exchanges(count: int) -> str:
    return ngettext("{count} exchange", "{count} exchanges", count).format(count=f"{count:,}")


def unseen_ids(path: Sequence[Node], context: Any) -> set[str]:
    """The nodes of ``path`` (root to an answer) that its request left out, by the
    answer's ``meta.context``: those before ``from`` (its summary excepted) and the broken
    exchanges ``skipped`` after it. Empty when the request held the whole path."""
    if not isinstance(context, Mapping) or "from" not in context:
        return set()
    ids = [node.id for node in path]
    first = context.get("from")
    if first is None:
        cut = len(ids) - 1
    elif first in ids:
        cut = ids.index(first)
    else:
        return set()
    unseen = set(ids[:cut])
    unseen.discard(context.get("summary"))
    skipped = context.get("skipped")
    unseen.update(i for i in (skipped if isinstance(skipped, list) else []) if isinstance(i, str))
    return unseen
