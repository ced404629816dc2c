"""Running one session action inside a cell, and what the cell shows for it.

``%%chat`` and the ``%chat`` commands that ask the model (edit, retry, fork-before-tool)
all end the same way: the reply streams in, a footer follows, the reply text is left
for Python, the turn hooks run (the panel's per-turn control), and a failure ends the
cell with one readable line instead of a traceback. The cell still *fails* then (its
status is "error"), so "Run All" stops at a failed or interrupted turn instead of
asking the next question on top of it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from ..context import sent_line
from ..conversation.events import FanoutStarted, Turn, TurnInterrupted
from ..conversation.session import Session
from ..errors import ChatError, ProviderError
from ..history.tree import tool_uses
from ..i18n import _
from .display.batch_view import show_batches
from .display.columns import FanoutColumns
from .display.output import (
    DisplayReply,
    PrintReply,
    ReplyView,
    TurnOutput,
    flush_waiting_streams,
    footer,
    footer_html,
    notice_line,
    quick_displays,
    show_footer,
)
from .sessions import KernelSessions

#: the user-namespace names a turn leaves behind (documented in the magic's help)
REPLY_VARIABLE = "_chat"
REPLY_ID_VARIABLE = "_chat_id"


class ChatFailed(Exception):
    """The model call failed; shown as its one line, no traceback."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [self.line]


class ChatInterrupted(KeyboardInterrupt):
    """The stop button during a reply, after what arrived was saved; one line, no traceback."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line

    def _render_traceback_(self) -> list[str]:
        return [self.line]


def run_turn(
    sessions: KernelSessions,
    session: Session,
    action: Callable[[], Turn],
    *,
    shell: Any,
) -> None:
    """Run ``action`` (a Session call) with its output rendered in the current cell."""
    make_view: Callable[[], ReplyView]
    live = getattr(shell, "kernel", None) is not None
    throttle = sessions.config.throttle
    if live:

        def make_view() -> ReplyView:
            return DisplayReply(throttle)
    else:
        make_view = PrintReply

    def make_columns(started: FanoutStarted) -> FanoutColumns:
        return FanoutColumns(started.variants, live=live, throttle=throttle, prices=session.prices)

    with quick_displays(shell):
        _run_and_show(
            sessions, session, action, shell, TurnOutput(session, make_view, make_columns)
        )


def _run_and_show(
    sessions: KernelSessions,
    session: Session,
    action: Callable[[], Turn],
    shell: Any,
    output: TurnOutput,
) -> None:
    before = session.leaf
    try:
        turn = _run(shell, action, output)
        _show_end(sessions, session, shell, output, turn)
    except ChatInterrupted:
        raise
    except KeyboardInterrupt:  # anywhere else: a notice, a view, a write, the footer
        where = _kept_now(session, before)
        raise ChatInterrupted(_("Interrupted: {where}.").format(where=where)) from None


def _run(shell: Any, action: Callable[[], Turn], output: TurnOutput) -> Turn:
    """The action, its output in the cell; its failures as one line each."""
    try:
        with output:
            return action()
    except TurnInterrupted as stop:
        _leave_for_python(shell, stop.turn)
        kept = stop.turn.replies[-1] if stop.turn.replies else None
        nothing = _("nothing had arrived; the question is kept, unanswered")
        where = (
            _("the partial reply is kept as {id}").format(id=kept.id[:7])
            if kept is not None
            else nothing
        )
        if (
            kept is not None
            and tool_uses(kept.message)
            and not (kept.meta or {}).get("interrupted")
        ):
            where = _(
                "the tool call was stopped; the reply that asked for it is kept as {id}"
            ).format(id=kept.id[:7])
        if stop.turn.experiment is not None:
            arrived = sum(1 for a in stop.turn.answers if a.head is not None)
            where = _("the {count} answers that had arrived are kept").format(count=arrived)
        elif stop.turn.answers:
            kept_ids = ", ".join(a.head.id[:7] for a in stop.turn.answers if a.head is not None)
            where = (
                _("what each answer had received is kept ({ids})").format(ids=kept_ids)
                if kept_ids
                else nothing
            )
        raise ChatInterrupted(_("Interrupted: {where}.").format(where=where)) from None
    except ProviderError as error:  # raised before any turn existed (e.g. compaction)
        raise ChatFailed(_("Model error: {error}").format(error=error)) from None
    except ChatError as error:
        raise UsageError(str(error)) from None


def _show_end(
    sessions: KernelSessions, session: Session, shell: Any, output: TurnOutput, turn: Turn
) -> None:
    """After a turn: ``_chat``, the footer, the turn hooks, a failure's one line."""
    _leave_for_python(shell, turn)
    if turn.batches:  # sent as batches: a bar each, live after the cell (batch_view.py)
        show_batches(session, turn.batches, shell, sessions.config.throttle)
    last = turn.replies[-1] if turn.replies else None
    fanned_out = bool(turn.answers)  # each column has its own footer
    if (
        last is not None
        and not fanned_out
        and last.role == "assistant"
        and not (last.meta or {}).get("synthetic")
    ):
        show_footer(footer(session, last), footer_html(session, last))
        sent = sent_line(_question_of(session, turn).get("context") or [])
        if sent:
            show_footer(sent)
    if turn.experiment is None:  # an experiment's control is its grid, not a switcher
        sessions.run_turn_hooks(session, turn)
    shown = str(turn.error) if turn.error is not None else None
    for line in output.errors:  # e.g. the session could not be saved
        if line != shown:
            notice_line(line, "error")
    if turn.error is not None:
        if last is None:
            raise ChatFailed(_("Model error: {error}").format(error=turn.error))
        raise ChatFailed(
            _("Model error: {error} (the partial reply is kept as {id})").format(
                error=turn.error, id=last.id[:7]
            )
        )
    flush_waiting_streams()


def _kept_now(session: Session, before: str | None) -> str:
    """What an interrupt outside the session's own handling leaves: the session settled
    on its leaf (on disk, flushed, the views told), said in words."""
    leaf = session.leaf
    if leaf is None or leaf == before:
        return _("nothing was stored")
    with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C: it is stored already
        session.settle(leaf)
    node = session.tree.get(leaf)
    if node.role == "assistant" and tool_uses(node.message):
        return _("the tool call was stopped; the reply that asked for it is kept as {id}").format(
            id=leaf[:7]
        )
    if node.role == "assistant":
        return _("the reply is kept as {id}").format(id=leaf[:7])
    if (node.meta or {}).get("tool_results"):
        return _("the tool results are kept as {id}, not yet answered").format(id=leaf[:7])
    return _("nothing had arrived; the question is kept, unanswered")


def _question_of(session: Session, turn: Turn) -> dict[str, Any]:
    """The meta of the question this turn answered (new, or the one a retry answered)."""
    question = turn.user
    if question is None and turn.replies and turn.replies[0].parent_id is not None:
        question = session.tree.get(turn.replies[0].parent_id)
    return (question.meta or {}) if question is not None else {}


def _leave_for_python(shell: Any, turn: Turn) -> None:
    """``_chat`` holds the reply text; ``_chat_id`` the reply's node id."""
    user_ns = getattr(shell, "user_ns", None)
    if user_ns is None:
        return
    user_ns[REPLY_VARIABLE] = turn.text
    last = turn.last
    user_ns[REPLY_ID_VARIABLE] = last.id if last is not None and last is not turn.user else None
