"""``path FILE --budget N``: the request a session would build for a path within N tokens.

The same rules as a session's (``measures/budget.py``), on the file as it is: its
compactions stand for what they summarised, an imported chat's system prompt (its root's
``meta.system``) is counted first. With ``--json`` the messages exactly as they would be
sent, in the shape ``path --json`` prints, so the two can be compared; without, the
path's exchanges, each marked sent, summarised or left out. Either way one line on stderr
says what was kept. Without ``--budget``, ``path`` is as it always was (and keeps its
fast path, quickpath.py).
"""

from __future__ import annotations

import json
import sys

from ..conversation.budgeting import compactions
from ..history.store import LoadResult
from ..i18n import _
from ..measures.budget import Sizes, select
from ..measures.seen import exchange_lines, exchanges, selection_line
from .reading import CliError, leaf_of


def budgeted_path(result: LoadResult, ref: str | None, budget: str, as_json: bool) -> str:
    """What ``path --budget`` prints for the path to ``ref`` (default: the file's leaf)."""
    tokens = _tokens(budget)
    tree = result.tree
    leaf = leaf_of(tree, ref)
    nodes = tree.path_nodes(leaf) if leaf is not None else []
    root_meta = (nodes[0].meta or {}) if nodes else {}
    system = root_meta.get("system") if isinstance(root_meta.get("system"), str) else None
    sizes = Sizes()
    chosen = select(nodes, budget=tokens, system=system, compactions=compactions(tree), sizes=sizes)
    print(selection_line(chosen), file=sys.stderr)
    if as_json:
        from ..providers.anthropic.wire import api_messages  # here: only --json needs the providers

        return json.dumps(api_messages(chosen.messages), ensure_ascii=False, indent=2)
    return "\n".join(exchange_lines(exchanges(nodes, [], chosen, sizes)))


def _tokens(budget: str) -> int:
    text = budget.replace(",", "").replace("_", "")
    if text.isdigit() and int(text) > 0:
        return int(text)
    raise CliError(
        _("--budget {budget}: give the tokens a request may hold, e.g. --budget 8000").format(
            budget=budget
        )
    )
