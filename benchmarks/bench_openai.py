"""What the second wire costs: its streaming on top of the bare ``openai`` SDK, and its import.

1. **Streaming.** ``OpenAIChatProvider.stream`` turns every chunk into a project event and
   keeps the whole message for ``Finished``, reading the response's lines itself
   (providers/sse.py, msgspec: no typed SDK chunk per token, which the baseline builds);
   it is asked through the ``Router`` by ``endpoint:model`` name (``openai:gpt-4.1``,
   ``local-openai:smollm2``), as a cell asks it, so the routing (the key read, the
   endpoint's provider found) is timed too.
   Against the same local server, the two in turn, their order turning run by run
   (alternating.py), it is timed beside the bare SDK's raw chunk loop
   (``chat.completions.create(stream=True, stream_options=...)``, counting content
   deltas, keeping nothing): medians, the median of the runs' ratios with their spread,
   target ≤ 1.1×, judged on the calling thread's CPU time (the server's own thread and the
   shared machine's other work do not count in it); wall time reported. Two servers: the
   fake Chat Completions server streaming a long reply one token a chunk as fast as it
   can (the provider's own cost, exposed), and the real ``llama-server`` with
   SmolLM2-135M (``--llama``; what a user sees: generation dominates).
2. **Import.** Whole processes, alternated, best of ``--runs``: the interpreter alone,
   ``import openai``, what ``%load_ext`` imports (``jupyter_tree_chat`` and its magics,
   checked not to import ``openai``), and the first ``OpenAIChatProvider`` built (the
   moment ``openai`` is imported: only when such an endpoint is used).

    .venv/bin/python benchmarks/bench_openai.py [--runs 15] [--tokens 2000] [--llama]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from alternating import Stopwatch, Timing, alternate, process, ratio_line
from fakes.fake_openai import FakeOpenAI

from jupyter_tree_chat.providers.base import Provider, ReplyRequest, TextDelta
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.providers.openai.provider import STREAM_OPTIONS

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "Write a long answer about trees."}]
COUNTS: dict[str, int] = {}  # content deltas of the last raw run, which the provider's must match


def time_raw_chunks(client: openai.OpenAI, model: str, max_tokens: int, before: Any) -> Timing:
    """The floor: the SDK's raw chunk stream, content deltas counted, nothing kept."""
    before()
    started = Stopwatch()
    chunks = client.chat.completions.create(  # type: ignore[call-overload]
        model=model,
        messages=MESSAGES,
        max_completion_tokens=max_tokens,
        temperature=0.0,
        stream=True,
        stream_options=STREAM_OPTIONS,
    )
    pieces = sum(1 for c in chunks if c.choices and c.choices[0].delta.content)
    elapsed = started.stop()
    COUNTS["raw"] = pieces
    return elapsed


def time_provider(provider: Provider, model: str, max_tokens: int, before: Any) -> Timing:
    before()
    request = ReplyRequest(messages=MESSAGES, model=model, max_tokens=max_tokens, temperature=0.0)
    started = Stopwatch()
    pieces = sum(1 for event in provider.stream(request) if isinstance(event, TextDelta))
    elapsed = started.stop()
    assert pieces == COUNTS["raw"] > 0, (pieces, COUNTS)  # the same reply, the same work
    return elapsed


def routed(endpoint: str, base_url: str) -> Router:
    """The router a cell asks, ``endpoint`` pointed at ``base_url``."""
    return Router(OfflineProvider(), endpoint_table({endpoint: {"base_url": base_url}}))


