"""The front end speaks JupyterLab's language: Chinese with 中文 chosen, English without.

Two real JupyterLab servers, both with ``jupyterlab-language-pack-zh-CN`` installed (the
test extra installs it): the session-wide one, left at its default language, and one
whose user settings choose ``zh_CN`` as a user would in *Settings → Language*
(``@jupyterlab/translation-extension/plugin.jupyterlab-settings`` holding
``{"locale": "zh_CN"}``). In each, a notebook runs a ``%%chat`` cell (the turn control)
(asked in the lab's language, so the offline model answers in it too) and
``%chat panel`` (the panel), and a ``*.chat.jsonl`` opens in the viewer. The test
reads what a user reads there, the text and the ``title``/``aria-label`` of everything
but the messages themselves, and checks it against the shipped catalog: in Chinese every
message of ours is the catalog's translation and no English message is left; in English
the messages are the English text and nothing is Chinese.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, Lab, running_lab
from lab_notebooks import open_and_run_all, write_notebook
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

CATALOG_FILE = REPO / "jupyter_tree_chat/locale/zh_CN/LC_MESSAGES/jupyter_tree_chat.json"
CATALOG: dict[str, list[str]] = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
CATALOG.pop("")
HAN = re.compile(r"[\u3400-\u9fff]")

#: what a user reads in a view, leaving out the session's own text (messages, ids, labels)
READ_CHROME = """root => {
  const skip = '.jtc-markdown, .jtc-msg-body, .jtc-first-line, .jtc-id, .jtc-label, .jtc-title,'
    + ' .jtc-problem, .jtc-compare-text, pre, code';
  const seen = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let node = walker.currentNode; node; node = walker.nextNode()) {
    const element = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
    if (!element || element.closest(skip)) continue;
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent.trim();
      if (text) seen.push(text);
    } else {
      for (const name of ['title', 'aria-label', 'placeholder']) {
        const value = node.getAttribute(name);
        if (value && value.trim()) seen.push(value.trim());
      }
    }
  }
  return seen;
}"""


def english(msgid: str, context: str | None = None) -> str:
    return msgid


def chinese(msgid: str, context: str | None = None) -> str:
    return CATALOG[(context + "\x04" if context else "") + msgid][0]


def as_pattern(msgid: str) -> re.Pattern[str]:
    """A message as it can appear on screen: ``%1`` and friends filled with anything."""
    parts = re.split(r"%\d", msgid)
    return re.compile(".+?".join(re.escape(part) for part in parts))


#: English messages that read the same in Chinese or that are a single symbol
UNCHANGED = {key for key, value in CATALOG.items() if value[0] == key.split("\x04")[-1]}
ENGLISH_MESSAGES = [
    as_pattern(key.split("\x04")[-1])
    for key in CATALOG
    if key not in UNCHANGED and re.search(r"[A-Za-z]{3}", key.split("\x04")[-1])
]


@pytest.fixture(scope="module")
def lab_zh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    settings = {"@jupyterlab/translation-extension/plugin": {"locale": "zh_CN"}}
    base = tmp_path_factory.mktemp("jupyterlab-zh_CN")
    with running_lab(base, settings, log_name="jupyterlab-zh_CN.log") as server:
        yield server


def read(locator: Any) -> list[str]:
    texts: list[str] = locator.evaluate(READ_CHROME)
    return texts


def english_left(texts: list[str]) -> list[str]:
    """The texts that are one of our English messages, whole (a message untranslated)."""
    return [t for t in texts if any(p.fullmatch(t) for p in ENGLISH_MESSAGES)]


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_panel_turn_control_and_viewer_are_in_the_labs_language(
    language: str, request: pytest.FixtureRequest, page: Any, page_log: Any, screenshot: Any
) -> None:
    lab: Lab = request.getfixturevalue("lab" if language == "en" else "lab_zh")
    say: Callable[..., str] = english if language == "en" else chinese
    notebook = f"language-{language}.ipynb"
    write_notebook(
        lab.root / notebook,
        [
            '%load_ext jupyter_tree_chat\n%config TreeChat.provider = "offline"',
            "%%chat\n" + ("What is a session tree?" if language == "en" else "什么是会话树？"),
            "%chat panel",
        ],
    )
    tab = open_and_run_all(page, lab, notebook)

    # JupyterLab's own menus follow the same setting (the language pack)
    expect(page.locator(".lm-MenuBar-itemLabel").first).to_have_text(lab_word(language, "File"))

    # the offline model answers in the question's language
    seen_first = "I was sent **1 message**" if language == "en" else "我在 active path 上收到了"
    expect(tab.locator(".jp-RenderedMarkdown, .jp-RenderedHTMLCommon").first).to_contain_text(
        seen_first.replace("**", "")
    )

    # the turn control under the %%chat cell
    control = tab.locator(".jtc-turn").first
    expect(control).to_be_visible(timeout=60_000)
    expect(control.get_by_role("button", name=say("↻ Retry"))).to_be_visible()
    expect(control.get_by_role("button", name=say("✎ Edit"))).to_be_visible()

    # the panel
    panel = tab.locator(".jtc-panel").first
    expect(panel).to_be_visible(timeout=60_000)
    expect(panel.get_by_role("tree", name=say("Session tree"))).to_be_visible()
    expect(panel.get_by_role("region", name=say("Conversation"))).to_be_visible()
    expect(panel.locator(".jtc-pending")).to_have_count(0)  # its texts are in, not loading
    screenshot("notebook")
    seen = {"control": read(control), "panel": read(panel)}

    # the viewer of a session file
    (lab.root / f"language-{language}.chat.jsonl").write_bytes(
        (Path(REPO) / "tests" / "data" / "branches.chat.jsonl").read_bytes()
    )
    # in the same page (leaving it would ask whether to drop the unsaved notebook)
    page.evaluate(
        "p => window.jupyterapp.commands.execute('jupyter-tree-chat:open', {path: p})",
        f"language-{language}.chat.jsonl",
    )
    viewer = page.locator(".jtc-document:not(.lm-mod-hidden) .jtc-viewer")
    expect(viewer).to_be_visible(timeout=60_000)
    expect(viewer.get_by_role("tree", name=say("Session tree"))).to_be_visible()
    expect(viewer.get_by_label(say("Problems in the file"))).to_be_visible()
    expect(viewer.locator(".jtc-pending")).to_have_count(0)
    screenshot("viewer")
    seen["viewer"] = read(viewer)

    for view, texts in seen.items():
        assert texts, view
        if language == "en":
            assert [t for t in texts if HAN.search(t)] == [], view
        else:
            assert english_left(texts) == [], view
            assert any(HAN.search(t) for t in texts), view
    assert page_log.page_errors == []


def lab_word(language: str, menu: str) -> str:
    """A menu's name as JupyterLab shows it: from the installed language pack's catalog."""
    if language == "en":
        return menu
    import jupyterlab_language_pack_zh_CN as pack

    messages = Path(pack.__file__).parent / "locale/zh_CN/LC_MESSAGES/jupyterlab.json"
    return str(json.loads(messages.read_text(encoding="utf-8"))["menu\x04" + menu][0])
