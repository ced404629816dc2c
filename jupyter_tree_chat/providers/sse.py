"""Server-sent events, split as the SSE spec says: what both wires' streams are made of.

The SDKs would make a typed object of every event (a pydantic model per token, half the
CPU of a long reply); the wires read the response's lines themselves instead
(``anthropic/events.py``, ``openai/provider.py``) and split them here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def sse_events(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(event, data)`` of each event in a stream's lines (without their line ends): fields
    until a blank line, ``data`` lines joined by a new line, comments (``:``) skipped; an
    event without a name has ``""``. An event still pending at the end lacked its closing
    blank line: it is discarded, as the spec says."""
    name = ""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = "", []
            continue
        field, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
