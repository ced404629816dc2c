"""What an experiment cell shows: a progress bar while its rows run, then a compact grid.

A thousand streaming columns would be unreadable and heavy, so an experiment streams no
text to the cell: one display output holds a progress bar (``n of N answers``, failures
counted), updated in place at most every ``throttle`` seconds, and is replaced at the end
(or at Ctrl-C, with what arrived) by the grid: a line per answer with the row's inputs as
chips, the answer's first line, model, tokens, cost and seconds, and the node id that
``%chat switch`` takes. A failed answer's line is marked. Every value from a row or a
model is escaped: it reaches the browser as text, never as markup. Where the widget is
loaded (``interactive``: sessions.grid_hook), the grid is the clickable control
(widget/experiment_grid.py) and this static grid the output's fallback beside it.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from IPython.display import display, update_display

from ..conversation.events import (
    Event,
    ExperimentEnded,
    ExperimentProgress,
    ExperimentStarted,
)
from ..conversation.variants import Answer
from ..history.experiment_record import experiment_of
from ..history.tree import Node, SessionTree
from ..i18n import _
from ..measures.compare import (
    ComparedAnswer,
    experiment_questions,
    model_label,
    sibling_answers,
)
from ..measures.diff import unique_marks
from ..measures.models import Price
from ..measures.usage import dollars
from .columns import card, facts, grid
from .safe_html import comparison_units, markdown_to_html, marked_html

log = logging.getLogger(__name__)

MAX_GRID_LINES = 200
"""The grid's most lines in a cell; ``experiment_frame()`` has every answer."""

FIRST_LINE_CHARS = 120

_SMALL = "font-size:85%;color:var(--jp-ui-font-color2,#666)"
_CELL = "padding:2px 6px;border-bottom:1px solid var(--jp-border-color2,#ddd);vertical-align:top"
_CHIP = (
    "display:inline-block;margin:0 4px 2px 0;padding:0 6px;border-radius:8px;"
    "background:var(--jp-layout-color2,#eee);white-space:nowrap;max-width:16em;"
    "overflow:hidden;text-overflow:ellipsis"
)
_FAILED = "color:var(--jp-error-color1,#b00)"


def progress_bundle(done: int, total: int, failed: int) -> dict[str, str]:
    """``<progress>`` and ``12 of 40 answers · 1 failed``."""
    words = _("{done} of {total} answers").format(done=done, total=total)
    if failed:
        words += " · " + _("{failed} failed").format(failed=failed)
    html = (
        f'<div class="jtc-experiment-progress"><progress value="{done}" max="{max(total, 1)}" '
        f'style="width:20em;vertical-align:middle"></progress> '
        f'<span style="{_SMALL}">{escape(words)}</span></div>'
    )
    return {"text/html": html, "text/plain": f"[{done}/{total}] {words}"}


class GridLine:
    """One answer of the grid: its row, version, answer and facts."""

    def __init__(
        self, tree: SessionTree, answer: Answer, prices: Mapping[str, Price] | None
    ) -> None:
        asked = answer.question_id
        question = tree.get(asked) if asked is not None and asked in tree else None
        about = experiment_of(question) if question is not None else None
        self.row: dict[str, Any] = dict((about or {}).get("row") or {})
        self.index = (about or {}).get("index")
        self.version = (about or {}).get("version")
        self.error = str(answer.error) if answer.error is not None else None
        self.interrupted = answer.interrupted
        self.head = answer.head
        self.compared = (
            ComparedAnswer(answer.nodes[0], tuple(answer.nodes), 1, 1, prices)
            if answer.nodes
            else None
        )
        self.model = answer.variant.model

    @property
    def first_line(self) -> str:
        text = self.compared.text if self.compared is not None else ""
        line = next((piece.strip() for piece in text.splitlines() if piece.strip()), "")
        return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"

    def facts(self) -> list[str]:
        """model, tokens, cost, seconds (what is known of them)."""
        compared = self.compared
        if compared is None:
            return [self.model]
        parts = [model_label(compared.meta)]
        into, out = compared.usage("input_tokens"), compared.usage("output_tokens")
        if into is not None or out is not None:
            parts.append(_("{into} in · {out} out").format(into=_n(into), out=_n(out)))
        if compared.cost is not None:
            parts.append(dollars(compared.cost))
        if compared.seconds is not None:
            parts.append(f"{compared.seconds:.1f} s")
        return parts

    @property
    def state(self) -> str:
        if self.error is not None:
            return _("failed: {error}").format(error=self.error)
        if self.interrupted or self.compared is None:
            return _("interrupted") if self.compared is not None else _("no answer")
        return ""


