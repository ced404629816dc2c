"""jupyter-tree-chat: a branching chat assistant that lives in Jupyter.

The layers import in one direction: ``history/`` (the tree, pure, and its file) ←
``providers/`` (models) ← ``conversation/`` (the session: state and actions) ← views
(``kernel/``, ``widget/``, ``cli/``, ``server/``); ``measures/`` holds the arithmetic
of tokens, cost and comparison. docs/architecture.md draws it.

In a notebook: ``%load_ext jupyter_tree_chat`` (or ``c.InteractiveShellApp.extensions =
["jupyter_tree_chat"]`` in ``ipython_config.py``), then ``%%chat`` cells; ``%chat help``
lists the commands.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .conversation.events import Turn
    from .conversation.session import Session
    from .conversation.settings import ChatSettings
    from .history.tree import Node, SessionTree
    from .measures.usage import node_cost, nodes_cost
    from .providers.tools.functions import ToolRegistry, tool

    register_tool = tool

#: public names loaded on first use, so that `jupyter tree-chat` (and the server
#: extension) start without importing the session, the providers and the tools
_LAZY = {
    "ToolRegistry": ("providers.tools.functions", "ToolRegistry"),
    "tool": ("providers.tools.functions", "tool"),
    # ``@tool`` for a function defined elsewhere
    "register_tool": ("providers.tools.functions", "tool"),
    "ChatSettings": ("conversation.settings", "ChatSettings"),
    "Session": ("conversation.session", "Session"),
    "Turn": ("conversation.events", "Turn"),
    "Node": ("history.tree", "Node"),
    "SessionTree": ("history.tree", "SessionTree"),
    "node_cost": ("measures.usage", "node_cost"),
    "nodes_cost": ("measures.usage", "nodes_cost"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value
    return value


__version__ = "0.1.0"
__all__ = [
    "ChatSettings",
    "Node",
    "Session",
    "SessionTree",
    "ToolRegistry",
    "Turn",
    "__version__",
    "compare_frame",
    "experiment_frame",
    "load_ipython_extension",
    "node_cost",
    "nodes_cost",
    "panel",
    "register_tool",
    "reply_text",
    "tool",
    "unload_ipython_extension",
]


def reply_text(node_id: str | None = None, *, session: str | None = None) -> str:
    """A node's text by id prefix or label (default: the current leaf, the last reply)."""
    from .kernel.sessions import current_session

    current = current_session(session)
    if node_id is None:
        if current.leaf is None:
            return ""
        return current.tree.get(current.leaf).text
    return current.resolve(node_id).text


def compare_frame(ref: str | None = None, *, session: str | None = None) -> Any:
    """The sibling answers of the current question (or of question/answer ``ref``) as a
    pandas DataFrame, one row per answer in sibling order (columns: ``compare.COLUMNS``;
    ``cost`` in US dollars at the session's prices, missing where a model has no price).

    Add a score with ``df["score"] = df.text.map(my_metric)``, then continue from the
    best with ``%chat switch ID``. Needs pandas: ``pip install jupyter-tree-chat[pandas]``.
    """
    from .errors import MissingExtra
    from .i18n import _
    from .kernel.sessions import current_session
    from .measures.compare import COLUMNS, rows, sibling_answers

    try:
        import pandas
    except ImportError:
        raise MissingExtra(
            _("compare_frame needs pandas: pip install 'jupyter-tree-chat[pandas]'")
        ) from None
    current = current_session(session)
    question = None if ref is None else current.resolve(ref).id
    answers = sibling_answers(current.tree, question, current.prices)
    return pandas.DataFrame(rows(answers), columns=list(COLUMNS))


