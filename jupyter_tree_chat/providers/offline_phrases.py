"""What the offline teaching model says, in each language it speaks, and how it chooses.

The offline model answers in the language of the question, so the chapter (written in
Chinese) can be taught in Chinese with no key. Its logic is written once, in
``offline.py``; every sentence it can say is here, one ``Phrases`` table per language,
so the two languages cannot drift apart in what they state.

**The rule.** The reply's language is that of the last real user message on the path
(tool results do not count; a path with none is answered in English). A message is
Chinese when its Han characters are at least as many as its other words: each Han
character counts as one word, each run of letters of any other script as one word,
digits and punctuation not at all. So ``用 Python 给 list 排序`` (4 Han, 2 Latin words)
is Chinese and ``What does 会话树 mean in this chapter?`` (3 Han, 6 words) is English.
The rule is a pure function of the text: the same question always gets the same
language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Language = Literal["en", "zh"]

#: Han ideographs: CJK Unified Ideographs, Extension A, compatibility ideographs, ext. B–F
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_HAN_CHARACTER = re.compile(f"[{HAN}]")
_OTHER_WORD = re.compile(rf"[^\W\d_{HAN}]+")


def text_language(text: str) -> Language:
    """``"zh"`` when Han characters are at least as many as the other words, else ``"en"``."""
    han = len(_HAN_CHARACTER.findall(text))
    return "zh" if han and han >= len(_OTHER_WORD.findall(text)) else "en"


def count_words(text: str, language: Language) -> list[str]:
    """The words of ``text``: split at spaces in English; in Chinese as the rule counts them."""
    if language == "en":
        return text.split()
    return re.findall(rf"[{HAN}]|[^\W\d_{HAN}]+", text)


@dataclass(frozen=True)
class Phrases:
    """Every sentence of the offline model, as ``str.format`` templates."""

    language: Language
    message: str  # the noun after a count of messages, singular
    messages: str  # ... plural
    seen: str  # {count} {noun} {roles}
    more_roles: str  # {count}: roles left out in the middle of a long path
    header: str
    last_user: str  # {quote} follows on its own lines
    no_text: str
    answer: str  # {answer}
    only_this_path: str
    settings: str  # {temperature} {max_tokens} {system} {tools}
    default_temperature: str
    system_prompt: str  # {system}
    no_system_prompt: str
    no_tools: str
    list_separator: str
    word: str
    words: str
    word_count: str  # {count} {noun} {longest} (a template may leave some out)
    nothing_to_answer: str
    calling_tool: str  # {name} {input}
    tool_returned: str  # {tool}: the_tool or the_named_tool
    tool_failed: str  # {tool}
    the_tool: str
    the_named_tool: str  # {name}


ENGLISH = Phrases(
    language="en",
    message="message",
    messages="messages",
    seen="I was sent **{count} {noun}** on the active path: {roles}.",
    more_roles="… ({count} more) …",
    header="*(Offline teaching model: deterministic, no network.)*",
    last_user="The last user message was:",
    no_text="(no text)",
    answer="**Answer (offline):** {answer}",
    only_this_path=(
        "I see only this path, from the root to the current leaf. If this conversation "
        "has other branches, I know nothing about them: they were never sent to me."
    ),
    settings=(
        "_Settings I was given: temperature {temperature}, max_tokens {max_tokens}, "
        "{system}, tools: {tools}._"
    ),
    default_temperature="default",
    system_prompt="system prompt “{system}”",
    no_system_prompt="no system prompt",
    no_tools="none",
    list_separator=", ",
    word="word",
    words="words",
    word_count=(
        "Your message has {count} {noun}; the longest is “{longest}”. A real model would "
        "answer it; ask about arithmetic (e.g. `2 + 3 * 4`) for a real offline answer."
    ),
    nothing_to_answer="There was no text to answer.",
    calling_tool="You asked for the tool `{name}`, so I am calling it with `{input}`.",
    tool_returned="{tool} returned:",
    tool_failed="{tool} reported an error:",
    the_tool="The tool",
    the_named_tool="The tool `{name}`",
)

CHINESE = Phrases(
    language="zh",
    message="条消息",
    messages="条消息",
    seen="我在 active path 上收到了 **{count} {noun}**：{roles}。",
    more_roles="……（中间还有 {count} 条）……",
    header="*（离线教学模型：结果确定，不联网。）*",
    last_user="最后一条用户消息是：",
    no_text="（没有文字）",
    answer="**回答（离线）：** {answer}",
    only_this_path=(
        "我只看得到这一条路径：从根节点到当前叶子。如果这段对话还有别的分支，"
        "我对它们一无所知：它们从来没有发给我。"
    ),
    settings=(
        "_我收到的设置：temperature {temperature}，max_tokens {max_tokens}，"
        "{system}，工具：{tools}。_"
    ),
    default_temperature="默认",
    system_prompt="system prompt“{system}”",
    no_system_prompt="没有 system prompt",
    no_tools="无",
    list_separator="、",
    word="个词",
    words="个词",
    word_count=(
        "你的消息有 {count} {noun}（一个汉字算一个词）。真正的模型会回答它；"
        "问一道算术题（比如 `2 + 3 * 4`），就能得到真正的离线回答。"
    ),
    nothing_to_answer="没有可以回答的文字。",
    calling_tool="你要求使用工具 `{name}`，所以我用 `{input}` 调用它。",
    tool_returned="{tool}返回了：",
    tool_failed="{tool}报告了错误：",
    the_tool="工具",
    the_named_tool="工具 `{name}`",
)

PHRASES: dict[Language, Phrases] = {"en": ENGLISH, "zh": CHINESE}
