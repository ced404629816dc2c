"""``%chat export`` and ``%chat find``: the session shared as a file, a node found.

``export md [FILE]`` shows (or writes) the current path as Markdown; ``export html
[FILE]`` writes the whole tree as one HTML page that opens anywhere
(``share/page.py``), by default beside the notebook (``analysis.chat.html``);
``export ipynb [FILE]`` writes the current branch as a notebook whose cells continue
the session (``share/notebook.py``), by default ``analysis.branch-LEAF.ipynb``. No
export ever replaces a session file. ``find`` is in finding.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ...conversation.session import Session
from ...errors import StoreError
from ...history.store import refuse_session_target
from ...i18n import _
from ...share.files import write_like
from ...share.notebook import branch_notebook, notebook_path
from ...share.page import page_path, session_page
from ...textview import path_markdown
from ..display.output import show_markdown
from ..sessions import KernelSessions
from .finding import find_command

EXPORT_USAGE = "export md|html|ipynb [FILE]"


class ShareCommands:
    """``%chat export`` and ``%chat find``, mixed into ``Commands`` (which provides these)."""

    sessions: KernelSessions

    @property
    def session(self) -> Session:  # Commands' own: the kernel's current session
        raise NotImplementedError

    def do_find(self, args: list[str]) -> Any:
        return find_command(self.sessions, args)

    def do_export(self, args: list[str]) -> None:
        if not args or args[0] not in ("md", "html", "ipynb") or len(args) > 2:
            raise UsageError(_("usage: %chat {usage}").format(usage=EXPORT_USAGE))
        if args[-1].startswith("--"):  # never a file named "--x"
            raise UsageError(
                _("%chat: unknown option {option}; usage: %chat {usage}").format(
                    option=repr(args[-1]), usage=EXPORT_USAGE
                )
            )
        session = self.session
        if session.leaf is None:
            raise UsageError(_("the session is empty; run a %%chat cell first"))
        kind = args[0]
        if kind == "md":
            markdown = path_markdown(session.tree, session.leaf)
            if len(args) == 1:
                show_markdown(markdown)
                return
            target = _target(args[1])
            _write(target, markdown, ".md", session.location)
            print(
                _("Wrote the current path ({count} messages) to {path}.").format(
                    count=len(session.path()), path=target
                )
            )

            return
        location = Path(session.location) if session.location else self.sessions.session_file()
        if kind == "html":
            target = _target(args[1]) if len(args) > 1 else page_path(location)
            page = session_page(session)
            _write(target, page, ".html", location)
            print(
                _(
                    "Wrote the session ({nodes} nodes, {size} kB) to {target}: one page that "
                    "opens in any browser, with no network."
                ).format(
                    nodes=len(session.tree), size=round(len(page.encode()) / 1000), target=target
                )
            )
            return
        target = _target(args[1]) if len(args) > 1 else notebook_path(location, session.leaf)
        relative = os.path.relpath(location.resolve(), target.resolve().parent)
        notebook = branch_notebook(
            session.tree,
            session.leaf,
            session_file=Path(relative).as_posix(),
            labels=session.labels,
            prices=session.prices,
        )
        text = json.dumps(notebook, ensure_ascii=False, indent=1) + "\n"
        _write(target, text, ".ipynb", location)
        questions = len(notebook["cells"]) - 2  # after the note and the setup cell
        print(
            _(
                "Wrote the current branch ({questions} question(s)) to {target}: open it "
                "beside {session} and its cells continue this session."
            ).format(questions=questions, target=target, session=location.name)
        )


def _target(word: str) -> Path:
    return Path(word).expanduser()


def _write(target: Path, text: str, suffix: str, session_file: str | Path | None) -> None:
    """Write an export, never over a session file and no more readable than it (0600);
    a mistake is one line with the fix."""
    try:
        refuse_session_target(target)
    except StoreError as error:
        raise UsageError(
            _("{error}; export to a {suffix} file instead").format(error=error, suffix=suffix)
        ) from None
    try:
        write_like(target, text, session_file)
    except OSError as error:
        raise UsageError(
            _("cannot write {target}: {reason}; choose another FILE").format(
                target=target, reason=error.strerror
            )
        ) from None