def experiment_frame(ref: str | None = None, *, session: str | None = None) -> Any:
    """Every answer of an experiment (``%%chat --over``) as a pandas DataFrame, one row per
    answer: ``id``, ``question``, ``experiment``, ``version``, ``row`` (the row's place),
    ``template``, the row's input columns, then ``compare_frame``'s columns (``text``,
    ``model``, ``endpoint``, ``temperature``, tokens, ``cost``, ``seconds``, ...), then
    the grades (docs/experiments.md, "Grades"): ``grade`` and ``note`` (by hand), a
    column per other grader, preference ``wins`` out of ``preferences``. A ``--batch``
    request that got no answer (errored, expired, canceled) is a line of its own, without
    an ``id``: its outcome in ``stop_reason``, the API's line in ``text``.

    ``ref``: a node of the experiment, or the start of the experiment's id (default: the
    current question's). A question of no experiment (a fan-out) is one of one row.
    Compare versions with ``df.pivot_table(index="row", columns="version", values=...)``.
    Needs pandas: ``pip install jupyter-tree-chat[pandas]``.
    """
    from .errors import MissingExtra
    from .i18n import _
    from .kernel.commands.grading import experiment_node
    from .kernel.sessions import current_session
    from .measures.grades import experiment_table

    try:
        import pandas
    except ImportError:
        raise MissingExtra(
            _("experiment_frame needs pandas: pip install 'jupyter-tree-chat[pandas]'")
        ) from None
    current = current_session(session)
    node = experiment_node(current, ref)
    found, columns, _graders = experiment_table(
        current.tree, current.grades, node, current.prices, current.batches.outcomes()
    )
    return pandas.DataFrame(found, columns=columns)


def panel(session: str | None = None) -> Any:
    """The full panel over this notebook's session (the same one ``%%chat`` uses).

    The last expression of a cell displays it, as ``%chat panel`` does.
    """
    from .kernel.sessions import current_session, registry
    from .widget.hooks import compare_traits
    from .widget.widgets import TreePanel

    choices = registry().config.compare_choices()
    return TreePanel(current_session(session), **compare_traits(choices))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_tree_chat``: register ``%%chat``/``%chat`` and ``TreeChat``."""
    from .kernel import question_mark
    from .kernel import sessions as kernel_sessions
    from .kernel.magics import make_magics
    from .widget import hooks as widget_hooks

    _forget_magics(ipython)  # a second load replaces the first, listeners and all
    if kernel_sessions._registry is not None:
        kernel_sessions._registry.stop_servers()
    magics, sessions = make_magics(ipython)
    ipython.register_magics(magics)
    question_mark.install(ipython)  # `%chat edit 1 Why?` is text, not a help request
    if sessions.config not in ipython.configurables:
        ipython.configurables.append(sessions.config)
    kernel_sessions.install(sessions)
    # the one hook between views: the kernel's cells show the widget's views
    sessions.turn_hooks.append(  # the per-turn control, with the cells notebook:insert proposed
        lambda session, turn: widget_hooks.turn_hook(session, turn, sessions.take_inserts())
    )
    sessions.can_insert_below = widget_hooks.lab_inserts_below  # a view said the lab can
    sessions.grid_hook = widget_hooks.experiment_grid  # an experiment cell's clickable grid
    sessions.panel_hook = lambda session: widget_hooks.show_panel(  # what `%chat panel` shows
        session, sessions.config.compare_choices()
    )
    sessions.warm_up()  # the SDK's import and client, in the background


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext jupyter_tree_chat``: forget the magics and the kernel's sessions."""
    from .kernel import question_mark
    from .kernel import sessions as kernel_sessions

    question_mark.uninstall(ipython)

    installed = kernel_sessions._registry
    if installed is not None:
        installed.stop_servers()
    _forget_magics(ipython)
    if installed is not None and installed.config in ipython.configurables:
        ipython.configurables.remove(installed.config)
    kernel_sessions.install(None)


def _forget_magics(ipython: Any) -> None:
    """Unregister ``%%chat``/``%chat`` and stop keeping ``Err`` for the magics loaded before."""
    loaded = ipython.magics_manager.registry.pop("ChatMagics", None)
    errors = getattr(loaded, "errors", None)
    if errors is not None:
        errors.uninstall()
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("chat", None)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where ``jupyter labextension develop .`` finds the built session-file viewer."""
    return [{"src": "labextension", "dest": "jupyter-tree-chat"}]
