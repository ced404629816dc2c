"""``%chat context`` and ``%chat usage``: how full the window is, and what replies cost.

``context`` also lists what the next request keeps of the path and what its context
budget leaves out (``measures/seen.py`` words it).

The figures come from the core (usage.py over models.py's tables, with ``TreeChat``'s
entries on top); these commands only lay them out. ``context QUESTION`` asks the API's
count_tokens endpoint for the exact size of the path with that question, and says
whether it fits.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..conversation import budgeting
from ..conversation.session import Session
from ..errors import ProviderError
from ..history.tree import Message, Node
from ..i18n import _
from ..measures.models import PRICES_SOURCE, TAKEN
from ..measures.seen import budget_line, exchange_lines, exchanges, selection_line
from ..measures.usage import (
    FULL_AT,
    Meter,
    Tally,
    breakdown,
    dollars,
    estimate_tokens,
    totals,
    window_label,
)
from ..providers.base import route_of
from ..providers.endpoints import ANTHROPIC
from ..textview import summary


class MeasureCommands:
    """The two measuring commands, mixed into ``Commands`` (which provides ``session``)."""

    shell: Any

    @property
    def session(self) -> Session:  # Commands' own: the kernel's current session
        raise NotImplementedError

    def _text(self, words: list[str], where: str) -> str:  # Commands' own, {name} substituted
        raise NotImplementedError

    def do_context(self, args: list[str]) -> None:
        session = self.session
        settings = session.settings
        model = settings.model or session.provider.default_model
        path = session.path()
        reading = session.meter()
        print(_meter_line(f"Context of the current path ({model})", reading))
        if reading.counted_by:
            print(
                f"  {reading.counted:,} as reported in the usage of reply "
                f"{reading.counted_by[:7]}, ≈{reading.estimated:,} estimated after it"
            )
        if args:
            self._count(session, self._text(args, "%chat context"), reading)
        tools = [spec.to_api() for spec in session.tool_specs()]
        parts = breakdown(path, system=settings.system, tools=tools)
        print("By part (estimates: characters / 4):")
        print(f"  system     ≈{parts.system:,}")
        print(f"  tools      ≈{parts.tools:,}")
        print(f"  messages   ≈{parts.messages:,} in {len(path)} message(s)")
        if parts.largest:
            print("Largest messages on the path:")
            for node, size in parts.largest:
                about = summary(node.message, 50, node.meta)
                print(f"  {node.id[:7]}  {node.role:<9} ≈{size:>8,}  {about}")
        self._next_request(session, path, args)
        if reading.full:
            print(
                f"Past {FULL_AT:.0%} of the window: `%chat compact` summarises the path into "
                "a new root (the old branch stays)."
            )

    def _next_request(self, session: Session, path: list[Node], args: list[str]) -> None:
        """What the next request keeps of the path, and what its budget leaves out."""
        settings = session.settings
        budget = budgeting.budget_of(session, settings)
        extra: list[Message] = []
        if args:
            extra = [{"role": "user", "content": self._text(args, "%chat context")}]
        tools = session.tool_specs(settings)
        chosen = budgeting.selection(session, path, settings, tools, extra)
        if budget is None or chosen is None:
            print(_("The next request sends the whole path (no context budget)."))
            return
        print(budget_line(budget))
        print(selection_line(chosen))
        for line in exchange_lines(exchanges(path, extra, chosen, session.sizes)):
            print("  " + line)

    def _count(self, session: Session, question: str, estimate: Meter) -> None:
        try:
            counted = session.count_tokens(question)
        except ProviderError as error:
            raise UsageError(f"%chat context: counting failed: {error}") from None
        model = session.settings.model or session.provider.default_model
        route = route_of(session.provider, model)
        if counted is None:
            where = route.endpoint or session.provider.name
            print(
                _(
                    "  With the question: ≈{tokens} tokens (estimated: {endpoint} cannot "
                    "count tokens)"
                ).format(tokens=f"{estimate.tokens + estimate_tokens(question):,}", endpoint=where)
            )
            return
        verdict = "fits" if counted.fits else "would NOT fit: `%chat compact` first"
        if route.endpoint in (None, ANTHROPIC):
            print(f"  With the question: {counted.tokens:,} tokens (counted by the API), {verdict}")
        else:
            print(
                _("  With the question: {tokens} tokens (counted by {endpoint}), {verdict}").format(
                    tokens=f"{counted.tokens:,}", endpoint=route.endpoint, verdict=verdict
                )
            )

    def do_usage(self, args: list[str]) -> None:
        if args:
            raise UsageError("usage: %chat usage")
        session = self.session
        branch = totals(session.path(), session.prices)
        whole = totals(session.tree, session.prices)
        print(
            f"Usage and cost (prices of {TAKEN} from {PRICES_SOURCE}; "
            "%config TreeChat.prices changes them)"
        )
        print(
            f"  {'':<28}{'replies':>8}{'input':>10}{'output':>10}{'cache write':>12}"
            f"{'cache read':>12}{'cost':>13}"
        )
        for title, result in (("this branch", branch), ("whole session", whole)):
            print(_tally_row(title, result.all))
            for model, tally in result.by_model.items():
                print(_tally_row("  " + model, tally))
        if whole.all.unpriced:
            print(
                f"  {whole.all.unpriced} reply(ies) from models with no price are counted in "
                "tokens only; %config TreeChat.prices = {'MODEL': {'input': .., 'output': ..}}"
            )


def _meter_line(title: str, reading: Meter) -> str:
    about = "" if reading.exact else "≈"
    if reading.window is None:
        return (
            f"{title}: {about}{reading.tokens:,} tokens (window unknown: "
            "%config TreeChat.context_windows = {'MODEL': TOKENS})"
        )
    share = reading.share or 0.0
    return (
        f"{title}: {about}{reading.tokens:,} tokens of {window_label(reading.window)} ({share:.0%})"
    )


def _tally_row(title: str, tally: Tally) -> str:
    if tally.replies and tally.unpriced == tally.replies:
        cost = "tokens only"
    else:
        cost = dollars(tally.cost) + ("+?" if tally.unpriced else "")
    return (
        f"  {title[:28]:<28}{tally.replies:>8,}{tally.input:>10,}{tally.output:>10,}"
        f"{tally.cache_write:>12,}{tally.cache_read:>12,}{cost:>13}"
    )