def compare(label: str, client: Any, provider: Any, model: str, tokens: int, runs: int,
            before: Any, endpoint: str) -> None:  # fmt: skip
    name = f"{endpoint}:{model}"
    time_raw_chunks(client, model, tokens, before)  # warm connections and imports
    time_provider(provider, name, tokens, before)
    times = alternate(
        {
            "raw": lambda: time_raw_chunks(client, model, tokens, before),
            "ours": lambda: time_provider(provider, name, tokens, before),
        },
        runs,
    )
    raw, ours = times["raw"], times["ours"]
    print(f"{label}: {runs} runs, their order turning")
    for what, case in (("bare SDK raw chunk loop", raw), ("Router -> provider.stream", ours)):
        wall = statistics.median(t.wall for t in case)
        cpu = statistics.median(t.cpu for t in case)
        print(f"  {what:<25}: wall {wall * 1000:8.1f} ms, CPU {cpu * 1000:8.1f} ms (medians)")
    lacks = (
        "the provider reads the stream's lines itself, without the SDK's typed chunk per"
        " token that the bare loop builds"
    )
    cpu_line = ratio_line([t.cpu for t in ours], [t.cpu for t in raw], 1.10, lacks)
    wall_line = ratio_line([t.wall for t in ours], [t.wall for t in raw], None, lacks)
    print(f"  provider / bare SDK, CPU (judged): {cpu_line}")
    print(f"  provider / bare SDK, wall (reported): {wall_line}")


def bench_fake(tokens: int, runs: int) -> None:
    with FakeOpenAI(api_key="bench") as server:
        client = openai.OpenAI(api_key="bench", base_url=server.base_url)
        os.environ["OPENAI_API_KEY"] = "bench"  # read by the router at each request
        provider = routed("openai", server.base_url)

        def before() -> None:
            server.enqueue(tokens=tokens)

        compare(
            f"fake server, a {tokens}-token reply, one token a chunk",
            client, provider, "gpt-4.1", tokens, runs, before, "openai",
        )  # fmt: skip


def bench_llama(tokens: int, runs: int) -> None:
    from helpers.llama_server import running_server

    with running_server(Path(tempfile.mkdtemp(prefix="bench-openai-"))) as server:
        base_url = server.base_url + "/v1"
        client = openai.OpenAI(api_key="no-key-needed", base_url=base_url)
        provider = routed("local-openai", base_url)
        compare(
            f"llama-server (SmolLM2-135M), {tokens} tokens at most",
            client, provider, server.model, tokens, runs, lambda: None, "local-openai",
        )  # fmt: skip


IMPORTS = {
    "python alone": "pass",
    "import openai": "import openai",
    "%load_ext's imports (no openai)": (
        "import sys, jupyter_tree_chat, jupyter_tree_chat.kernel.magics\n"
        "assert 'openai' not in sys.modules"
    ),
    "first OpenAIChatProvider (imports openai)": (
        "import sys, jupyter_tree_chat, jupyter_tree_chat.kernel.magics\n"
        "from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider\n"
        "assert 'openai' not in sys.modules\n"
        "OpenAIChatProvider(api_key='k', base_url='http://127.0.0.1:9/v1').prepare()\n"
        "assert 'openai' in sys.modules"
    ),
}


def bench_imports(runs: int) -> None:
    cases = {
        label: lambda code=code: process([sys.executable, "-c", code], cwd=ROOT)
        for label, code in IMPORTS.items()
    }
    found = alternate(cases, runs)
    cpu = {label: statistics.median(t.cpu for t in timings) for label, timings in found.items()}
    base = cpu["python alone"]
    print(f"imports: whole processes, {runs} runs, their order turning; CPU (user + system)")
    for label, timings in found.items():
        spread = (
            f"{min(t.cpu for t in timings) * 1000:.0f}-{max(t.cpu for t in timings) * 1000:.0f}"
        )
        print(
            f"  {label:42s}: {cpu[label] * 1000:7.0f} ms ({spread}; "
            f"{(cpu[label] - base) * 1000:+5.0f} ms over python)"
        )
    load_ext = cpu["%load_ext's imports (no openai)"]
    first = cpu["first OpenAIChatProvider (imports openai)"]
    print(f"  the wire's first use adds               : {(first - load_ext) * 1000:7.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--llama", action="store_true", help="also the real llama-server")
    parser.add_argument("--llama-tokens", type=int, default=200)
    args = parser.parse_args()
    bench_fake(args.tokens, args.runs)
    if args.llama:
        bench_llama(args.llama_tokens, max(3, args.runs // 3))
    bench_imports(args.runs)


if __name__ == "__main__":
    main()
