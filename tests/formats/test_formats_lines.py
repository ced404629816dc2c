"""Reading a source's bytes tolerantly (formats/lines.py): what is read, what is reported."""

from __future__ import annotations

from typing import Any

from jupyter_tree_chat.formats.lines import json_document, json_lines


def read_lines(data: bytes) -> tuple[list[tuple[int, Any]], list[tuple[int | None, str]]]:
    problems: list[tuple[int | None, str]] = []
    values = list(json_lines(data, lambda line, message: problems.append((line, message))))
    return values, problems


def test_good_lines_are_read_with_their_numbers():
    values, problems = read_lines(b'{"a":1}\n[2]\n"x"\n')
    assert values == [(1, {"a": 1}), (2, [2]), (3, "x")]
    assert problems == []


def test_damage_is_reported_by_line_and_the_rest_read():
    data = b'\xef\xbb\xbf{"a":1}\n\ngarbage\n\xff\xfe\n{"b":2}\n{"torn":'
    values, problems = read_lines(data)
    assert values == [(1, {"a": 1}), (5, {"b": 2})]
    assert problems == [
        (1, "starts with a UTF-8 byte order mark (ignored)"),
        (2, "blank line (ignored)"),
        (3, "not valid JSON (ignored)"),
        (4, "not valid UTF-8 (ignored)"),
        (6, "torn last line: an incomplete record of 8 bytes (ignored)"),
    ]


def test_records_glued_on_one_line_are_each_read():
    values, problems = read_lines(b'{"a":1}{"b":2} {"c":3}\n{"d":4}\n')
    assert values == [(1, {"a": 1}), (1, {"b": 2}), (1, {"c": 3}), (2, {"d": 4})]
    assert problems == [(1, "3 records glued on one line (each read)")]


def test_a_lone_surrogate_escape_reads_as_the_replacement_character():
    values, problems = read_lines(b'{"t":"\\ud83d"}\n')
    assert values == [(1, {"t": "\ufffd"})]
    assert problems == [(1, "lone surrogate escapes (a broken emoji?) read as U+FFFD")]


def test_a_json_document_or_none_with_the_line_it_broke_on():
    problems: list[tuple[int | None, str]] = []
    report = lambda line, message: problems.append((line, message))  # noqa: E731
    assert json_document(b'[{"mapping": {}}]', report) == [{"mapping": {}}]
    assert json_document(b'[\n  {"mapping":\n', report) is None
    assert problems[0][0] == 3
    assert (
        problems[0][1].startswith("not valid JSON (") and "nothing could be read" in problems[0][1]
    )
