"""Which language the kernel speaks: ``TreeChat.language`` and ``%chat language``.

The choice itself lives in ``i18n`` (a language set outright, else JupyterLab's, else the
kernel's locale, else English), where the widget reports JupyterLab's language too; this
module feeds it the kernel's settings: the locale of the kernel's environment when the
extension loads, ``TreeChat.language`` now and whenever ``%config`` changes it, and the
``%chat language`` command, which shows the language in use and where it comes from.
"""

from __future__ import annotations

import os
from typing import Any

from IPython.core.error import UsageError

from ... import i18n
from ...i18n import _
from ..config import TreeChat, check_language


def follow_settings(config: TreeChat) -> None:
    """Speak the language ``config`` and the kernel's locale choose, and follow
    ``TreeChat.language`` from now on."""
    i18n.follow_environment(os.environ)
    _apply(config.language, i18n.CONFIG)
    config.observe(lambda change: _apply(change["new"], i18n.CONFIG), names="language")


def _apply(value: str, source: str) -> i18n.Chosen:
    try:
        return i18n.choose(value, source)
    except LookupError:  # the trait's validator refused it already; keep what was chosen
        return i18n.chosen()


def describe(chosen: i18n.Chosen) -> str:
    """``zh_CN (JupyterLab's language, zh-CN)``: the language and where it comes from."""
    if chosen.source == i18n.COMMAND:
        where = _("set by %chat language")
    elif chosen.source == i18n.CONFIG:
        where = "TreeChat.language"
    elif chosen.source == i18n.FRONT_END:
        where = _("JupyterLab's language, {code}").format(code=chosen.said)
    elif chosen.source == i18n.ENVIRONMENT:
        where = _("the kernel's locale, {setting}").format(setting=chosen.said)
    else:
        where = _("the default: JupyterLab has not said, and the kernel's locale names none")
    return _("Language: {locale} ({where})").format(locale=chosen.locale, where=where)


class LanguageCommands:
    """``%chat language``, mixed into ``Commands`` (which provides ``sessions``)."""

    sessions: Any

    def do_language(self, args: list[str]) -> None:
        if len(args) > 1:
            raise UsageError(_("usage: %chat language [zh_CN|en|auto]"))
        if args:
            config: TreeChat = self.sessions.config
            try:
                check_language(args[0])
            except ValueError as error:
                raise UsageError(f"%chat language: {error}") from None
            config.language = args[0]
            if args[0].strip().lower() == i18n.AUTO:
                i18n.follow_environment(os.environ)  # `%env LANG=...` since the kernel began
            else:
                i18n.choose(args[0], i18n.COMMAND)
        print(describe(i18n.chosen()))
