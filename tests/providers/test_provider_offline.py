"""The offline teaching model: what a user sees it say, and that it streams like the real one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers.content_blocks import image_block, pdf_block

from jupyter_tree_chat.errors import BadRequest
from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.providers.base import (
    Finished,
    Provider,
    ReplyEvent,
    ReplyRequest,
    TextDelta,
    ThinkingDelta,
    ThinkingReady,
    ToolUseReady,
)
from jupyter_tree_chat.providers.offline.provider import OfflineProvider, offline_notice
from jupyter_tree_chat.providers.tools.functions import ToolRegistry


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def events(request: ReplyRequest, **options: Any) -> list[ReplyEvent]:
    return list(OfflineProvider(**options).stream(request))


def finished(request: ReplyRequest) -> Finished:
    last = events(request)[-1]
    assert isinstance(last, Finished)
    return last


def reply_text(request: ReplyRequest) -> str:
    return str(finished(request).message["content"][0]["text"])


def ask(*messages: dict[str, Any], **options: Any) -> ReplyRequest:
    return ReplyRequest(messages=list(messages), model="offline-teacher", **options)


@pytest.fixture
def tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @registry.register
    def get_weather(city: str, days: int = 1) -> str:
        """The weather in a city."""
        return f"Sunny in {city} for {days} day(s)"

    return registry


def test_it_is_a_provider_named_offline() -> None:
    provider = OfflineProvider()
    assert isinstance(provider, Provider)
    assert provider.name == "offline"
    assert provider.default_model == "offline-teacher"


def test_the_notice_says_why_and_how_to_use_claude() -> None:
    notice = offline_notice()
    assert "\n" not in notice
    assert "ANTHROPIC_API_KEY" in notice and "offline" in notice


def test_reply_lists_count_roles_and_quotes_the_last_user_message() -> None:
    text = reply_text(ask(user("hello"), assistant("hi there"), user("What is a session tree?")))
    assert "**3 messages**" in text
    assert "user → assistant → user" in text
    assert "> What is a session tree?" in text
    assert "know nothing about them" in text


def test_reply_makes_the_chapter_point_about_other_branches() -> None:
    text = reply_text(ask(user("hi")))
    assert "I see only this path" in text
    assert "other branches" in text


def test_reply_shows_temperature_and_system_prompt() -> None:
    text = reply_text(ask(user("hi"), temperature=0.7, system="Answer in French."))
    assert "temperature 0.7" in text
    assert "Answer in French." in text


def test_replies_differ_exactly_where_their_settings_differ() -> None:
    base = reply_text(ask(user("hi")))
    other_model = reply_text(replace(ask(user("hi")), model="claude-opus-4-6"))
    warmer = reply_text(ask(user("hi"), temperature=1.0))
    assert "_Settings I was given: model offline-teacher, temperature default," in base
    assert other_model == base.replace("model offline-teacher", "model claude-opus-4-6")
    assert warmer == base.replace("temperature default", "temperature 1")


def test_reply_answers_simple_arithmetic() -> None:
    assert "`2 + 3 * 4 = 14`" in reply_text(ask(user("What is 2 + 3 * 4?")))


def test_tool_results_appear_as_user_tool_result_in_the_roles() -> None:
    path = [
        user("add 2 and 3"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "5"}]},
        assistant("It is 5."),
        user("thanks"),
    ]
    text = reply_text(ask(*path))
    assert "user → assistant(tool_use) → user(tool_result) → assistant → user" in text
    assert "> thanks" in text


def test_same_request_gives_the_same_reply_in_the_same_chunks() -> None:
    request = ask(user("hello"), assistant("hi"), user("again"), temperature=0.2)
    assert events(request) == events(request)


def test_reply_streams_in_several_chunks_that_add_up_to_the_final_text() -> None:
    stream = events(ask(user("Tell me about branches.")))
    deltas = [e.text for e in stream if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert all(len(d.split()) <= 3 for d in deltas)
    last = stream[-1]
    assert isinstance(last, Finished)
    assert "".join(deltas) == last.message["content"][0]["text"]
    assert last.stop_reason == "end_turn"


def test_delay_is_slept_between_chunks_only() -> None:
    slept: list[float] = []
    stream = events(ask(user("hello there")), delay=0.05, sleep=slept.append)
    chunks = sum(isinstance(e, TextDelta) for e in stream)
    assert slept == [0.05] * (chunks - 1)


def test_usage_is_estimated_and_cache_fields_are_zero() -> None:
    short = finished(ask(user("hi"))).usage
    long = finished(ask(user("hi " * 400))).usage
    assert short["input_tokens"] > 0 and short["output_tokens"] > 0
    assert long["input_tokens"] > short["input_tokens"] + 200
    assert short["cache_creation_input_tokens"] == 0
    assert short["cache_read_input_tokens"] == 0


def test_max_tokens_truncates_the_reply_and_says_so() -> None:
    stream = events(ask(user("hello"), max_tokens=5))
    last = stream[-1]
    assert isinstance(last, Finished)
    text = last.message["content"][0]["text"]
    assert last.stop_reason == "max_tokens"
    assert len(text.split()) == 5
    assert "".join(e.text for e in stream if isinstance(e, TextDelta)) == text
    assert reply_text(ask(user("hello"))).startswith(text)


def test_an_empty_path_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match="no messages"):
        events(ask())


def test_naming_a_tool_with_call_syntax_asks_for_it_with_parsed_input(tools: ToolRegistry) -> None:
    stream = events(ask(user("please call add(2, 3)"), tools=tools.specs()))
    ready = [e for e in stream if isinstance(e, ToolUseReady)]
    assert len(ready) == 1
    block = ready[0].block
    assert block["type"] == "tool_use"
    assert block["name"] == "add"
    assert block["input"] == {"a": 2, "b": 3}
    assert block["id"].startswith("toolu_offline_")
    last = stream[-1]
    assert isinstance(last, Finished)
    assert last.stop_reason == "tool_use"
    assert last.message["content"][-1] == block
    assert "`add`" in last.message["content"][0]["text"]


def test_naming_a_tool_in_words_fills_its_first_string_property(tools: ToolRegistry) -> None:
    block = finished(ask(user("use get_weather for Paris"), tools=tools.specs())).message[
        "content"
    ][-1]
    assert block["name"] == "get_weather"
    assert block["input"] == {"city": "Paris"}


def test_key_value_and_bare_word_arguments(tools: ToolRegistry) -> None:
    kv = finished(ask(user("use add with a=1 b=2"), tools=tools.specs()))
    assert kv.message["content"][-1]["input"] == {"a": 1, "b": 2}
    bare = finished(ask(user("get_weather(Oslo, days=2)"), tools=tools.specs()))
    assert bare.message["content"][-1]["input"] == {"city": "Oslo", "days": 2}


def test_tools_not_offered_are_not_called(tools: ToolRegistry) -> None:
    result = finished(ask(user("call add(2, 3)")))
    assert result.stop_reason == "end_turn"
    assert all(block["type"] == "text" for block in result.message["content"])
    offered_but_not_named = finished(ask(user("hello"), tools=tools.specs()))
    assert offered_but_not_named.stop_reason == "end_turn"


def test_after_a_tool_result_it_reports_what_the_tool_returned(tools: ToolRegistry) -> None:
    first = finished(ask(user("call add(2, 3)"), tools=tools.specs()))
    tool_use = first.message["content"][-1]
    result = tools.run(tool_use)
    path = [user("call add(2, 3)"), first.message, {"role": "user", "content": [result]}]
    after = finished(ask(*path, tools=tools.specs()))
    text = after.message["content"][0]["text"]
    assert after.stop_reason == "end_turn"
    assert "The tool returned: 5" in text
    assert "user → assistant(tool_use) → user(tool_result)" in text
    assert not any(block["type"] == "tool_use" for block in after.message["content"])


def test_after_a_failed_tool_it_reports_the_error(tools: ToolRegistry) -> None:
    bad = tools.run({"type": "tool_use", "id": "t9", "name": "add", "input": {"a": 1}})
    path = [
        user("call add(1)"),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "add"}]},
        {"role": "user", "content": [bad]},
    ]
    text = reply_text(ask(*path))
    assert "The tool reported an error: Bad arguments for add" in text


def test_two_branches_sharing_a_prefix_each_see_only_their_own_path() -> None:
    tree = SessionTree()
    tree.add(Node("m1", None, user("My name is Ada.")))
    tree.add(Node("m2", "m1", assistant("Hello Ada.")))
    tree.add(Node("m3", "m2", user("Plan a trip to Kyoto.")))
    tree.add(Node("m4", "m3", assistant("Kyoto in spring is lovely.")))
    tree.add(Node("m5", "m4", user("What about temples?")))
    tree.add(Node("m3b", "m2", user("Explain quantum computing instead.")))

    kyoto = reply_text(ask(*tree.active_path("m5")))
    quantum = reply_text(ask(*tree.active_path("m3b")))

    assert "**5 messages**" in kyoto and "> What about temples?" in kyoto
    assert "**3 messages**" in quantum and "> Explain quantum computing instead." in quantum
    for word in ("quantum", "Quantum"):
        assert word not in kyoto
    for word in ("Kyoto", "temples"):
        assert word not in quantum


def test_asked_to_think_it_thinks_first_with_no_signature_so_it_is_never_sent_back() -> None:
    request = ReplyRequest([user("2 + 2?")], model="offline-teacher", thinking=2048)

    streamed = events(request)

    thought = "".join(e.text for e in streamed if isinstance(e, ThinkingDelta))
    assert thought.startswith("Thinking (2048 tokens): the path holds 1 message(s).")
    (ready,) = [e for e in streamed if isinstance(e, ThinkingReady)]
    assert ready.block == {"type": "thinking", "thinking": thought, "signature": ""}
    kinds = [type(e).__name__ for e in streamed]
    assert kinds.index("ThinkingReady") < kinds.index("TextDelta")
    content = finished(request).message["content"]
    assert content[0] == ready.block and content[1]["type"] == "text"
    assert {e.index for e in streamed if isinstance(e, TextDelta)} == {1}
    plain = finished(ReplyRequest([user("2 + 2?")], model="offline-teacher")).message
    assert [b["type"] for b in plain["content"]] == ["text"]


def test_asked_in_chinese_it_thinks_in_chinese() -> None:
    request = ReplyRequest([user("什么是会话树？")], model="offline-teacher", thinking="adaptive")
    thought = "".join(e.text for e in events(request) if isinstance(e, ThinkingDelta))
    assert thought == (
        "思考（自适应）：这条路径上有 1 条消息。"
        "我回答其中最后一条用户消息；别的分支从来没有发给我。"
    )


def test_the_offline_model_says_which_images_and_documents_it_was_given():
    image, document = image_block("AA=="), pdf_block(b"%PDF-")
    question = {"role": "user", "content": [document, {"type": "text", "text": "See:"}, image]}
    text = reply_text(ask(question))
    assert "> See:" in text
    assert (
        "It also carried 1 document (paper.pdf), 1 image (image/png), "
        "which this offline model cannot look at." in text
    )
    assert "It also carried" not in reply_text(ask(user("plain")))


def test_an_image_counts_as_what_the_api_charges_not_as_its_base64():
    image = image_block("A" * 400_000)
    with_image = finished(ask({"role": "user", "content": [image, {"type": "text", "text": "hi"}]}))
    without = finished(ask({"role": "user", "content": [{"type": "text", "text": "hi"}]}))
    assert with_image.usage["input_tokens"] - without.usage["input_tokens"] == 1_600


# -- the question's language -----------------------------------------------------------


def test_a_chinese_question_gets_the_whole_teaching_reply_in_chinese() -> None:
    path = [user("你好"), assistant("你好！"), user("什么是会话树？")]
    text = reply_text(ask(*path, temperature=0.7, system="用中文回答。"))
    first_line = text.splitlines()[0]
    assert first_line == "我在 active path 上收到了 **3 条消息**：user → assistant → user。"
    assert "最后一条用户消息是：\n\n> 什么是会话树？" in text
    assert "如果这段对话还有别的分支，我对它们一无所知" in text
    settings = "_我收到的设置：model offline-teacher，temperature 0.7，max_tokens 4096，"
    assert settings + "system prompt“用中文回答。”" in text
    assert "工具：无。_" in text
    assert "I was sent" not in text and "Settings I was given" not in text


def test_the_same_path_asked_in_english_and_in_chinese_states_the_same_facts() -> None:
    english = reply_text(ask(user("hello"), assistant("hi"), user("What is 2 + 3 * 4?")))
    chinese = reply_text(ask(user("hello"), assistant("hi"), user("2 + 3 * 4 等于多少？")))
    assert english.startswith("I was sent **3 messages** on the active path: user → assistant")
    assert chinese.startswith("我在 active path 上收到了 **3 条消息**：user → assistant")
    assert "`2 + 3 * 4 = 14`" in english and "`2 + 3 * 4 = 14`" in chinese
    # paragraph for paragraph: the count, the exchanges, the header, the quote, the answer,
    # branches, settings
    assert len(english.split("\n\n")) == len(chinese.split("\n\n")) == 8
    assert "That is **2 exchanges**" in english and "一共 **2 轮**问答" in chinese


def test_a_mixed_question_is_answered_in_the_language_of_most_of_its_words() -> None:
    mostly_chinese = reply_text(ask(user("用 Python 给 list 排序")))  # 4 Han, 2 Latin words
    mostly_english = reply_text(ask(user("What does 会话树 mean in this chapter?")))  # 3 vs 6
    assert mostly_chinese.startswith("我在 active path 上收到了 **1 条消息**")
    assert mostly_english.startswith("I was sent **1 message** on the active path")
    assert "> What does 会话树 mean in this chapter?" in mostly_english


def test_the_language_follows_the_last_real_user_message_not_earlier_ones() -> None:
    back_to_english = reply_text(
        ask(user("什么是会话树？"), assistant("……"), user("And in English?"))
    )
    assert back_to_english.startswith("I was sent **3 messages**")


def test_a_chinese_reply_streams_a_few_characters_at_a_time() -> None:
    stream = events(ask(user("什么是会话树？")))
    deltas = [e.text for e in stream if isinstance(e, TextDelta)]
    last = stream[-1]
    assert isinstance(last, Finished)
    assert "".join(deltas) == last.message["content"][0]["text"]
    assert len(deltas) > 30 and max(len(d.strip()) for d in deltas) < 40


def test_max_tokens_counts_a_han_character_as_one_token() -> None:
    last = finished(ask(user("什么是会话树？"), max_tokens=9))  # 我 在 active path 上 收 到 了 **1
    assert last.stop_reason == "max_tokens"
    assert last.message["content"][0]["text"] == "我在 active path 上收到了 **1"


def test_a_tool_asked_for_in_chinese_is_called_and_reported_in_chinese(
    tools: ToolRegistry,
) -> None:
    first = finished(ask(user("请帮我调用 add(2, 3) 算一下"), tools=tools.specs()))
    call = first.message["content"]
    assert first.stop_reason == "tool_use" and call[-1]["input"] == {"a": 2, "b": 3}
    assert '你要求使用工具 `add`，所以我用 `{"a": 2, "b": 3}` 调用它。' in call[0]["text"]
    result = tools.run(call[-1])
    path = [
        user("请帮我调用 add(2, 3) 算一下"),
        first.message,
        {"role": "user", "content": [result]},
    ]
    text = reply_text(ask(*path, tools=tools.specs()))
    assert "工具返回了： 5" in text
    assert "**3 条消息**：user → assistant(tool_use) → user(tool_result)" in text
