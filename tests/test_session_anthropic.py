"""A Session over the real AnthropicProvider and SDK, against the local fake Messages API.

What the chapter promises, seen on the wire: the model is sent only the active path,
a retry and a fork share a cached prefix, tools loop, and Ctrl-C keeps what arrived.
"""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from fake_anthropic import FakeAnthropic

from jupyter_tree_chat.providers.anthropic import AnthropicProvider
from jupyter_tree_chat.session import ReplyDelta, Session, TurnInterrupted
from jupyter_tree_chat.store import FileStore, load_file
from jupyter_tree_chat.tree import is_tool_result

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


def test_ctrl_c_mid_stream_keeps_what_arrived_from_the_real_sdk(session, fake_anthropic):
    fake_anthropic.enqueue("one two three four five six seven eight nine ten " * 20)
    seen: list[str] = []

    def press_ctrl_c_after_some_text(event: object) -> None:
        if isinstance(event, ReplyDelta):
            seen.append(event.text)
            if len(seen) == 3:
                raise KeyboardInterrupt

    session.subscribe(press_ctrl_c_after_some_text)
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
