"""The words a shared view shows for a question: the one place the share room takes them.

A question as stored may be the text after ``{name}`` substitution, with tables and
images in it; a person wants to read what was typed. Find results, branch names, the
exported page's data and the notebook's ``%%chat`` cells all take a question's words
from here, so a better rule for them (what was typed, with chips for the values) is one
change in this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..history.tree import message_text
from ..textview import TEXT_WIDTH, summary


def question_display(message: Mapping[str, Any]) -> str:
    """A question's whole text as a person reads it."""
    return message_text(message)


def question_text(message: Mapping[str, Any], width: int = TEXT_WIDTH) -> str:
    """A question on one line, cut at ``width`` with ``…``."""
    return summary(message, width)
