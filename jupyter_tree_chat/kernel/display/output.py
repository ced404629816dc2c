"""How a turn looks in a cell: streamed Markdown (as safe HTML), a footer, one-line notices.

A reply streams into one display output updated in place. Updates are throttled: each
one resends the whole text to the front end, so a fast stream (thousands of deltas a
second) would otherwise flood the websocket and the browser; with ``throttle`` seconds
between updates, plus a final one, the cost stays flat. In a terminal IPython (no
kernel, no display ids) the deltas are printed as they come instead.

The model's thinking streams into a folded "Thinking" section above the answer: a
``<details>`` element, which opens on a click with no script, holding the thinking
rendered like the answer (safe HTML).

The footer is one line: node id, model, tokens (with cache reads), cost, how full the
context window is (with a hint to compact past 80%), how many exchanges of the path the
request kept when a context budget left some out (``saw 12 of 40 exchanges``), sibling
position.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from html import escape
from typing import Any, Protocol

from IPython.display import display, update_display

from ...conversation.events import (
    Event,
    FanoutEnded,
    FanoutStarted,
    Notice,
    ReplyDelta,
    ReplyEnded,
    ReplyStarted,
    ReplyThinking,
)
from ...conversation.session import Session
from ...history.tree import Node, redacted_thinking_count, tool_shown_name, tool_uses
from ...i18n import _
from ...measures.compare import model_label
from ...measures.seen import seen_label
from ...measures.usage import dollars, meter, meter_label, node_cost
from .columns import FanoutColumns, cache_read, interrupted
from .safe_html import ThinkingSection, markdown_to_html


def interrupted_mark() -> str:
    """Under a reply the stop button cut short, in the reader's language."""
    return _("*[cut short: what arrived is kept]*")


INTERRUPTED_MARK = interrupted_mark()  # as written (English): what a reply ends with


class ReplyView(Protocol):
    """Where one reply's text goes as it streams."""

    def start(self) -> None: ...

    def delta(self, text: str) -> None: ...

    def think(self, text: str) -> None: ...

    def end(self, interrupted: bool = False, redacted: int = 0) -> None: ...

    @property
    def text(self) -> str: ...


class DisplayReply:
    """A Markdown display output, updated in place at most every ``throttle`` seconds.

    When the model thinks first, the output shown at the start holds the folded thinking,
    and the answer gets an output of its own below it once its first text arrives. The
    thinking then stops changing, so a click that opens it stays open while the answer
    streams (an update of an output redraws it, closing what was open).
    """

    def __init__(self, throttle: float = 0.1, clock: Callable[[], float] = time.monotonic):
        self.throttle = throttle
        self._clock = clock
        self._pieces: list[str] = []
        self._thinking: list[str] = []
        self._answer_id: str | None = None
        self._thinking_id: str | None = None
        self._last_update = 0.0
        self._dirty = False

    @property
    def text(self) -> str:
        return "".join(self._pieces)

    @property
    def thinking(self) -> str:
        return "".join(self._thinking)

    def start(self) -> None:
        self._answer_id = self._new_output()

    def think(self, text: str) -> None:
        if not self._pieces and not self._thinking:  # thinking first: it takes that output
            self._thinking_id, self._answer_id = self._answer_id, None
        self._thinking.append(text)
        self._changed()

    def delta(self, text: str) -> None:
        if self._thinking_id is not None and self._answer_id is None:
            # the answer begins: the thinking is whole, and the answer goes below it
            self._show(self._thinking_id, "", ThinkingSection(self.thinking))
            self._answer_id = self._new_output()
        self._pieces.append(text)
        self._changed()

    def end(self, interrupted: bool = False, redacted: int = 0) -> None:
        text = self.text
        mark = interrupted_mark()
        shown = f"{text}\n\n{mark}" if text else mark
        final = shown if interrupted else text
        if self._thinking_id is not None and self._answer_id is None:  # no answer came
            state = "cut" if interrupted else "done"
            self._show(self._thinking_id, final, ThinkingSection(self.thinking, state, redacted))
        else:
            if self._thinking_id is not None and redacted:
                self._show(self._thinking_id, "", ThinkingSection(self.thinking, "done", redacted))
            if interrupted or self._dirty or not text or redacted:
                state = "cut" if interrupted else "done"
                self._show(self._answer_id, final, self._inline_section(state, redacted))
        self._dirty = False

    def _changed(self) -> None:
        self._dirty = True
        now = self._clock()
        if now - self._last_update < self.throttle:
            return
        self._last_update = now
        self._dirty = False
        if self._answer_id is None:  # still thinking: only the thinking changes
            self._show(self._thinking_id, "", ThinkingSection(self.thinking, "streaming"))
        else:
            self._show(self._answer_id, self.text, self._inline_section("streaming"))

    def _inline_section(self, state: str, redacted: int = 0) -> ThinkingSection | None:
        """Thinking that came after the answer began has no output of its own."""
        if self._thinking_id is not None or not (self._thinking or redacted):
            return None
        return ThinkingSection(self.thinking, state, redacted)

    def _new_output(self) -> str | None:
        handle = display(_bundle("*…*", ""), raw=True, display_id=True)
        self._last_update = float("-inf")  # the first piece shows at once
        return handle.display_id if handle is not None else None

    def _show(self, display_id: str | None, text: str, section: ThinkingSection | None) -> None:
        if display_id is not None:
            update_display(_bundle(text, text, section), raw=True, display_id=display_id)


