"""What each node of a path costs of a context budget, counted once per node.

``budget.select`` needs, for every node of a path, its estimated tokens, the tokens and
exchanges from the root up to it, and whether an exchange begins there. A node never
changes and its path from the root is fixed (ids are never reused, parents never
change), so ``Sizes`` keeps these facts by node id: the first request on a 10,000-deep
path counts every node, the next one only the nodes added since, and finding the cut
is then a bisection over running sums. Counting is ``usage.estimate_tokens``'s, done in
one pass over a message's blocks (``_scan``, checked against it).

Before any of that, ``bound`` answers the commonest question cheaply: does the whole
path surely fit? A message's estimate is at most 3/5 of its compact JSON bytes plus one
(``BYTES_SHARE``): a Latin character is a quarter token and at least a byte, a CJK one a
token and at least three bytes, each string's rounding up is paid by its two quotes, and
a block counted as ``json.dumps`` text (a tool call, a number) is at most half a token a
byte (its ", " and ": " add a character to at least two bytes). Images and documents are
counted by size, not bytes: a path holding one is not bounded (None). The bound is found
newest first, in pieces that double, and stops once it passes the limit; a whole path's
is remembered at its end node and at each piece's, so the next turn encodes only the new
nodes (the bound at a node covers the root up to it: any branch through it may use it).

Also here: what an exchange must satisfy to be sent (``pairs_by_id``) and how an
imported pi compaction node is read (its summary, and a question merged into it).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import msgspec

from ..history.tree import Message, Node, message_text
from .usage import block_tokens, estimate_tokens, text_tokens


class Facts(NamedTuple):
    """One node's estimate, and the sums along its path from the root, itself included."""

    tokens: int
    total: int
    exchanges: int
    depth: int
    opens: bool  # a real user message: an exchange begins here
    pi_compaction: int  # the path position of the newest pi compaction up to here, or -1


BYTES_SHARE = (3, 5)
"""A message's estimate is at most this share of its content's JSON bytes, plus one."""
FIRST_PIECE = 64
"""Nodes encoded together first by ``bound``; each next piece is twice as many."""
_encode = msgspec.json.Encoder().encode
_id, _message, _role_content = (
    attrgetter("id"),
    attrgetter("message"),
    itemgetter("role", "content"),
)
_UNBOUNDED = (b'"type":"image"', b'"type":"document"')


