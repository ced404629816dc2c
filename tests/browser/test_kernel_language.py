"""The kernel speaks JupyterLab's language once one of its views renders (issue 30, part 2).

In a real JupyterLab with ``jupyterlab-language-pack-zh-CN`` installed, English (the
default) or Chinese (``{"locale": "zh_CN"}`` in the translation settings, as *Settings →
Language* writes it). The kernel's own locale is set the other way on purpose
(``%env LANG=...`` before the extension loads), so what the footer shows is decided by
the front end: the first ``%%chat`` answer's footer, printed before its turn control
exists, is in the locale's language; the control renders and tells the kernel the lab's
language; the next answer's footer and ``%chat language`` are in the lab's language.
JupyterLab changes its language by reloading the page: the Chinese case then switches the
setting to English and reloads, and the re-rendered control brings the kernel along.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Lab, running_lab
from helpers.kernel_words import HAN, english_left, translation_missing
from lab_notebooks import write_notebook
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SETTINGS = "@jupyterlab/translation-extension/plugin"
RUN_CELL = """async index => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  notebook.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
}"""
OPENED = (
    "name => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " const k = w && w.context && w.context.path === name && w.sessionContext"
    " && w.sessionContext.session && w.sessionContext.session.kernel;"
    " return k && k.status === 'idle'; }"
)
#: the locale the kernel starts with: the other language than the lab's
KERNEL_LOCALE = {"en": "zh_CN.UTF-8", "zh_CN": "C.UTF-8"}


@pytest.fixture(scope="module")
def lab_chinese(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("jupyterlab-kernel-zh_CN")
    with running_lab(base, {SETTINGS: {"locale": "zh_CN"}}, log_name="lab-kernel-zh.log") as lab:
        yield lab


def open_notebook(page: Any, lab: Lab, name: str) -> Any:
    page.goto(f"{lab.url}/lab/tree/{name}")
    page.wait_for_function(OPENED, arg=name, timeout=90_000)
    return page.locator(".jp-Notebook .jp-Cell")


def run_cell(page: Any, index: int) -> None:
    page.evaluate(RUN_CELL, index)


def footer_of(cell: Any) -> str:
    line = cell.locator(".jp-OutputArea-output sub").first
    expect(line).to_be_visible(timeout=60_000)
    # the whole line as the kernel wrote it: a live control folds the figures it shows too
    # (panel/footer.ts), so its visible text is shorter
    return str(line.text_content())


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_kernels_footer_follows_the_labs_language_once_a_view_renders(
    language: str, request: pytest.FixtureRequest, page: Any, page_log: Any, screenshot: Any
) -> None:
    lab: Lab = request.getfixturevalue("lab" if language == "en" else "lab_chinese")
    name = f"kernel-language-{language}.ipynb"
    write_notebook(
        lab.root / name,
        [
            f"%env LC_ALL=\n%env LC_MESSAGES=\n%env LANG={KERNEL_LOCALE[language]}\n"
            '%load_ext jupyter_tree_chat\n%config TreeChat.provider = "offline"',
            "%%chat\nWhat is a leaf?",
            "%%chat\nWhat is a root?",
            "%chat language",
        ],
    )
    cells = open_notebook(page, lab, name)
    run_cell(page, 0)
    run_cell(page, 1)
    before = footer_of(cells.nth(1))  # printed before any view of ours rendered
    expect(cells.nth(1).locator(".jtc-turn")).to_be_visible(timeout=60_000)
    run_cell(page, 2)
    after = footer_of(cells.nth(2))
    run_cell(page, 3)
    said = cells.nth(3).locator(".jp-OutputArea-output")
    expect(said).to_contain_text("Language: " if language == "en" else "zh_CN", timeout=60_000)
    screenshot("footers")

    if language == "en":
        assert HAN.search(before), before  # the kernel's locale: Chinese
        assert not HAN.search(after) and " in · " in after, after
        assert translation_missing(after, before) == []
        expect(said).to_have_text("Language: en (JupyterLab's language, en)")
    else:
        assert not HAN.search(before) and " in · " in before, before  # the locale: C
        assert HAN.search(after), after
        assert translation_missing(before, after) == [] and english_left(after) == []
        expect(said).to_contain_text("zh-CN")
        assert HAN.search(said.inner_text()) and english_left(said.inner_text()) == []

        # JupyterLab's language changed to English: the setting, then the page reloads
        settings = lab.root.parent / "settings" / f"{SETTINGS}.jupyterlab-settings"
        settings.write_text(json.dumps({"locale": "en"}))
        try:
            page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
            page.reload()
            page.wait_for_function(OPENED, arg=name, timeout=90_000)
            expect(page.locator(".lm-MenuBar-itemLabel").first).to_have_text("File")
            expect(cells.nth(1).locator(".jtc-turn")).to_be_visible(timeout=60_000)
            run_cell(page, 3)
            expect(said).to_have_text(
                re.compile(r"Language: en \(JupyterLab's language, en\)"), timeout=60_000
            )
        finally:
            settings.write_text(json.dumps({"locale": "zh_CN"}))
    assert page_log.page_errors == []