class PrintReply:
    """For a terminal IPython: print each delta; nothing to update in place there."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._thinking = False

    @property
    def text(self) -> str:
        return "".join(self._pieces)

    def start(self) -> None:
        pass

    def delta(self, text: str) -> None:
        if self._thinking:
            sys.stdout.write("\n\n")
            self._thinking = False
        self._pieces.append(text)
        sys.stdout.write(text)
        sys.stdout.flush()

    def think(self, text: str) -> None:
        if not self._thinking:
            sys.stdout.write("Thinking: ")
            self._thinking = True
        sys.stdout.write(text)
        sys.stdout.flush()

    def end(self, interrupted: bool = False, redacted: int = 0) -> None:
        sys.stdout.write(f"\n{interrupted_mark()}\n" if interrupted else "\n")

        sys.stdout.flush()


def _bundle(markdown: str, plain: str, thinking: ThinkingSection | None = None) -> dict[str, str]:
    """Safe HTML rendered here, never raw Markdown: the browser trusts this output."""
    html = markdown_to_html(markdown)
    if thinking:
        html = thinking.html() + html
        plain = f"[{thinking.summary()}]\n{plain}" if plain else f"[{thinking.summary()}]"
    return {"text/html": html, "text/plain": plain}


def flush_waiting_streams() -> None:
    """Flush stdout and stderr if they hold text not yet sent, and only then.

    ipykernel's flush is a round trip to its I/O thread (two, with stderr) even when
    nothing waits; its streams say whether anything does (``_flush_pending``). A stream
    that does not say is flushed."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "_flush_pending", True) or getattr(
            stream, "_subprocess_flush_pending", False
        ):
            stream.flush()


@contextlib.contextmanager
def quick_displays(shell: Any) -> Iterator[None]:
    """While a turn runs, each display (the reply, its updates, the footer, the control)
    flushes the text streams only when they hold something, instead of always.

    ipykernel flushes stdout and stderr before every display so that printed text comes
    first; that still holds (``flush_waiting_streams``), without a wait for its I/O
    thread per display when nothing was printed."""
    publisher = getattr(shell, "display_pub", None)
    if publisher is None or not callable(getattr(publisher, "_flush_streams", None)):
        yield
        return
    if "_flush_streams" in vars(publisher):  # already quick (a turn inside a turn)
        yield
        return
    publisher._flush_streams = flush_waiting_streams
    try:
        yield
    finally:
        del publisher._flush_streams


def show_markdown(markdown: str, plain: str | None = None) -> None:
    """Display a Markdown block (with a plain-text fallback)."""
    display(_bundle(markdown, markdown if plain is None else plain), raw=True)


def show_html(html: str, plain: str) -> None:
    """HTML built here from escaped text (a table), with its plain-text form."""
    display({"text/html": html, "text/plain": plain}, raw=True)


