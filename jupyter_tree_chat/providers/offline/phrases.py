"""What the offline teaching model says, in each language it speaks.

The offline model answers in the language of the question, so the chapter (written in
Chinese) can be taught in Chinese with no key. Its logic is written once, in
``offline/provider.py``; every sentence it can say is here, one ``Phrases`` table per language,
so the two languages cannot drift apart in what they state.

The rule that picks the language is ``language.path_language``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...language import Language


@dataclass(frozen=True)
class Phrases:
    """Every sentence of the offline model, as ``str.format`` templates."""

    language: Language
    message: str  # the noun after a count of messages, singular
    messages: str  # ... plural
    seen: str  # {count} {noun} {roles}
    more_roles: str  # {count}: roles left out in the middle of a long path
    exchanges: str  # {count} {noun}: the exchanges (a question and what followed it) sent
    exchange_noun: str
    exchanges_noun: str
    header: str
    last_user: str  # {quote} follows on its own lines
    no_text: str
    answer: str  # {answer}
    another_try: str  # {attempt}: a retry's answer says which answer to the question it is
    only_this_path: str
    settings: str  # {model} {temperature} {max_tokens} {system} {tools}
    default_temperature: str
    system_prompt: str  # {system}
    no_system_prompt: str
    no_tools: str
    list_separator: str
    word: str
    words: str
    word_count: str  # {count} {noun} {longest} (a template may leave some out)
    nothing_to_answer: str
    carried: str  # {items}: the images and documents of the question
    image: str
    images: str
    document: str
    documents: str
    calling_tool: str  # {name} {input}
    tool_returned: str  # {tool}: the_tool or the_named_tool
    tool_failed: str  # {tool}
    the_tool: str
    the_named_tool: str  # {name}
    thinking: str  # {budget} {count}: what it "thinks" when asked to (before its answer)
    thinking_budget: str  # {tokens}
    thinking_adaptive: str


ENGLISH = Phrases(
    language="en",
    message="message",
    messages="messages",
    seen="I was sent **{count} {noun}** on the active path: {roles}.",
    more_roles="… ({count} more) …",
    exchanges="That is **{count} {noun}** (a question and what followed it).",
    exchange_noun="exchange",
    exchanges_noun="exchanges",
    header="*(Offline teaching model: deterministic, no network.)*",
    last_user="The last user message was:",
    no_text="(no text)",
    answer="**Answer (offline):** {answer}",
    another_try=(
        "This is answer **{attempt}** to this question: each answer to it (a retry, or "
        "one more of a fan-out) is a sibling of the others, one click away. The same path "
        "gets the same words from me; a real model would word each answer differently."
    ),
    only_this_path=(
        "I see only this path, from the root to the current leaf. If this conversation "
        "has other branches, I know nothing about them: they were never sent to me."
    ),
    settings=(
        "_Settings I was given: model {model}, temperature {temperature}, "
        "max_tokens {max_tokens}, {system}, tools: {tools}._"
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
    carried="It also carried {items}, which this offline model cannot look at.",
    image="image",
    images="images",
    document="document",
    documents="documents",
    calling_tool="You asked for the tool `{name}`, so I am calling it with `{input}`.",
    tool_returned="{tool} returned:",
    tool_failed="{tool} reported an error:",
    the_tool="The tool",
    the_named_tool="The tool `{name}`",
    thinking=(
        "Thinking ({budget}): the path holds {count} message(s). "
        "I answer the last user message on it; other branches were never sent to me."
    ),
    thinking_budget="{tokens} tokens",
    thinking_adaptive="adaptive",
)

CHINESE = Phrases(
    language="zh",
    message="条消息",
    messages="条消息",
    seen="我在 active path 上收到了 **{count} {noun}**：{roles}。",
    more_roles="……（中间还有 {count} 条）……",
    exchanges="一共 **{count} {noun}**问答（一个问题和它之后的一切算一轮）。",
    exchange_noun="轮",
    exchanges_noun="轮",
    header="*（离线教学模型：结果确定，不联网。）*",
    last_user="最后一条用户消息是：",
    no_text="（没有文字）",
    answer="**回答（离线）：** {answer}",
    another_try=(
        "这是这个问题的第 **{attempt}** 个回答：它的每个回答（一次重试，或一次扇出中的一个）"
        "都是彼此的兄弟节点，点一下就能切换。同一条路径从我这里得到的文字相同；真正的模型每次的措辞都会不同。"
    ),
    only_this_path=(
        "我只看得到这一条路径：从根节点到当前叶子。如果这段对话还有别的分支，"
        "我对它们一无所知：它们从来没有发给我。"
    ),
    settings=(
        "_我收到的设置：model {model}，temperature {temperature}，"
        "max_tokens {max_tokens}，{system}，工具：{tools}。_"
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
    carried="它还附带了 {items}，这个离线模型看不了。",
    image="张图片",
    images="张图片",
    document="份文档",
    documents="份文档",
    calling_tool="你要求使用工具 `{name}`，所以我用 `{input}` 调用它。",
    tool_returned="{tool}返回了：",
    tool_failed="{tool}报告了错误：",
    the_tool="工具",
    the_named_tool="工具 `{name}`",
    thinking=(
        "思考（{budget}）：这条路径上有 {count} 条消息。"
        "我回答其中最后一条用户消息；别的分支从来没有发给我。"
    ),
    thinking_budget="{tokens} 个 token",
    thinking_adaptive="自适应",
)

PHRASES: dict[Language, Phrases] = {"en": ENGLISH, "zh": CHINESE}
