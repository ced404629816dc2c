"""The fake Messages API's prompt cache: which prefixes were written, what a request reads.

It follows the real API's rules, simplified: the prompt is the sequence tools → system →
message content blocks; each block carrying ``cache_control`` ends a cacheable prefix. A
breakpoint whose prefix (or, looking back up to 20 blocks, an earlier prefix) was written
before reports ``cache_read_input_tokens``; prefixes not seen before are written and
reported as ``cache_creation_input_tokens``; the tokens after the last breakpoint are
``input_tokens``. A prefix shorter than its model's minimum cacheable length
(``fake_models.min_cache_tokens``: 1024 tokens for Sonnet 4.5 and 4.6, 4096 for Opus 4.6
and Haiku 4.5, ...) is not cached. Tokens are characters / 4; an image's are its pixels
/ 750, as the API counts.

An entry lives for its time to live: 5 minutes, or 1 hour for a breakpoint marked
``{"type": "ephemeral", "ttl": "1h"}``, and each read refreshes it for as long again, as
the prompt-caching docs say ("the cache is refreshed for no additional cost each time the
cached content is used"). Time is ``clock()`` (``time.monotonic`` unless a test moves it).

As with the real API, an entry becomes readable only once the response that wrote it
has begun: the server passes ``pending`` and calls ``publish(pending)`` after sending
that response's first event, so requests started before then write the prefix again.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from fakes.fake_models import min_cache_tokens

CACHE_LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 5 * 60, "1h": 60 * 60}
DEFAULT_TTL = "5m"


def estimate_tokens(text: str) -> int:
    """The fake's token count: characters / 4, rounded up."""
    return math.ceil(len(text) / 4)


def block_tokens(block: dict[str, Any], canonical: str) -> int:
    """A block's tokens: text by its characters; an image as the API prices it (its pixels
    / 750), not by the length of its base64."""
    if block.get("type") == "text":
        return estimate_tokens(block["text"])
    if block.get("type") == "image":
        size = image_size(block)
        if size is not None:
            return math.ceil(size[0] * size[1] / 750)
    return estimate_tokens(canonical)


def image_size(block: dict[str, Any]) -> tuple[int, int] | None:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    from PIL import Image

    try:
        with Image.open(io.BytesIO(base64.b64decode(source.get("data", "")))) as image:
            return image.size
    except Exception:
        return None


class PromptCache:
    """Remembers prefix hashes written at breakpoints, until they expire, and prices a
    new request."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._written: dict[str, tuple[float, float]] = {}  # digest -> (expires, ttl)
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any], pending: list[str] | None = None) -> dict[str, int]:
        """The request's token accounting; the prefixes it writes become readable at once,
        or, given ``pending``, are put there for ``publish`` instead."""
        blocks = list(prompt_blocks(body))
        digests, cumulative = [], []
        running, total = hashlib.sha256(str(body.get("model")).encode()), 0
        for block, _ in blocks:
            canonical = json.dumps(block, sort_keys=True, separators=(",", ":"))
            running.update(canonical.encode())
            digests.append(running.hexdigest())
            total += block_tokens(block, canonical)
            cumulative.append(total)
        breakpoints = [i for i, (_, mark) in enumerate(blocks) if mark is not None]
        shortest = min_cache_tokens(body.get("model"))
        with self._lock:
            now = self.clock()
            read_end = self._longest_hit(breakpoints, digests, now)
            write_end = read_end
            for i in breakpoints:
                if cumulative[i] >= shortest and i > read_end:
                    ttl = float(TTL_SECONDS[_ttl(blocks[i][1])])
                    if pending is None:
                        self._written[digests[i]] = (now + ttl, ttl)
                    else:
                        pending.append(f"{digests[i]}:{ttl:g}")
                    write_end = i
        read = cumulative[read_end] if read_end >= 0 else 0
        written = cumulative[write_end] - read if write_end >= 0 else 0
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def publish(self, pending: list[str]) -> None:
        """Make the prefixes a response wrote readable (its first event was sent)."""
        with self._lock:
            now = self.clock()
            for entry in pending:
                digest, ttl = entry.rsplit(":", 1)
                self._written[digest] = (now + float(ttl), float(ttl))

    def _longest_hit(self, breakpoints: list[int], digests: list[str], now: float) -> int:
        best = -1
        for end in breakpoints:
            for i in range(end, max(-1, end - CACHE_LOOKBACK_BLOCKS), -1):
                entry = self._written.get(digests[i])
                if entry is not None and entry[0] > now:
                    self._written[digests[i]] = (now + entry[1], entry[1])  # a read refreshes
                    best = max(best, i)
                    break
        return best


def _ttl(mark: Any) -> str:
    ttl = mark.get("ttl") if isinstance(mark, dict) else None
    return ttl if ttl in TTL_SECONDS else DEFAULT_TTL


def prompt_tokens(body: dict[str, Any]) -> int:
    """The whole prompt's tokens as ``PromptCache.usage`` counts them (what count_tokens says)."""
    return sum(
        block_tokens(block, json.dumps(block, sort_keys=True, separators=(",", ":")))
        for block, _ in prompt_blocks(body)
    )


def prompt_blocks(body: dict[str, Any]) -> Iterator[tuple[dict[str, Any], Any]]:
    """The prompt in cache order (tools, system, messages), each block without its
    ``cache_control`` and that mark (None where it carried none)."""
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    message_blocks: list[Any] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        message_blocks.extend({"role": message.get("role"), **block} for block in content or [])
    for block in [*body.get("tools", []), *(system or []), *message_blocks]:
        stripped = {k: v for k, v in block.items() if k != "cache_control"}
        yield stripped, block.get("cache_control")