def show_svg(svg: str, plain: str) -> None:
    """An SVG drawing as a cell output (built from text nodes only: see picture/svg.py)."""
    display({"image/svg+xml": svg, "text/plain": plain}, raw=True)


def notice_line(message: str, level: str = "info") -> None:
    """One line for the user: errors and warnings on stderr (red in Jupyter), info on stdout."""
    stream = sys.stderr if level in ("error", "warning") else sys.stdout
    print(message, file=stream)
    stream.flush()


def tool_call_lines(node: Node | None) -> list[str]:
    """``tool call: git:git_log {"repo_path": "."}``: a line for each tool a reply asks
    for, by the name a person knows (an MCP tool's ``server:tool``)."""
    if node is None:
        return []
    lines = []
    for block in tool_uses(node.message):
        arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
        if len(arguments) > 200:
            arguments = arguments[:199] + "…"
        lines.append(
            _("tool call: {name} {arguments}").format(
                name=tool_shown_name(block, node.meta), arguments=arguments
            )
        )
    return lines


class TurnOutput:
    """Subscribes to a session for one action and renders its events in the cell.

    Each reply (a tool loop has several) gets its own view; notices become lines. A
    fan-out's answers (events with a ``variant``) go to one ``FanoutColumns`` instead.
    """

    def __init__(
        self,
        session: Session,
        make_view: Callable[[], ReplyView],
        make_columns: Callable[[FanoutStarted], FanoutColumns] | None = None,
    ) -> None:
        self.session = session
        self._make_view = make_view
        self._make_columns = make_columns or (
            lambda started: FanoutColumns(started.variants, live=False, prices=session.prices)
        )
        self.views: list[ReplyView] = []
        self.errors: list[str] = []
        self.columns: FanoutColumns | None = None
        self._current: ReplyView | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def __enter__(self) -> TurnOutput:
        self._unsubscribe = self.session.subscribe(self.on_event)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._current is not None:  # interrupted before ReplyEnded
            self._current.end(interrupted=True)
            self._current = None
        if self._unsubscribe is not None:
            self._unsubscribe()

    def on_event(self, event: Event) -> None:
        if getattr(event, "variant", None) is not None or isinstance(
            event, (FanoutStarted, FanoutEnded)
        ):
            self._on_fanout_event(event)
        elif isinstance(event, ReplyDelta):  # the hot path
            if self._current is not None:
                self._current.delta(event.text)
        elif isinstance(event, ReplyThinking):
            if self._current is not None:
                self._current.think(event.text)
        elif isinstance(event, ReplyStarted):
            self._current = self._make_view()
            self.views.append(self._current)
            self._current.start()
        elif isinstance(event, ReplyEnded):
            if self._current is not None:
                node = event.node
                cut = (
                    event.error is not None
                    or node is None
                    or bool(node.meta and node.meta.get("interrupted"))
                )
                redacted = redacted_thinking_count(node.message) if node is not None else 0
                self._current.end(interrupted=cut, redacted=redacted)
                self._current = None
                for line in tool_call_lines(node):
                    notice_line(line)
        elif isinstance(event, Notice):
            if event.level == "error":
                self.errors.append(event.message)  # shown once, as the cell's error
            else:
                notice_line(event.message, event.level)

    def _on_fanout_event(self, event: Event) -> None:
        if isinstance(event, FanoutStarted):
            self.columns = self._make_columns(event)
            self.columns.start()
            return
        columns = self.columns
        if columns is None:
            return
        if isinstance(event, ReplyDelta) and event.variant is not None:
            columns.delta(event.variant, event.text)
        elif isinstance(event, ReplyThinking) and event.variant is not None:
            columns.think(event.variant, event.text)
        elif isinstance(event, ReplyStarted) and event.variant is not None:
            columns.started(event.variant)
        elif isinstance(event, ReplyEnded) and event.variant is not None:
            error = None if event.error is None else str(event.error)
            columns.ended(event.variant, event.node, error)
        elif isinstance(event, FanoutEnded):
            tree = self.session.tree
            positions = [
                str(tree.sibling_position(a.head.id))
                if a.head is not None and a.head.id in tree
                else None
                for a in event.answers
            ]
            columns.finish(event.answers, positions)


# -- the footer ----------------------------------------------------------------------------


