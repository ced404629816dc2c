"""What do endpoints cost: a ``%%chat`` cell on a real local model vs the bare SDK, and a
mixed fan-out vs its slowest answer. One run, one kernel, interleaved.

1. ``%%chat --model local:smollm2`` against llama.cpp's llama-server (SmolLM2-135M, the
   one the tests start: tests/helpers/llama_server.py), against a cell streaming the same request
   to the same server with the bare ``anthropic`` SDK, iterating its raw events
   (``messages.create(stream=True)``, nothing kept: the floor, not the SDK's snapshot
   accumulator). Both at temperature 0, so the model writes the same tokens each time;
   each ``%%chat`` cell starts a new root, so both send one question. Cell times are the
   kernel's own (``pre_run_cell`` → ``post_run_cell``): to the last byte and beyond.
   Target: at most 1.1×.
2. A mixed fan-out of three, ``claude-sonnet-4-6`` (the fake Messages API), ``deepseek:
   deepseek-chat`` (the fake API in DeepSeek's mode) and ``local:smollm2`` (the real
   server), against each of them asked alone in a cell of its own; the ratio is the
   fan-out cell over the slowest single cell. Target: at most 1.3×.

    .venv/bin/python benchmarks/bench_endpoints.py [--runs 7] [--tokens 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from bench_magic import TIMING_HOOKS, last_cell  # noqa: E402  (the kernel's cell times)
from fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from helpers.kernel_harness import Kernel  # noqa: E402
from helpers.llama_server import running_server  # noqa: E402

QUESTION = "Write a long story about a dragon."  # SmolLM2 writes until max_tokens

BARE_CLIENT = """
import anthropic
_bench_client = anthropic.Anthropic(api_key="none", base_url={url!r})
"""

# what the %%chat cell sends, as build_kwargs makes it (one breakpoint on the question)
RAW_CELL = """
for _e in _bench_client.messages.create(
    model="smollm2", max_tokens={tokens}, stream=True,
    messages=[{{"role": "user", "content": [
        {{"type": "text", "text": {question!r}, "cache_control": {{"type": "ephemeral"}}}}]}}],
    extra_body={{"temperature": 0.0}}, extra_headers={{"anthropic-version": "2023-06-01"}},
):
    pass
"""


def cell_seconds(kernel: Kernel) -> float:
    start, end, _ = last_cell(kernel)
    return end - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=64, help="tokens of each answer")
    args = parser.parse_args()
    tokens = args.tokens
    with (
        tempfile.TemporaryDirectory() as folder,
        running_server(Path(folder) / "llama") as local,
        FakeAnthropic(tokens_per_second=60) as claude,
        FakeAnthropic(endpoint="deepseek", tokens_per_second=60) as deepseek,
    ):
        env = {
            "ANTHROPIC_API_KEY": "sk-bench",
            "ANTHROPIC_BASE_URL": claude.base_url,
            "DEEPSEEK_API_KEY": "sk-bench",
        }
        endpoints = {
            "local": {"base_url": local.base_url},
            "deepseek": {"base_url": deepseek.base_url},
        }
        with Kernel(Path(folder), env=env) as kernel:
            kernel.run(TIMING_HOOKS).check()
            kernel.run(f"%config TreeChat.endpoints = {endpoints!r}").check()
            kernel.run(BARE_CLIENT.format(url=local.base_url)).check()
            raw = RAW_CELL.format(tokens=tokens, question=QUESTION)
            local_cell = f"--new --model local:smollm2 --max-tokens {tokens} --temperature 0"

            kernel.chat(QUESTION, "warm0001", local_cell).check()  # warm both paths
            kernel.run(raw).check()
            chat_times, raw_times = [], []
            for n in range(args.runs):
                kernel.chat(QUESTION, f"chat{n:04d}", local_cell).check()
                chat_times.append(cell_seconds(kernel))
                kernel.run(raw).check()
                raw_times.append(cell_seconds(kernel))

            models = ("claude-sonnet-4-6", "deepseek:deepseek-chat", "local:smollm2")
            fanout_times, slowest_times = [], []
            for n in range(-1, args.runs):  # n == -1 warms every endpoint's client up
                for server in (claude, deepseek):
                    server.enqueue(tokens=tokens)
                run = kernel.chat(
                    QUESTION,
                    f"fan{n:05d}",
                    f"--new --models {','.join(models)} --max-tokens {tokens} --temperature 0",
                ).check()
                assert "failed" not in run.visible_text, run.visible_text
                fanout_seconds = cell_seconds(kernel)
                singles = []
                for m, model in enumerate(models):
                    if model in ("claude-sonnet-4-6", "deepseek:deepseek-chat"):
                        (claude if model.startswith("claude") else deepseek).enqueue(tokens=tokens)
                    kernel.chat(
                        QUESTION,
                        f"one{n:03d}{m}",
                        f"--new --model {model} --max-tokens {tokens} --temperature 0",
                    ).check()
                    singles.append(cell_seconds(kernel))
                if n >= 0:
                    fanout_times.append(fanout_seconds)
                    slowest_times.append(max(singles))

    chat, floor = statistics.median(chat_times), statistics.median(raw_times)
    fanout, slowest = statistics.median(fanout_times), statistics.median(slowest_times)
    print(f"local:smollm2 (real llama-server), {tokens}-token answers, median of {args.runs}:")
    print(f"  bare SDK raw events cell   {floor * 1000:8.1f} ms")
    print(f"  %%chat cell                {chat * 1000:8.1f} ms")
    verdict = "met" if chat / floor <= 1.1 else "NOT met"
    print(f"  ratio                      {chat / floor:8.2f}×   (target ≤ 1.1×: {verdict})")
    print(f"mixed fan-out of 3 ({', '.join(models)}), median of {args.runs}:")
    print(f"  slowest single answer cell {slowest * 1000:8.1f} ms")
    print(f"  fan-out cell               {fanout * 1000:8.1f} ms")
    each = [f"{f / s:.2f}×" for f, s in zip(fanout_times, slowest_times, strict=True)]
    print(f"  each run                   {', '.join(each)}")
    verdict = "met" if fanout / slowest <= 1.3 else "NOT met"
    print(f"  ratio                      {fanout / slowest:8.2f}×   (target ≤ 1.3×: {verdict})")


if __name__ == "__main__":
    main()
