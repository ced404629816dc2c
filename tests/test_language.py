"""Which language a question is in: the rule the offline model and compaction follow."""

from __future__ import annotations

import pytest

from jupyter_tree_chat.language import COMPACTION, count_words, path_language, text_language


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


def test_a_paths_language_is_its_last_real_user_messages() -> None:
    tool_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "……"}]}
    asked_in_chinese = [{"role": "user", "content": "什么是会话树？"}, answer, tool_result]
    assert path_language(asked_in_chinese) == "zh"  # the tool result does not count
    then_english = [*asked_in_chinese, answer, {"role": "user", "content": "And in English?"}]
    assert path_language(then_english) == "en"
    assert path_language([]) == "en" and path_language([tool_result]) == "en"


def test_chinese_words_are_han_characters_and_runs_of_other_letters() -> None:
    assert count_words("用 Python 给list排序。", "zh") == ["用", "Python", "给", "list", "排", "序"]
    assert count_words("Hello, big world!", "en") == ["Hello,", "big", "world!"]


def test_compaction_has_its_three_texts_in_both_languages() -> None:
    assert COMPACTION["en"].heading == "Summary of our conversation so far:"
    for texts in COMPACTION.values():
        assert texts.request and texts.heading and texts.acknowledgement
    assert text_language(COMPACTION["zh"].request) == "zh"