def grid_bundle(lines: Sequence[GridLine], shown: int = MAX_GRID_LINES) -> dict[str, str]:
    """The compact grid (HTML, and the same as plain text)."""
    html_rows, plain = [], []
    versions = {line.version for line in lines}
    for line in lines[:shown]:
        chips = "".join(
            f'<span class="jtc-chip" style="{_CHIP}" title="{escape(str(value))}">'
            f"{escape(name)}: {escape(_value(value))}</span>"
            for name, value in line.row.items()
        )
        state = line.state
        marked = line.error is not None or line.compared is None
        answer = escape(line.first_line) + (
            f' <span class="jtc-failed" style="{_FAILED}">{escape(state)}</span>' if state else ""
        )
        version = f"v{line.version}" if line.version is not None and len(versions) > 1 else ""
        node = line.head.id[:7] if line.head is not None else ""
        row_class = "jtc-grid-line jtc-grid-failed-line" if marked else "jtc-grid-line"
        html_rows.append(
            f'<tr class="{row_class}" data-node="{escape(node)}">'
            f'<td style="{_CELL};{_SMALL}">{_number(line)}{escape(version)}</td>'
            f'<td style="{_CELL}">{chips}</td><td style="{_CELL}">{answer}</td>'
            f'<td style="{_CELL};{_SMALL}">{escape(" · ".join(line.facts()))}</td>'
            f'<td style="{_CELL};{_SMALL}"><code>{escape(node)}</code></td></tr>'
        )
        inputs = ", ".join(f"{k}={_value(v)}" for k, v in line.row.items())
        plain.append(
            f"{_number(line)}{version} [{inputs}] {line.first_line}"
            + (f" ({state})" if state else "")
            + f" · {' · '.join(line.facts())}"
            + (f" · {node}" if node else "")
        )
    more = len(lines) - shown
    tail = ""
    if more > 0:
        said = _("… {count} more; jupyter_tree_chat.experiment_frame() has every answer").format(
            count=more
        )
        tail = f'<p style="{_SMALL}">{escape(said)}</p>'
        plain.append(said)
    head = _("row · inputs · answer · model, tokens, cost, seconds · id (`%chat switch ID`)")
    table = (
        f'<table class="jtc-experiment-grid" style="border-collapse:collapse;font-size:90%">'
        f'<thead><tr><th colspan="5" style="{_CELL};{_SMALL};text-align:left">'
        f"{escape(head)}</th></tr></thead><tbody>{''.join(html_rows)}</tbody></table>"
    )
    html = f'<div class="jtc-experiment">{table}{tail}</div>'
    return {"text/html": html, "text/plain": "\n".join(plain)}


def _number(line: GridLine) -> str:
    return f"{line.index + 1} " if isinstance(line.index, int) else ""


def _value(value: Any) -> str:
    text = "" if value is None else str(value)
    flat = " ".join(text.split())
    return flat if len(flat) <= 40 else flat[:39] + "…"


def _n(value: int | None) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


class ExperimentView:
    """Subscribes to the session while an experiment runs: the progress bar, then the grid."""

    def __init__(
        self,
        tree: Callable[[], SessionTree],
        prices: Mapping[str, Price] | None,
        *,
        live: bool,
        throttle: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        interactive: Callable[[str, dict[str, str]], dict[str, Any]] | None = None,
    ) -> None:
        self._interactive = interactive
        """``(question id, static grid) -> bundle``: the clickable grid (a widget view) with
        the static one beside it; None where there is no widget (sessions.grid_hook)."""
        self._tree = tree
        self.prices = prices
        self.live = live
        self.throttle = throttle
        self._clock = clock
        self._display_id: str | None = None
        self._last = float("-inf")
        self.lines: list[GridLine] = []

    def on_event(self, event: Event) -> None:
        if isinstance(event, ExperimentStarted):
            self._show(progress_bundle(0, len(event.variants), 0))
        elif isinstance(event, ExperimentProgress):
            now = self._clock()
            if event.done == event.total or now - self._last >= self.throttle:
                self._last = now
                self._update(progress_bundle(event.done, event.total, event.failed))
        elif isinstance(event, ExperimentEnded):
            tree = self._tree()
            self.lines = [GridLine(tree, answer, self.prices) for answer in event.answers]
            self.lines.sort(key=lambda line: (line.version or 0, line.index or 0))
            bundle = grid_bundle(self.lines)
            if self._interactive is not None and self.live and event.question_ids:
                try:
                    bundle = self._interactive(event.question_ids[0], bundle)
                except Exception:  # a widget that cannot be made: the static grid stays
                    log.exception("the experiment grid widget failed")
            if self._display_id is not None:
                self._update(bundle)
            else:
                self._show(bundle)

    def _show(self, bundle: dict[str, str]) -> None:
        if self.live:
            handle = display(bundle, raw=True, display_id=True)
            self._display_id = handle.display_id if handle is not None else None
        elif "jtc-experiment-progress" not in bundle["text/html"]:
            sys.stdout.write(bundle["text/plain"] + "\n")
            sys.stdout.flush()

    def _update(self, bundle: dict[str, str]) -> None:
        if self._display_id is not None:
            update_display(bundle, raw=True, display_id=self._display_id)


