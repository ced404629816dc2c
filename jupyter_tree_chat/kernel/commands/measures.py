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

from ...conversation import budgeting
from ...conversation.session import Session
from ...conversation.settings import ChatSettings
from ...errors import ProviderError
from ...history.tree import Message, Node
from ...i18n import _
from ...measures.models import PRICES_SOURCE, TAKEN
from ...measures.seen import budget_line, exchange_lines, exchanges, selection_line
from ...measures.usage import (
    FULL_AT,
    Meter,
    Tally,
    breakdown,
    dollars,
    estimate_tokens,
    totals,
    window_label,
)
from ...picture.svg import columns
from ...providers.base import route_of
from ...providers.endpoints.config import ANTHROPIC
from ...textview import summary
from ..options import parse_budget


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
        args, budget = _budget_option(args)
        settings = (
            session.settings if budget is None else session.settings.merged(context_budget=budget)
        )
        model = settings.model or session.provider.default_model
        path = session.path()
        reading = session.meter()
        print(_meter_line(_("Context of the current path ({model})").format(model=model), reading))
        if reading.counted_by:
            print(
                _(
                    "  {counted} as reported in the usage of reply {reply} (what its request "
                    "held and the reply; a budget's cuts are not in it), ≈{estimated} "
                    "estimated after it"
                ).format(
                    counted=f"{reading.counted:,}",
                    reply=reading.counted_by[:7],
                    estimated=f"{reading.estimated:,}",
                )
            )
        if args:
            self._count(session, self._text(args, "%chat context"), reading)
        tools = [spec.to_api() for spec in session.tool_specs()]
        parts = breakdown(path, system=settings.system, tools=tools)
        print(_("The whole path by part (estimates: characters / 4):"))
        print(_("  system     ≈{tokens}").format(tokens=f"{parts.system:,}"))
        print(_("  tools      ≈{tokens}").format(tokens=f"{parts.tools:,}"))
        print(
            _("  messages   ≈{tokens} in {count} message(s)").format(
                tokens=f"{parts.messages:,}", count=len(path)
            )
        )
        if parts.largest:
            print(_("Largest messages on the path:"))
            for node, size in parts.largest:
                about = summary(node.message, 50, node.meta)
                print(f"  {node.id[:7]}  {node.role:<9} ≈{size:>8,}  {about}")
        self._next_request(session, settings, path, args)
        if reading.full:
            print(
                _(
                    "Past {share} of the window: `%chat compact` summarises the path into "
                    "a new root (the old branch stays)."
                ).format(share=f"{FULL_AT:.0%}")
            )

    def _next_request(
        self, session: Session, settings: ChatSettings, path: list[Node], args: list[str]
    ) -> None:
        """What the next request keeps of the path, and what its budget leaves out."""
        print(_("The next request (estimates):"))
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
            raise UsageError(
                _("%chat context: counting failed: {error}").format(error=error)
            ) from None
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
        verdict = _("fits") if counted.fits else _("would NOT fit: `%chat compact` first")
        if route.endpoint in (None, ANTHROPIC):
            print(
                _("  With the question: {tokens} tokens (counted by the API), {verdict}").format(
                    tokens=f"{counted.tokens:,}", verdict=verdict
                )
            )
        else:
            print(
                _("  With the question: {tokens} tokens (counted by {endpoint}), {verdict}").format(
                    tokens=f"{counted.tokens:,}", endpoint=route.endpoint, verdict=verdict
                )
            )

    def do_usage(self, args: list[str]) -> None:
        if args:
            raise UsageError(_("usage: %chat {usage}").format(usage="usage"))
        session = self.session
        branch = totals(session.path(), session.prices)
        whole = totals(session.tree, session.prices)
        print(
            _(
                "Usage and cost (prices of {taken} from {source}; "
                "%config TreeChat.prices changes them)"
            ).format(taken=TAKEN, source=PRICES_SOURCE)
        )
        headings = (
            (_("replies"), 8),
            (_("input"), 10),
            (_("output"), 10),
            (_("cache write"), 12),
            (_("cache read"), 12),
            (_("cost"), 13),
        )
        print("  " + " " * 28 + "".join(padded(text, width) for text, width in headings))
        for title, result in ((_("this branch"), branch), (_("whole session"), whole)):
            print(_tally_row(title, result.all))
            for model, tally in result.by_model.items():
                print(_tally_row("  " + model, tally))
        if whole.all.unpriced:
            print(
                _(
                    "  {count} reply(ies) from models with no price are counted in tokens "
                    "only; %config TreeChat.prices = {{'MODEL': {{'input': .., 'output': ..}}}}"
                ).format(count=whole.all.unpriced)
            )


def _budget_option(args: list[str]) -> tuple[list[str], int | str | None]:
    """``args`` without ``--budget N`` (as ``%%chat --budget`` takes it), and N; any other
    option is one line saying what the command takes."""
    rest: list[str] = []
    budget: int | str | None = None
    words = iter(args)
    for word in words:
        if word == "--budget" or word.startswith("--budget="):
            value = word.partition("=")[2] if "=" in word else next(words, "")
            budget = parse_budget(value, "%chat context --budget")
        elif word.startswith("--") and not rest:
            raise UsageError(
                _(
                    "%chat context takes --budget N (tokens, 'window' or 'off') and a "
                    "question, not {option}"
                ).format(option=word)
            )
        else:
            rest.append(word)
    return rest, budget


def _meter_line(title: str, reading: Meter) -> str:
    about = "" if reading.exact else "≈"
    if reading.window is None:
        return _(
            "{title}: {about}{tokens} tokens (window unknown: "
            "%config TreeChat.context_windows = {{'MODEL': TOKENS}})"
        ).format(title=title, about=about, tokens=f"{reading.tokens:,}")
    share = reading.share or 0.0
    return _("{title}: {about}{tokens} tokens of {window} ({share})").format(
        title=title,
        about=about,
        tokens=f"{reading.tokens:,}",
        window=window_label(reading.window),
        share=f"{share:.0%}",
    )


def _tally_row(title: str, tally: Tally) -> str:
    if tally.replies and tally.unpriced == tally.replies:
        cost = _("tokens only")
    else:
        cost = dollars(tally.cost) + ("+?" if tally.unpriced else "")
    return (
        "  "
        + padded(title[:28], 28, left=True)
        + f"{tally.replies:>8,}{tally.input:>10,}{tally.output:>10,}"
        + f"{tally.cache_write:>12,}{tally.cache_read:>12,}"
        + padded(cost, 13)
    )


def padded(text: str, width: int, left: bool = False) -> str:
    """``text`` padded to ``width`` columns as a terminal shows it (a Han character is two)."""
    space = " " * max(0, width - columns(text))
    return text + space if left else space + text
