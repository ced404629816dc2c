"""Writing an export no more readable than the session it copies.

A session file is created 0600 (store.py): it may hold private questions, code and data.
An export (a page, a notebook, Markdown) is a copy of it, so it is written with the
session file's permission bits, never the process's wider default (0644 under the usual
umask); a file already there is narrowed to them too. Handing the copy on is then a
choice the user makes (``chmod``), as it is for the session itself.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE = 0o600
"""The permission bits of an export whose session file cannot be read (none yet)."""


def session_mode(session_file: str | Path | None) -> int:
    """The permission bits of ``session_file`` (0600 where there is none to read)."""
    if session_file is None:
        return PRIVATE
    try:
        return stat.S_IMODE(os.stat(session_file).st_mode) & 0o666
    except OSError:
        return PRIVATE


def write_like(target: str | Path, text: str, session_file: str | Path | None) -> None:
    """Write ``text`` to ``target`` (UTF-8) with ``session_file``'s permission bits."""
    mode = session_mode(session_file)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), mode)
        out.write(text)
