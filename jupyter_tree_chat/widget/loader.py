"""How the widget's front end reaches a page: once, never in every control.

anywidget syncs ``_esm`` as a trait of each instance, so a bundle there would travel
in every ``comm_open``, be saved again in every control's widget state and be
evaluated once per control. So ``_esm`` is only ``loader.js`` (a few lines). It uses the
code the lab extension registered on the page (labextension/src/panel/registry.ts)
when that speaks this kernel's ``PROTOCOL``; otherwise (VS Code, Colab, a lab with the
extension disabled, another version of it) the first view on the page asks its kernel
with ``{"a": "code"}`` and gets ``code_message()``, the bundle and its stylesheet, and
every other view on the page waits for that one answer. docs/architecture.md says why.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
STATIC = HERE / "static"
PROTOCOL = 3
"""The messages and traits kernel and front end share; loader.js and registry.ts say the
same number (tests check it): a lab extension of another protocol is not used."""

LOADER = (HERE / "loader.js").read_text(encoding="utf-8")

_NOT_BUILT = """
export default { render({ el }) {
  el.textContent = "jupyter-tree-chat: the widget front end is not built; "
    + "run `npm run build:widget` in labextension/ "
    + "(it writes jupyter_tree_chat/widget/static/widget.js).";
} };
"""


@cache
def code_message() -> dict[str, Any]:
    """The front end's code and stylesheet, for a page without the lab extension."""
    built, stylesheet = STATIC / "widget.js", STATIC / "widget.css"
    code = built.read_text(encoding="utf-8") if built.is_file() else _NOT_BUILT
    css = stylesheet.read_text(encoding="utf-8") if stylesheet.is_file() else ""
    return {"t": "code", "protocol": PROTOCOL, "js": code, "css": css}
