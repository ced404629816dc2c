"""Building a request to a token budget from the unchanged path (the chapter's next step).

The session keeps everything; the context is rebuilt for each request and may leave
part of the path out. "截断只发生在 Context 构建层，Session 永远不动": nothing here writes,
and nothing on the path changes. ``select`` is one pure function over the active path
(docs/context.md has the rules with examples):

- **Within the budget, nothing changes**: the system prompt, the tools and the whole
  path fit, so the messages are the path's, exactly (``within_budget``).
- **The unit is an exchange** (an interaction): a real user message (not a tool result)
  and everything up to the next one, its tool calls and their results together. An
  exchange is *broken* when its calls and results do not pair by id (a call twice, a
  result with no call, a call with no result; in any order, parallel calls included):
  past the budget, a broken exchange is not sent.
- **The newest compaction stands for what it summarised**: a ``%chat compact`` root at
  the path's start, a compaction whose summarised node is on the path (``compactions``:
  one made for the budget, or a ``%chat compact`` of this branch), or an imported pi
  compaction on the path (everything before its ``first_kept`` node). Its summary goes
  first; what it covers is not sent again.
- **Counted first**: the system prompt, the tools and the summary; then whole exchanges
  are kept from the newest backwards while they fit. The newest is kept even when it
  alone does not fit (``single_group_overflow``: the preflight then says whether it
  exceeds the window itself); otherwise the reason is ``trimmed``.
- **The cut moves in steps.** It lies where at least ``ceil(D / step) * step`` tokens are
  left out (``D`` what must go, ``step`` a quarter of what the messages may hold),
  counted from the compaction (or the root), so it stays put turn after turn until the
  path has grown by a step, then jumps by one: consecutive requests share their prefix
  and keep reading the prompt cache (a cut that slid one exchange a turn would make
  every request a miss).
- **What is left out and not covered** is replaced by one marked note, ``[12 earlier
  exchanges left out]``, at the front of the first message sent (with the summary, so
  the roles still alternate); the session may instead have it summarised
  (``summarise``: the exchanges to write a summary of).

Counting is ``usage.estimate_tokens`` (characters / 4; images and PDFs by their size,
not their base64). A node's estimate and its running sums from the root are computed
once per node (``Sizes``: a node never changes), so a request on a 10,000-deep path
finds its cut by bisection instead of counting the path again.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..history.tree import Message, Node, is_real_user_message, message_text
from ..i18n import _
from ..language import Language, left_out_note, path_language
from .sizes import Sizes, pairs_by_id, pi_question, pi_summary
from .usage import estimate_tokens

WITHIN = "within_budget"
TRIMMED = "trimmed"
OVERFLOW = "single_group_overflow"
STEP_SHARE = 0.25
"""The cut moves by at least this share of what the messages may hold."""
MARGIN_SHARE = 0.1
"""``"window"``: this share of the window is kept free, beside ``max_tokens`` (estimates
are characters / 4; the book keeps 10 % for the same reason)."""
SUMMARY_SHARE = 0.2
"""With summaries on, this share of the budget is held for the summary (the book's 80/20)."""
NOTE_TOKENS = estimate_tokens(left_out_note(99_999, "en"))
"""What the note is counted as, whatever its number."""


# -- the budget --------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """What a request may hold (system, tools and messages), and how it was found."""

    tokens: int
    window: int | None = None
    reserved_output: int = 0
    margin: int = 0


def resolve_budget(
    setting: int | str | None, *, window: int | None, max_tokens: int
) -> Budget | None:
    """The budget a setting means: a number of tokens; ``"window"``, the model's window
    less ``max_tokens`` and a margin (None when the window is unknown); ``"off"``/None, none."""
    if setting is None or setting == "off":
        return None
    if setting == "window":
        if not window:
            return None
        margin = math.ceil(window * MARGIN_SHARE)
        return Budget(max(0, window - max_tokens - margin), window, max_tokens, margin)
    if isinstance(setting, bool) or not isinstance(setting, int) or setting <= 0:
        raise ValueError(
            _(
                "a context budget is a positive number of tokens, 'window' or 'off', not {setting}"
            ).format(setting=repr(setting))
        )

    return Budget(setting)


# -- the selection ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Breakdown:
    """Where a request's tokens are (estimates), against its budget."""

    system: int
    tools: int
    summary: int
    note: int
    messages: int
    budget: int
    reserved_output: int = 0
    """With a ``"window"`` budget: the output held back (``max_tokens``), beside ``margin``."""
    margin: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.summary + self.note + self.messages

    @property
    def available(self) -> int:
        """What the messages may hold once the rest is counted."""
        return max(0, self.budget - self.system - self.tools - self.summary - self.note)


@dataclass(frozen=True)
class Selection:
    """What a request sends of a path, and why.

    Positions count the path's nodes, then the messages not stored yet (``extra``).
    """

    reason: str
    messages: list[Message]
    kept: tuple[str, ...]
    """The ids of the path's nodes sent, in order."""
    exchanges: int
    """Exchanges on the path, the one being asked included."""
    sent: int
    """Of them, how many are sent whole."""
    breakdown: Breakdown
    first: str | None = None
    """The first node sent (``from``); None when only unsaved messages are."""
    summary: str | None = None
    """The compaction whose summary stands for the start of the path."""
    covered: int = 0
    """Exchanges that summary stands for."""
    left_out: int = 0
    """Exchanges dropped and not covered: the note's number."""
    skipped: tuple[str, ...] = ()
    """Nodes of broken exchanges left out after ``first``."""
    anchor: int = 0
    """Where the exchanges not covered by the summary begin."""
    cut: int = 0
    """Where the exchanges sent begin."""
    summarise: tuple[Node, ...] = field(default=(), repr=False)
    """The dropped, uncovered exchanges' nodes, when a summary was asked for."""

    @property
    def dropped(self) -> int:
        return self.exchanges - self.sent

    @property
    def within(self) -> bool:
        return self.reason == WITHIN

    def context_meta(self) -> dict[str, Any] | None:
        """What an answer's ``meta.context`` records (None within the budget: nothing was left
        out, and the answer's meta stays as it always was)."""
        if self.within:
            return None
        meta: dict[str, Any] = {
            "from": self.first,
            "dropped": self.dropped,
            "exchanges": self.exchanges,
            "tokens": self.breakdown.total,
            "budget": self.breakdown.budget,
            "reason": self.reason,
        }
        if self.summary is not None:
            meta["summary"] = self.summary
        if self.skipped:
            meta["skipped"] = list(self.skipped)
        return meta


@dataclass(frozen=True)
class _Cover:
    anchor: int
    node: str
    text: str
    excluded: int = -1  # a pi compaction's own position: sent as the summary, not in place


def _held_tokens(system: str | None, tools: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The system prompt's and the tool definitions' estimates: a request holds them
    before any message."""
    return estimate_tokens(system or ""), (estimate_tokens(list(tools)) if tools else 0)


def surely_within(
    path: Sequence[Node],
    extra: Sequence[Message] = (),
    *,
    budget: int | Budget,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
    sizes: Sizes | None = None,
) -> bool:
    """True when ``select`` would surely send the whole path (``within_budget``), found
    from ``Sizes.bound`` without counting each node: a first request on a deep path that
    fits pays an encoding, not the count. False says nothing: ask ``select``."""
    tokens = budget.tokens if isinstance(budget, Budget) else budget
    room = tokens - sum(_held_tokens(system, tools))
    room -= sum(estimate_tokens(message) for message in extra)
    if room < 0:
        return False
    bound = (Sizes() if sizes is None else sizes).bound(path, room)
    return bound is not None and bound <= room


def select(
    path: Sequence[Node],
    extra: Sequence[Message] = (),
    *,
    budget: int | Budget,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
    compactions: Mapping[str, Node] | Callable[[], Mapping[str, Node]] | None = None,
    sizes: Sizes | None = None,
    summary_reserve: int = 0,
) -> Selection:
    """The messages a request sends for ``path`` (root first) and ``extra`` (messages not
    stored yet: the question being asked, a fan-out's tool rounds) within ``budget``.

    ``compactions`` maps a summarised node's id to the compaction root standing for the
    path up to it (or is a function giving that map, called only past the budget: finding
    a tree's compactions lists its roots). ``summary_reserve`` (tokens) holds room for a
    summary the caller will write of what is dropped; ``Selection.summarise`` then lists
    its nodes.
    """
    sizes = Sizes() if sizes is None else sizes
    sizes.ensure(path)
    held = (budget.reserved_output, budget.margin) if isinstance(budget, Budget) else (0, 0)
    budget = budget.tokens if isinstance(budget, Budget) else budget
    n = len(path)
    system_tokens, tool_tokens = _held_tokens(system, tools)
    extra_tokens = [estimate_tokens(message) for message in extra]
    extra_opens = [is_real_user_message(message) for message in extra]
    last = sizes.of(path[-1]) if n else None
    path_tokens = last.total if last is not None else 0
    exchanges = (last.exchanges if last is not None else 0) + sum(extra_opens)
    if not n and extra and not extra_opens[0]:
        exchanges += 1
    whole = path_tokens + sum(extra_tokens)

    def before(position: int) -> int:
        """Tokens of everything before ``position``."""
        if position <= 0:
            return 0
        if position <= n:
            return sizes.of(path[position - 1]).total
        return path_tokens + sum(extra_tokens[: position - n])

    def opens(position: int) -> bool:
        return sizes.of(path[position]).opens if position < n else extra_opens[position - n]

    end = n + len(extra)
    newest = next((p for p in range(end - 1, 0, -1) if opens(p)), 0)

    if system_tokens + tool_tokens + whole <= budget:
        return Selection(
            WITHIN,
            [node.message for node in path] + list(extra),
            tuple(node.id for node in path),
            exchanges,
            exchanges,
            Breakdown(system_tokens, tool_tokens, 0, 0, whole, budget, *held),
            first=path[0].id if n else None,
        )

    found = compactions() if callable(compactions) else compactions
    cover = _newest_cover(path, sizes, found or {}, newest)
    anchor = cover.anchor if cover is not None else 0
    excluded = cover.excluded if cover is not None else -1
    summary_tokens = estimate_tokens(cover.text) if cover is not None else 0
    # a pi compaction's summary goes first; a question merged into it stays in its place
    excluded_tokens = summary_tokens if excluded >= 0 else 0

    def dropped_tokens(cut: int) -> int:
        """Tokens left out when the exchanges from ``cut`` on are sent."""
        gone = before(cut) - before(anchor)
        return gone - excluded_tokens if anchor <= excluded < cut else gone

    after = whole - before(anchor) - excluded_tokens
    cut = anchor
    note_tokens = 0
    if after > budget - system_tokens - tool_tokens - summary_tokens:
        if summary_reserve:
            summary_tokens = summary_reserve  # the new summary will stand for the old one too
        else:
            note_tokens = NOTE_TOKENS
        available = max(0, budget - system_tokens - tool_tokens - summary_tokens - note_tokens)
        step = max(1, math.ceil(available * STEP_SHARE))
        cut = _cut_at(after - available, step, anchor, newest, path, sizes, dropped_tokens, opens)
    breakdown_without_messages = Breakdown(
        system_tokens, tool_tokens, summary_tokens, note_tokens, 0, budget
    )
    newest_tokens = whole - before(newest) - (excluded_tokens if excluded >= newest else 0)
    reason = TRIMMED
    if cut == newest and newest_tokens > breakdown_without_messages.available:
        reason = OVERFLOW

    # the exchanges from the cut on, broken ones (not the newest) left out; a pi compaction
    # holding only its summary is not sent in place (the newest goes first, an older one
    # is stood for by it)
    sent_positions: list[int] = []
    skipped: list[str] = []
    sent_exchanges = 0
    kept_tokens = 0
    start = cut
    while start < end:
        stop = next((p for p in range(start + 1, end) if opens(p)), end)
        group = [p for p in range(start, stop) if p >= n or _sent_in_place(p, path, sizes)]
        if start < newest and not pairs_by_id([_message_at(p, path, extra) for p in group]):
            skipped += [path[p].id for p in group if p < n]
        else:
            sent_positions += group
            sent_exchanges += 1
            kept_tokens += sum(_tokens_at(p, path, sizes, extra_tokens) for p in group)
        start = stop
    left_out = _exchanges_between(anchor, cut, sizes, path, extra_opens)
    covered = _exchanges_between(0, anchor, sizes, path, extra_opens)
    messages = [_message_at(p, path, extra) for p in sent_positions]
    if excluded in sent_positions:  # the cover's own node: only its merged question
        at = sent_positions.index(excluded)
        messages[at] = {**messages[at], "content": pi_question(messages[at])}
        kept_tokens -= excluded_tokens  # its summary is counted as the summary
    if not summary_reserve:
        note_tokens = NOTE_TOKENS if left_out else 0
    preamble: list[str] = []
    if cover is not None:
        preamble.append(cover.text)
    if left_out and not summary_reserve:
        preamble.append(left_out_note(left_out, _language(messages)))
    if preamble and messages:
        messages[0] = with_texts_first(messages[0], preamble)
    summarise: tuple[Node, ...] = ()
    if summary_reserve and left_out:
        summarise = tuple(_unbroken(path, anchor, min(cut, n), sizes))
    kept_ids = tuple(path[p].id for p in sent_positions if p < n)
    return Selection(
        reason,
        messages,
        kept_ids,
        exchanges,
        sent_exchanges,
        Breakdown(
            system_tokens,
            tool_tokens,
            summary_tokens if cover is not None or summary_reserve else 0,
            note_tokens,
            kept_tokens,
            budget,
            *held,
        ),
        first=kept_ids[0] if kept_ids else None,
        summary=cover.node if cover is not None else None,
        covered=covered,
        left_out=left_out,
        skipped=tuple(skipped),
        anchor=anchor,
        cut=cut,
        summarise=summarise,
    )


def _cut_at(
    target: int,
    step: int,
    anchor: int,
    newest: int,
    path: Sequence[Node],
    sizes: Sizes,
    dropped: Any,
    opens: Any,
) -> int:
    """The first step of the chain from ``anchor`` that leaves out at least ``target``
    tokens, at most ``newest`` (which is always sent).

    The chain: each step is the first exchange start leaving out at least ``step`` more
    tokens than the one before. It depends only on the path up to each step, so the cut
    stays on one step until the path has grown past it, and each move drops at least a
    step. Steps found are remembered (``Sizes.steps``) while they lie on the path."""
    n = len(path)
    cut = anchor
    while cut < newest and dropped(cut) < target:
        remembered = sizes.next_step(path[cut].id if cut < n else None, step)
        facts = sizes.get(remembered) if remembered is not None else None
        if facts is not None and facts.depth <= n and path[facts.depth - 1].id == remembered:
            cut = facts.depth - 1
            continue
        wanted = dropped(cut) + step
        position = bisect_left(range(cut + 1, n + 1), wanted, key=dropped) + cut + 1
        while position < newest and not opens(position):
            position += 1
        if position >= newest:
            return newest
        if cut < n:
            sizes.remember_step(path[cut].id, step, path[position].id)
        cut = position
    return min(cut, newest)


def _newest_cover(
    path: Sequence[Node], sizes: Sizes, compactions: Mapping[str, Node], newest: int
) -> _Cover | None:
    """The compaction that stands for the longest start of the path, if any."""
    n = len(path)
    if not n:
        return None
    found: _Cover | None = None

    def consider(cover: _Cover) -> None:
        nonlocal found
        anchor = min(cover.anchor, newest)
        if anchor <= 0 and cover.excluded < 0:
            return  # it stands for nothing that is sent
        cover = _Cover(anchor, cover.node, cover.text, cover.excluded)
        if found is None or cover.anchor >= found.anchor:
            found = cover

    root = path[0]
    if isinstance((root.meta or {}).get("compacted_from"), str):
        anchor = next((p for p in range(1, n) if sizes.of(path[p]).opens), n)
        consider(_Cover(anchor, root.id, message_text(root.message)))
    pi = sizes.of(path[-1]).pi_compaction
    if pi >= 0:
        kept = (path[pi].meta or {}).get("first_kept")
        facts = sizes.get(kept) if isinstance(kept, str) else None
        position = facts.depth - 1 if facts is not None else pi
        if position >= pi or path[position].id != kept:
            position = pi
        consider(
            _Cover(_start_of(position, path, sizes), path[pi].id, pi_summary(path[pi].message), pi)
        )
    for summarised, compaction in compactions.items():
        facts = sizes.get(summarised)
        if facts is None or facts.depth > n or path[facts.depth - 1].id != summarised:
            continue
        after = facts.depth  # the position after the summarised node
        anchor = n if after >= n else _start_of(after, path, sizes)
        consider(_Cover(anchor, compaction.id, message_text(compaction.message)))
    return found


def _start_of(position: int, path: Sequence[Node], sizes: Sizes) -> int:
    """The start of the exchange holding ``position``."""
    while position > 0 and not sizes.of(path[position]).opens:
        position -= 1
    return position


def _exchanges_between(
    start: int, stop: int, sizes: Sizes, path: Sequence[Node], extra_opens: Sequence[bool]
) -> int:
    """Exchanges beginning in ``[start, stop)`` (the root always begins one)."""
    if stop <= start:
        return 0
    n = len(path)

    def count(position: int) -> int:  # exchanges begun before ``position``
        if position <= 0:
            return 0
        if position <= n:
            return sizes.of(path[position - 1]).exchanges
        return (sizes.of(path[-1]).exchanges if n else 0) + sum(extra_opens[: position - n])

    return count(stop) - count(start)


def _sent_in_place(position: int, path: Sequence[Node], sizes: Sizes) -> bool:
    """Everything but a pi compaction that holds only its summary (which, if it is the
    newest, goes first; if older, the newer summary stands for it)."""
    facts = sizes.of(path[position])
    return facts.pi_compaction != position or facts.opens


def _message_at(position: int, path: Sequence[Node], extra: Sequence[Message]) -> Message:
    n = len(path)
    return path[position].message if position < n else extra[position - n]


def _tokens_at(
    position: int, path: Sequence[Node], sizes: Sizes, extra_tokens: Sequence[int]
) -> int:
    n = len(path)
    return sizes.of(path[position]).tokens if position < n else extra_tokens[position - n]


def _unbroken(path: Sequence[Node], start: int, stop: int, sizes: Sizes) -> list[Node]:
    """The nodes of ``[start, stop)``'s exchanges whose tool calls pair, in order."""
    nodes: list[Node] = []
    position = start
    while position < stop:
        end = next((p for p in range(position + 1, stop) if sizes.of(path[p]).opens), stop)
        group = [path[p] for p in range(position, end) if _sent_in_place(p, path, sizes)]
        if group and pairs_by_id([node.message for node in group]):
            nodes += group
        position = end
    return nodes


def _language(messages: Sequence[Message]) -> Language:
    return path_language(messages)


def with_texts_first(message: Message, texts: Sequence[str]) -> Message:
    """A copy of ``message`` with ``texts`` as text blocks in front of its content (the
    summary and the note of a request; a summary's own request)."""
    content = message.get("content")
    blocks: list[Any] = [{"type": "text", "text": text} for text in texts]
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        blocks += content
    return {**message, "content": blocks}
