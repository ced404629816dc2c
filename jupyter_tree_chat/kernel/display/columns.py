"""Answers side by side in a cell: a fan-out while it streams, and ``%chat compare``.

Both show the same thing, one column per answer (wrapping to rows above three), each
headed by its position and settings, its text rendered as Markdown through the kernel's
safe HTML (``safe_html``: model output never reaches the browser as raw HTML), below
its folded thinking when the model thought, and a footer with tokens, cache reads, cost
(where the model's price is known) and seconds. The compare view adds the differences: a
second set of columns with what each answer says that the others do not marked
(``diff.unique_marks`` on the rendered units), inside a ``<details>`` element so it is
off until opened. No script and no stylesheet: JupyterLab trusts the outputs of the
running session, so nothing here may need either; inline styles only.

The streaming view is one display output updated in place, throttled as a single
reply's is (``output.DisplayReply``): each update re-renders every column (so a
thinking section opened while the answers stream closes again; once they end, it stays).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from IPython.display import display, update_display

from ...conversation.many.variants import Answer, Variant
from ...history.tree import Node, redacted_thinking_count, thinking_text
from ...i18n import _
from ...measures.compare import ComparedAnswer, model_label
from ...measures.diff import unique_marks
from ...measures.models import Price
from ...measures.seen import seen_label
from ...measures.usage import dollars
from ...textview import question_as_typed
from .safe_html import ThinkingSection, comparison_units, markdown_to_html, marked_html

MAX_PER_ROW = 3

_CARD = (
    "border:1px solid var(--jp-border-color2,#ccc);border-radius:4px;padding:4px 10px;"
    "min-width:0;overflow-wrap:anywhere;overflow-x:auto"
)
_SMALL = "font-size:85%;color:var(--jp-ui-font-color2,#666)"


def per_row(count: int) -> int:
    """Columns a row: all of them up to three, then as even as rows of three allow."""
    if count <= MAX_PER_ROW:
        return max(count, 1)
    return math.ceil(count / math.ceil(count / MAX_PER_ROW))


def grid(cards: Sequence[str], css_class: str = "jtc-columns") -> str:
    style = (
        f"display:grid;grid-template-columns:repeat({per_row(len(cards))},minmax(0,1fr));"
        "gap:8px;align-items:start"
    )
    return f'<div class="{css_class}" style="{style}">' + "".join(cards) + "</div>"


def card(title: str, body_html: str, footer: str, *, variant: int) -> str:
    """One column: ``title`` and ``footer`` are plain text (escaped here)."""
    return (
        f'<section class="jtc-answer" data-variant="{variant}" style="{_CARD}">'
        f'<header style="{_SMALL};font-weight:600">{escape(title)}</header>'
        f'<div class="jtc-answer-body">{body_html}</div>'
        f'<footer style="{_SMALL}">{escape(footer)}</footer></section>'
    )


def facts(
    nodes: Sequence[Node], error: str | None = None, prices: Mapping[str, Price] | None = None
) -> str:
    """``claude-sonnet-4-6 · temperature 0.7 · 12 in · 345 out · 1,024 cache read · $0.0052
    · 3.2 s`` (the cost at ``prices``, default models.PRICES, when every reply has one)."""
    replies = [n for n in nodes if n.role == "assistant"]
    if not replies:
        return _("failed: {error}").format(error=error) if error else _("no answer")
    answer = ComparedAnswer(replies[0], tuple(nodes), 1, 1, prices)
    meta = answer.meta
    parts = [model_label(meta)]
    if meta.get("temperature") is not None:
        parts.append(_("temperature {value}").format(value=f"{meta['temperature']:g}"))
    choice = (replies[0].meta or {}).get("choice")
    if isinstance(choice, dict) and answer.usage("output_tokens") is None:
        # a later choice of one request (``n``): the request's usage is with its first
        parts.append(_("tokens counted with 1/{count}").format(count=choice.get("of")))
    else:
        parts.append(_("{tokens} in").format(tokens=_n(answer.usage("input_tokens"))))
        parts.append(_("{tokens} out").format(tokens=_n(answer.usage("output_tokens"))))
    cached = answer.usage("cache_read_input_tokens")
    if cached:
        parts.append(cache_read(cached))
    if answer.cost is not None:
        parts.append(dollars(answer.cost))
    if answer.seconds is not None:
        parts.append(f"{answer.seconds:.1f} s")
    seen = seen_label(replies[-1].meta and replies[-1].meta.get("context"))
    if seen:
        parts.append(seen)
    if error:
        parts.append(_("failed: {error}").format(error=error))
    elif answer.interrupted:
        parts.append(interrupted(meta))
    return " · ".join(parts)


def cache_read(tokens: int | None) -> str:
    """``1,024 cache read``: tokens read from the prompt cache."""
    return _("{tokens} cache read").format(tokens=_n(tokens))


def interrupted(meta: Mapping[str, Any]) -> str:
    """``interrupted (cut short)``, with the stored reason when there is one."""
    reason = meta["error"] if "error" in meta else _("cut short")
    return _("interrupted ({reason})").format(reason=reason)


def _n(value: int | None) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


# -- the fan-out while it streams ---------------------------------------------------------


class _Column:
    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.rounds: list[str] = []  # the text of each finished reply
        self.pieces: list[str] = []  # the reply streaming now
        self.thoughts: list[str] = []  # the thinking of each finished reply
        self.thinking: list[str] = []  # the thinking of the reply streaming now
        self.nodes: list[Node] = []
        self.error: str | None = None
        self.done = False

    @property
    def text(self) -> str:
        return "\n\n".join(p for p in [*self.rounds, "".join(self.pieces)] if p)

    def section(self) -> ThinkingSection:
        """The column's folded thinking (empty, and so not shown, if the model did not think)."""
        thought = "\n\n".join(p for p in [*self.thoughts, "".join(self.thinking)] if p)
        redacted = sum(redacted_thinking_count(node.message) for node in self.nodes)
        interrupted = self.error is not None or any(
            (node.meta or {}).get("interrupted") for node in self.nodes
        )
        state = "streaming" if not self.done else "cut" if interrupted else "done"
        return ThinkingSection(thought, state, redacted)