def footer(session: Session, node: Node) -> str:
    """``a1b2c3d · claude-sonnet-4-6 · 12 in · 345 out · $0.0052 · context 1% of 1M ·
    reply 2/2``."""
    return " · ".join(text for text, _shown in footer_parts(session, node))


def batch_price_words(session: Session, node: Node) -> str | None:
    """``batch answer · half price`` for a batch's answer; for the reply that follows a
    batch answer's tool call (asked outside the batch), that it was priced as usual."""
    batch = (node.meta or {}).get("batch")
    if isinstance(batch, dict):
        share = batch.get("price")
        if isinstance(share, (int, float)) and share == 0.5:
            return _("batch answer · half price")
        return _("batch answer")
    tree = session.tree
    results = tree.get(node.parent_id) if node.parent_id and node.parent_id in tree else None
    if results is None or not (results.meta or {}).get("tool_results"):
        return None
    asked = tree.get(results.parent_id) if results.parent_id and results.parent_id in tree else None
    if asked is not None and "batch" in (asked.meta or {}):
        return _("after a batch answer's tool call: asked outside the batch, standard price")
    return None


def footer_parts(session: Session, node: Node) -> list[tuple[str, bool]]:
    """The footer's parts, each with whether the turn control shows it too (the model,
    the tokens, the cost, the positions), so a live page can show those once."""
    meta = node.meta or {}
    parts = [(node.id[:7], False)]
    if meta.get("model"):
        parts.append((model_label(meta), True))
    usage: dict[str, Any] = meta.get("usage") or {}
    if usage:
        parts.append((_("{tokens} in").format(tokens=_n(usage.get("input_tokens"))), True))
        parts.append((_("{tokens} out").format(tokens=_n(usage.get("output_tokens"))), True))
        if usage.get("cache_read_input_tokens"):
            parts.append((cache_read(usage["cache_read_input_tokens"]), False))
        if usage.get("cache_creation_input_tokens"):
            written = _n(usage["cache_creation_input_tokens"])
            parts.append((_("{tokens} cache write").format(tokens=written), False))
        cost = node_cost(node, session.prices)
        if cost is not None:
            parts.append((dollars(cost), True))
        priced = batch_price_words(session, node)
        if priced:
            parts.append((priced, False))
    if meta.get("interrupted"):
        parts.append((interrupted(meta), False))
    parts.append((context_part(session, node), False))
    seen = seen_label(meta.get("context"))
    if seen:
        parts.append((seen, False))
    tree = session.tree
    position = tree.sibling_position(node.id)
    parts.append((_("reply {position}").format(position=position), True))
    if node.parent_id is not None:
        question = tree.sibling_position(node.parent_id)
        if question.count > 1:
            parts.append((_("question {position}").format(position=question), True))
    label = session.labels.get(node.id)
    if label:
        parts.append((_("label {label}").format(label=repr(label)), False))
    return parts


def footer_html(session: Session, node: Node) -> str:
    """The footer as HTML for the cell: the parts the turn control shows too are marked
    (``jtc-in-control``), and the line names its node (``data-node``): a live control
    showing that reply folds them away (labextension/src/panel/footer.ts), while the
    saved output, a renderer without widgets and nbconvert's HTML keep them all."""
    pieces = []
    for k, (text, shown) in enumerate(footer_parts(session, node)):
        piece = escape(text if k == 0 else f" · {text}")
        pieces.append(f'<span class="jtc-in-control">{piece}</span>' if shown else piece)
    return f'<sub class="jtc-footer" data-node="{escape(node.id)}">{"".join(pieces)}</sub>'


def context_part(session: Session, node: Node) -> str:
    """``context 42% of 200k``, with the way out once the path fills 80% of the window."""
    model = (node.meta or {}).get("model") or session.settings.model
    reading = meter(session.tree.path_nodes(node.id), model=model, windows=session.context_windows)
    label = meter_label(reading)
    return _("{label}: `%chat compact` makes room").format(label=label) if reading.full else label


def show_footer(line: str, html: str | None = None) -> None:
    """One footer line under the reply (``html``: its marked-up form, ``footer_html``)."""
    display({"text/html": html or f"<sub>{escape(line)}</sub>", "text/plain": line}, raw=True)


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"
