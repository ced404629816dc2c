"""The kernel's own words in the reader's language, through the standard library's gettext.

Every text the kernel, the command line or the SVG picture shows a person (footers,
notices, one-line errors, ``%chat`` output) is written as ``_("...")`` with named fields
filled after translation, ``_("{name} is not answering").format(name=...)``, so a
catalog can move the words and keep the fields. Identifiers are never translated: option
names, ``%chat`` commands, ids, model names, file names, numbers.

The catalog is ``locale/<locale>/LC_MESSAGES/jupyter_tree_chat_kernel.mo`` inside the
package; a locale without one (or English) shows the texts as written.

**Which language** (docs/languages.md): a language set outright (``TreeChat.language``,
``%chat language zh_CN``) wins; else the language JupyterLab shows, which the panel and
the turn controls report when they render; else the locale of the process's environment
(the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set); else English. Each
source reports here (``choose``, ``front_end_said``, ``follow_environment``) and the
result is applied at once. A language without a catalog is shown in English.
"""

from __future__ import annotations

import gettext
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

DOMAIN = "jupyter_tree_chat_kernel"
#: the front end's catalog (JupyterLab's JSON), beside the kernel's in LOCALE_DIR
FRONT_END_DOMAIN = "jupyter_tree_chat"
LOCALE_DIR = Path(__file__).parent / "locale"
ENGLISH = "en"
AUTO = "auto"
#: the environment variables that name the locale, the first one set deciding (POSIX)
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
#: where the language in use came from (``Chosen.source``)
COMMAND, CONFIG, FRONT_END, ENVIRONMENT, DEFAULT = (
    "command",
    "config",
    "front end",
    "environment",
    "default",
)

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


# -- which language --------------------------------------------------------------------

_CODE = re.compile(r"([A-Za-z]{2,3})((?:[_-][A-Za-z0-9]+)*)")
#: Chinese written in Simplified characters: a region or script that reads zh_CN's catalog
_SIMPLIFIED = {"", "CN", "SG", "MY", "HANS"}


def catalog_locales() -> list[str]:
    """The locales the package has a kernel catalog for (English needs none)."""
    return sorted(path.parent.parent.name for path in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))


def locale_name(code: str) -> str | None:
    """A language as JupyterLab (``zh-CN``, ``en-US``) or a POSIX locale
    (``zh_CN.UTF-8``) writes it, as a locale: ``zh_CN``, ``en_US``; ``None`` for a code
    that names no language (``C``, ``POSIX``, JupyterLab's ``default``, a blank)."""
    bare = code.strip().split(".")[0].split("@")[0]
    found = _CODE.fullmatch(bare)
    if found is None or bare.upper() in ("C", "POSIX") or bare.lower() == "default":
        return None
    parts = [part for part in re.split("[_-]", found.group(2)) if part]
    subtags = [part.title() if len(part) == 4 else part.upper() for part in parts]
    return "_".join([found.group(1).lower(), *subtags])


def shown_locale(code: str) -> str | None:
    """The locale a language is shown in: its catalog's (``zh-CN``, ``zh``, ``zh_SG`` →
    ``zh_CN``), ``en`` for any English, ``None`` when there is no catalog for it."""
    name = locale_name(code)
    if name is None:
        return None
    language, *subtags = name.split("_")
    if language == ENGLISH:
        return ENGLISH
    catalogs = catalog_locales()
    if name in catalogs:
        return name
    if language == "zh" and all(tag.upper() in _SIMPLIFIED for tag in subtags):
        return "zh_CN" if "zh_CN" in catalogs else None
    same = [locale for locale in catalogs if locale.split("_")[0] == language]
    return same[0] if not subtags and len(same) == 1 else None


def explicit_locale(value: str) -> str | None:
    """``TreeChat.language`` or ``%chat language VALUE`` as a locale (``None`` for
    ``auto``); a ``LookupError`` for a language without a catalog (the kernel words it)."""
    if value.strip().lower() == AUTO:
        return None
    shown = shown_locale(value)
    if shown is None:
        raise LookupError(value)
    return shown


def choices() -> list[str]:
    """What ``TreeChat.language`` may be: a catalog's locale, ``en`` or ``auto``."""
    return [*catalog_locales(), ENGLISH, AUTO]


@dataclass(frozen=True)
class Chosen:
    """The language in use, where it came from (``source``) and what said so
    (``said``: JupyterLab's code, ``LANG=zh_CN.UTF-8``, the value set)."""

    locale: str
    source: str
    said: str = ""


class _Choice:
    """What each source last said; the first that says anything decides."""

    def __init__(self) -> None:
        self.explicit: tuple[str, str, str] | None = None  # (locale, source, value)
        self.front_end: str | None = None
        self.environment: tuple[str, str] | None = None  # (variable, value)

    def chosen(self) -> Chosen:
        if self.explicit is not None:
            locale, source, value = self.explicit
            return Chosen(locale, source, value)
        if self.front_end is not None:
            return Chosen(shown_locale(self.front_end) or ENGLISH, FRONT_END, self.front_end)
        if self.environment is not None:
            variable, value = self.environment
            return Chosen(shown_locale(value) or ENGLISH, ENVIRONMENT, f"{variable}={value}")
        return Chosen(ENGLISH, DEFAULT)


_choice = _Choice()


def chosen() -> Chosen:
    """The language the kernel's texts are shown in now, and why."""
    with _lock:
        return _choice.chosen()


def _apply() -> Chosen:
    now = chosen()
    if now.locale != _language:
        set_language(now.locale)
    return now


_listeners: list[Callable[[Chosen], None]] = []


def on_choice(listener: Callable[[Chosen], None]) -> None:
    """Call ``listener`` each time a language is set outright, or that choice is undone
    (the views speak it too: widget/speaking.py)."""
    _listeners.append(listener)


def choose(value: str, source: str = CONFIG) -> Chosen:
    """Set the language outright (``source``: ``CONFIG`` or ``COMMAND``); ``auto`` hands
    the choice back to JupyterLab and the environment. A LookupError for a bad value."""
    locale = explicit_locale(value)
    with _lock:
        _choice.explicit = None if locale is None else (locale, source, value)
    now = _apply()
    for listener in list(_listeners):
        listener(now)
    return now


def front_end_said(code: str) -> Chosen:
    """JupyterLab shows ``code`` (``zh-CN``, ``en``; its ``default`` says nothing)."""
    with _lock:
        _choice.front_end = code if locale_name(code) is not None else None
    return _apply()


def follow_environment(environ: Mapping[str, str]) -> Chosen:
    """Take the locale of an environment (the first of ``LOCALE_VARIABLES`` set)."""
    with _lock:
        _choice.environment = next(
            ((name, environ[name]) for name in LOCALE_VARIABLES if environ.get(name)), None
        )
    return _apply()


def forget_choices() -> None:
    """Back to English with nothing said (a kernel's extension unloads; tests)."""
    global _choice
    with _lock:
        _choice = _Choice()
    _apply()
