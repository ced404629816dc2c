"""The session's side of a context budget: the budget a request has, its selection, and
the summary of what it leaves out.

``measures/budget.py`` chooses, purely, what a request sends of a path. This module
gives it what only a session knows: the budget the settings ask for (``"window"`` needs
the model's window: ``Session.context_windows``, so an endpoint's own table reaches it),
the compactions in the tree, and the sizes it remembers. With ``summarize_dropped`` it
writes the summary the budget calls for: one model call over the exchanges left out (and
the summary that stood for what came before them), stored as a compaction: a new root
and its acknowledgement, ``meta.compacted_from`` naming the last node it covers, with no
other record written and the current leaf unmoved. The next request finds it through the
tree (``compaction_links``), after a restart too, and writes none again until the cut
moves a step further.

It lives apart from session.py so the session keeps to its actions; it uses only the
session's public calls (``BudgetHost``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, Protocol

from ..errors import ProviderError
from ..history.tree import (
    Message,
    Node,
    SessionTree,
    compaction_links,
    compaction_pair,
    message_text,
)
from ..i18n import _, ngettext
from ..language import COMPACTION, path_language
from ..measures import preflight
from ..measures.budget import (
    SUMMARY_SHARE,
    Budget,
    Selection,
    Sizes,
    resolve_budget,
    select,
    surely_within,
    with_texts_first,
)
from ..measures.models import by_model
from ..measures.usage import Meter
from ..providers.base import Finished, Provider, ReplyRequest, Retrying, TextDelta, ToolSpec
from .settings import ChatSettings, with_root_system


class BudgetHost(Protocol):
    """What budgeting needs of a session: ``Session`` is one, through its public calls."""

    tree: SessionTree
    provider: Provider
    context_windows: dict[str, int]
    sizes: Sizes

    def build_request(
        self,
        messages: list[Message],
        settings: ChatSettings,
        tools: tuple[Any, ...] = (),
        known: tuple[ToolSpec, ...] = (),
    ) -> ReplyRequest: ...

    def known_tools(self, path: list[Node]) -> tuple[ToolSpec, ...]: ...

    def model_of(self, settings: ChatSettings) -> str: ...

    def new_id(self) -> str: ...

    def now(self) -> int: ...

    def record_aside(self, nodes: Sequence[Node]) -> None: ...

    def notice(self, message: str, level: str = "info", turn: Any = None) -> None: ...


def budget_of(host: BudgetHost, settings: ChatSettings) -> Budget | None:
    """The budget a request with ``settings`` has (None: no budget, the whole path goes)."""
    window = by_model(host.context_windows, host.model_of(settings))
    return resolve_budget(settings.context_budget, window=window, max_tokens=settings.max_tokens)


class RequestTerms(NamedTuple):
    """What a request's path is measured against: its budget, and what else it holds."""

    budget: Budget
    system: str | None
    tools: list[dict[str, Any]]


def request_terms(
    host: BudgetHost, path: Sequence[Node], settings: ChatSettings, tools: tuple[Any, ...] = ()
) -> RequestTerms | None:
    """The budget, system prompt and tool definitions of a request on ``path`` (None: no
    budget), for ``selection`` and ``fits_whole`` alike."""
    budget = budget_of(host, settings)
    if budget is None:
        return None
    system = with_root_system(settings, list(path[:1])).system
    return RequestTerms(budget, system, [tool.to_api() for tool in tools])


def compactions(tree: SessionTree) -> dict[str, Node]:
    """Summarised node id -> the newest compaction root standing for the path up to it."""
    found: dict[str, Node] = {}
    for root_id, summarised in compaction_links(tree.roots()).items():
        found[summarised] = tree.get(root_id)  # roots in append order: the newest wins
    return found


def selection(
    host: BudgetHost,
    path: Sequence[Node],
    settings: ChatSettings,
    tools: tuple[Any, ...] = (),
    extra: Sequence[Message] = (),
    *,
    reserve: bool = False,
) -> Selection | None:
    """What a request sends of ``path`` and ``extra`` under the settings' budget (None: no
    budget). ``reserve`` holds room for a summary of what is left out (see ``summarise``)."""
    terms = request_terms(host, path, settings, tools)
    if terms is None:
        return None
    return select(
        path,
        extra,
        budget=terms.budget,
        system=terms.system,
        tools=terms.tools,
        compactions=lambda: compactions(host.tree),
        sizes=host.sizes,
        summary_reserve=summary_reserve(terms.budget) if reserve else 0,
    )


def fits_whole(
    host: BudgetHost,
    path: Sequence[Node],
    settings: ChatSettings,
    tools: tuple[Any, ...] = (),
    extra: Sequence[Message] = (),
) -> bool:
    """True when the request surely sends the whole path (no budget, or a bound of the
    path within it): then it is the unbudgeted request, and no node is counted. False:
    ``selection`` decides."""
    terms = request_terms(host, path, settings, tools)
    if terms is None:
        return True
    return surely_within(
        path, extra, budget=terms.budget, system=terms.system, tools=terms.tools, sizes=host.sizes
    )


