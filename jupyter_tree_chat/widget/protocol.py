"""What the widget sends to the browser, kept small so a 10,000-node tree stays fast.

The browser never gets the whole tree as Python sees it. It gets a *summary* once (one
short row per node, the synced ``nodes`` trait) and afterwards only small custom
messages: a new row when a node is added, streamed text while a reply is written, and
a node's full text when the user opens it. Everything here is pure (no widget, no
kernel) so the shapes can be tested and measured on their own.

Kernel -> browser custom messages (``t`` is the type)::

    {"t": "n", "r": ROW, "i": I, "s": 1, "m": {"context": C}}
                                       a node was added as row I (panel; -1 in a turn
                                       control); "s": its text is the streamed text, and
                                       "m" (only where a budget left something out of
                                       its request) its meta.context, so an open view
                                       greys that as one opened later does
    {"t": "rows", "from": I, "rows": [ROW, ...]}  the rows from I on (answer to ``rows``)
    {"t": "s", "p": PARENT}            a reply started under user node PARENT
    {"t": "d", "x": TEXT}              more text for the reply being streamed (coalesced)
    {"t": "k", "x": TEXT}              more of the model's thinking for that reply (coalesced;
                                       all of it arrives before the reply's first "d")
    {"t": "e", "p": PARENT, "err": E}  the reply ended (E: the error line, or absent)
    {"t": "texts", "texts": {ID: {"text": ..., "meta": {...}, ...}}}
                                       answer to a text request (``text_payload``: also
                                       "media", "thinking", "redacted" and "cell", each
                                       only when there is some)
    {"t": "ack", "req": N}             the kernel picked up action N (it was not busy)
    {"t": "done", "req": N, "err": E, "busy": 1}
                                       action N finished (E: the error line, or absent;
                                       "busy": it was refused, a reply is being written)
    {"t": "note", "level": L, "x": TEXT}  a session notice

Browser -> kernel: ``{"a": ACTION, "req": N, ...}`` with ACTION one of ``retry`` (id),
``edit`` (id, text), ``switch`` (id), ``label`` (id, label), ``hide`` (id, hidden:
false to show the branch again), ``text`` (ids), ``rows`` (from), ``find`` (q, regex,
case, role, all: a question, answered by ``{"t": "found", ...}`` alone, with no
``ack`` or ``done``; or held: the text index, answered by ``{"t": "held", ...}``),
``language`` (code: the language JupyterLab shows, ``zh-CN``,
sent by each view as it renders; no answer: the kernel speaks it from then on, see
``i18n``) and ``export`` (format ``html``),
both in ``sharing.py``. A view asks for
``rows`` once when it starts, and again if a row's number shows it missed one: messages
sent before the front end had loaded are lost, and a panel displayed just before a
``%%chat`` cell would otherwise miss that cell's question.

A ROW is ``[id, parent_index, role, head, meta]``: ``parent_index`` is the parent's
position in the rows (-1 for a root), ``role`` is ``u`` (user), ``a`` (assistant) or
``t`` (tool results), ``head`` the first ``HEAD_CHARS`` characters of the text as plain
text (Markdown syntax taken out: see ``summary``; a question as typed, each chip between
``CHIP_START`` and ``CHIP_END``: see ``typed_head``), and ``meta``
``[model, input_tokens, output_tokens, duration_ms, interrupted]`` for replies
(``None`` otherwise), with a sixth item, the reply's cost as the footer writes it
(``"$0.0135"``), when its model has a price.

Every view has a synced ``session_state`` trait: a reference (``IPY_MODEL_<id>``) to its
session's ``SessionState`` (``base``), one plain widget model per session whose ``busy``
says a reply is being written; every view of the session reads it (views saved before
it have a ``busy`` trait of their own). A turn control streams (``s``, ``d``, ``e``) only
a reply its own action started.

The panel also has a synced ``context`` trait: how full the model's context window is on
the current branch, ``{"tokens", "window", "exact"}`` (``context_reading``; ``window`` is
``None`` for a model whose window is not known).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..conversation.session import Session
from ..history.plain import might_be_markdown, plain_text, without_cut_openers
from ..history.tree import (
    Node,
    message_text,
    node_kind,
    redacted_thinking_count,
    thinking_text,
    tool_shown_name,
)
from ..measures.compare import model_label
from ..measures.models import PRICES, Price
from ..measures.usage import dollars, node_cost
from ..textview import Chip, TypedPiece, typed_pieces

HEAD_CHARS = 80
DELTA_INTERVAL_S = 0.05
"""A streamed-text message leaves at most this often..."""
DELTA_MIN_CHARS = 32
"""...and only with at least this much text, unless ``DELTA_MAX_WAIT_S`` has passed."""
DELTA_MAX_WAIT_S = 0.2

Row = list[Any]


def role_code(node: Node) -> str:
    """A row's role as the browser reads it: ``u``, ``a`` or ``t`` (see ``node_kind``)."""
    return node_kind(node)[0]


