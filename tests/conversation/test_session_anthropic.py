"""A Session over the real AnthropicProvider and SDK, against the local fake Messages API.

What the chapter promises, seen on the wire: the model is sent only the active path,
a retry and a fork share a cached prefix, tools loop, and Ctrl-C keeps what arrived.
And what Claude adds: thinking streamed, stored with its signature and sent back as the
API requires (a tool loop's unchanged), the context meter and cost from the API's usage,
and requests the API would refuse stopped before they leave.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anthropic
import pytest
from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_cache import prompt_tokens

from jupyter_tree_chat.conversation.events import ReplyDelta, ReplyThinking, TurnInterrupted
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.errors import ContextWindowFull, SettingsError
from jupyter_tree_chat.history.store import FileStore, load_file
from jupyter_tree_chat.history.tree import is_tool_result
from jupyter_tree_chat.measures.usage import node_cost, totals
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider

LONG = "Background for the whole conversation. " * 400  # well past the cacheable minimum


@pytest.fixture
def session(fake_anthropic: FakeAnthropic, tmp_path: Path) -> Session:
    client = anthropic.Anthropic(api_key="sk-test", base_url=fake_anthropic.base_url)
    return Session(FileStore(tmp_path / "nb.chat.jsonl"), AnthropicProvider(client))


def sent_texts(server: FakeAnthropic) -> list[str]:
    """The text of each message in the last request, as the server received it."""
    texts = []
    for message in server.last_request.body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(b.get("text", "") for b in content if b["type"] == "text"))
    return texts


def test_only_the_active_path_is_sent_after_an_edit(session, fake_anthropic):
    fake_anthropic.enqueue("B")
    first = session.ask("A")
    fake_anthropic.enqueue("D")
    c = session.ask("C")
    fake_anthropic.enqueue("D'")
    session.edit(c.user.id, "C'")

    assert sent_texts(fake_anthropic) == ["A", "B", "C'"]
    assert [n.text for n in session.path()] == ["A", "B", "C'", "D'"]
    assert first.replies[0].meta["usage"]["output_tokens"] > 0


def test_a_retry_and_a_fork_of_a_long_prefix_are_cache_hits(session, fake_anthropic):
    fake_anthropic.enqueue("noted")
    session.ask(LONG)
    fake_anthropic.enqueue("first answer")
    question = session.ask("What is in the background?")
    fake_anthropic.enqueue("second answer")
    retried = session.retry()
    fake_anthropic.enqueue("forked answer")
    forked = session.edit(question.user.id, "Summarise the background.")

    for turn in (retried, forked):
        usage = turn.replies[0].meta["usage"]
        assert usage["cache_read_input_tokens"] > 0, usage
    stored = load_file(session.store.location).tree.get(retried.replies[0].id)
    assert stored.meta["usage"]["cache_read_input_tokens"] > 0


def test_a_tool_loop_over_the_wire_stores_every_step(session, fake_anthropic):
    @session.tools.register
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    fake_anthropic.enqueue(
        "Let me look.", tool_use={"name": "get_weather", "input": {"city": "Paris"}}
    )
    fake_anthropic.enqueue("It is sunny in Paris.")
    turn = session.ask("Weather in Paris?")

    assert turn.text == "It is sunny in Paris."
    last_sent = fake_anthropic.last_request.body["messages"][-1]
    assert last_sent["content"][0]["type"] == "tool_result"
    assert last_sent["content"][0]["content"] == "sunny in Paris"
    kinds = [(n.role, is_tool_result(n.message)) for n in session.path()]
    assert kinds == [("user", False), ("assistant", False), ("user", True), ("assistant", False)]


def ctrl_c_after(kind: type, count: int, seen: list[str]) -> Callable[[object], None]:
    """A listener that notes each ``kind`` event's text and presses Ctrl-C at the ``count``th."""

    def listener(event: object) -> None:
        if isinstance(event, kind):
            seen.append(event.text)
            if len(seen) == count:
                raise KeyboardInterrupt

    return listener


