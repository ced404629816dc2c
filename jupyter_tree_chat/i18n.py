"""The kernel's own words in the reader's language, through the standard library's gettext.

Every text the kernel, the command line or the SVG picture shows a person (footers,
notices, one-line errors, ``%chat`` output) is written as ``_("...")`` with named fields
filled after translation, ``_("{name} is not answering").format(name=...)``, so a
catalog can move the words and keep the fields. Identifiers are never translated: option
names, ``%chat`` commands, ids, model names, file names, numbers.

The catalog is ``locale/<locale>/LC_MESSAGES/jupyter_tree_chat_kernel.mo`` inside the
package; a locale without one (or English) shows the texts as written.
"""

from __future__ import annotations

import gettext
import threading
from pathlib import Path

DOMAIN = "jupyter_tree_chat_kernel"
LOCALE_DIR = Path(__file__).parent / "locale"
ENGLISH = "en"

_lock = threading.Lock()
_language = ENGLISH
_catalog: gettext.NullTranslations = gettext.NullTranslations()


def set_language(language: str) -> None:
    """Show the kernel's texts in ``language`` (``zh_CN``, ``en``, ...) from now on."""
    global _language, _catalog
    with _lock:
        _language = language
        _catalog = gettext.translation(DOMAIN, LOCALE_DIR, languages=[language], fallback=True)


def language() -> str:
    """The language the kernel's texts are shown in now."""
    return _language


def _(message: str) -> str:
    """``message`` in the current language (as written where the catalog has none)."""
    return _catalog.gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The singular or plural of a message for ``count``, in the current language."""
    return _catalog.ngettext(singular, plural, count)
