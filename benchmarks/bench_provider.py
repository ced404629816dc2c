"""How much does AnthropicProvider cost on top of the bare SDK stream?

The provider turns every event of the stream into a project event and keeps the whole
message for ``Finished``; this must stay cheap next to the SDK's own parsing. It reads
the response's lines itself (providers/anthropic/events.py: msgspec, no typed SDK object
per token), so it costs less than the baseline, which builds one per event. The script starts the
local fake Messages API and streams a long reply (one token a delta) through, the cases'
order turning run by run (alternating.py) so that no case always pays for the one
before it:

(a) the baseline: the SDK's raw event loop, ``messages.create(stream=True)``, doing the
    same work as the provider: each text delta's text kept, joined at the end (the
    provider reads these same events, so this is what it costs on top of the SDK);
(b) ``AnthropicProvider.stream`` (the same request and response; the stream read by
    events.py);
(c) for reference, the SDK's ``messages.stream(...).text_stream`` helper, which also
    builds a message snapshot per event (more work than either).

It prints the medians and the median of the runs' ratios (b)/(a) with their spread,
target ≤ 1.1×, judged on the calling thread's CPU time (the fake server's thread and the
shared machine's other work do not count in it); wall time is reported.

    .venv/bin/python benchmarks/bench_provider.py [--runs 20] [--tokens 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import anthropic

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from alternating import Stopwatch, Timing, alternate, ratio_line
from fakes.fake_anthropic import FakeAnthropic

from jupyter_tree_chat.providers.anthropic.provider import DEFAULT_MODEL, AnthropicProvider
from jupyter_tree_chat.providers.base import ReplyRequest, TextDelta

MESSAGES = [{"role": "user", "content": "Write a long answer."}]


def time_bare_sdk(client: anthropic.Anthropic, server: FakeAnthropic, tokens: int) -> Timing:
    server.enqueue(tokens=tokens)
    started = Stopwatch()
    with client.messages.stream(model=DEFAULT_MODEL, max_tokens=4096, messages=MESSAGES) as stream:  # type: ignore[arg-type]
        pieces = sum(1 for _ in stream.text_stream)
    elapsed = started.stop()
    assert pieces == tokens, pieces
    return elapsed


def time_raw_events(client: anthropic.Anthropic, server: FakeAnthropic, tokens: int) -> Timing:
    """The baseline: the SDK's raw event stream, each delta's text kept and joined."""
    server.enqueue(tokens=tokens)
    started = Stopwatch()
    events = client.messages.create(
        model=DEFAULT_MODEL,
        max_tokens=4096,
        messages=MESSAGES,  # type: ignore[arg-type]
        stream=True,
    )
    pieces = [
        event.delta.text
        for event in events
        if event.type == "content_block_delta" and event.delta.type == "text_delta"
    ]
    text = "".join(pieces)
    elapsed = started.stop()
    assert len(pieces) == tokens and text, len(pieces)
    return elapsed


def time_provider(provider: AnthropicProvider, server: FakeAnthropic, tokens: int) -> Timing:
    server.enqueue(tokens=tokens)
    request = ReplyRequest(messages=MESSAGES, model=DEFAULT_MODEL)
    started = Stopwatch()
    pieces = sum(1 for event in provider.stream(request) if isinstance(event, TextDelta))
    elapsed = started.stop()
    assert pieces == tokens, pieces
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=2000)
    args = parser.parse_args()
    with FakeAnthropic() as server:
        client = anthropic.Anthropic(api_key="bench", base_url=server.base_url)
        provider = AnthropicProvider(client)
        time_bare_sdk(client, server, args.tokens)  # warm up connections and imports
        time_provider(provider, server, args.tokens)
        times = alternate(
            {
                "bare": lambda: time_bare_sdk(client, server, args.tokens),
                "raw": lambda: time_raw_events(client, server, args.tokens),
                "ours": lambda: time_provider(provider, server, args.tokens),
            },
            args.runs,
        )
    bare, raw, ours = times["bare"], times["raw"], times["ours"]
    print(f"{args.runs} runs of a {args.tokens}-token streamed reply (one token a delta)")
    for label, case in (
        ("baseline: raw create(stream=True) loop, text kept", raw),
        ("AnthropicProvider.stream", ours),
        ("(reference: messages.stream text loop, snapshots)", bare),
    ):
        wall = statistics.median(t.wall for t in case)
        cpu = statistics.median(t.cpu for t in case)
        print(f"  {label:<50}: wall {wall * 1000:7.1f} ms, CPU {cpu * 1000:7.1f} ms")
    lacks = (
        "the provider reads the stream's lines itself, without the SDK's typed object per"
        " event that the baseline builds (events.py)"
    )
    helper = (
        "the helper builds a message snapshot at every event, which the provider does not;"
        " it does not build the project's events"
    )
    for what, pick in (("CPU (judged)", _cpu), ("wall (reported)", _wall)):
        judged = ratio_line(pick(ours), pick(raw), 1.10 if what.startswith("CPU") else None, lacks)
        print(f"  provider / raw event loop, {what}: {judged}")
    reference = ratio_line(_cpu(ours), _cpu(bare), None, helper)
    print(f"  provider / messages.stream helper, CPU (reference): {reference}")


def _cpu(timings: list[Timing]) -> list[float]:
    return [t.cpu for t in timings]


def _wall(timings: list[Timing]) -> list[float]:
    return [t.wall for t in timings]


if __name__ == "__main__":
    main()
