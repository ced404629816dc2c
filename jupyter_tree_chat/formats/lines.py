"""Reading a source's bytes tolerantly: JSON Lines record by record, or one JSON document.

Damage is reported with the line it is on, in the words the store uses for session
files, and never stops the reading: a torn last line, garbage, a line that is not UTF-8,
and two records glued on one line (seen in public pi files: both records are read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ..history.problems import (
    bom_problem,
    lone_surrogates_problem,
    why_not_json,
    with_lone_surrogates,
)
from ..i18n import _, ngettext

Report = Callable[[int | None, str], None]
_DECODER = json.JSONDecoder()
_LINE_COLUMN = re.compile(r"line (\d+)")


def split_lines(data: bytes, report: Report) -> tuple[list[bytes], int]:
    """The lines of a source and the number of its last line if it is torn (else 0)."""
    if data.startswith(b"\xef\xbb\xbf"):
        report(1, bom_problem())
        data = data[3:]
    lines = data.split(b"\n")
    last = len(lines)
    if lines[-1] == b"":
        lines.pop()
        last = 0
    return lines, last


def json_lines(data: bytes, report: Report) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every readable line, in order."""
    lines, last = split_lines(data, report)
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    for number, line in enumerate(lines, 1):
        try:
            yield number, loads(line)
        except decode_error:
            for value in recover(line, number, number == last, report):
                yield number, value


def recover(line: bytes, number: int, is_last: bool, report: Report) -> list[Any]:
    """What can be read of a line a JSON parser refused: lone surrogates replaced, or the
    records glued on it; else nothing, and the damage is reported."""
    value = with_lone_surrogates(line)
    if value is not None:
        report(number, lone_surrogates_problem())
        return [value]
    glued = _glued(line)
    if glued:
        why = ngettext(
            "{count} record glued on one line (each read)",
            "{count} records glued on one line (each read)",
            len(glued),
        )
        report(number, why.format(count=len(glued)))
        return glued
    report(number, why_not_json(line, is_last))
    return []


def _glued(line: bytes) -> list[Any]:
    """The records of a line holding several JSON objects back to back, else []."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return []
    found: list[Any] = []
    position = 0
    while position < len(text):
        while position < len(text) and text[position] in " \t\r":
            position += 1
        if position == len(text):
            break
        try:
            value, position = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError):
            return []
        found.append(value)
    return found if len(found) > 1 else []


def json_document(data: bytes, report: Report) -> Any:
    """The whole source as one JSON value, or None (reported) when it is not JSON."""
    if data.startswith(b"\xef\xbb\xbf"):
        report(1, bom_problem())
        data = data[3:]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        value = with_lone_surrogates(data)
        if value is not None:
            report(None, lone_surrogates_problem())
            return value
        where = _LINE_COLUMN.search(str(error))
        line = int(where.group(1)) if where else None
        why = _("not valid JSON ({error}); nothing could be read")
        report(line, why.format(error=_first_words(str(error))))
        return None


def _first_words(text: str) -> str:
    return text.split(":")[0].strip() or _("unreadable")
