"""``%%chat`` and ``%chat``: the notebook's way into a session, and nothing more.

The magic translates a cell into one ``Session.run_cell`` call (the notebook-native
rule lives in the session), a line into one ``%chat`` command (commands.py), and leaves
parsing to options.py, rendering to output.py and turn.py, and the one shared
Session per session file to sessions.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar, cast

from IPython.core import magic as _ipython_magic
from IPython.core.error import UsageError
from IPython.core.magic import Magics, magics_class, no_var_expand

from ..conversation.events import Turn
from ..conversation.session import Refilled, Session
from ..conversation.settings import ChatSettings
from ..errors import AmbiguousId, ChatError, ContextRefused, NodeNotFound
from ..history.node import Node
from ..i18n import _
from . import experiment_cell
from . import turn as _turn
from .commands import Commands, help_text
from .config import TreeChat
from .context import Question, QuestionBuilder
from .history import CellErrors
from .language import follow_settings
from .notebook import current_cell_id
from .options import THINKING_OFF, CellOptions, chat_arguments, chat_help, parse_cell_line
from .sessions import KernelSessions

_F = TypeVar("_F", bound=Callable[..., Any])
# IPython types its decorators as returning a union; these say what they do here.
cell_magic = cast("Callable[[_F], _F]", _ipython_magic.cell_magic)
line_magic = cast("Callable[[str], Callable[[_F], _F]]", _ipython_magic.line_magic)


def _documented(doc: Callable[[], str]) -> Callable[[_F], _F]:
    """Give a function ``doc()`` as its docstring (as written: English, when it loads)."""

    def document(func: _F) -> _F:
        func.__doc__ = doc()
        return func

    return document


def cell_help() -> str:
    """What ``%%chat?`` says above the options, in the current language."""
    return _(
        """\
Ask the model; the reply streams in below, then a footer line.

Which branch the question goes on follows the notebook: re-running a cell whose
question is on the current path forks there (changed text: an edit; unchanged:
a retry beside the old answer); any other cell continues the current branch.
--new, --from ID and --continue override that.

{name} in the text becomes the variable by its type: a DataFrame a table, a
figure or image an image, an array numpy's summary; {In[3]}, {Out[3]} and
{Err[3]} are cell 3's source, result and error, {Err} the last error
({{name}} keeps the braces; --raw turns it all off). --attach PATH adds a file
(text, PDF, image), --with ID another node's text (--with-path: its whole
path). The line under the footer says what was sent.

--n 3, --models A,B and --temperatures 0,1 ask for several answers at once
(every combination, at most 12), streamed side by side; `%chat compare`
compares them and jupyter_tree_chat.compare_frame() scores them.
--over NAME asks once per row of a DataFrame, a list of dicts or a .csv file
({column} is the row's value; the rows are sibling branches, --concurrency N at
a time); re-run edited, it is a new version; experiment_frame() has every answer.

