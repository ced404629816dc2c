"""What a path holds of the model's context window, and what replies cost.

Pure arithmetic over nodes and the tables in models.py, so the footer, ``%chat
context``, ``%chat usage``, the panel and the session's check before a request all
agree.

The context meter trusts the API's own counts. After each reply the API says how many
tokens its request held (``input_tokens`` + ``cache_creation_input_tokens`` +
``cache_read_input_tokens``) and how many it wrote (``output_tokens``), so the path up
to that reply holds their sum. (When the model thought, that overcounts a little on
older models, which drop earlier turns' thinking from the context.) Whatever comes
after the last counted reply (a question not answered yet, tool results, the question
about to be sent) is *estimated*, four characters a token but a Chinese, Japanese or
Korean character one (an image at a fixed size, a PDF by its pages), unless the API's
count_tokens endpoint is asked (``Session.count_tokens``).

Cost is each reply's usage times its model's price: input, output, cache writes and
cache reads each at their own rate. A reply from a model with no price is counted in
tokens and reported as unpriced, never as free.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..history.tree import Node
from ..i18n import _
from .models import CONTEXT_WINDOWS, PRICES, Price, by_model

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
"""An image block's estimate: the most a full-size image costs (about 1.15 megapixels)."""
PDF_PAGE_TOKENS = 2_400
"""A PDF page's estimate: the API reads each page as its text and its picture (a page
of text measures about 2,100 to 2,500 tokens, a scanned one about 1,600)."""
PDF_BYTES_PER_PAGE = 50_000
"""For a PDF whose pages cannot be counted (kept in compressed object streams)."""
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
#: characters a tokenizer spends about a token on each (Han, kana, Hangul, full-width forms),
#: where four Latin characters make one
_WIDE = re.compile(
    "[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f]"
)
FULL_AT = 0.8
"""From this share of the window on, the footer suggests ``%chat compact``."""
MILLION = 1_000_000


# -- tokens ----------------------------------------------------------------------------------


def estimate_tokens(value: Any) -> int:
    """About how many tokens a text, a message or a block list holds: characters / 4, a
    Chinese, Japanese or Korean character counting one (characters / 4 would count a
    Chinese conversation at a quarter of its size).

    Images count ``IMAGE_TOKENS`` each and PDFs ``PDF_PAGE_TOKENS`` a page, rather than
    their base64 characters (which would count a 600 KB PDF as 200,000 tokens)."""
    if isinstance(value, str):
        return text_tokens(value)
    if type(value) is dict and "role" in value:  # the common case, without the ABC check
        return estimate_tokens(value.get("content"))
    if isinstance(value, Mapping) and "role" in value:
        return estimate_tokens(value.get("content"))
    if isinstance(value, list):
        return sum(_block_tokens(block) for block in value)
    if value is None:
        return 0
    return estimate_tokens(json.dumps(value, ensure_ascii=False, default=str))


def text_tokens(text: str) -> int:
    """A text's estimate: characters / 4, a CJK character one (``estimate_tokens``)."""
    if text.isascii():
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    wide = len(_WIDE.findall(text))
    return math.ceil((len(text) - wide) / CHARS_PER_TOKEN) + wide


def block_tokens(block: Any) -> int:
    """One content block's estimate (``estimate_tokens`` of a list adds these up)."""
    return _block_tokens(block)


def _block_tokens(block: Any) -> int:
    if not isinstance(block, Mapping):
        return estimate_tokens(block)
    kind = block.get("type")
    if kind == "text":
        return estimate_tokens(block.get("text") or "")
    if kind == "thinking":
        return estimate_tokens(block.get("thinking") or "")
    if kind == "image":
        return IMAGE_TOKENS
    if kind == "document":
        return _document_tokens(block)
    if kind == "tool_result":
        body = block.get("content")
        return estimate_tokens(body if isinstance(body, (str, list)) else "")
    return estimate_tokens(json.dumps(dict(block), ensure_ascii=False, default=str))


