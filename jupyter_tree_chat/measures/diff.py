"""What each of several answers says that the others do not: the compare view's marks.

The views (the ``%chat compare`` output, the panel, the file viewer) each cut the
*rendered* text of every answer into units, words of prose and whole lines of code
blocks (``prose_units``, ``code_units``), so Markdown syntax (``**``, fences) is never
a difference. This module decides which units to mark; it is pure, and the front end's
TypeScript port (``labextension/src``, ``uniqueMarks``) is checked against it on the
same inputs, so every view marks the same words.

The rule: a unit of one answer is marked when *no* other answer has it at that place,
i.e. when each pairwise longest common subsequence against every other answer leaves it
unmatched. With two answers that is the ordinary diff, both sides.

The pairwise alignment is a longest common subsequence after trimming the common head
and tail; where it is equal, ties go the same way in both implementations (skip in the
first sequence first). Past ``MAX_CELLS`` (a pair of very long answers) the middle that
differs is marked as a whole instead of aligned: the result stays honest (it never marks
a shared unit as shared when it is not) and quick.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_CELLS = 1_000_000
"""The largest alignment table (units × units) one pair may build."""

_WORD = re.compile(r"\S+")


def prose_units(text: str) -> list[str]:
    """The words of a piece of prose (whitespace separates, and is never a unit)."""
    return _WORD.findall(text)


def code_units(code: str) -> list[str]:
    """The lines of a code block, trailing whitespace dropped, blank lines skipped."""
    return [line.rstrip() for line in code.split("\n") if line.strip()]


def matched(a: Sequence[str], b: Sequence[str]) -> tuple[list[bool], list[bool]]:
    """For each unit of ``a`` and of ``b``: is it in their longest common subsequence?"""
    n, m = len(a), len(b)
    in_a, in_b = [False] * n, [False] * m
    head = 0
    while head < n and head < m and a[head] == b[head]:
        in_a[head] = in_b[head] = True
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        in_a[n - 1 - tail] = in_b[m - 1 - tail] = True
        tail += 1
    mid_a, mid_b = a[head : n - tail], b[head : m - tail]
    rows, cols = len(mid_a), len(mid_b)
    if rows == 0 or cols == 0 or rows * cols > MAX_CELLS:
        return in_a, in_b
    # lcs[i][j]: the LCS length of mid_a[i:] and mid_b[j:], built from the end
    below = [0] * (cols + 1)
    table = [below]
    for i in range(rows - 1, -1, -1):
        row = [0] * (cols + 1)
        unit = mid_a[i]
        for j in range(cols - 1, -1, -1):
            if unit == mid_b[j]:
                row[j] = below[j + 1] + 1
            else:
                row[j] = below[j] if below[j] >= row[j + 1] else row[j + 1]
        table.append(row)
        below = row
    table.reverse()  # table[i] is row i now
    i = j = 0
    while i < rows and j < cols:
        if mid_a[i] == mid_b[j]:
            in_a[head + i] = in_b[head + j] = True
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return in_a, in_b


def unique_marks(answers: Sequence[Sequence[str]]) -> list[list[bool]]:
    """For each answer, for each unit: True where no other answer says it (see above)."""
    shared = [[False] * len(units) for units in answers]
    for x in range(len(answers)):
        for y in range(x + 1, len(answers)):
            in_x, in_y = matched(answers[x], answers[y])
            shared[x] = [s or t for s, t in zip(shared[x], in_x, strict=True)]
            shared[y] = [s or t for s, t in zip(shared[y], in_y, strict=True)]
    if len(answers) < 2:
        return [[False] * len(units) for units in answers]
    return [[not s for s in row] for row in shared]
