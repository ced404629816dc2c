"""The words a shared view shows for a question: the one place the share room takes them.

A question as stored may be the text after ``{name}`` substitution, with tables and
images in it; a person wants to read what was typed. Find results, branch names and the
notebook's ``%%chat`` cells all take a question's words from here, so a better rule for
them (what was typed, with chips for the values) is one change in this module.
"""

from __future__ import annotations

from ..history.node import Node
from ..history.tree import message_text
from ..textview import TEXT_WIDTH, summary


def question_source(question: Node) -> str:
    """A question's whole text, as a ``%%chat`` cell would hold it to ask it again."""
    return message_text(question.message)


def question_text(question: Node, width: int = TEXT_WIDTH) -> str:
    """A question on one line, cut at ``width`` with ``…``."""
    return summary(question.message, width)
