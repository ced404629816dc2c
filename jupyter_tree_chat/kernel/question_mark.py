"""``%chat edit 1 Why is that?``: a question keeps its question mark.

IPython reads a line that ends in ``?`` as a help request (its input transformer
``HelpEnd``, in ``IPython.core.inputtransformer2``) before any magic sees it: the line
above would print "Object `that` not found." Questions end in ``?``, and every ``%chat``
command that takes the user's text (edit, context, find, compact, grade notes) must take
it as typed.

So a cleanup transform (``shell.input_transformers_cleanup``, run before IPython's own
token transforms) turns such a line into the call IPython itself makes for a magic line,
``get_ipython().run_line_magic('chat', 'edit 1 Why is that?')``, which no later
transform reads as help. Only ``%chat`` lines with arguments change: ``%chat?``,
``%chat??`` and ``%%chat?`` are still help, and a ``%%chat`` cell is left whole (its body
is the question, which IPython never read as help).
"""

from __future__ import annotations

import re
from typing import Any

_CHAT_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<assign>[A-Za-z_][\w.]*\s*=\s*)?%chat[ \t]+(?P<args>\S.*\?)[ \t]*$"
)


def keep_question_marks(lines: list[str]) -> list[str]:
    """The cell's lines, each ``%chat ARGS?`` line made the magic's own call."""
    if not lines or lines[0].lstrip().startswith("%%"):
        return lines
    changed = False
    kept = []
    for line in lines:
        body = line.rstrip("\r\n")
        found = _CHAT_LINE.match(body) if body.endswith("?") else None
        if found is None:
            kept.append(line)
            continue
        changed = True
        call = f"get_ipython().run_line_magic('chat', {found['args']!r})"
        kept.append(f"{found['indent']}{found['assign'] or ''}{call}{line[len(body) :]}")
    return kept if changed else lines


def install(shell: Any) -> None:
    """Run ``keep_question_marks`` on every cell of ``shell`` (once, however often the
    extension is loaded)."""
    cleanup = shell.input_transformers_cleanup
    if keep_question_marks not in cleanup:
        cleanup.append(keep_question_marks)


def uninstall(shell: Any) -> None:
    cleanup = shell.input_transformers_cleanup
    while keep_question_marks in cleanup:
        cleanup.remove(keep_question_marks)