def test_ctrl_c_mid_stream_keeps_what_arrived_from_the_real_sdk(session, fake_anthropic):
    fake_anthropic.enqueue("one two three four five six seven eight nine ten " * 20)
    seen: list[str] = []
    session.delta_interval = 0  # every delta announced, so the third is mid-stream
    session.subscribe(ctrl_c_after(ReplyDelta, 3, seen))
    with pytest.raises(TurnInterrupted) as stopped:
        session.ask("count for me")

    kept = stopped.value.turn.replies[0]
    assert kept.text == "".join(seen)
    on_disk = load_file(session.store.location).tree
    assert on_disk.get(kept.id).meta["interrupted"] is True
    assert [n.text for n in on_disk.path_nodes(kept.id)] == ["count for me", kept.text]


def test_a_drop_mid_reply_keeps_the_text_and_the_next_ask_works(session, fake_anthropic):
    fake_anthropic.enqueue("a reply that will be cut off in the middle", drop_after=6)
    cut = session.ask("first")
    assert cut.error is not None and cut.replies and cut.replies[0].meta["interrupted"]
    fake_anthropic.enqueue("fine now")
    assert session.ask("again").text == "fine now"
    assert sent_texts(fake_anthropic) == ["first", cut.replies[0].text, "again"]


# -- extended thinking, the context meter and cost -------------------------------------------

THINKING = ChatSettings(thinking=2048, max_tokens=4096)


def add_tool(session: Session) -> None:
    @session.tools.register
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


def file_lines(session: Session) -> list[str]:
    location = Path(session.store.location)
    return location.read_text().splitlines() if location.exists() else []


def test_thinking_off_asks_for_none_and_on_streams_it_before_the_answer(session, fake_anthropic):
    fake_anthropic.enqueue("Plain.")
    session.ask("no thinking")
    assert "thinking" not in fake_anthropic.last_request.body
    thought: list[str] = []
    session.subscribe(lambda e: thought.append(e.text) if isinstance(e, ReplyThinking) else None)

    fake_anthropic.enqueue("Five.", thinking="Two plus three is five.")
    turn = session.ask("2 + 3?", settings=THINKING)

    assert fake_anthropic.last_request.body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2048,
    }
    assert "".join(thought) == "Two plus three is five."
    reply = load_file(session.store.location).tree.get(turn.replies[0].id)
    block = reply.message["content"][0]
    assert block["type"] == "thinking" and block["thinking"] == "Two plus three is five."
    assert block["signature"] and reply.meta["thinking"] == 2048
    assert reply.text == "Five."
    fake_anthropic.enqueue("Yes.")
    session.ask("sure?", settings=THINKING)
    assert fake_anthropic.last_request.body["messages"][3]["content"][0] == block


def test_a_tool_loop_sends_the_turns_thinking_back_unchanged(session, fake_anthropic):
    add_tool(session)
    fake_anthropic.enqueue(
        thinking="I should add.", redacted=1, tool_use={"name": "add", "input": {"a": 2, "b": 3}}
    )
    fake_anthropic.enqueue("It is 5.", thinking="The tool said 5.")

    turn = session.ask("add 2 and 3", settings=THINKING)

    assert turn.error is None and turn.text == "It is 5."
    first = turn.replies[0].message["content"]
    assert [b["type"] for b in first] == ["thinking", "redacted_thinking", "tool_use"]
    sent = fake_anthropic.last_request.body["messages"][1]["content"]
    assert sent[:2] == first[:2]  # thinking and redacted_thinking exactly as they came
    assert {k: v for k, v in sent[2].items() if k != "cache_control"} == first[2]


def test_a_tool_turn_goes_on_with_the_thinking_it_began_with(session, fake_anthropic):
    add_tool(session)
    fake_anthropic.enqueue(tool_use={"name": "add", "input": {"a": 1, "b": 1}})
    stopped = session.ask("add 1 and 1", settings=ChatSettings(max_tool_rounds=0))
    assert is_tool_result(session.path()[-1].message) and stopped.notices
    sent = len(fake_anthropic.requests)

    with pytest.raises(SettingsError, match="began without thinking"):
        session.retry(settings=THINKING)

    assert len(fake_anthropic.requests) == sent
    fake_anthropic.enqueue("Two.")
    assert session.retry().text == "Two."


