"""What the model may look at without running anything: names, one value, the cells.

- ``variables``: the names ``%who`` lists, each with its type and a size or shape, never
  a value. Sizes are asked of the value (``shape``, ``len``), and a value is the user's
  code: one whose ``len`` raises gets ``size unknown``, not a crash.
- ``describe(name)``: the value exactly as ``{name}`` in a question would send it (the
  same conversion, the same ``TreeChat.max_rows``/``max_columns``/``max_chars``; a
  string, which ``{name}`` sends whole, is cut at ``max_chars`` too).
- ``cells(last, outputs)``: ``In`` as typed, newest last, with whether each raised and,
  where asked, its ``Out`` (as ``{Out[n]}`` would send it) and its error; a ``%%chat``
  cell is listed as such, its answer left to the tree.
"""

from __future__ import annotations

import numbers
from typing import Any

from ...context import Limits, convert_value
from ...context.sent import Block, cut
from ...errors import ContextRefused
from ...i18n import _
from ..history import CellErrors, cell_output

#: most names ``variables`` lists
MAX_VARIABLES = 200
#: most cells ``cells`` returns at once
MAX_CELLS = 50


class LookFailed(Exception):
    """A look the model can read and correct (an unknown name, a value that will not show)."""


def variables(shell: Any, errors: CellErrors) -> str:
    """One line per user variable: ``df: DataFrame, shape (1000, 12)``."""
    names = _who(shell, errors)
    if not names:
        return _("The notebook has no user variables yet.")
    lines = []
    for name in names[:MAX_VARIABLES]:
        value = shell.user_ns[name]
        size = _size(value)
        kind = _type_name(value)
        lines.append(f"{name}: {kind}, {size}" if size else f"{name}: {kind}")
    if len(names) > MAX_VARIABLES:
        lines.append(
            _("… and {count} more (ask for one by name with describe)").format(
                count=len(names) - MAX_VARIABLES
            )
        )
    return "\n".join(lines)


def describe(shell: Any, name: str, limits: Limits) -> list[str | Block]:
    """``name``'s value as ``{name}`` sends it: text pieces and image blocks."""
    namespace = shell.user_ns
    if not isinstance(name, str) or name not in namespace or name not in _who(shell):
        raise LookFailed(
            _("No user variable named {name!r}; call variables for the names.").format(name=name)
        )
    try:
        converted = convert_value(name, namespace[name], limits)
    except ContextRefused as refused:
        raise LookFailed(str(refused)) from None
    return [_within(part, limits) for part in converted.parts]


def _within(part: str | Block, limits: Limits) -> str | Block:
    """A text piece cut at ``max_chars``: ``{name}`` sends a str whole, a tool result
    may not (a 5 MB string would make every later request too long)."""
    if not isinstance(part, str):
        return part
    kept, note = cut(part, limits.max_chars)
    return kept + note


def cells(shell: Any, errors: CellErrors, last: int, outputs: bool, limits: Limits) -> str:
    """The last ``last`` cells as run, newest last (see the module docstring)."""
    sources = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if not isinstance(sources, list) or len(sources) <= 1:
        return _("No cells have run yet.")
    last = max(1, min(int(last), MAX_CELLS))
    numbers = range(max(1, len(sources) - last), len(sources))
    parts = [_cell(shell, errors, n, str(sources[n]), outputs, limits) for n in numbers]
    text, note = cut("\n\n".join(parts), limits.max_chars)
    return text + note


def _cell(
    shell: Any, errors: CellErrors, number: int, source: str, outputs: bool, limits: Limits
) -> str:
    error = errors.errors.get(number)
    if source.lstrip().startswith("%%chat"):
        head = _("In [{number}] (a %%chat cell: its answer is in the chat tree):").format(
            number=number
        )
    elif error is not None:
        head = _("In [{number}] (raised {error}):").format(number=number, error=error.type)
    else:
        head = f"In [{number}]:"
    kept, note = cut(source.rstrip(), limits.max_chars)
    lines = [head, "```", kept + note, "```"]
    if outputs:
        found, value = cell_output(shell, number)
        if found:
            lines.append(f"Out [{number}]: {_as_text(f'Out[{number}]', value, limits)}")
        if error is not None:
            lines += [f"Err [{number}]:", "```", str(error), "```"]
    return "\n".join(lines)


def _as_text(field: str, value: Any, limits: Limits) -> str:
    try:
        pieces = convert_value(field, value, limits).parts
    except ContextRefused as refused:
        return f"({refused})"
    texts = [p if isinstance(p, str) else _("[an image: describe it by name]") for p in pieces]
    return "\n".join(texts)


def _who(shell: Any, errors: CellErrors | None = None) -> list[str]:
    """The names ``%who`` lists (IPython's own rule: not hidden, not starting with ``_``),
    less this extension's own ``Err`` (the cells' errors, which ``cells`` shows)."""
    found = shell.run_line_magic("who_ls", "")
    names = list(found) if isinstance(found, list) else []
    if errors is not None:
        names = [n for n in names if shell.user_ns.get(n) is not errors.errors]
    return names


def _type_name(value: Any) -> str:
    try:
        kind = type(value)
        module = getattr(kind, "__module__", "") or ""
        name = getattr(kind, "__qualname__", None) or kind.__name__
    except Exception:
        return "?"
    short = module.split(".")[0]
    return name if short in ("builtins", "__main__", "") else f"{short}.{name}"


def _size(value: Any) -> str:
    """``shape (3, 4)``, ``12 items``, ``1,024 chars``; "" for a plain number or a
    function; ``size unknown`` when the value's own methods fail."""
    try:
        if isinstance(value, numbers.Number) or (callable(value) and not hasattr(value, "shape")):
            return ""
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
            return f"shape {shape}"
        if isinstance(value, str | bytes):
            unit = "chars" if isinstance(value, str) else "bytes"
            return f"{len(value):,} {unit}"
        if hasattr(type(value), "__len__"):
            return _("{count} items").format(count=f"{len(value):,}")
    except Exception as error:  # the value's own code: it may raise anything
        return _("size unknown ({kind})").format(kind=type(error).__name__)
    return ""