def display_text(message: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> str:
    """The text a person reads for a message: its text, plus a line per tool block.

    Tool calls and results are not text blocks, so ``message_text`` leaves them out;
    the panel still has to show that they happened.
    """
    text = message_text(message)
    content = message.get("content")
    if not isinstance(content, list):
        return text
    lines = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_use":
            args = json.dumps(block.get("input", {}), ensure_ascii=False)
            lines.append(f"`tool call: {tool_shown_name(block, meta)}({args[:200]})`")
        elif kind == "tool_result":
            body = block.get("content")
            shown = body if isinstance(body, str) else message_text({"content": body})
            lines.append(f"`tool result: {shown[:200]}`")
    return "\n\n".join(p for p in [text, *lines] if p)


def head(text: str) -> str:
    """The first line-ish of a text, whitespace collapsed, ``…`` when cut."""
    flat = " ".join(text[: HEAD_CHARS * 4].split())
    return (
        flat if len(flat) <= HEAD_CHARS and len(text) <= HEAD_CHARS * 4 else flat[:HEAD_CHARS] + "…"
    )


def summary(text: str) -> str:
    """``head`` of the plain text (see ``plain_text``): what a tree row shows."""
    window = HEAD_CHARS * 4
    start = text[:window]
    plain = " ".join((plain_text(start) if might_be_markdown(start) else start).split())
    if len(plain) <= HEAD_CHARS and len(text) <= window:
        return plain
    if len(text) > window:  # an emphasis closed beyond the window left its opening mark
        plain = without_cut_openers(plain)
    return plain[:HEAD_CHARS] + "…"


def meta_summary(node: Node, prices: Mapping[str, Price] = PRICES) -> list[Any] | None:
    """``[model, input_tokens, output_tokens, duration_ms, interrupted]`` for a reply,
    and its cost (``"$0.0135"``) sixth when its model has a price; the model as
    ``compare.model_label`` shows it (``local:smollm2``, with the name the server
    reported beside it where that differs)."""
    meta = node.meta
    if node.role != "assistant" or not meta:
        return None
    usage = meta.get("usage") or {}
    summarised = [
        model_label(meta) if meta.get("model") else None,
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        meta.get("duration_ms"),
        1 if meta.get("interrupted") else 0,
    ]
    cost = node_cost(node, prices)
    if cost is not None:
        summarised.append(dollars(cost))
    return summarised


def node_row(node: Node, parent_index: int, prices: Mapping[str, Price] = PRICES) -> Row:
    pieces = typed_pieces(node.meta) if node.role == "user" else None
    return [
        node.id,
        parent_index,
        role_code(node),
        summary(head_text(node.message, node.meta)) if pieces is None else typed_head(pieces),
        meta_summary(node, prices),
    ]


CHIP_START, CHIP_END = "\u2068", "\u2069"
"""Around a chip in a row's head (``⁨[df · DataFrame 100×2]⁩``): Unicode's isolates, which
keep a name's direction to itself and show as nothing, so the head reads right as plain
text (a tooltip, a search) and the list can draw the chip (components/chips.ts)."""


def typed_head(pieces: list[TypedPiece]) -> str:
    """A row's head for a question as typed: its words as plain text, each chip whole
    between ``CHIP_START`` and ``CHIP_END``, cut after ``HEAD_CHARS`` with ``…``."""
    shown: list[str] = []
    room = HEAD_CHARS
    for piece in pieces:
        if room <= 0:
            shown.append("…")
            break
        if isinstance(piece, Chip):
            chip = f"[{piece.label}]".replace(CHIP_START, "").replace(CHIP_END, "")
            shown.append(f"{CHIP_START}{chip}{CHIP_END}" + ("" if piece.written else " "))
            room -= len(chip) + 1
            continue
        words = piece.replace(CHIP_START, "").replace(CHIP_END, "")
        plain = " ".join(plain_text(words).split())
        if words[:1].isspace() and shown:
            plain = " " + plain
        if words[-1:].isspace() and plain:
            plain += " "
        if len(plain) > room:
            shown.append(plain[:room] + "…")
            break
        shown.append(plain)
        room -= len(plain)
    return "".join(shown).strip()


def head_text(message: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> str:
    """What a tree row summarises: the display text, with ``[image]`` and ``[name.pdf]``
    where a question's images and documents stand (``What is in [image]?``)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    if not any(isinstance(b, dict) and b.get("type") in ("image", "document") for b in blocks):
        return display_text(message, meta)
    pieces = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            pieces.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            pieces.append("[image]")
        elif block.get("type") == "document":
            pieces.append(f"[{block.get('title') or 'document'}]")
    return "".join(pieces)


class RowIndex:
    """The summary rows in append order, and where each id sits among them."""

    def __init__(self, prices: Mapping[str, Price] = PRICES) -> None:
        self.rows: list[Row] = []
        self.index: dict[str, int] = {}
        self.prices = prices

    def add(self, node: Node) -> Row | None:
        """The new row for ``node``, or ``None`` if it is already there."""
        if node.id in self.index:
            return None
        parent = -1 if node.parent_id is None else self.index.get(node.parent_id, -1)
        row = node_row(node, parent, self.prices)
        self.index[node.id] = len(self.rows)
        self.rows.append(row)
        return row


def streamed_meta(node: Node) -> dict[str, Any]:
    """``{"m": {"context": ...}}`` for a streamed reply whose request a budget cut (what
    the view greys), else nothing: the rest of its meta is in its row."""
    context = (node.meta or {}).get("context")
    return {"m": {"context": context}} if context else {}


def text_payload(node: Node, asked_in: str | None = None) -> dict[str, Any]:
    """What the browser gets when it opens a node: the full text, the full meta, its
    images and documents (``media``), the reply's thinking (its text, and how many blocks
    the API sent encrypted) and, for an answer, the cell that asked (``cell``, where
    "Insert below" puts a code block)."""
    payload: dict[str, Any] = {
        "text": display_text(node.message, node.meta),
        "meta": node.meta or {},
    }
    media = media_blocks(node.message)
    if media:
        payload["media"] = media
    thought = thinking_text(node.message)
    if thought:
        payload["thinking"] = thought
    redacted = redacted_thinking_count(node.message)
    if redacted:
        payload["redacted"] = redacted
    if asked_in:
        payload["cell"] = asked_in
    return payload


def context_reading(session: Session) -> dict[str, Any]:
    """The ``context`` trait: the current branch's tokens against the next request's
    model's window (``usage.meter``, as the footer and ``%chat context`` measure it)."""
    reading = session.meter()
    return {"tokens": reading.tokens, "window": reading.window, "exact": reading.exact}


#: the image types a browser is shown, as ``data:`` URLs; never SVG (it is a program)
SHOWN_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def media_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A message's image and document blocks, cut down to what a browser may show.

    An image keeps its base64 data only when it is of a raster type (the browser makes a
    ``data:`` URL of it, so nothing is fetched); an image by URL keeps no URL, an SVG or
    damaged data keeps no data, so the view can only say why it shows nothing. A
    document keeps its title and media type. The shapes stay the API's, so the panel
    reads them exactly as the viewer reads a file's blocks.
    """
    content = message.get("content")
    blocks = list(content) if isinstance(content, list) else []
    for block in list(blocks):  # a tool result's images (an MCP server's) are shown too
        inner = block.get("content") if isinstance(block, dict) else None
        if isinstance(inner, list) and block.get("type") == "tool_result":
            blocks += [b for b in inner if isinstance(b, dict) and b.get("type") == "image"]
    shown: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in ("image", "document"):
            continue
        source = block.get("source")
        source = source if isinstance(source, dict) else {}
        media_type = source.get("media_type")
        kept: dict[str, Any] = {"type": source.get("type")}
        if isinstance(media_type, str):
            kept["media_type"] = media_type
        if block["type"] == "document":
            title = block.get("title")
            shown.append({"type": "document", "source": kept, "title": str(title or "document")})
            continue
        data = source.get("data")
        if (
            kept["type"] == "base64"
            and media_type in SHOWN_IMAGE_TYPES
            and isinstance(data, str)
            and _BASE64.fullmatch(data)
        ):
            kept["data"] = data
        elif kept["type"] != "base64":
            kept = {"type": "url"}  # never the URL itself
        shown.append({"type": "image", "source": kept})
    return shown


class DeltaCoalescer:
    """Gathers streamed text and says when to send it, so tokens do not each cost a message.

    A chunk leaves when ``interval`` has passed since the last one *and* it holds at
    least ``min_chars``, or when ``max_wait`` has passed whatever its size; the rest
    leaves at ``flush()`` (the reply's end). There is no timer: the kernel runs no event
    loop while a cell runs, so the next token (or the end) is what sends a waiting chunk.
    """

    def __init__(
        self,
        send: Callable[[str], None],
        *,
        clock: Callable[[], float],
        interval: float = DELTA_INTERVAL_S,
        min_chars: int = DELTA_MIN_CHARS,
        max_wait: float = DELTA_MAX_WAIT_S,
    ) -> None:
        self._send = send
        self._clock = clock
        self.interval = interval
        self.min_chars = min_chars
        self.max_wait = max_wait
        self._parts: list[str] = []
        self._size = 0
        self._last = clock()
        self.streamed = ""
        """Everything sent for the current reply, to tell whether the stored text matches."""

    def start(self) -> None:
        self._parts, self._size, self.streamed = [], 0, ""
        self._last = self._clock()

    def add(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        waited = self._clock() - self._last
        if waited >= self.max_wait or (waited >= self.interval and self._size >= self.min_chars):
            self.flush()

    def flush(self) -> None:
        if not self._parts:
            return
        chunk = "".join(self._parts)
        self._parts, self._size = [], 0
        self._last = self._clock()
        self.streamed += chunk
        self._send(chunk)