def test_interrupted_mid_thinking_keeps_the_thinking_unsigned_and_the_next_question_beside_it(
    session, fake_anthropic
):
    fake_anthropic.enqueue("A reply.")
    session.ask("first")
    fake_anthropic.enqueue("Never sent.", thinking="A long line of thought that is cut " * 3)
    seen: list[str] = []
    session.delta_interval = 0  # every delta announced, so the second is mid-thought
    unsubscribe = session.subscribe(ctrl_c_after(ReplyThinking, 2, seen))
    with pytest.raises(TurnInterrupted) as stopped:
        session.ask("think hard", settings=THINKING)
    unsubscribe()

    kept = load_file(session.store.location).tree.get(stopped.value.turn.replies[0].id)
    assert kept.meta["interrupted"] is True and kept.meta["thinking"] == 2048
    assert kept.message["content"] == [
        {"type": "thinking", "thinking": "".join(seen), "signature": ""}
    ]
    fake_anthropic.enqueue("Fine.")
    after = session.ask("next", settings=THINKING)
    assert after.notices and "cut short while the model was thinking" in after.notices[0]
    assert sent_texts(fake_anthropic) == ["first", "A reply.", "next"]


def test_a_dropped_stream_mid_thinking_is_kept_and_marked(session, fake_anthropic):
    fake_anthropic.enqueue("Never.", thinking="x" * 200, drop_after=5)

    turn = session.ask("think", settings=THINKING)

    assert turn.error is not None
    (kept,) = turn.replies
    assert kept.meta["interrupted"] is True
    assert kept.message["content"][0]["signature"] == ""
    assert 0 < len(kept.message["content"][0]["thinking"]) < 200


def test_the_meter_reads_the_apis_usage_and_count_tokens_counts_the_next_question(
    session, fake_anthropic
):
    usage = {
        "input_tokens": 1_200,
        "cache_creation_input_tokens": 3_000,
        "cache_read_input_tokens": 500,
    }
    fake_anthropic.enqueue("Counted.", usage={**usage, "output_tokens": 300})
    session.ask("measure me")

    reading = session.meter()
    assert (reading.tokens, reading.exact, reading.window) == (5_000, True, 1_000_000)

    counted = session.count_tokens("and this question?")
    assert fake_anthropic.last_request.path == "/v1/messages/count_tokens"
    assert counted is not None and counted.exact
    assert counted.tokens == prompt_tokens(fake_anthropic.last_request.body)
    assert session.count_tokens() is None  # the path ends with a reply: nothing to count


def test_a_question_over_the_window_is_refused_before_it_is_stored_or_sent(session, fake_anthropic):
    session.context_windows = {"claude-sonnet-4-6": 10_000}
    fake_anthropic.enqueue("Big.", usage={"input_tokens": 9_800, "output_tokens": 150})
    session.ask("fill it")
    lines, requests = file_lines(session), len(fake_anthropic.requests)

    with pytest.raises(ContextWindowFull) as refused:
        session.ask("q" * 400)

    assert "would not fit: the path and the question hold about 10,050 tokens" in str(refused.value)
    assert "`%chat compact`" in str(refused.value)

    assert file_lines(session) == lines and len(fake_anthropic.requests) == requests
    assert session.ask("ok?").error is None  # a short question still fits


def test_settings_the_api_would_refuse_are_refused_before_anything_happens(session, fake_anthropic):
    with pytest.raises(SettingsError, match="at least 1024 tokens"):
        session.ask("hi", settings=ChatSettings(thinking=500))
    with pytest.raises(SettingsError, match=r"temperature 0\.7 cannot be used with thinking"):
        session.ask("hi", settings=ChatSettings(thinking=2048, temperature=0.7))
    assert fake_anthropic.requests == [] and file_lines(session) == []


def test_the_costs_of_a_branch_add_up_from_each_replys_usage(session, fake_anthropic):
    fake_anthropic.enqueue(
        "One.",
        usage={
            "input_tokens": 1_000,
            "output_tokens": 200,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 4_000,
        },
    )
    session.ask("first")
    fake_anthropic.enqueue(
        "Two.",
        usage={
            "input_tokens": 50,
            "output_tokens": 100,
            "cache_read_input_tokens": 4_000,
            "cache_creation_input_tokens": 0,
        },
    )
    session.ask("second")

    price = session.prices["claude-sonnet-4-6"]
    expected = (
        1_050 * price.input
        + 300 * price.output
        + 4_000 * price.cache_write
        + 4_000 * price.cache_read
    ) / 1_000_000
    branch = totals(session.path(), session.prices)
    assert branch.all.cost == pytest.approx(expected) == pytest.approx(0.02385)
    assert list(branch.by_model) == ["claude-sonnet-4-6"]
    assert sum(node_cost(n, session.prices) or 0 for n in session.path()) == pytest.approx(expected)
