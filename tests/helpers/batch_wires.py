"""The batch APIs the end-to-end batch tests run on, one class each, the same shape.

tests/kernel/test_batch_kernel.py runs one test body per wire in ``WIRES`` (Anthropic's
Message Batches, OpenAI's Batch API): a case
starts its fake server, says what a kernel needs to reach it (``env``, ``setup``) and
which ``models`` a cell asks, and drives the fake's batches the way the vendor's
would go (held in progress, ended, expired, an item failing). Another wire joins by
adding its class here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fakes.fake_anthropic import FakeAnthropic
from fakes.fake_openai import FakeOpenAI


class BatchWireCase(Protocol):
    name: str
    models: tuple[str, ...]
    """The models a cell asks (``--models``): the first is the cell's ``--model``."""
    judge: str
    """A model that grades by a rubric (``--model``)."""
    failed_words: str
    """What the line of a request ``fail`` made errored says."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def env(self) -> dict[str, str]: ...

    def setup(self) -> list[str]:
        """Cells a kernel runs first (endpoints, settings)."""
        ...

    def hold(self, held: bool = True) -> None: ...

    def finish(self) -> None: ...

    def expire(self) -> None: ...

    def fail(self, text: str) -> None:
        """Requests whose question holds ``text`` end errored."""
        ...

    def created(self) -> list[int]:
        """How many requests each batch created so far held."""
        ...

    def call_tool(self, text: str, name: str, arguments: dict[str, Any]) -> None:
        """The request whose question holds ``text`` answers with a call of tool ``name``."""
        ...

    def streamed(self) -> int:
        """How many requests went outside a batch (streamed, at the standard price)."""
        ...

    def batches_for(self, per_model: list[int]) -> list[int]:
        """The vendor batches one endpoint's requests make, by model's count of them
        (Message Batches: one; OpenAI's Batch API takes one model a file: one a model)."""
        ...

    def reply(self, text: str, answer: str, times: int = 1) -> None:
        """The next ``times`` requests whose question holds ``text`` answer ``answer``."""
        ...


class AnthropicWire:
    """Message Batches on the fake Messages API, asked through Anthropic's own API."""

    name = "anthropic"
    models = ("claude-sonnet-4-6", "claude-haiku-4-5")
    judge = "claude-sonnet-4-6"
    failed_words = "fake: this request failed"

    def __init__(self) -> None:
        self.fake = FakeAnthropic()

    def start(self) -> None:
        self.fake.start()

    def stop(self) -> None:
        self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"ANTHROPIC_API_KEY": "sk-fake", "ANTHROPIC_BASE_URL": self.fake.base_url}

    def setup(self) -> list[str]:
        return []

    def hold(self, held: bool = True) -> None:
        self.fake.batches.hold = held

    def finish(self) -> None:
        self.fake.batches.finish()

    def expire(self) -> None:
        self.fake.batches.expire()

    def fail(self, text: str) -> None:
        self.fake.batches.fail(lambda params: text in str(params.get("messages")))

    def created(self) -> list[int]:
        return [len(requests) for requests in self.fake.batches.created]

    def call_tool(self, text: str, name: str, arguments: dict[str, Any]) -> None:
        self.fake.enqueue(
            "Let me compute that.",
            tool_use={"name": name, "input": arguments},
            when=lambda body: text in str(body.get("messages")),
        )

    def streamed(self) -> int:
        return sum(1 for r in self.fake.requests if r.path == "/v1/messages")

    def batches_for(self, per_model: list[int]) -> list[int]:
        return [sum(per_model)]

    def reply(self, text: str, answer: str, times: int = 1) -> None:
        for _ in range(times):
            self.fake.enqueue(answer, when=lambda body: text in str(body.get("messages")))


class OpenAIWire:
    """OpenAI's Batch API on the fake Chat Completions server's Files and Batch APIs
    (fakes/fake_openai_batches.py), asked through the ``openai`` endpoint pointed at it."""

    name = "openai"
    models = ("openai:gpt-5-mini", "openai:gpt-5-nano")
    judge = "openai:gpt-5-mini"  # takes only its default temperature: the judge sends none
    failed_words = "The server had an error processing your request."
    key = "sk-fake-openai-batch"

    def __init__(self) -> None:
        self.fake = FakeOpenAI(api_key=self.key)

    def start(self) -> None:
        self.fake.start()

    def stop(self) -> None:
        self.fake.stop()

    def env(self) -> dict[str, str]:
        return {"OPENAI_API_KEY": self.key}

    def setup(self) -> list[str]:
        endpoints = {"openai": {"base_url": self.fake.base_url}}
        return [
            f"%config TreeChat.endpoints = {endpoints!r}",
            f"%config TreeChat.model = {self.models[0]!r}",
        ]

    def hold(self, held: bool = True) -> None:
        self.fake.batches.auto = not held

    def finish(self) -> None:
        self.fake.batches.finish()

    def expire(self) -> None:
        self.fake.batches.expire()

    def fail(self, text: str) -> None:
        self.fake.batches.fail(lambda body: text in str(body.get("messages")))

    def created(self) -> list[int]:
        batches = self.fake.batches
        return [len(batches.input_lines(batch_id)) for batch_id in list(batches.batches)]

    def call_tool(self, text: str, name: str, arguments: dict[str, Any]) -> None:
        self.fake.enqueue(
            "Let me compute that.",
            tool_calls=[{"name": name, "arguments": arguments}],
            when=lambda body: text in str(body.get("messages")),
        )

    def streamed(self) -> int:
        return sum(1 for r in self.fake.requests if r.path == "/v1/chat/completions")

    def batches_for(self, per_model: list[int]) -> list[int]:
        return per_model

    def reply(self, text: str, answer: str, times: int = 1) -> None:
        for _ in range(times):
            self.fake.enqueue(answer, when=lambda body: text in str(body.get("messages")))


WIRES: dict[str, Callable[[], Any]] = {"anthropic": AnthropicWire, "openai": OpenAIWire}
"""Each wire's case, by name (the tests' parameter)."""