def _document_tokens(block: Mapping[str, Any]) -> int:
    """A document block: a base64 PDF by its pages, a text document by its text."""
    source = block.get("source")
    if not isinstance(source, Mapping) or not isinstance(source.get("data"), str):
        return estimate_tokens(json.dumps(dict(block), ensure_ascii=False, default=str))
    if source.get("type") != "base64":
        return estimate_tokens(source["data"])
    try:
        pdf = base64.b64decode(source["data"])
    except (binascii.Error, ValueError):
        return estimate_tokens(source["data"])
    pages = len(_PDF_PAGE.findall(pdf)) or math.ceil(len(pdf) / PDF_BYTES_PER_PAGE)
    return max(pages, 1) * PDF_PAGE_TOKENS


def prompt_tokens(usage: Mapping[str, Any]) -> int:
    """The tokens a request held: input, cache writes and cache reads together."""
    return sum(
        _int(usage.get(key))
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


def reply_usage(node: Node) -> Mapping[str, Any] | None:
    """A reply's usage as the API reported it; None for a question, or a reply without."""
    usage = (node.meta or {}).get("usage")
    if node.role != "assistant" or not isinstance(usage, Mapping) or not usage:
        return None
    return usage


def counted_tokens(node: Node) -> int | None:
    """What the path up to this reply holds, by the API's count (None: not counted)."""
    usage = reply_usage(node)
    return None if usage is None else prompt_tokens(usage) + _int(usage.get("output_tokens"))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- the context meter -------------------------------------------------------------------------


@dataclass(frozen=True)
class Meter:
    """How full a path makes the window: ``tokens`` of ``window`` (None: window unknown).

    ``counted`` of the tokens come from the API's usage of reply ``counted_by`` (or from
    count_tokens), ``estimated`` from characters."""

    tokens: int
    window: int | None
    counted: int
    estimated: int
    counted_by: str | None = None
    exact: bool = False
    """The whole figure is the API's (count_tokens, or a path that ends at a reply)."""

    @property
    def share(self) -> float | None:
        return None if not self.window else self.tokens / self.window

    @property
    def full(self) -> bool:
        """At or past ``FULL_AT`` of the window: time to compact."""
        share = self.share
        return share is not None and share >= FULL_AT

    @property
    def fits(self) -> bool:
        return self.window is None or self.tokens <= self.window


def meter(
    nodes: Sequence[Node],
    *,
    model: str | None,
    windows: Mapping[str, int] | None = None,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
    extra: Iterable[Any] = (),
) -> Meter:
    """The meter for a path (``nodes`` root first) plus ``extra`` messages to be sent."""
    window = by_model(CONTEXT_WINDOWS if windows is None else windows, model)
    base, base_at = 0, -1
    for position in range(len(nodes) - 1, -1, -1):
        counted = counted_tokens(nodes[position])
        if counted is not None:
            base, base_at = counted, position
            break
    estimated = 0
    if base_at < 0:  # nothing counted yet: the system prompt and tools are estimated too
        estimated = estimate_tokens(system or "") + estimate_tokens(list(tools))
    estimated += sum(estimate_tokens(node.message) for node in nodes[base_at + 1 :])
    estimated += sum(estimate_tokens(message) for message in extra)
    return Meter(
        tokens=base + estimated,
        window=window,
        counted=base,
        estimated=estimated,
        counted_by=nodes[base_at].id if base_at >= 0 else None,
        exact=base_at >= 0 and estimated == 0,
    )


def exact_meter(tokens: int, window: int | None) -> Meter:
    """A meter from the API's count_tokens figure for a whole request."""
    return Meter(tokens=tokens, window=window, counted=tokens, estimated=0, exact=True)


def window_label(window: int) -> str:
    """``200k``, ``1M``, ``1.5M``: a window as people say it (a local model's binary
    sizes as they are said too: 8,192 is ``8k``, 131,072 ``128k``)."""
    if window >= MILLION:
        return f"{window / MILLION:g}M"
    if window >= 1_000:
        kilo = window // 1024 if window % 1024 == 0 else window / 1_000
        return f"{kilo:g}k"
    return str(window)


def meter_label(reading: Meter) -> str:
    """``context 42% of 200k`` (``≈42%`` where part of it is estimated; ``context
    ≈1,234 tokens`` with no window)."""
    about = "" if reading.exact else "≈"
    if reading.window is None:
        return _("context {about}{tokens} tokens").format(about=about, tokens=f"{reading.tokens:,}")
    share = reading.tokens / reading.window * 100
    shown = f"{share:.0f}" if share >= 1 or share == 0 else "<1"
    return _("context {about}{share}% of {window}").format(
        about=about, share=shown, window=window_label(reading.window)
    )


@dataclass(frozen=True)
class Breakdown:
    """Where a path's tokens are, estimated part by part (what ``%chat context`` lists)."""

    system: int
    tools: int
    messages: int
    largest: list[tuple[Node, int]]


def breakdown(
    nodes: Sequence[Node],
    *,
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
    top: int = 5,
) -> Breakdown:
    sizes = [(node, estimate_tokens(node.message)) for node in nodes]
    largest = sorted(sizes, key=lambda pair: -pair[1])[:top]
    return Breakdown(
        system=estimate_tokens(system or ""),
        tools=estimate_tokens(list(tools)),
        messages=sum(size for _, size in sizes),
        largest=largest,
    )


# -- cost --------------------------------------------------------------------------------------


def usage_cost(usage: Mapping[str, Any], price: Price) -> float:
    """US dollars for one request's usage at ``price``."""
    return (
        _int(usage.get("input_tokens")) * price.input
        + _int(usage.get("output_tokens")) * price.output
        + _int(usage.get("cache_creation_input_tokens")) * price.cache_write
        + _int(usage.get("cache_read_input_tokens")) * price.cache_read
    ) / MILLION


def node_cost(node: Node, prices: Mapping[str, Price] | None = None) -> float | None:
    """What a reply cost in US dollars; None for a node with no usage or an unpriced model."""
    usage = reply_usage(node)
    if usage is None:
        return None
    meta = node.meta or {}
    price = by_model(PRICES if prices is None else prices, meta.get("model"))
    if price is None:
        return None
    cost = usage_cost(usage, price)
    batch = meta.get("batch")  # a batch answer costs its share of the price (meta.batch.price)
    share: Any = batch.get("price") if type(batch) is dict else None
    return cost * share if type(share) in (int, float) and 0 < share <= 1 else cost


def nodes_cost(nodes: Iterable[Node], prices: Mapping[str, Price] | None = None) -> float | None:
    """What the replies among ``nodes`` cost together (an answer and its tool rounds);
    None if none of them has usage or one of them has no price (never a partial sum)."""
    replies = [
        node for node in nodes if node.role == "assistant" and (node.meta or {}).get("usage")
    ]
    costs = [node_cost(node, prices) for node in replies]
    if not costs or any(cost is None for cost in costs):
        return None
    return sum(cost for cost in costs if cost is not None)


@dataclass
class Tally:
    """Tokens and dollars over some replies; ``unpriced`` of them had no price."""

    replies: int = 0
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    cost: float = 0.0
    unpriced: int = 0

    def add(self, usage: Mapping[str, Any], cost: float | None) -> None:
        self.replies += 1
        self.input += _int(usage.get("input_tokens"))
        self.output += _int(usage.get("output_tokens"))
        self.cache_write += _int(usage.get("cache_creation_input_tokens"))
        self.cache_read += _int(usage.get("cache_read_input_tokens"))
        if cost is None:
            self.unpriced += 1
        else:
            self.cost += cost


@dataclass
class Totals:
    """A tally over all replies and one per model (in the order models first appear)."""

    all: Tally = field(default_factory=Tally)
    by_model: dict[str, Tally] = field(default_factory=dict)


def totals(nodes: Iterable[Node], prices: Mapping[str, Price] | None = None) -> Totals:
    """Add up the usage and cost of every reply among ``nodes``."""
    table = PRICES if prices is None else prices
    result = Totals()
    for node in nodes:
        usage = reply_usage(node)
        if usage is None:
            continue
        model = str((node.meta or {}).get("model") or _("unknown model"))

        cost = node_cost(node, table)
        result.all.add(usage, cost)
        result.by_model.setdefault(model, Tally()).add(usage, cost)
    return result


def dollars(cost: float) -> str:
    """``$0.0123`` below a dollar (four decimals), ``$12.35`` above; ``$0`` for nothing."""
    if cost == 0:
        return "$0"
    if cost < 0.0001:
        return "<$0.0001"
    return f"${cost:.4f}" if cost < 1 else f"${cost:,.2f}"
