"""Which language the kernel speaks, on a real kernel (issue 30, part 2).

``TreeChat.language`` is ``auto`` by default: the language JupyterLab shows (each widget
view reports it when it renders: here a real comm message to the turn control, as the
browser sends it; tests/browser/test_kernel_language.py does it from JupyterLab), else
the kernel's locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``), else English. A language set
outright (``%config TreeChat.language``, ``%chat language``) wins over the front end.
Each case reads what a user reads: the footer under a reply and ``%chat language``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import CellRun, Kernel
from helpers.kernel_words import HAN, chinese, english_left, translation_missing

pytestmark = pytest.mark.kernel

#: a kernel whose environment names no language, and one whose locale is Chinese
NO_LOCALE = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
CHINESE_LOCALE = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}


def footer(run: CellRun) -> str:
    """The footer line under a reply (the output after the reply's Markdown)."""
    run.check()
    lines = [text for text in run.markdown if " · " in text]
    assert lines, run.visible_text
    return lines[0]


def language_line(kernel: Kernel) -> str:
    return kernel.run("%chat language").check().stdout.strip()


def widget_id(run: CellRun) -> str:
    """The comm id of the turn control a ``%%chat`` cell displayed."""
    for output in run.outputs:
        view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
        if view:
            return str(view["model_id"])
    raise AssertionError(f"no turn control in {run.outputs}")


def front_end_says(kernel: Kernel, comm_id: str, code: str) -> None:
    """What the panel and the turn control send when they render (panel/index.ts)."""
    content: dict[str, Any] = {
        "comm_id": comm_id,
        "data": {"method": "custom", "content": {"a": "language", "code": code}},
    }
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", content))


def ask(kernel: Kernel, text: str, cell: str) -> CellRun:
    return kernel.chat(text, cell).check()


def assert_chinese_footer(english: str, chinese_footer: str) -> None:
    assert HAN.search(chinese_footer), chinese_footer
    assert translation_missing(english, chinese_footer) == []
    assert english_left(chinese_footer) == []
    # the identifiers stay as they are: the reply's id (7 hex digits) and the model
    assert re.fullmatch(r"[0-9a-f]{7}", chinese_footer.split(" · ")[0])
    assert chinese_footer.split(" · ")[1] == english.split(" · ")[1]


@pytest.fixture
def english_footer(tmp_path: Path) -> str:
    """The footer of the first answer in a kernel that speaks English."""
    (tmp_path / "en").mkdir()
    with Kernel(tmp_path / "en", env=NO_LOCALE) as kernel:
        kernel.run('%config TreeChat.provider = "offline"').check()
        line = footer(ask(kernel, "What is a leaf?", "c1"))
    assert not HAN.search(line) and " in · " in line
    return line


def test_the_kernels_locale_decides_when_jupyterlab_has_not_said(
    tmp_path: Path, english_footer: str
) -> None:
    (tmp_path / "zh").mkdir()
    with Kernel(tmp_path / "zh", env=CHINESE_LOCALE) as kernel:
        kernel.run('%config TreeChat.provider = "offline"').check()
        assert_chinese_footer(english_footer, footer(ask(kernel, "What is a leaf?", "c1")))
        said = language_line(kernel)
        assert "zh_CN" in said and "LANG=zh_CN.UTF-8" in said
        assert chinese("the kernel's locale, {setting}").split("{")[0] in said
    (tmp_path / "c").mkdir()
    with Kernel(tmp_path / "c", env=NO_LOCALE) as kernel:  # C names no language: English
        said = language_line(kernel)
        assert said == "Language: en (the kernel's locale, LANG=C.UTF-8)"


def test_the_language_jupyterlab_shows_wins_over_the_locale_once_a_view_renders(
    tmp_path: Path, english_footer: str
) -> None:
    with Kernel(tmp_path, env=NO_LOCALE) as kernel:
        kernel.run('%config TreeChat.provider = "offline"').check()
        first = ask(kernel, "What is a leaf?", "c1")
        assert not HAN.search(footer(first))  # before any view rendered: the locale's
        front_end_says(kernel, widget_id(first), "zh-CN")  # the turn control rendered
        assert_chinese_footer(english_footer, footer(ask(kernel, "And a root?", "c2")))
        said = language_line(kernel)
        assert "zh_CN" in said and "zh-CN" in said and HAN.search(said), said

        front_end_says(kernel, widget_id(first), "en-US")  # JupyterLab reloaded in English
        assert language_line(kernel) == "Language: en (JupyterLab's language, en-US)"
        front_end_says(kernel, widget_id(first), "default")  # says nothing: the locale again
        assert language_line(kernel) == "Language: en (the kernel's locale, LANG=C.UTF-8)"


def test_treechat_language_and_the_command_win_over_jupyterlab(
    tmp_path: Path, english_footer: str
) -> None:
    with Kernel(tmp_path, env=CHINESE_LOCALE) as kernel:
        kernel.run('%config TreeChat.provider = "offline"').check()
        kernel.run('%config TreeChat.language = "en"').check()
        first = ask(kernel, "What is a leaf?", "c1")
        assert not HAN.search(footer(first))
        front_end_says(kernel, widget_id(first), "zh-CN")
        assert language_line(kernel) == "Language: en (TreeChat.language)"
        assert not HAN.search(footer(ask(kernel, "And a root?", "c2")))

        # a bad value is refused and changes nothing
        kernel.run('%config TreeChat.language = "tlh"')
        assert language_line(kernel) == "Language: en (TreeChat.language)"
        bad = kernel.run("%chat language tlh")
        assert bad.visible_text.strip() == (
            "UsageError: %chat language: there is no catalog for 'tlh'; give one of zh_CN, en, auto"
        )
        usage = kernel.run("%chat language zh_CN en").visible_text.strip()
        assert usage == "UsageError: usage: %chat language [zh_CN|en|auto]"

        # %chat language sets it (and says so in the new language)
        said = kernel.run("%chat language zh_CN").check().stdout.strip()
        assert "zh_CN" in said and "%chat language" in said and HAN.search(said), said
        value = kernel.run(
            "from jupyter_tree_chat.kernel.sessions import registry\n"
            "print(registry().config.language)"
        )
        assert value.check().stdout.strip() == "zh_CN"  # the same setting as TreeChat's
        assert_chinese_footer(english_footer, footer(ask(kernel, "And a branch?", "c3")))
        front_end_says(kernel, widget_id(first), "en")
        assert re.search(r"\bzh_CN\b", language_line(kernel))

        # auto: JupyterLab's language again (it said en last)
        said = kernel.run("%chat language auto").check().stdout.strip()
        assert said == "Language: en (JupyterLab's language, en)"