def summary_reserve(budget: Budget) -> int:
    """The room held for a summary: the book's 20 % of the budget."""
    return max(1, int(budget.tokens * SUMMARY_SHARE))


def request(
    host: BudgetHost,
    path: Sequence[Node],
    settings: ChatSettings,
    tools: tuple[Any, ...] = (),
    extra: Sequence[Message] = (),
    *,
    summarize: bool = True,
) -> ReplyRequest:
    """The request for ``path`` and ``extra`` under the settings' budget; with
    ``summarize`` and ``settings.summarize_dropped``, what it leaves out is summarised
    first (a model call, on the calling thread)."""
    whole = fits_whole(host, path, settings, tools, extra)
    chosen = None if whole else selection(host, path, settings, tools, extra)
    if chosen is not None and summarize and settings.summarize_dropped and chosen.left_out:
        planned = selection(host, path, settings, tools, extra, reserve=True)
        if planned is not None and planned.summarise and summarise(host, path, planned, settings):
            chosen = selection(host, path, settings, tools, extra)
    known = host.known_tools(list(path))  # the tools the path used, defined (tools/wire.py)
    if chosen is None:
        messages = [*(node.message for node in path), *extra]
        return host.build_request(messages, settings, tools, known)
    built = host.build_request(chosen.messages, settings, tools, known)
    return replace(built, context=chosen.context_meta())


def summarise(
    host: BudgetHost, path: Sequence[Node], planned: Selection, settings: ChatSettings
) -> Node | None:
    """Write the summary of ``planned.summarise`` (and of the summary before them) and store
    it as a compaction of the path up to the cut; None (and a notice) if the model fails."""
    nodes = list(planned.summarise)
    host.notice(
        ngettext(
            "Summarising {count} earlier exchange the context budget leaves out "
            "(once: the summary is kept as a compaction).",
            "Summarising {count} earlier exchanges the context budget leaves out "
            "(once: the summary is kept as a compaction).",
            planned.left_out,
        ).format(count=f"{planned.left_out:,}"),
    )
    messages = [dict(node.message) for node in nodes]
    if planned.summary is not None:  # the summary they follow is part of what is summarised
        before = message_text(host.tree.get(planned.summary).message)
        messages[0] = with_texts_first(messages[0], [before])
    texts = COMPACTION[path_language(messages)]
    messages = _ending_with_question(messages, texts.request)
    budget = budget_of(host, settings)
    most = summary_reserve(budget) if budget is not None else settings.max_tokens
    asked = replace(settings, thinking=None, max_tokens=min(settings.max_tokens, most))
    text, error = collect_text(
        host.provider,
        host.build_request(messages, asked),
        lambda line: host.notice(line, "warning"),
    )
    if error is not None or not text.strip():
        why = str(error) if error is not None else _("the model wrote nothing")
        host.notice(
            _("Could not summarise the exchanges left out ({why}); a note stands for them.").format(
                why=why
            ),
            "warning",
        )
        return None
    summarised = path[planned.cut - 1].id
    root, ack = compaction_pair(
        text,
        summarised,
        host.new_id(),
        host.new_id(),
        host.now(),
        heading=texts.heading,
        acknowledgement=texts.acknowledgement,
        meta={"budget": {"exchanges": planned.covered + planned.left_out}},
    )
    host.record_aside([root, ack])
    return root


def collect_text(
    provider: Provider, request: ReplyRequest, note: Callable[[str], None] | None = None
) -> tuple[str, ProviderError | None]:
    """A reply's whole text, without streaming it anywhere (a summary, a compaction);
    ``note`` is given each retry's line (a 429 waited out, providers/retry.py)."""
    text = ""
    try:
        for event in provider.stream(request):
            if isinstance(event, Finished):
                text = message_text(event.message) or text
            elif isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, Retrying) and note is not None:
                note(event.message)
    except ProviderError as error:
        return text, error
    return text, None


def check_fits(
    host: BudgetHost,
    path: list[Node],
    settings: ChatSettings,
    tools: tuple[Any, ...],
    extra: Sequence[Message],
    whole: Meter,
) -> None:
    """Refuse a request that would not fit the window even as the budget builds it: the
    whole path (``whole``, the session's meter) when it is sent whole, else the newest
    exchange with what goes before it (``single_group_overflow``)."""
    model = host.model_of(settings)
    if fits_whole(host, path, settings, tools, extra):
        preflight.check_fits(whole, model=model)
        return
    chosen = selection(host, path, settings, tools, extra)
    if chosen is None or chosen.within:
        preflight.check_fits(whole, model=model)
        return
    total = chosen.breakdown.total
    preflight.check_fits(
        Meter(tokens=total, window=whole.window, counted=0, estimated=total), model=model
    )


def _ending_with_question(messages: list[Message], question: str) -> list[Message]:
    """``messages`` then the summary request, as a user turn of its own or, after a user
    message (an exchange that ended with tool results), in it."""
    if messages and messages[-1].get("role") == "user":
        last = messages[-1]
        content = last.get("content")
        blocks = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        return [*messages[:-1], {**last, "content": [*blocks, {"type": "text", "text": question}]}]
    return [*messages, {"role": "user", "content": question}]
