"""The panel's search box and its Export HTML, answered in the kernel.

The panel holds only the rows and the texts it has shown, so its search box asks the
kernel: ``{"a": "find", "q": TEXT, "regex", "case", "role", "all"}`` is answered with
``{"t": "found", "req": N, "ids": [...], "hidden": H}`` (``err``: the query's one-line
problem), the matching ids in the tree's order, found by ``share.find`` (as ``%chat
find`` finds them), with no description: the panel marks rows and shows paths itself.
``{"a": "export", "format": "html"}`` writes the session's page beside its file
(``analysis.chat.html``, as ``%chat export html`` does) and says where in a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conversation.session import Session
from ..errors import ChatError, StoreError
from ..history.store import FileStore, refuse_session_target
from ..i18n import _
from ..share.find import ROLES, Query, find
from ..share.page import page_path, session_page


def find_answer(session: Session, content: dict[str, Any]) -> dict[str, Any]:
    """The ``found`` message for one search-box query."""
    answer: dict[str, Any] = {"t": "found", "req": content.get("req"), "ids": [], "hidden": 0}
    role = content.get("role")
    try:
        query = Query(
            str(content.get("q", "")),
            regex=content.get("regex") is True,
            case_sensitive=content.get("case") is True,
            role=role if role in ROLES else None,
            include_hidden=content.get("all") is True,
        )
        found = find(
            session.tree,
            query,
            labels=session.labels,
            hidden=session.hidden,
            leaf=session.leaf,
            limit=0,
        )
    except ChatError as error:
        answer["err"] = str(error)
        return answer
    answer["ids"] = found.ids
    answer["hidden"] = found.hidden
    return answer


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
