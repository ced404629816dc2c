"""The notebook as context: Python values, files and other branches made into content blocks.

Pure conversion, kept out of the kernel so every rule is testable without one: a value
by its type (``values``), image bytes fitted to the API's limits (``images``), a file by
its bytes (``files``), the question assembled and what was sent recorded (``sent``), and
the code blocks of an answer (``code``). The kernel (``kernel/context.py``) finds the
values, the cells, the errors and the files, and hands them here.

pandas, numpy, matplotlib and Pillow stay optional: nothing here imports them unless a
value of theirs is already in hand (or, for Pillow, an image must be scaled).

May import the core below it (``textview``, ``errors``, ``i18n``) and never the session,
the providers or Jupyter.
"""

from __future__ import annotations

from .code import CodeBlock, code_blocks
from .files import attachment
from .sent import Converted, Limits, QuestionParts, Sent, sent_line, with_text
from .values import convert_value

__all__ = [
    "CodeBlock",
    "Converted",
    "Limits",
    "QuestionParts",
    "Sent",
    "attachment",
    "code_blocks",
    "convert_value",
    "sent_line",
    "with_text",
]
