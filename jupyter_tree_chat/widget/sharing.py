"""The panel's search box and its Export HTML, answered in the kernel.

The panel holds only the rows and the texts it has shown, so its search box asks the
kernel: ``{"a": "find", "q": TEXT, "regex", "case", "role", "all"}`` is answered with
``{"t": "found", "req": N, "rows": BITS, "count": C, "hidden": H}`` (``err``: the
query's one-line problem): the matching nodes found by ``share.find`` (as ``%chat find``
finds them), as a bitset over the panel's rows (bit ``i`` of byte ``i // 8`` for row
``i``, base64), so a keystroke that matches half of 100,000 nodes sends 17 KB, not a
megabyte of ids. No description: the panel marks rows and shows paths itself.

So that a keystroke need not wait for the kernel, ``{"a": "find", "held": FROM}`` asks
for ``share.find``'s text index itself, from its entry ``FROM`` on (the index only
grows): ``{"t": "held", "req": N, "from": FROM, "ids": [...], "texts": [...]}``, each
node's searchable text lowered, in the tree's order; with it the panel answers a
literal, case-blind query (what its box asks unless told otherwise) by the same rule
(components/find.ts), and asks the kernel the rest. A session holding more than
``HELD_LIMIT`` characters of text answers ``{"t": "held", "req": N, "over": 1}``
instead: the panel then asks the kernel every keystroke.
``{"a": "export", "format": "html"}`` writes the session's page beside its file
(``analysis.chat.html``, as ``%chat export html`` does) and says where in a note.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..conversation.session import Session
from ..errors import ChatError, StoreError
from ..history.store import FileStore, refuse_session_target
from ..i18n import _
from ..share.find import ROLES, Query, find_in, text_index
from ..share.page import page_path, session_page

#: the most characters of text a panel is sent to search itself (a few MB of strings)
HELD_LIMIT = 8_000_000


def find_answer(
    session: Session, content: dict[str, Any], rows: Mapping[str, int]
) -> dict[str, Any]:
    """The ``found`` message for one search-box query; ``rows``: node id → the panel's row
    (or the ``held`` message, when the panel asks for the text index)."""
    if "held" in content:
        return held_answer(session, content)
    answer: dict[str, Any] = {"t": "found", "req": content.get("req"), "rows": "", "count": 0}
    answer["hidden"] = 0
    role = content.get("role")
    try:
        query = Query(
            str(content.get("q", "")),
            regex=content.get("regex") is True,
            case_sensitive=content.get("case") is True,
            role=role if role in ROLES else None,
            include_hidden=content.get("all") is True,
        )
        found = find_in(session, query, limit=0)
    except ChatError as error:
        answer["err"] = str(error)
        return answer
    answer["rows"] = row_bits(found.ids, rows)
    answer["count"] = len(found.ids)
    answer["hidden"] = found.hidden
    return answer


def held_answer(session: Session, content: dict[str, Any]) -> dict[str, Any]:
    """The text index from entry ``held`` on, or ``over`` if it is too big to send."""
    index = text_index(session.tree)
    start = content.get("held")
    start = start if isinstance(start, int) and 0 <= start <= len(index.ids) else 0
    answer: dict[str, Any] = {"t": "held", "req": content.get("req")}
    if sum(map(len, index.lowered)) > HELD_LIMIT:
        answer["over"] = 1
        return answer
    answer.update({"from": start, "ids": index.ids[start:], "texts": index.lowered[start:]})
    return answer


def row_bits(ids: list[str], rows: Mapping[str, int]) -> str:
    """The rows of ``ids`` as a bitset, base64 (ids the panel has no row for are left out)."""
    bits = bytearray((len(rows) + 7) // 8)
    for node_id in ids:
        row = rows.get(node_id)
        if row is not None:
            bits[row >> 3] |= 1 << (row & 7)
    return base64.b64encode(bits).decode("ascii")


def write_page(session: Session) -> Path:
    """Write the session's page beside its file; returns where (a one-line error if not)."""
    if not isinstance(session.store, FileStore):
        raise StoreError(
            _(
                "this session has no file beside a notebook; there is nowhere to "
                "write its page (use `%chat export html FILE`)"
            )
        )
    target = page_path(session.location)
    refuse_session_target(target)
    try:
        target.write_text(session_page(session), encoding="utf-8")
    except OSError as error:
        raise StoreError(
            _("cannot write {target}: {reason}").format(target=target, reason=error.strerror)
        ) from None
    return target
