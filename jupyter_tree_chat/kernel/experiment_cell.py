"""``%%chat --over NAME``: one question per row of a table, in a cell.

The rows come from a kernel variable (a pandas DataFrame, a list of dicts) or a CSV file
beside the notebook. Every row's question is filled in before anything is sent (a
``{name}`` that is neither a column nor a kernel value is one ``UsageError`` line), then
the session runs the experiment (conversation/many/experiment.py) while the cell shows a
progress bar, and at the end a compact grid (experiment_view.py).
"""

from __future__ import annotations

import csv
import keyword
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..conversation.events import Turn
from ..conversation.many.experiment import (
    DEFAULT_CONCURRENCY,
    Plan,
    RowQuestion,
    experiment_on_path,
    row_values,
)
from ..conversation.session import Session
from ..conversation.settings import ChatSettings
from ..errors import AmbiguousId, NodeNotFound
from ..i18n import _
from .context import ROW_FIELD, QuestionBuilder
from .display.experiment_view import ExperimentView
from .display.output import notice_line
from .sessions import GridHook

WHERE = "%%chat --over"


def load_rows(namespace: dict[str, Any], over: str, folder: Path) -> list[dict[str, Any]]:
    """The rows ``--over`` names, as dicts of JSON values, every row with every column (a
    value a row lacks is missing: None); a ``UsageError`` line if it names nothing usable."""
    if over.lower().endswith(".csv"):
        rows = _csv_rows(over, folder)
    else:
        if not over.isidentifier() or keyword.iskeyword(over):
            raise UsageError(
                _("{where} {name}: give a variable's name or a path ending in .csv").format(
                    where=WHERE, name=over
                )
            )
        if over not in namespace:
            raise UsageError(
                _(
                    "{where} {name}: no such variable; define it (a DataFrame or a list of dicts)"
                ).format(where=WHERE, name=over)
            )
        rows = _value_rows(over, namespace[over])
    if not rows:
        raise UsageError(
            _("{where} {name}: there are no rows to ask about").format(where=WHERE, name=over)
        )
    columns = dict.fromkeys(name for row in rows for name in row)
    return [row_values({name: row.get(name) for name in columns}) for row in rows]


def _value_rows(name: str, value: Any) -> list[dict[Any, Any]]:
    to_dict, columns = getattr(value, "to_dict", None), getattr(value, "columns", None)
    if callable(to_dict) and columns is not None:  # a pandas DataFrame
        found = to_dict("records")
        return list(found) if isinstance(found, list) else []
    if isinstance(value, (list, tuple)):
        for number, item in enumerate(value, 1):
            if not isinstance(item, dict):
                raise UsageError(
                    _("{where} {name}: item {number} is a {type}, not a dict").format(
                        where=WHERE, name=name, number=number, type=type(item).__name__
                    )
                )
        return list(value)
    raise UsageError(
        _("{where} {name}: a {type}; give a DataFrame, a list of dicts or a .csv path").format(
            where=WHERE, name=name, type=type(value).__name__
        )
    )


def _csv_rows(written: str, folder: Path) -> list[dict[Any, Any]]:
    path = Path(written).expanduser()
    path = path if path.is_absolute() else folder / path
    try:
        import pandas
    except ImportError:
        pandas = None
    try:
        if pandas is not None:
            found = pandas.read_csv(path).to_dict("records")
            return list(found)
        with path.open(newline="", encoding="utf-8-sig") as file:
            return list(csv.DictReader(file))
    except FileNotFoundError:
        why = _("no such file (looked for {path}); give a path relative to the notebook").format(
            path=path
        )
    except (OSError, UnicodeDecodeError, ValueError, csv.Error) as error:
        why = _("cannot be read as CSV ({reason})").format(reason=str(error).splitlines()[0])
    except Exception as error:  # pandas' own parser errors and an empty file
        why = _("cannot be read as CSV ({reason})").format(reason=str(error).splitlines()[0])
    raise UsageError(f"{WHERE} {written}: {why}")


def shadowed(template: str, columns: list[str], namespace: dict[str, Any]) -> list[str]:
    """The template's fields that are both a column and a kernel variable (the column wins)."""
    named = {m.group(4) for m in ROW_FIELD.finditer(template) if m.group(4)}
    return [c for c in columns if c in named and c in namespace]


