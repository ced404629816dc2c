"""fakes/fake_load.py: a fake server counts the replies it answers at once, so a test can
check a bound (the real SDKs over real HTTP, streams held open by the fake)."""

from __future__ import annotations

import threading

import anthropic
import openai
from helpers.mcp_helpers import wait_until

from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import FakeOpenAI


def test_the_messages_fake_counts_the_streams_it_holds_open():
    with FakeAnthropic() as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        for _ in range(3):
            server.enqueue(tokens=6)
        server.flowing.clear()  # each stream waits after two deltas

        def ask() -> None:
            with client.messages.stream(
                model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                stream.until_done()

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for thread in threads:
            thread.start()
        wait_until(lambda: server.in_flight == 3, timeout=30, what="three streams in flight")
        client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "hi"}])
        assert server.most_in_flight == 3  # a count of tokens is no reply: not counted
        server.flowing.set()
        for thread in threads:
            thread.join()
        # the server counts a reply done once its handler returns, just after the last byte
        wait_until(lambda: server.in_flight == 0, timeout=30, what="the streams ended")
        assert server.most_in_flight == 3
        server.reset_load()
        assert server.most_in_flight == 0


def test_the_chat_completions_fake_counts_too():
    with FakeOpenAI() as server:
        client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        client.chat.completions.create(
            model="gpt-5-mini", messages=[{"role": "user", "content": "hi"}]
        )
        wait_until(lambda: server.in_flight == 0, timeout=30, what="the reply ended")
        assert server.most_in_flight == 1
