"""The words a shared view shows for a question: the one place the share room takes them.

A question as stored is the text that was sent, tables and tracebacks substituted into
it; a person wants to read what was typed. Find results and branch names take a
question's line from ``textview.summary`` with its ``meta`` (the text as typed, each
substitution a chip: ``What does [df · DataFrame 100×2] show?``), and the notebook's
``%%chat`` cells take the text as typed with its fields (``What does {df} show?``), so
that running the cell asks it again the same way. A question that keeps no typed text
(an older session, another tool's) shows the text that was sent.
"""

from __future__ import annotations

from ..history.node import Node
from ..history.tree import message_text
from ..textview import TEXT_WIDTH, summary, typed_source


def question_source(question: Node) -> tuple[str, bool]:
    """A question's whole text as a ``%%chat`` cell holds it to ask it again, and whether
    its braces are ``{name}`` fields (as typed) or text (as sent: the cell needs
    ``--raw``)."""
    typed = typed_source(question.meta)
    if typed is not None:
        return typed, True
    return message_text(question.message), False


def question_text(question: Node, width: int = TEXT_WIDTH) -> str:
    """A question on one line, as typed (chips for its values), cut at ``width`` with ``…``."""
    return summary(question.message, width, question.meta)
