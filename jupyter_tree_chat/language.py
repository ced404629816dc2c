"""Which language a message is written in, for the few texts the project itself writes.

The chapter this project teaches is written in Chinese, so the texts the project puts
into a conversation (the offline teaching model's replies, the compaction request and
its summary heading) follow the language of the user's own question rather than always
being English. The rule is one pure function of the text, so a question always gets the
same language.

**The rule.** A path's language is that of its last real user message (tool results do
not count; a path with none is English). A message is Chinese when its Han characters
are at least as many as its other words: each Han character counts as one word, each
run of letters of any other script as one word, digits and punctuation not at all. So
``用 Python 给 list 排序`` (4 Han, 2 Latin words) is Chinese and
``What does 会话树 mean in this chapter?`` (3 Han, 6 words) is English.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .history.tree import (
    COMPACTION_ACKNOWLEDGEMENT,
    COMPACTION_HEADING,
    is_real_user_message,
    message_text,
)

Language = Literal["en", "zh"]

#: Han ideographs: CJK Unified Ideographs, Extension A, compatibility ideographs, ext. B–F
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_HAN_CHARACTER = re.compile(f"[{HAN}]")
_OTHER_WORD = re.compile(rf"[^\W\d_{HAN}]+")
_RULE_WORD = re.compile(rf"[{HAN}]|[^\W\d_{HAN}]+")


def text_language(text: str) -> Language:
    """``"zh"`` when Han characters are at least as many as the other words, else ``"en"``."""
    han = len(_HAN_CHARACTER.findall(text))
    return "zh" if han and han >= len(_OTHER_WORD.findall(text)) else "en"


def path_language(messages: Sequence[Mapping[str, Any]]) -> Language:
    """The language of the last real user message on the path (``"en"`` if there is none)."""
    last_user = next((m for m in reversed(messages) if is_real_user_message(m)), None)
    return "en" if last_user is None else text_language(message_text(last_user))


def count_words(text: str, language: Language) -> list[str]:
    """The words of ``text``: split at spaces in English; in Chinese as the rule counts them."""
    if language == "en":
        return text.split()
    return _RULE_WORD.findall(text)


@dataclass(frozen=True)
class CompactionTexts:
    """What compaction writes into the conversation: the request and the new root's frame."""

    request: str
    heading: str
    acknowledgement: str


COMPACTION: dict[Language, CompactionTexts] = {
    "en": CompactionTexts(
        request="Summarise our conversation so far so that it can continue from the summary alone.",
        heading=COMPACTION_HEADING,
        acknowledgement=COMPACTION_ACKNOWLEDGEMENT,
    ),
    "zh": CompactionTexts(
        request="请总结我们到目前为止的对话，让对话只凭这份总结就能继续下去。",
        heading="到目前为止的对话总结：",
        acknowledgement="明白了。我会从这份总结继续。",
    ),
}


#: the marked note that stands where exchanges were left out of a request to fit its budget
#: (measures/budget.py): singular and plural, ``{count}`` filled in
LEFT_OUT: dict[Language, tuple[str, str]] = {
    "en": ("[{count} earlier exchange left out]", "[{count} earlier exchanges left out]"),
    "zh": ("[前面省略了 {count} 轮对话]", "[前面省略了 {count} 轮对话]"),
}


_LEFT_OUT_NOTE = re.compile(
    "|".join(
        re.escape(form).replace(re.escape("{count}"), r"[\d,]+")
        for forms in LEFT_OUT.values()
        for form in forms
    )
)


def is_left_out_note(text: str) -> bool:
    """Whether ``text`` is exactly a budget's note (``left_out_note``), in any language."""
    return _LEFT_OUT_NOTE.fullmatch(text.strip()) is not None


def left_out_note(count: int, language: Language) -> str:
    """``[12 earlier exchanges left out]``, in the conversation's language."""
    one, many = LEFT_OUT[language]
    return (one if count == 1 else many).format(count=f"{count:,}")
