"""The ``%chat`` line commands: each one reads the line, calls the Session, shows a result.

A command never changes the tree itself; it resolves ids (by unique prefix or label),
turns every user mistake into a one-line ``UsageError`` that says the fix, and leaves
turns that ask the model to ``turn.run_turn`` so they look exactly like a ``%%chat`` cell.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from ...context import code_blocks, with_text
from ...conversation.many.variants import Fanout
from ...conversation.session import Session
from ...errors import AmbiguousId, ChatError, NodeNotFound
from ...history.store import list_sessions
from ...history.tree import Node
from ...i18n import _
from ...measures.compare import question_of, sibling_answers
from ...picture import draw
from ...textview import (
    draw_tree,
    hidden_branches,
    hidden_note,
    summary,
    typed_pieces,
    typed_source,
)
from .. import turn as _turn
from ..context import Question, QuestionBuilder
from ..display.columns import show_compare
from ..display.experiment_view import show_versions
from ..display.output import show_html, show_markdown, show_svg
from ..options import fanout_words
from ..sessions import KernelSessions
from .batches import BatchCommands
from .endpoints import describe_model, models_report
from .grading import GradeCommands
from .importing import import_session
from .language import LanguageCommands
from .measures import MeasureCommands
from .sharing import ShareCommands


def help_text() -> str:
    """``%chat help``, in the reader's language."""
    return _(
        """\
%chat COMMAND — the session tree behind %%chat (ids: any unique prefix, or a label)

  tree [--svg] [--all]  the whole tree (--svg: as a picture; --all: hidden ones too)
  branches [ID] [--all] the branches leaving ID (default: every branch, by its leaf)
  switch ID             make ID's branch current (its newest leaf)
  edit N [TEXT]         ask TEXT instead of question N of the current path (1 = first);
                        without TEXT, N as typed, its {fields} filled in again now;
                        --raw TEXT: sent as written
  retry [ID]            a new answer to the last question (or ID's), beside the old one
                        (both take --n N, --models A,B, --temperatures T1,T2, --batch
                        first: several answers at once, e.g. %chat retry --n 3)
  compare [ID]          the answers to the last question (or ID's) side by side
  compare --versions    an experiment's rows × versions side by side (%%chat --over)
  experiment [EXP]      an experiment's summary per version and model: grades, wins, cost
  grade ID SCORE [--note TEXT] [--scale LOW-HIGH]
                        grade an answer (1-5 by default; up/down: a thumb); the latest
                        grade counts, every grade is kept
  grade --by FUNC [EXP] FUNC(answer_text, row) over the experiment's answers: a column
  grade --rubric TEXT [--model M] [--name NAME] [EXP]
                        a model judges each answer by TEXT (its requests: a side branch)
  prefer A B [--tie]    answer A beats answer B (--tie: neither)
  batch [cancel ID]     the session's batches (%%chat --batch), their results read now
  fork-before-tool      ask the last question again from before its tool call
  compact [TEXT]        summarise the path into a new root; the old branch stays
  export md [FILE]      the current path as Markdown (to FILE, or shown here)
  export html [FILE]    the whole tree as one page that opens anywhere, no network
                        (default: beside the notebook, NOTEBOOK.chat.html)
  export ipynb [FILE]   the current branch as a notebook whose cells continue it
  find TEXT [--regex] [--all] [--role user|assistant|tool] [--case] [--sessions] [--json]
                        matching nodes on every branch (--all: hidden ones too;
                        --sessions: every session beside the notebook)
  context [--budget N] [QUESTION]
                        how full the context window is (QUESTION: counted by the API;
                        --budget: what a request with that budget would keep)
  usage                 tokens and cost: this branch, the whole session, per model
  text [ID]             a node's text (default: the current leaf); x = %chat text ID
  code [ID] [K]         put code block K (default: the last) of answer ID (default:
                        the last answer) into a new cell below
  sessions              this notebook's sessions; * marks the one in use
  use NAME              use session NAME from now on ('default': the unnamed one)
  import SRC... [--session NAME] [--format F] [--conversation ID] [--no-sidechains]
                        a Claude Code, pi, ChatGPT or Open WebUI session as a new
                        session of this notebook (SRC is only read), then use it
  model [NAME]          show or set the model (same as %config TreeChat.model);
                        ENDPOINT:MODEL asks another endpoint, e.g. local:smollm2
  models [ENDPOINT]     every endpoint: whether it answers, its models, what it supports
  label ID NAME         name a node (an empty NAME removes the label)
  hide ID / unhide ID   fold the branch from ID away in every view, or back; kept on disk
  panel                 the session as an interactive panel (tree, edit, retry, compare)
  mcp [NAME]            MCP servers: state, tools, annotations (NAME: start it, list its
                        tools); mcp stop [NAME] stops them

After each turn, _chat holds the reply text and _chat_id its node id.
"""
    ) + _(
        """%chat language [zh_CN|en|auto]: the language of these texts and where it comes from, or
set it (auto: JupyterLab's, else the kernel's locale, else English).
"""
    )


