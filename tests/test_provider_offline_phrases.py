"""The offline model's languages: the rule that picks one, and tables that say the same."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from jupyter_tree_chat.providers.offline_phrases import PHRASES, count_words, text_language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("What is a session tree?", "en"),
        ("什么是会话树？", "zh"),
        ("用 Python 给 list 排序", "zh"),  # 4 Han characters, 2 other words
        ("解释 session tree", "zh"),  # 2 and 2: a tie is Chinese
        ("What does 会话树 mean in this chapter?", "en"),  # 3 and 6
        ("2 + 3 * 4", "en"),  # no words at all
        ("", "en"),
        ("/edit 3 换一种问法...", "zh"),  # the chapter's own command line: 5 and 1
        ("Ünïcödé wörds só", "en"),
    ],
)
def test_text_language_counts_han_characters_against_other_words(text: str, language: str) -> None:
    assert text_language(text) == language


def test_chinese_words_are_han_characters_and_runs_of_other_letters() -> None:
    assert count_words("用 Python 给list排序。", "zh") == ["用", "Python", "给", "list", "排", "序"]
    assert count_words("Hello, big world!", "en") == ["Hello,", "big", "world!"]


def test_every_language_fills_the_same_templates_with_the_same_fields() -> None:
    english, chinese = PHRASES["en"], PHRASES["zh"]
    for field in fields(english):
        if field.name == "language":
            continue
        en, zh = getattr(english, field.name), getattr(chinese, field.name)
        assert zh and zh != en, field.name
        placeholders = set(re.findall(r"\{(\w+)\}", en))
        assert set(re.findall(r"\{(\w+)\}", zh)) <= placeholders, field.name
        assert en.format(**dict.fromkeys(placeholders, "x"))
    assert {english.language, chinese.language} == {"en", "zh"}