Afterwards _chat holds the reply text and _chat_id its node id;
`%chat help` lists the commands (tree, branches, switch, edit, retry, ...).
With --thinking N the model thinks first (N tokens at most; 'adaptive' lets it
decide); its thinking is folded above the answer. The footer shows the reply's
cost and how full the context window is; `%chat context` and `%chat usage` say more.
--tools add,git:* offers registered functions and MCP servers' tools (servers
from .mcp.json beside the notebook or TreeChat.mcp_servers; `%chat mcp` lists
them); --allow-destructive lets tools annotated destructive run.
Past the window (or --budget N tokens), each request keeps whole exchanges, newest
first, and a note for the rest ("saw 12 of 40 exchanges" in the footer); the
session file keeps everything.
Settings: %config TreeChat.model = "..." (also max_tokens, system,
temperature, thinking, provider, session, substitute_variables, throttle,
max_rows, max_columns, max_chars, context_windows, prices, context_budget,
summarize_dropped, tools, mcp_servers, allow_destructive, tool_timeout).
"""
    )


@magics_class
class ChatMagics(Magics):
    """``%%chat`` asks; ``%chat`` commands browse and reshape the session tree."""

    def __init__(self, shell: Any, sessions: KernelSessions) -> None:
        super().__init__(shell)
        self.sessions = sessions
        self.errors = CellErrors(shell)  # the kernel's Err, for {Err} and {Err[3]}
        self.errors.install()
        self.questions = QuestionBuilder(
            shell, self.errors, sessions.config.limits, lambda: sessions.config.substitute_variables
        )
        sessions.refill = self._refill  # an edit in a view fills {fields} from this kernel
        self.commands = Commands(sessions, shell, self.questions)

    @no_var_expand
    @chat_arguments
    @cell_magic
    @_documented(cell_help)
    def chat(self, line: str, cell: str) -> None:
        options = parse_cell_line(line)
        session = self._session(options.session)
        self._check_refs(session, options)
        settings = self._settings(session, options)
        self._check_tools(session, settings)
        cell_id = current_cell_id(self.shell)
        if options.over is not None:
            action = self._experiment(cell, options, session, settings, cell_id)
        else:
            question = self._question(cell, options, session)
            action = lambda: session.run_cell(  # noqa: E731
                question.content,
                meta=question.meta,
                cell_id=cell_id,
                settings=settings,
                from_node=options.from_node,
                new_root=options.new,
                continue_leaf=options.continue_leaf,
                fanout=options.fanout,
            )
        original_provider = session.provider
        if options.provider is not None:
            try:
                session.provider = self.sessions.provider(options.provider)
            except ChatError as error:  # e.g. --provider anthropic with no API key
                raise UsageError(f"%%chat --provider {options.provider}: {error}") from None
        try:
            _turn.run_turn(self.sessions, session, action, shell=self.shell)
        finally:
            session.provider = original_provider

    @no_var_expand
    @line_magic("chat")
    def chat_command(self, line: str) -> Any:
        return self.commands.run(line)

    chat_command.__doc__ = help_text()

    # -- pieces -----------------------------------------------------------------------

    def _refill(self, original: Node, text: str) -> Refilled:
        try:
            question = self.questions.refill(original, text, where="edit")
        except UsageError as error:  # a view shows it as the action's one-line error
            raise ContextRefused(str(error)) from None
        return Refilled(question.content, question.meta, question.note)

    def _question(self, cell: str, options: CellOptions, session: Session) -> Question:
        text = cell.strip()
        if not text:
            raise UsageError(
                _("%%chat: the cell is empty; write your question below the %%chat line")
            )
        return self.questions.question(
            text,
            substitute=self.sessions.config.substitute_variables and not options.raw,
            attach=options.attach,
            folder=self.sessions.notebook().parent,
            with_refs=options.with_refs,
            with_path=options.with_path,
            session=session,
        )

    def _experiment(
        self,
        cell: str,
        options: CellOptions,
        session: Session,
        settings: ChatSettings,
        cell_id: str | None,
    ) -> Callable[[], Turn]:
        """The action of a ``--over`` cell, its rows filled in (experiment_cell.py)."""
        return experiment_cell.prepare(
            self.shell,
            self.questions,
            session,
            cell.strip(),
            options,
            settings=settings,
            cell_id=cell_id,
            folder=self.sessions.notebook().parent,
            substitute=self.sessions.config.substitute_variables and not options.raw,
            live=getattr(self.shell, "kernel", None) is not None,
            grid_hook=self.sessions.grid_hook,
        )

    def _session(self, name: str | None) -> Session:
        try:
            return self.sessions.session(name)
        except ChatError as error:  # a bad session name, a missing API key, ...
            raise UsageError(f"%%chat: {error}") from None

    def _check_refs(self, session: Session, options: CellOptions) -> None:
        if options.from_node is not None:
            try:
                session.resolve(options.from_node)
            except (NodeNotFound, AmbiguousId) as error:
                hint = (
                    _("give more characters")
                    if isinstance(error, AmbiguousId)
                    else _("`%chat tree` shows the ids")
                )
                raise UsageError(
                    f"%%chat --from {options.from_node}: {_first_clause(error)}; {hint}"
                ) from None
        if options.tools:
            known = session.tools.names()
            unknown = [n for n in options.tools if n not in known and ":" not in n]
            if unknown:
                have = ", ".join(known) if known else _("none registered; use @tool on a function")
                raise UsageError(
                    _("%%chat --tools: no tool named {name} (registered: {have})").format(
                        name=repr(unknown[0]), have=have
                    )
                )

    def _check_tools(self, session: Session, settings: ChatSettings) -> None:
        """The tools the cell offers, found (MCP servers started) before anything is sent."""
        try:
            session.tool_specs(settings)
        except ChatError as error:  # a server that cannot start, no mcp package, ...
            raise UsageError(f"%%chat: {error}") from None

    def _settings(self, session: Session, options: CellOptions) -> ChatSettings:
        settings = session.settings.merged(
            model=options.model,
            system=options.system,
            max_tokens=options.max_tokens,
            temperature=options.temperature,
        )
        if options.tools is not None:
            settings = settings.merged(tools=options.tools)
        if options.allow_destructive:
            settings = replace(settings, allow_destructive=True)
        if options.thinking is not None:
            thinking = None if options.thinking == THINKING_OFF else options.thinking
            settings = replace(settings, thinking=thinking)
        if options.budget is not None:
            settings = replace(settings, context_budget=options.budget)
        return settings


# ``%%chat?`` and ``%chat?`` ask a magic's ``getdoc()`` first (IPython's oinspect): the
# help is then built when it is asked for, in the language the kernel speaks by then
ChatMagics.chat.getdoc = lambda: chat_help(cell_help())  # type: ignore[attr-defined]
ChatMagics.chat_command.getdoc = help_text  # type: ignore[attr-defined]


def _first_clause(error: Exception) -> str:
    return str(error).split(";")[0]


def make_magics(shell: Any) -> tuple[ChatMagics, KernelSessions]:
    """The magics and the kernel's session registry for ``shell``."""
    config = TreeChat(parent=shell)
    follow_settings(config)
    sessions = KernelSessions(shell, config)
    return ChatMagics(shell, sessions), sessions
