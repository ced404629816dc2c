"""Which language ``i18n`` chooses: the codes each source writes, and who wins.

JupyterLab writes BCP 47 tags (``zh-CN``, ``en-US``; its setting may say ``default``), a
shell POSIX locales (``zh_CN.UTF-8``, ``C.UTF-8``); both name the catalog they read
(``zh_CN``) or English. The sources then rank: set outright, JupyterLab, the locale,
English. The kernel-side tests (test_language_kernel.py) show the same on a real kernel.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jupyter_tree_chat import i18n


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    i18n.forget_choices()
    yield
    i18n.forget_choices()


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("zh-CN", "zh_CN"),  # JupyterLab's translator.languageCode
        ("zh_CN", "zh_CN"),  # JupyterLab's setting, and TreeChat.language
        ("zh_CN.UTF-8", "zh_CN"),  # LANG
        ("zh_CN.utf8@pinyin", "zh_CN"),
        ("zh", "zh_CN"),
        ("zh-Hans-CN", "zh_CN"),
        ("zh_SG", "zh_CN"),
        ("en", "en"),
        ("en-US", "en"),
        ("en_GB.UTF-8", "en"),
        ("zh-TW", None),  # Traditional Chinese: no catalog, so English
        ("zh-Hant", None),
        ("fr_FR", None),
        ("C", None),
        ("C.UTF-8", None),
        ("POSIX", None),
        ("default", None),
        ("", None),
        ("not a language", None),
    ],
)
def test_each_code_names_its_catalog_or_none(code: str, shown: str | None) -> None:
    assert i18n.shown_locale(code) == shown


def test_the_shipped_catalogs_are_found() -> None:
    assert i18n.catalog_locales() == ["zh_CN"]


def test_set_outright_beats_jupyterlab_which_beats_the_locale() -> None:
    assert i18n.chosen() == i18n.Chosen("en", i18n.DEFAULT)
    i18n.follow_environment({"LANG": "zh_CN.UTF-8", "LC_ALL": ""})  # empty counts as unset
    assert i18n.chosen() == i18n.Chosen("zh_CN", i18n.ENVIRONMENT, "LANG=zh_CN.UTF-8")
    assert i18n.language() == "zh_CN"
    i18n.front_end_said("en-US")
    assert i18n.chosen() == i18n.Chosen("en", i18n.FRONT_END, "en-US")
    assert i18n.language() == "en"
    i18n.choose("zh_CN", i18n.COMMAND)
    i18n.front_end_said("en")  # JupyterLab speaks again: the command still wins
    assert i18n.chosen() == i18n.Chosen("zh_CN", i18n.COMMAND, "zh_CN")
    i18n.choose("auto")
    assert i18n.chosen().source == i18n.FRONT_END and i18n.language() == "en"
    i18n.front_end_said("default")  # says nothing: the locale again
    assert i18n.chosen().source == i18n.ENVIRONMENT and i18n.language() == "zh_CN"


def test_the_first_locale_variable_set_decides_even_when_it_names_no_language() -> None:
    env = {"LC_ALL": "C", "LC_MESSAGES": "zh_CN.UTF-8", "LANG": "zh_CN.UTF-8"}
    assert i18n.follow_environment(env) == i18n.Chosen("en", i18n.ENVIRONMENT, "LC_ALL=C")
    env = {"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}
    assert i18n.follow_environment(env).locale == "zh_CN"
    assert i18n.follow_environment({}).source == i18n.DEFAULT


def test_a_language_without_a_catalog_is_refused() -> None:
    with pytest.raises(LookupError):
        i18n.choose("fr")
    assert i18n.chosen().source == i18n.DEFAULT  # and nothing changed
    assert i18n.explicit_locale("AUTO") is None and i18n.explicit_locale("zh-CN") == "zh_CN"
    assert i18n.choices() == ["zh_CN", "en", "auto"]