class Sizes:
    """``Facts`` by node id, computed the first time a path holds the node.

    Sound because a node never changes and its path from the root is fixed (ids are never
    reused, parents never change). One per session; thread-safe for readers, since a
    fact is computed from the same node whoever computes it.
    """

    def __init__(self) -> None:
        self._facts: dict[str, Facts] = {}
        self._steps: dict[tuple[str, int], str] = {}
        self._bounds: dict[str, int] = {}

    def next_step(self, node_id: str | None, step: int) -> str | None:
        """The exchange start a cut at ``node_id`` moves to next (``select``'s chain)."""
        return None if node_id is None else self._steps.get((node_id, step))

    def remember_step(self, node_id: str, step: int, after: str) -> None:
        self._steps[(node_id, step)] = after

    def __len__(self) -> int:
        return len(self._facts)

    def get(self, node_id: str) -> Facts | None:
        return self._facts.get(node_id)

    def of(self, node: Node) -> Facts:
        return self._facts[node.id]

    def bound(self, path: Sequence[Node], limit: int) -> int | None:
        """An upper bound of ``path``'s estimated tokens (each message's, added up), or any
        figure above ``limit`` once the bound passes it; None when it cannot be bounded
        (an image or a document, a value JSON cannot hold). Exact sums (``ensure``) known
        for the end node are used as they are."""
        known = self._facts.get(path[-1].id) if path else None
        if known is not None:
            return known.total
        bounds = self._bounds
        share, of = BYTES_SHARE
        total = 0
        stop = len(path)
        size = FIRST_PIECE
        pieces: list[tuple[int, int]] = []  # (end position, the piece's bound)
        while stop > 0:
            start = max(0, stop - size)
            nodes = path[start:stop]
            remembered = None
            if bounds and not bounds.keys().isdisjoint(map(_id, nodes)):
                at = next(p for p in range(len(nodes) - 1, -1, -1) if nodes[p].id in bounds)
                remembered = bounds[nodes[at].id]
                start += at + 1
                nodes = nodes[at + 1 :]
            piece = 0
            if nodes:  # none when the newest node's bound is remembered
                try:  # (role, content): a message without a role is counted whole, not bounded
                    data = _encode(list(map(_role_content, map(_message, nodes))))
                except (KeyError, TypeError, ValueError, OverflowError, msgspec.EncodeError):
                    return None
                if _UNBOUNDED[0] in data or _UNBOUNDED[1] in data:
                    return None
                piece = len(data) * share // of + len(nodes)
            total += piece
            pieces.append((stop, piece))
            if remembered is not None:
                total += remembered
                break
            if total > limit:
                return total
            stop = start
            size *= 2
        after = 0
        for end, piece in pieces:  # the bound from the root to each piece's end node
            bounds[path[end - 1].id] = total - after
            after += piece
        return total

    def ensure(self, path: Sequence[Node]) -> None:
        """Compute what is missing for ``path`` (root first): the known part is skipped."""
        known = self._facts
        start = len(path)
        while start > 0 and path[start - 1].id not in known:
            start -= 1
        before = known[path[start - 1].id] if start else None
        new = tuple.__new__  # a Facts without the NamedTuple constructor's call: 10,000 add up
        for position in range(start, len(path)):
            node = path[position]
            message = node.message
            tokens, opens = _scan(message)
            pi = before[5] if before is not None else -1
            if opens and is_pi_compaction(node):
                pi = position  # a summary; an exchange only if a question was merged into it
                opens = bool(pi_question(message))
            if before is None:
                facts = new(Facts, (tokens, tokens, 1, 1, opens, pi))  # the root opens one
            else:
                facts = new(
                    Facts,
                    (tokens, before[1] + tokens, before[2] + opens, before[3] + 1, opens, pi),
                )
            known[node.id] = facts
            before = facts


def _scan(message: Message) -> tuple[int, bool]:
    """A message's estimate (``usage.estimate_tokens``, exactly) and whether it is a real
    user message (``tree.is_real_user_message``), in one pass over its blocks."""
    user = message.get("role") == "user"
    content = message.get("content")
    if type(content) is str:
        return text_tokens(content), user
    if type(content) is not list:
        return estimate_tokens(message), user
    tokens = 0
    results = False
    for block in content:
        if type(block) is dict:
            kind = block.get("type")
            text = block.get("text")
            if kind == "text" and type(text) is str:
                tokens += text_tokens(text)
                continue
            results = results or kind == "tool_result"
        tokens += block_tokens(block)
    return tokens, user and not results


def is_pi_compaction(node: Node) -> bool:
    """An imported pi ``compaction`` entry (formats/pi.py): a summary on the path."""
    meta = node.meta
    return meta is not None and meta.get("pi") == "compaction"


def pi_summary(message: Message) -> str:
    """A pi compaction's summary: its first block (the import merges the question that
    followed it, if any, into the blocks after)."""
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return str(content[0].get("text") or "")
    return message_text(message)


def pi_question(message: Message) -> list[Any]:
    """What a pi compaction node holds besides its summary: the question merged into it."""
    content = message.get("content")
    return list(content[1:]) if isinstance(content, list) else []


def pairs_by_id(messages: Sequence[Message]) -> bool:
    """Every tool call of an exchange answered once, every result answering a call, each
    call id used once: the order of results does not matter (parallel calls)."""
    calls: set[Any] = set()
    results: set[Any] = set()
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                if block.get("id") in calls:
                    return False
                calls.add(block.get("id"))
            elif kind == "tool_result":
                if block.get("tool_use_id") in results:
                    return False
                results.add(block.get("tool_use_id"))
    return calls == results
