"""What a browser action needs beside the view: an edit, a fan-out, the question a
reply answers, and where a click's message is taken (``take_clicks_where_sent``)."""

from __future__ import annotations

from typing import Any

from ..context import with_text
from ..conversation.events import Turn
from ..conversation.many.variants import Fanout
from ..conversation.session import Session
from ..errors import TreeError
from ..history.tree import Node, is_real_user_message
from ..i18n import _
from ..textview import typed_source

MAX_TEXTS_PER_REQUEST = 200
BUSY_TEXT = (
    "Busy: a reply is being written in this session (a %%chat cell or another view); "
    "wait for it to finish, then try again."
)
"""What a view shows when its action meets ``SessionBusy`` (kept in step with model.ts)."""


def edit_question(session: Session, original: Node, text: str, raw: bool) -> Turn:
    """An edit from a view: of what was typed (its ``{fields}`` filled in again from the
    kernel, a notice saying which), or with ``raw`` (or a question kept as sent) of the
    text that was sent, the question's images staying."""
    if raw or typed_source(original.meta) is None:
        return session.edit(original.id, with_text(original.message, text))
    if session.refill is None:
        raise TreeError(
            _(
                "this question's fields can only be filled in again by a kernel; "
                "edit what was sent instead"
            )
        )
    question = session.refill(original, text)
    if question.note:
        session.notice(question.note)
    return session.edit(original.id, question.content, meta=question.meta)


def fanout_of(content: dict[str, Any]) -> Fanout:
    """The fan-out a browser asked for (``n``, ``models``, ``temperatures``), checked."""
    try:
        n = int(content.get("n", 1))
        models = tuple(str(m) for m in content.get("models") or () if str(m).strip())
        temperatures = tuple(float(t) for t in content.get("temperatures") or ())
    except (TypeError, ValueError):
        raise TreeError(_("the fan-out asked for is not numbers and names; pick again")) from None
    if any(not 0 <= t < float("inf") for t in temperatures):  # each endpoint's range: later
        raise TreeError(_("temperatures start at 0; pick again"))
    return Fanout(n=n, models=models, temperatures=temperatures)


def take_clicks_where_sent(comm: Any) -> None:
    """Let the browser's messages run on the subshell it sent them to, even during a cell.

    JupyterLab 4.4+ sends comm messages to a kernel subshell ("comms over subshells"),
    which ipykernel 7 runs on its own thread while a cell runs. But ipykernel routes a
    comm's messages back to the subshell the comm last *published* from, so that a cell
    waiting for a widget's reply gets it; a widget made and updated by cells publishes
    from the main shell, so every click would wait behind the running cell. Nothing here
    waits for the browser, and ``Session`` refuses a second action (``SessionBusy``), so
    the message is taken where the browser sent it: a click during a long cell lands at
    once, and one during a streaming reply is told the session is busy.
    """
    if comm is not None and callable(getattr(comm, "_reply_subshell_for", None)):
        comm._reply_subshell_for = lambda _data, default: default


def question_of(session: Session, node: Node) -> Node:
    """The real user message a reply answers (above any tool rounds)."""
    for above in reversed(session.path(node.id)):
        if is_real_user_message(above.message):
            return above
    raise TreeError(_("node {id} has no user message above it").format(id=node.id[:7]))
