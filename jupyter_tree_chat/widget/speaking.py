"""What the page says through its views: the language of their words, and whether it has
the lab's Insert below.

A view speaks JupyterLab's language, and tells the kernel which it is (``i18n``). A
language the user sets outright in the kernel (``%chat language zh_CN``,
``TreeChat.language``) wins over JupyterLab's for the kernel's texts, and so it must for
the views too, or the footer is Chinese and the control right under it English. The
kernel then sends each view ``{"t": "lang", "locale": L, "catalog": C}``: the front
end's catalog for that language (the one an exported page carries; ``None`` in English),
when the view renders and again whenever the choice changes; ``auto`` sends ``locale:
""``, and the views go back to JupyterLab's.

A view's ``language`` message also says whether its page has the lab's Insert below
command (the lab extension's, through bridge.ts). The notebook server's ``insert`` asks
``lab_inserts_below`` (through the package root, which wires the kernel to the widget) to
choose between the turn control's Insert below and IPython's next input. It is set by the
first view that says so and stays set: a page reloaded without the extension is not
noticed, and its proposals then stay in the tree's ``notebook:insert`` calls
(docs/notebook-tools.md).
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

from .. import i18n
from ..share.page import front_end_catalog


class View(Protocol):
    def send(self, content: Any, buffers: Any = None) -> None: ...


_views: weakref.WeakSet[Any] = weakref.WeakSet()


def language_message() -> dict[str, Any] | None:
    """What a view is told of the language set outright (None: nothing was set)."""
    chosen = i18n.chosen()
    if chosen.source not in (i18n.COMMAND, i18n.CONFIG):
        return None
    return {"t": "lang", "locale": chosen.locale, "catalog": front_end_catalog(chosen.locale)}


def follow(view: View) -> None:
    """Tell ``view`` of every later choice of language (it is forgotten once closed)."""
    _views.add(view)


def heard(view: View, code: str) -> None:
    """``view`` rendered in JupyterLab's language ``code`` (the kernel speaks it too, see
    ``i18n``), unless the user set one outright: then the view is told to speak that."""
    i18n.front_end_said(code)
    message = language_message()
    if message is not None:
        view.send(message)


def _tell_views(_chosen: i18n.Chosen) -> None:
    message = language_message() or {"t": "lang", "locale": "", "catalog": None}
    for view in list(_views):
        if getattr(view, "comm", None) is not None:
            view.send(message)


i18n.on_choice(_tell_views)


_said = {"inserts_below": False}


def lab_said(content: dict[str, Any]) -> None:
    """A view's ``language`` message: ``insert`` says its page has the lab's command."""
    if content.get("insert"):
        _said["inserts_below"] = True


def lab_inserts_below() -> bool:
    return _said["inserts_below"]