# -- %chat compare --versions ------------------------------------------------------------

MAX_COMPARED_ROWS = 50


def versions_html(
    tree: SessionTree, questions: Sequence[Node], prices: Mapping[str, Price] | None
) -> dict[str, str]:
    """Rows × versions: for each row, its versions' answers side by side (the first
    answer of each), and the differences between them inside a closed ``<details>``."""
    by_row: dict[int, dict[int, Node]] = {}
    templates: dict[int, str] = {}
    for question in questions:
        about = experiment_of(question)
        if about is None:
            continue
        by_row.setdefault(about["index"], {}).setdefault(about["version"], question)
        templates.setdefault(about["version"], about["template"])
    sections: list[str] = []
    plain: list[str] = []
    heads = [f"<li><b>v{v}</b> {escape(t)}</li>" for v, t in sorted(templates.items())]
    plain.extend(f"v{v}: {t}" for v, t in sorted(templates.items()))
    for index in sorted(by_row)[:MAX_COMPARED_ROWS]:
        versions = by_row[index]
        row = (experiment_of(next(iter(versions.values()))) or {}).get("row") or {}
        answers = []
        for version in sorted(versions):
            found = sibling_answers(tree, versions[version].id, prices)
            answers.append((version, found[0] if found else None))
        texts = [a.text if a is not None else "" for _v, a in answers]
        marks = unique_marks([comparison_units(t) for t in texts])
        titles = [
            f"v{v} · {facts(a.nodes, prices=prices)}"
            if a is not None
            else f"v{v} · " + _("no answer")
            for v, a in answers
        ]
        footers = [a.head.id[:7] if a is not None else "" for _v, a in answers]
        plain_cards = [
            card(titles[i], markdown_to_html(texts[i]), footers[i], variant=i)
            for i in range(len(answers))
        ]
        diff_cards = [
            card(titles[i], marked_html(texts[i], marks[i]), footers[i], variant=i)
            for i in range(len(answers))
        ]
        chips = "".join(
            f'<span class="jtc-chip" style="{_CHIP}">{escape(k)}: {escape(_value(v))}</span>'
            for k, v in row.items()
        )
        summary = _("Differences: what each version says that the others do not (marked)")
        sections.append(
            f'<section class="jtc-version-row" data-row="{index}">'
            f'<p style="{_SMALL}">{index + 1} {chips}</p>'
            + grid(plain_cards, "jtc-compare-columns")
            + f'<details class="jtc-differences"><summary>{escape(summary)}</summary>'
            + grid(diff_cards, "jtc-diff-columns")
            + "</details></section>"
        )
        inputs = ", ".join(f"{k}={_value(v)}" for k, v in row.items())
        plain.append(f"── {index + 1} [{inputs}] ──")
        plain.extend(f"{titles[i]}\n{texts[i]}" for i in range(len(answers)))
    more = len(by_row) - MAX_COMPARED_ROWS
    if more > 0:
        said = _("… {count} more rows; jupyter_tree_chat.experiment_frame() has them all").format(
            count=more
        )
        sections.append(f'<p style="{_SMALL}">{escape(said)}</p>')
        plain.append(said)
    html = (
        f'<div class="jtc-compare jtc-versions"><ul style="{_SMALL}">{"".join(heads)}</ul>'
        + "".join(sections)
        + "</div>"
    )
    return {"text/html": html, "text/plain": "\n".join(plain)}


def version_count(questions: Sequence[Node]) -> int:
    return len({(experiment_of(q) or {}).get("version") for q in questions} - {None})


def show_versions(session: Any, ref: str | None) -> None:
    """``%chat compare --versions [ID]``: the experiment of ``ref`` (default: the current
    question's), rows × versions; a ``UsageError`` line if it has one version."""
    from IPython.core.error import UsageError

    questions = experiment_questions(session.tree, ref)
    count = version_count(questions)
    if count < 2:
        raise UsageError(
            _(
                "%chat compare --versions: this question is in no experiment with two versions; "
                "edit a %%chat --over cell's question and run it again for a second"
            )
            if count == 0
            else _(
                "%chat compare --versions: the experiment has 1 version; edit its cell's question "
                "and run it again for a second"
            )
        )
    display(versions_html(session.tree, questions, session.prices), raw=True)