class Commands(MeasureCommands, ShareCommands, LanguageCommands, GradeCommands, BatchCommands):
    """Runs one ``%chat`` line against the kernel's sessions."""

    def __init__(self, sessions: KernelSessions, shell: Any, questions: QuestionBuilder) -> None:
        self.sessions = sessions
        self.shell = shell
        self.questions = questions

    def run(self, line: str) -> Any:
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(
                _("%chat: cannot read {line} ({error}); close the quote").format(
                    line=repr(line), error=error
                )
            ) from None
        if not words or words[0] in ("help", "-h", "--help"):
            print(help_text(), end="")
            return None
        name, args = words[0], words[1:]
        handler: Callable[[list[str]], Any] | None = getattr(
            self, "do_" + name.replace("-", "_"), None
        )
        if handler is None:
            raise UsageError(
                _("%chat: unknown command {name}; `%chat help` lists the commands").format(
                    name=repr(name)
                )
            )
        try:
            return handler(args)
        except ChatError as error:
            raise UsageError(f"%chat {name}: {error}") from None

    # -- helpers --------------------------------------------------------------------------

    @property
    def session(self) -> Session:
        return self.sessions.session()

    def node(self, ref: str) -> Node:
        """A node by unique id prefix or label, or a UsageError that says what to do."""
        try:
            return self.session.resolve(ref)
        except AmbiguousId as error:
            raise UsageError(f"{error}") from None
        except NodeNotFound:
            raise UsageError(
                _("no node id or label starts with {ref}; `%chat tree` shows the ids").format(
                    ref=repr(ref)
                )
            ) from None

    def _expect(self, args: list[str], low: int, high: int, usage: str) -> None:
        """``args`` are ``low`` to ``high`` ids or names; an ``--option`` is never one."""
        self._flags(args, (), usage)
        if not low <= len(args) <= high:
            raise UsageError(_("usage: %chat {usage}").format(usage=usage))

    def _turn(self, action: Callable[[], Any]) -> None:
        _turn.run_turn(self.sessions, self.session, action, shell=self.shell)

    def _question(self, words: list[str], where: str) -> Question:
        return self.questions.question(
            " ".join(words), where=where, substitute=self.sessions.config.substitute_variables
        )

    def _text(self, words: list[str], where: str) -> str:
        content = self._question(words, where).content
        if not isinstance(content, str):
            raise UsageError(
                _("{where} takes text only; an image or file goes in a %%chat cell").format(
                    where=where
                )
            )
        return content

    # -- reading the tree ----------------------------------------------------------------

    def _flags(self, args: list[str], allowed: tuple[str, ...], usage: str) -> list[str]:
        """``args`` without the ``--flags`` in ``allowed``; any other ``--flag`` is an error."""
        for word in args:
            if word.startswith("--") and word not in allowed:
                raise UsageError(
                    _("%chat: unknown option {option}; usage: %chat {usage}").format(
                        option=repr(word), usage=usage
                    )
                )
        return [word for word in args if word not in allowed]

    def do_mcp(self, args: list[str]) -> None:
        from .mcp import mcp_command  # the MCP modules load when MCP is first used

        mcp_command(self.sessions, args)

    def do_tree(self, args: list[str]) -> None:
        usage = "tree [--svg] [--all]"
        self._expect(self._flags(args, ("--svg", "--all"), usage), 0, 0, usage)
        session = self.session
        show_all = "--all" in args
        if not len(session.tree):
            print(
                _("The session is empty ({location}); run a %%chat cell.").format(
                    location=session.location
                )
            )
            return
        count = 0 if show_all else len(hidden_branches(session.tree, session.hidden, session.leaf))
        if "--svg" in args:
            picture = draw(session, show_hidden=show_all)
            show_svg(
                picture.svg,
                _("{shown} of {total} messages drawn").format(
                    shown=picture.shown, total=picture.total
                ),
            )
        else:
            print(
                draw_tree(
                    session.tree,
                    labels=session.labels,
                    leaf=session.leaf,
                    hidden=session.hidden,
                    show_hidden=show_all,
                )
            )
        if count:
            print(hidden_note(count, _("`%chat tree --all` shows them")))

    def do_branches(self, args: list[str]) -> None:
        usage = "branches [ID] [--all]"
        rest = self._flags(args, ("--all",), usage)
        self._expect(rest, 0, 1, usage)
        session = self.session
        tree = session.tree
        on_path = {n.id for n in session.path()}
        folded = set() if "--all" in args else hidden_branches(tree, session.hidden, session.leaf)
        if rest:
            start = self.node(rest[0])
            heads = tree.branches(start.id)
            if not heads:
                print(_("{node} has no branches yet (it is a leaf).").format(node=start.id[:7]))
                return
            rows = [(head, tree.deepest_leaf(head.id)) for head in heads]
        else:
            rows = [(leaf, leaf.id) for leaf in tree.leaves()]
            if not rows:
                print(_("The session is empty; run a %%chat cell."))
                return
        shown = [row for row in rows if not _inside(tree, row[1], folded)]
        for head, leaf_id in shown:
            mark = "*" if head.id in on_path else " "
            leaf = tree.get(leaf_id)
            asked = _about(head)
            print(
                _(
                    "{mark} {head}  {position}  {role} {asked}  → leaf {leaf} (depth {depth})"
                ).format(
                    mark=mark,
                    head=head.id[:7],
                    position=tree.sibling_position(head.id),
                    role=f"{head.role:<9}",
                    asked=asked,
                    leaf=leaf.id[:7],
                    depth=tree.depth(leaf.id),
                )
            )
        if len(shown) < len(rows):
            print(hidden_note(len(rows) - len(shown), _("`%chat branches --all` lists them")))

    def do_hide(self, args: list[str], hidden: bool = True) -> None:
        self._expect(args, 1, 1, "hide ID" if hidden else "unhide ID")
        node = self.node(args[0])
        changed = self.session.hide(node.id, hidden)
        short = node.id[:7]
        if not changed:
            already = _("{node} is already hidden.") if hidden else _("{node} is not hidden.")
            print(already.format(node=short))
        elif hidden:
            print(
                _("Hid the branch from {node} (kept in the file): `%chat unhide {node}`.").format(
                    node=short
                )
            )
        else:
            print(_("The branch from {node} shows again.").format(node=short))

    def do_unhide(self, args: list[str]) -> None:
        self.do_hide(args, hidden=False)

    def do_text(self, args: list[str]) -> str:
        self._expect(args, 0, 1, "text [ID]")
        if args:
            return self.node(args[0]).text
        leaf = self.session.leaf
        if leaf is None:
            raise UsageError(_("the session is empty; run a %%chat cell first"))
        return self.session.tree.get(leaf).text

    def do_code(self, args: list[str]) -> None:
        self._expect(args, 0, 2, "code [ID] [K]")
        ref, number = None, None
        if args and _is_block_number(args[-1]):
            number = int(args.pop())
        if args:
            ref = args.pop()
        if args:
            raise UsageError(
                _("usage: %chat code [ID] [K]  (K: the code block's number, 1 = first)")
            )
        node = self.node(ref) if ref is not None else self._last_answer()
        blocks = code_blocks(node.text)
        if not blocks:
            raise UsageError(
                _("%chat code: {node} has no code block; pick another answer ID").format(
                    node=node.id[:7]
                )
            )
        index = len(blocks) if number is None else number
        if index < 0:
            index += len(blocks) + 1
        if not 1 <= index <= len(blocks):
            raise UsageError(
                _("%chat code: {node} has {count} code block(s); give K from 1 to {count}").format(
                    node=node.id[:7], count=len(blocks)
                )
            )
        self.shell.set_next_input(blocks[index - 1].code.rstrip("\n"), replace=False)
        print(
            _("Code block {index} of {count} of {node} is in a new cell below.").format(
                index=index, count=len(blocks), node=node.id[:7]
            )
        )

    def _last_answer(self) -> Node:
        for node in reversed(self.session.path()):
            if node.role == "assistant":
                return node
        raise UsageError(_("%chat code: there is no answer on this branch yet; run a %%chat cell"))

    # -- moving around --------------------------------------------------------------------

    def do_switch(self, args: list[str]) -> None:
        self._expect(args, 1, 1, "switch ID")
        node = self.node(args[0])
        leaf = self.session.switch(node.id)
        tree = self.session.tree
        shown = tree.get(leaf)
        about = _about(shown)
        print(
            _("On {leaf} now (depth {depth}): {about}").format(
                leaf=leaf[:7], depth=tree.depth(leaf), about=about
            )
        )

    def do_panel(self, args: list[str]) -> None:  # the widget's panel: see sessions.panel_hook
        show = self.sessions.panel_hook
        if show is None:
            raise UsageError(
                _("%chat panel: no panel is installed; run `%load_ext jupyter_tree_chat`")
            )
        show(self.session)

    def do_label(self, args: list[str]) -> None:
        self._expect(args, 1, 2, "label ID NAME")
        node = self.node(args[0])
        name = args[1] if len(args) > 1 else ""
        self.session.label(node.id, name)
        if name:
            print(_("Labelled {node} {name}.").format(node=node.id[:7], name=repr(name)))
        else:
            print(_("Removed {node}'s label.").format(node=node.id[:7]))

    # -- turns ---------------------------------------------------------------------------

    def do_edit(self, args: list[str]) -> None:
        fanout, raw, args = _edit_options(args)
        if args:  # the options may also follow N
            more, raw_after, rest = _edit_options(args[1:])
            fanout, raw, args = fanout or more, raw or raw_after, args[:1] + rest
        if not args:
            raise UsageError(
                _(
                    "usage: %chat edit N [TEXT] (N = question number on this branch; without "
                    "TEXT, the question as typed, its fields filled in again; --raw TEXT: "
                    "sent as written)"
                )
            )
        questions = self.session.user_turns()
        try:
            number = int(args[0])
        except ValueError:
            number = 0
        if not 1 <= number <= len(questions):
            span = (
                _("from 1 to {count}").format(count=len(questions))
                if questions
                else _("(there are none yet)")
            )
            raise UsageError(
                _("%chat edit: there is no question {number} on this branch; give N {span}").format(
                    number=repr(args[0]), span=span
                )
            )
        original = questions[number - 1]
        content, meta = self._edited(original, number, " ".join(args[1:]), raw)
        self._turn(lambda: self.session.edit(original.id, content, meta=meta, fanout=fanout))

    def _edited(
        self, original: Node, number: int, text: str, raw: bool
    ) -> tuple[str | list[dict[str, Any]], dict[str, Any] | None]:
        """What ``%chat edit`` asks instead of ``original``: TEXT (or, without it, the
        question as typed) with its fields filled in now, or with ``--raw`` TEXT as written."""
        if raw:
            if not text.strip():
                raise UsageError(
                    _(
                        "%chat edit {number} --raw: give the TEXT to send as written, "
                        "e.g. %chat edit {number} --raw What does {{df}} mean?"
                    ).format(number=number)
                )
            return with_text(original.message, text), None
        typed = typed_source(original.meta)
        if typed is None:
            if not text.strip():
                raise UsageError(
                    _(
                        "%chat edit {number}: question {number} keeps no typed text (it "
                        "was asked as written, or before this version); give the new "
                        "TEXT: %chat edit {number} TEXT"
                    ).format(number=number)
                )
            question = self._question([text], "%chat edit")
        else:
            question = self.questions.refill(original, text or typed, where="%chat edit")
        if question.note:
            print(question.note)
        return question.content, question.meta

    def do_retry(self, args: list[str]) -> None:
        fanout, args = fanout_words(args, "%chat retry")
        self._expect(args, 0, 1, "retry [--n N] [--models A,B] [--temperatures T1,T2] [ID]")
        ref = self.node(args[0]).id if args else None
        if ref is None and self.session.leaf is None:
            raise UsageError(_("the session is empty; run a %%chat cell first"))
        self._turn(lambda: self.session.retry(ref, fanout=fanout))

    def do_compare(self, args: list[str]) -> None:
        versions = "--versions" in args
        args = [a for a in args if a != "--versions"]
        self._expect(args, 0, 1, "compare [--versions] [ID]")
        session = self.session
        if session.leaf is None and not args:
            raise UsageError(_("the session is empty; run a %%chat cell first"))
        ref = self.node(args[0]).id if args else None
        if versions:
            show_versions(session, ref)
            return
        question = question_of(session.tree, ref)
        answers = sibling_answers(session.tree, question.id, session.prices)
        if len(answers) < 2:
            raise UsageError(
                _(
                    "%chat compare: question {question} has {count} answer(s); "
                    "ask for more with `%chat retry --n 3` (or %%chat --n 3)"
                ).format(question=question.id[:7], count=len(answers))
            )
        show_compare(question, answers)

    def do_fork_before_tool(self, args: list[str]) -> None:
        text = self._text(args, "%chat fork-before-tool") if args else None
        self._turn(lambda: self.session.fork_before_tool_use(text))

    def do_compact(self, args: list[str]) -> None:
        session = self.session
        before = session.leaf
        if before is None:
            raise UsageError(_("the session is empty; there is nothing to compact"))
        if args and args[0].startswith("--"):
            self._flags(args[:1], (), "compact [TEXT]")
        instructions = self._text(args, "%chat compact") if args else None
        self._turn(lambda: session.compact(instructions))
        root = session.path()[0]
        show_markdown(root.text)
        print(
            _(
                "Compacted into a new root {root}; the old branch stays: `%chat switch {before}`."
            ).format(root=root.id[:7], before=before[:7])
        )

    # -- files and sessions ----------------------------------------------------------------

    def do_sessions(self, args: list[str]) -> None:
        self._expect(args, 0, 0, "sessions")
        current = self.sessions.session_file()
        found = list_sessions(self.sessions.notebook())
        if current not in {p.resolve() for p in found.values()}:
            found[self.sessions.config.session] = current  # in use, not written yet
        for name, path in sorted(
            found.items(), key=lambda item: (item[0] is not None, item[0] or "")
        ):
            mark = "*" if path.resolve() == current else " "
            label = "default" if name is None else name  # the name `%chat use` takes
            print(f"{mark} {label:<16} {path}")

    def do_use(self, args: list[str]) -> None:
        self._expect(args, 1, 1, "use NAME")
        try:
            self.sessions.config.session_file = None  # a name chooses among the notebook's own
            self.sessions.config.session = args[0]
        except Exception as error:  # traitlets wraps the name check
            raise UsageError(_("%chat use: {error}").format(error=error)) from None
        session = self.sessions.session()
        print(
            _("Using session {name}: {location} ({count} nodes).").format(
                name=repr(args[0]), location=session.location, count=len(session.tree)
            )
        )

    def do_import(self, args: list[str]) -> None:
        for line in import_session(self.sessions, args):
            print(line)

    def do_model(self, args: list[str]) -> None:
        self._expect(args, 0, 1, "model [NAME]")
        config = self.sessions.config
        if args:
            config.model = args[0]
        session = self.session
        shown = describe_model(session, config.model or session.provider.default_model)
        if config.model:
            print(_("Model: {model}").format(model=shown))
        else:
            print(_("Model: {model} (the provider's default)").format(model=shown))

    def do_models(self, args: list[str]) -> None:
        self._expect(args, 0, 1, "models [ENDPOINT]")
        report = models_report(self.session, self.sessions.config, args[0] if args else None)
        show_html(report.html(), report.plain())


def _inside(tree: Any, node_id: str, folded: set[str]) -> bool:
    """Whether ``node_id`` is in one of the ``folded`` branches (a walk up to its root)."""
    if not folded:
        return False
    current: str | None = node_id
    while current is not None:
        if current in folded:
            return True
        current = tree.get(current).parent_id
    return False


def _is_block_number(word: str) -> bool:
    """``2`` or ``-1`` is a code block's number; a longer number is taken for an id."""
    return re.fullmatch(r"-?\d{1,3}", word) is not None


def _edit_options(words: list[str]) -> tuple[Fanout | None, bool, list[str]]:
    """``--raw`` and the fan-out options at the front of ``words``, and the rest."""
    fanout, raw, rest = None, False, list(words)
    while rest:
        if rest[0] == "--raw":
            raw = True
            rest.pop(0)
            continue
        found, rest = fanout_words(rest, "%chat edit")
        if found is None:
            break
        fanout = found
    return fanout, raw, rest


def _about(node: Node, width: int = 60) -> str:
    """A node in one line: a question as typed (a chip whole or not at all), else its text."""
    if typed_pieces(node.meta) is not None:
        return summary(node.message, width, node.meta)
    return _snippet(node.text, width)


def _snippet(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
