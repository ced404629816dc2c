"""``%chat batch``: the session's vendor batches, where each stands; ``%chat batch cancel ID``.

Listing reads the results of any batch that has ended now (the poller would, a little
later: batch_poll.py), so a person who asks sees them at once; each result is still
written once, whoever reads it first.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ...conversation.many.batch import cancel
from ...conversation.many.batch_poll import holding, look, poller, wire_of
from ...conversation.session import Session
from ...errors import ChatError
from ...history.batch_record import BatchPlan
from ...i18n import _

BATCH_USAGE = "batch | batch cancel ID"


def plan_line(plan: BatchPlan) -> str:
    """``606e65b msgbatch_01… · claude-sonnet-4-6 · 3 requests · 2 answered · pending``."""
    ids = ", ".join(plan.sent) if plan.sent else _("not sent")
    parts = [f"{plan.key[:7]} {ids}", plan.model]
    parts.append(_("{count} requests").format(count=plan.total))
    parts.append(_("{count} answered").format(count=len(plan.done)))
    counted: dict[str, int] = {}
    for outcome, _why in plan.failed.values():
        counted[outcome] = counted.get(outcome, 0) + 1
    words = {"errored": _("{count} errored"), "expired": _("{count} expired")}
    words["canceled"] = _("{count} canceled")
    for outcome, count in counted.items():
        parts.append(words.get(outcome, "{count} " + outcome).format(count=count))
    if not plan.pending:
        parts.append(_("done"))
    elif not plan.sent:
        parts.append(
            _("not sent: the kernel stopped first; `%chat batch cancel {key}`").format(
                key=plan.key[:7]
            )
        )
    else:
        parts.append(_("pending"))
    return " · ".join(parts)


def find_plan(session: Session, ref: str) -> BatchPlan:
    """A plan by the start of its key or of one of its vendor batch ids."""
    found = [
        plan
        for plan in session.batches.plans.values()
        if plan.key.startswith(ref) or any(bid.startswith(ref) for bid in plan.sent)
    ]
    if len(found) != 1:
        why = (
            _("no batch of this session starts with {ref}")
            if not found
            else _("{ref} names more than one batch; give more characters")
        )
        raise UsageError(
            _("%chat batch: {why}; `%chat batch` lists them").format(why=why.format(ref=repr(ref)))
        )
    return found[0]


class BatchCommands:
    """``%chat batch``, mixed into ``Commands`` (which provides ``session``)."""

    @property
    def session(self) -> Session:  # Commands' own: the kernel's current session
        raise NotImplementedError

    def do_batch(self, args: list[str]) -> Any:
        session = self.session
        if args[:1] == ["cancel"]:
            if len(args) != 2:
                raise UsageError(_("usage: %chat {usage}").format(usage=BATCH_USAGE))
            plan = find_plan(session, args[1])
            if not plan.pending:
                print(
                    _("Batch {key} is done; there is nothing to cancel.").format(key=plan.key[:7])
                )
                return None
            with holding(session):
                said = cancel(session, plan, wire_of(session, plan))
            print(_("Canceling batch {key}: {said}").format(key=plan.key[:7], said="; ".join(said)))
            poller(session).wake()
            return None
        if args:
            raise UsageError(_("usage: %chat {usage}").format(usage=BATCH_USAGE))
        plans = list(session.batches.plans.values())
        if not plans:
            print(_("No batches in this session; %%chat --over NAME --batch sends one."))
            return None
        for plan in plans:
            if plan.pending and plan.sent:
                try:
                    look(session, plan)
                except ChatError as error:
                    print(_("Batch {key}: {error}").format(key=plan.key[:7], error=error))
        for plan in plans:
            print(plan_line(plan))
        return None