class FanoutColumns:
    """Every answer of one fan-out, streaming into its own column of one output."""

    def __init__(
        self,
        variants: Sequence[Variant],
        *,
        live: bool,
        throttle: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        self.columns = [_Column(v) for v in variants]
        self.live = live
        self.prices = prices
        self.throttle = throttle
        self._clock = clock
        self._display_id: str | None = None
        self._last_update = float("-inf")
        self.titles = [f"{i + 1}/{len(variants)} · {v.label}" for i, v in enumerate(variants)]

    def start(self) -> None:
        if self.live:
            handle = display(self._bundle(), raw=True, display_id=True)
            self._display_id = handle.display_id if handle is not None else None

    def started(self, i: int) -> None:
        column = self.columns[i]
        if column.pieces:
            column.rounds.append("".join(column.pieces))
        if column.thinking:
            column.thoughts.append("".join(column.thinking))
        column.pieces, column.thinking = [], []

    def delta(self, i: int, text: str) -> None:
        self.columns[i].pieces.append(text)
        self._maybe_update()

    def think(self, i: int, text: str) -> None:
        self.columns[i].thinking.append(text)
        self._maybe_update()

    def ended(self, i: int, node: Node | None, error: str | None) -> None:
        column = self.columns[i]
        if node is not None:
            column.nodes.append(node)
            column.pieces = [node.text] if node.text else []
            thought = thinking_text(node.message)
            column.thinking = [thought] if thought else []
        if error is not None:
            column.error = error
        if error is not None or node is None or (node.meta or {}).get("stop_reason") != "tool_use":
            column.done = True
        self._maybe_update(force=True)

    def finish(self, answers: Sequence[Answer], positions: Sequence[str | None]) -> None:
        """The final state: each column's nodes as stored, headed by its sibling position."""
        for i, (column, answer) in enumerate(zip(self.columns, answers, strict=True)):
            column.nodes = list(answer.nodes)
            column.done = True
            if answer.error is not None:
                column.error = str(answer.error)
            if positions[i]:
                self.titles[i] = f"{positions[i]} · {_answered_label(column)}"
        if self.live:
            self._update()
        else:
            self._print()

    def _maybe_update(self, force: bool = False) -> None:
        now = self._clock()
        if self.live and (force or now - self._last_update >= self.throttle):
            self._update()
            self._last_update = now

    def _update(self) -> None:
        if self._display_id is not None:
            update_display(self._bundle(), raw=True, display_id=self._display_id)

    def _footer(self, column: _Column) -> str:
        if not column.done:
            return "writing…"
        return facts(column.nodes, column.error, self.prices)

    def _bundle(self) -> dict[str, str]:
        cards = []
        for i, (title, column) in enumerate(zip(self.titles, self.columns, strict=True)):
            section = column.section()
            body = (section.html() if section else "") + markdown_to_html(column.text or "*…*")
            cards.append(card(title, body, self._footer(column), variant=i))
        return {"text/html": grid(cards, "jtc-fanout"), "text/plain": self._plain()}

    def _plain(self) -> str:
        return "\n\n".join(
            f"── {title} ──\n{_plain_thinking(column)}{column.text}\n({self._footer(column)})"
            for title, column in zip(self.titles, self.columns, strict=True)
        )

    def _print(self) -> None:
        sys.stdout.write(self._plain() + "\n")
        sys.stdout.flush()


def _answered_label(column: _Column) -> str:
    """The variant's label, naming the model that answered where another was asked for
    (no key: ``offline-teacher (asked for claude-sonnet-4-6)``, never the asked name alone)."""
    label = column.variant.label
    meta = next((n.meta or {} for n in column.nodes if n.role == "assistant"), {})
    if not meta.get("asked_model"):
        return label
    return model_label(meta) + label[len(column.variant.model) :]


def _plain_thinking(column: _Column) -> str:
    section = column.section()
    return f"[{section.summary()}]\n" if section else ""


# -- %chat compare ----------------------------------------------------------------------


def compare_html(question: Node, answers: Sequence[ComparedAnswer]) -> dict[str, str]:
    """The ``%chat compare`` output: the answers rendered side by side, and the
    differences as a second view inside ``<details>`` (closed: switched off)."""
    texts = [a.text for a in answers]
    marks = unique_marks([comparison_units(t) for t in texts])
    titles = [f"{a.position} · {facts(a.nodes, prices=a.prices)}" for a in answers]
    footers = [
        _("{id} · %chat switch {id} continues from it").format(id=a.head.id[:7]) for a in answers
    ]
    plain_cards, diff_cards = [], []
    for i in range(len(answers)):
        plain_cards.append(card(titles[i], markdown_to_html(texts[i]), footers[i], variant=i))
        diff_cards.append(card(titles[i], marked_html(texts[i], marks[i]), footers[i], variant=i))
    asked = question_as_typed(question.message, question.meta)  # as typed, with chips
    about = _("{count} answers to {id}: “{question}”").format(
        count=len(answers), id=question.id[:7], question=_snippet(asked)
    )
    head = f'<p style="{_SMALL}">{escape(about)}</p>'
    summary = _("Differences: what each answer says that the others do not (marked)")
    differences = (
        f'<details class="jtc-differences"><summary>{escape(summary)}</summary>'
        + grid(diff_cards, "jtc-diff-columns")
        + "</details>"
    )

    plain = "\n\n".join(
        f"── {titles[i]} ──\n{texts[i]}\n({footers[i]})" for i in range(len(answers))
    )
    body = head + grid(plain_cards, "jtc-compare-columns") + differences
    return {"text/html": f'<div class="jtc-compare">{body}</div>', "text/plain": plain}


def _snippet(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def show_compare(question: Node, answers: Sequence[ComparedAnswer]) -> None:
    display(compare_html(question, answers), raw=True)