def plan(
    questions: QuestionBuilder,
    text: str,
    rows: list[dict[str, Any]],
    *,
    concurrency: int | None,
    substitute: bool,
) -> Plan:
    """Every row's question, filled in (a bad field stops here, before anything is sent)."""
    made = []
    for row in rows:
        question = questions.question(
            text, where=WHERE, substitute=True, row=row, kernel_values=substitute
        )
        made.append(RowQuestion(question.content, question.meta, row))
    return Plan(text, made, concurrency or DEFAULT_CONCURRENCY)


def placement_options(session: Session, options: Any) -> dict[str, Any]:
    """``--new``, ``--from ID`` and ``--continue`` as the experiment's ``parent``;
    ``--same-experiment`` as the question the cell asked before."""
    if options.same_experiment:
        earlier = experiment_on_path(session.tree)
        if earlier is None:
            raise UsageError(
                _(
                    "{where} --same-experiment: no experiment on the current path; "
                    "`%chat switch ID` to one of its answers first"
                ).format(where=WHERE)
            )
        return {"earlier": earlier}
    if options.new:
        return {"parent": None, "chosen": True}
    if options.from_node is not None:
        try:
            return {"parent": session.resolve(options.from_node).id, "chosen": True}
        except (NodeNotFound, AmbiguousId) as error:
            raise UsageError(f"{WHERE} --from {options.from_node}: {error}") from None
    if options.continue_leaf:
        return {"parent": session.tree.leaf, "chosen": True}
    return {}


def after_lines(session: Session, turn: Turn) -> list[str]:
    """What the cell says once the rows are answered: which answer is current, and how
    many failed."""
    lines = []
    failed = sum(1 for a in turn.answers if a.error is not None)
    if failed:
        lines.append(
            _(
                "{failed} of {count} answers failed (marked in the grid); the others are kept."
            ).format(failed=failed, count=len(turn.answers))
        )
    leaf = session.tree.leaf
    if leaf is not None and any(a.head is not None for a in turn.answers):
        lines.append(
            _(
                "The first row's answer {id} is current: a plain next cell continues from it."
            ).format(id=leaf[:7])
        )
    return lines


def prepare(
    shell: Any,
    questions: QuestionBuilder,
    session: Session,
    text: str,
    options: Any,
    *,
    settings: ChatSettings,
    cell_id: str | None,
    folder: Path,
    substitute: bool,
    live: bool,
    grid_hook: GridHook | None = None,
) -> Callable[[], Turn]:
    """Everything a ``--over`` cell checks before it runs (rows, fields, places), and the
    action that runs it with its progress bar and grid."""
    if not text:
        raise UsageError(_("%%chat: the cell is empty; write your question below the %%chat line"))
    namespace = getattr(shell, "user_ns", None) or {}
    rows = load_rows(namespace, options.over, folder)
    where = placement_options(session, options)
    made = plan(questions, text, rows, concurrency=options.concurrency, substitute=substitute)
    columns = list(dict.fromkeys(name for row in rows for name in row))
    hidden = shadowed(text, columns, namespace) if substitute else []

    def action() -> Turn:
        for name in hidden:
            notice_line(
                _(
                    "{{{name}}} is a column of the rows and a kernel variable: "
                    "the column's value is used."
                ).format(name=name)
            )
        interactive = None
        if grid_hook is not None:
            hook = grid_hook

            def interactive(question: str, html: dict[str, str]) -> dict[str, Any]:
                return hook(session, question, html)

        if options.batch:  # sent now, answered later: its bars (turn.py, batch_view.py)
            return session.run_experiment(
                made, cell_id=cell_id, settings=settings, fanout=options.fanout, batch=True, **where
            )
        view = ExperimentView(
            lambda: session.tree, session.prices, live=live, interactive=interactive
        )
        unsubscribe = session.subscribe(view.on_event)
        try:
            turn = session.run_experiment(
                made, cell_id=cell_id, settings=settings, fanout=options.fanout, **where
            )
        finally:
            unsubscribe()
        for line in after_lines(session, turn):
            notice_line(line)
        return turn

    return action
