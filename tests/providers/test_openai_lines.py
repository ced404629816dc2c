"""The Chat Completions wire reads its stream's lines itself (openai/provider.py's
``_chunks``, providers/sse.py), not the SDK's typed chunk per token: over real HTTP against
the fake server, every scripted reply, in each server's dialect, reads the same as the
SDK's own reading of it, and its failures are the same errors."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import openai
import pytest
from fakes.fake_openai import FakeOpenAI

from jupyter_tree_chat.errors import ProviderError
from jupyter_tree_chat.providers.base import ReplyEvent, ReplyRequest
from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider

KEY = "sk-fake-lines"


class OtherClient:
    """A client of another kind: not ``openai.OpenAI``, so the provider keeps the SDK's
    typed reading of its stream."""

    def __init__(self, client: openai.OpenAI) -> None:
        self._client = client
        self.chat = client.chat
        self.api_key = client.api_key
        self.base_url = client.base_url
        self.max_retries = client.max_retries

    def with_options(self, **options: Any) -> OtherClient:
        return OtherClient(self._client.with_options(**options))


def shown(events: list[Any]) -> str:
    """The events (or ``(choice, event)`` pairs) as sorted JSON, the fake's tool-call ids
    (which name its request) blanked."""

    def one(event: ReplyEvent) -> list[Any]:
        return [type(event).__name__, dataclasses.asdict(event)]  # type: ignore[call-overload]

    rows = [[e[0], one(e[1])] if isinstance(e, tuple) else one(e) for e in events]
    return re.sub(r"call_fake\w+", "call_fake", json.dumps(rows, sort_keys=True))  # per request


def both_ways(server: FakeOpenAI, script: dict[str, Any], n: int = 1) -> tuple[str, str]:
    client = openai.OpenAI(api_key=KEY, base_url=server.base_url)
    request = ReplyRequest(messages=[{"role": "user", "content": "hello"}], model="gpt-5-mini")
    read: list[str] = []
    for chosen in (client, OtherClient(client)):
        server.enqueue(**script)
        provider = OpenAIChatProvider(chosen)
        stream = provider.stream_choices(request, n) if n > 1 else provider.stream(request)
        read.append(shown(list(stream)))
    return read[0], read[1]


@pytest.mark.parametrize(
    ("dialect", "options", "script"),
    [
        ("openai", {}, {"text": "Hi there"}),
        ("openai", {}, {"text": "Let me", "tool_calls": [{"name": "add", "arguments": {"a": 1}}]}),
        ("openai", {"tool_call_style": "whole"}, {"tool_calls": [{"name": "a", "arguments": {}}]}),
        (
            "llama.cpp",
            {"reasoning_field": "reasoning_content"},
            {"reasoning": "Hmm.", "text": "Hi"},
        ),
        ("openai", {"reasoning_field": "reasoning"}, {"reasoning": "Let me see.", "text": "Done"}),
        ("openai", {}, {"refusal": "I can't help with that."}),
        ("openai", {}, {"text": "cut short", "finish_reason": "length"}),
        ("openai", {}, {"tokens": 300, "usage": {"prompt_tokens": 90}}),
    ],
)
def test_every_reply_reads_as_the_sdks_own_reading_of_it(dialect, options, script):
    with FakeOpenAI(dialect=dialect, api_key=KEY, **options) as server:
        ours, sdks = both_ways(server, script)
    assert ours == sdks and '"Finished"' in ours


def test_n_choices_in_one_stream_read_the_same_both_ways():
    with FakeOpenAI(api_key=KEY) as server:
        ours, sdks = both_ways(server, {}, n=3)
    assert ours == sdks and ours.count('"Finished"') == 3


@pytest.mark.parametrize("fault", [{"error_after": 2}, {"malformed_after": 2}, {"drop_after": 2}])
def test_a_failure_inside_the_stream_is_the_same_error_both_ways(fault):
    with FakeOpenAI(api_key=KEY) as server:
        client = openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
        request = ReplyRequest(messages=[{"role": "user", "content": "hi"}], model="gpt-5-mini")
        raised = []
        for chosen in (client, OtherClient(client)):
            server.enqueue(text="a partial answer", **fault)
            with pytest.raises(ProviderError) as caught:
                list(OpenAIChatProvider(chosen).stream(request))
            raised.append((type(caught.value), str(caught.value)))
    assert raised[0] == raised[1]
