"""``run(code)``: Python run in the kernel's namespace, and all it showed, for the model.

The code runs as a cell's would (same namespace, IPython's ``%magics`` and ``!commands``,
the last expression's value is the result) but is not a cell: it is not in ``In``, it has
no execution count, and what it prints or displays is captured for the model instead of
shown (the tree keeps it, as the call's result). Figures come back as images, whether the
code displayed them or only made them. An error is its traceback, a result that raised.
The time limit (limit.py) stops it; Ctrl-C stops it and the turn.
"""

from __future__ import annotations

import ast
import base64
import binascii
import itertools
import linecache
import sys
from typing import Any

from IPython.utils.capture import capture_output

from ...context import Limits, convert_value
from ...context.images import fit_image
from ...context.sent import Block, cut
from ...context.values import RASTER_MIMES, image_data
from ...errors import ContextRefused
from ..history import describe_error

_runs = itertools.count(1)


def run_code(shell: Any, code: str, limits: Limits) -> tuple[list[str | Block], bool]:
    """Run ``code``; its output as text pieces and image blocks, and whether it raised."""
    filename = f"<notebook:run {next(_runs)}>"
    code = shell.transform_cell(code)  # %magics and !commands, as in a cell
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    before = _figure_numbers()
    pieces: list[str | Block] = []
    failed = False
    result: Any = None
    error_text = ""
    with capture_output(stdout=True, stderr=True, display=True) as captured:
        try:
            result = _execute(code, filename, shell.user_ns)
        except (Exception, SystemExit) as error:  # Ctrl-C and the time limit go on up
            failed = True
            error_text = describe_error(error, 0, {filename: 0}).traceback
    for label, text in (("stdout", captured.stdout), ("stderr", captured.stderr)):
        if text:
            kept, note = cut(text, limits.max_chars)
            pieces.append(f"{label}:\n{kept}{note}")
    for output in captured.outputs:
        pieces.extend(_displayed(output.data, limits))
    for figure in _new_figures(before):
        pieces.extend(_figure(figure))
    if failed:
        pieces.append(f"error:\n{error_text}")
    elif result is not None:
        pieces.extend(_result(result, limits))
    if not pieces:
        pieces.append("(no output, no result)")
    return pieces, failed


def _execute(code: str, filename: str, namespace: dict[str, Any]) -> Any:
    tree = ast.parse(code, filename, "exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, filename, "exec"), namespace)
    if last is None:
        return None
    assert isinstance(last, ast.Expr)
    return eval(compile(ast.Expression(last.value), filename, "eval"), namespace)


def _result(value: Any, limits: Limits) -> list[str | Block]:
    try:
        converted = convert_value("result", value, limits)
    except ContextRefused as refused:
        return [f"result: ({refused})"]
    pieces = list(converted.parts)
    if pieces and isinstance(pieces[0], str):
        pieces[0] = f"result:\n{pieces[0]}"
    else:
        pieces.insert(0, "result:")
    return pieces


def _displayed(data: dict[str, Any], limits: Limits) -> list[str | Block]:
    for mime in RASTER_MIMES:
        if mime in data:
            raw = data[mime]
            try:
                image = raw if isinstance(raw, bytes) else base64.b64decode(str(raw))
                return ["displayed:", fit_image(image, "a displayed image").block()]
            except (ContextRefused, binascii.Error, ValueError) as refused:
                return [f"displayed: (an image that could not be sent: {refused})"]
    text = data.get("text/markdown") or data.get("text/plain")
    if isinstance(text, str) and text:
        kept, note = cut(text, limits.max_chars)
        return [f"displayed:\n{kept}{note}"]
    kinds = ", ".join(sorted(data)) or "nothing"
    return [f"displayed: ({kinds}, not sent)"]


def _figure_numbers() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _new_figures(before: set[int]) -> list[Any]:
    """The figures the code made and did not show; closed, as a cell's would be."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    made = [pyplot.figure(n) for n in sorted(set(pyplot.get_fignums()) - before)]
    for figure in made:
        pyplot.close(figure)
    return made


def _figure(figure: Any) -> list[str | Block]:
    try:
        data = image_data(figure, "a figure")
        if data is None:
            return []
        return ["figure:", fit_image(data, "a figure").block()]
    except Exception as error:  # a figure's own drawing code can fail
        return [f"figure: (could not be drawn: {type(error).__name__}: {error})"]
