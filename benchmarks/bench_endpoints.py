"""What do endpoints cost: a ``%%chat`` cell on a real local model vs the bare SDK, and a
mixed fan-out vs its slowest answer. One kernel; each part's cases in turn, their order
turning run by run (``alternating.py``), ``--runs`` times.

1. ``%%chat --model local:smollm2`` against llama.cpp's llama-server (SmolLM2-135M, the
   one the tests start: tests/helpers/llama_server.py), against a cell streaming the same request
   to the same server with the bare ``anthropic`` SDK, iterating its raw events
   (``messages.create(stream=True)``, nothing kept: the floor, not the SDK's snapshot
   accumulator). Both at temperature 0, so the model writes the same tokens each time;
   each ``%%chat`` cell starts a new root, so both send one question. Cell times are the
   kernel's own (``pre_run_cell`` → ``post_run_cell``): to the last byte and beyond.
   Target: at most 1.1×, judged on the median of the runs' ratios of the kernel's
   main-thread CPU time (the exact measure: the model runs in its own process, so the
   model's speed, which the machine's load swings, is not in it); wall time reported.
2. A mixed fan-out of three, ``claude-sonnet-4-6`` (the fake Messages API), ``deepseek:
   deepseek-chat`` (the fake API in DeepSeek's mode) and ``local:smollm2`` (the real
   server), against each of them asked alone in a cell of its own; the ratio is the
   fan-out cell over the slowest single cell. Target: at most 1.3×, judged on the median
   of the runs' ratios of wall time: the target is about the answers streaming at once,
   which only the wait shows (the kernel's CPU is reported against the three singles'
   sum: the fan-out does their work).

    .venv/bin/python benchmarks/bench_endpoints.py [--runs 7] [--tokens 64]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from alternating import Timing, alternate, ratio_line  # noqa: E402
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


def cell_timing(kernel: Kernel) -> Timing:
    start, end, cpu = last_cell(kernel)
    return Timing(end - start, cpu)


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
            cells = itertools.count()

            def chat(options: str) -> Timing:
                run = kernel.chat(QUESTION, f"c{next(cells):07d}", options).check()
                assert "failed" not in run.visible_text, run.visible_text
                return cell_timing(kernel)

            def raw_cell() -> Timing:
                kernel.run(raw).check()
                return cell_timing(kernel)

            local = alternate({"chat": lambda: chat(local_cell), "raw": raw_cell}, args.runs)
            report_local(local, args.runs, tokens)

            models = ("claude-sonnet-4-6", "deepseek:deepseek-chat", "local:smollm2")
            servers = {"claude-sonnet-4-6": [claude], "deepseek:deepseek-chat": [deepseek]}
            fan = f"--new --models {','.join(models)} --max-tokens {tokens} --temperature 0"

            def asked(options: str, fed: list[FakeAnthropic]) -> Timing:
                for server in fed:
                    server.enqueue(tokens=tokens)
                return chat(options)

            mixed: dict[str, Callable[[], Timing]] = {
                "fan-out": lambda: asked(fan, [claude, deepseek])
            }
            for model in models:
                one = f"--new --model {model} --max-tokens {tokens} --temperature 0"
                mixed[model] = lambda one=one, model=model: asked(one, servers.get(model, []))
            for work in mixed.values():  # warm every endpoint's client up
                work()
            fanned = alternate(mixed, args.runs)

    report_mixed(fanned, models)


def report_local(local: dict[str, list[Timing]], runs: int, tokens: int) -> None:
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"{runs} runs, the cases' order turning; load average now {load}")
    chat_t, raw_t = local["chat"], local["raw"]
    print(f"local:smollm2 (real llama-server), {tokens}-token answers, medians:")
    for label, case in (("bare SDK raw events cell", raw_t), ("%%chat cell", chat_t)):
        wall = statistics.median(t.wall for t in case) * 1000
        cpu = statistics.median(t.cpu for t in case) * 1000
        print(f"  {label:<26} wall {wall:8.1f} ms, kernel CPU {cpu:7.1f} ms")
    lacks = "the raw cell keeps nothing and shows nothing; the %%chat cell does more"
    cpu_line = ratio_line([t.cpu for t in chat_t], [t.cpu for t in raw_t], 1.1, lacks)
    wall_line = ratio_line([t.wall for t in chat_t], [t.wall for t in raw_t], None, lacks)
    print(f"  ratio, kernel CPU (judged) {cpu_line}")
    print(f"  ratio, wall (reported)     {wall_line}")


def report_mixed(fanned: dict[str, list[Timing]], models: tuple[str, ...]) -> None:
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"load average at the end {load}")
    fan_t = fanned["fan-out"]
    slowest = [max(t.wall for t in r) for r in zip(*(fanned[m] for m in models), strict=True)]
    print(f"mixed fan-out of 3 ({', '.join(models)}), medians:")
    print(f"  slowest single answer cell wall {statistics.median(slowest) * 1000:8.1f} ms")
    print(f"  fan-out cell               wall {statistics.median(_wall(fan_t)) * 1000:8.1f} ms")
    lacks = "the slowest single cell waits for one answer as the fan-out waits for its slowest"
    wall_line = ratio_line([t.wall for t in fan_t], slowest, 1.3, lacks)
    print(f"  fan-out / slowest single, wall (judged): {wall_line}")
    singles_cpu = [sum(r) for r in zip(*([t.cpu for t in fanned[m]] for m in models), strict=True)]
    lacks = (
        "the fan-out's answers stream on threads of their own, which the main thread's CPU"
        " does not count"
    )
    cpu_line = ratio_line([t.cpu for t in fan_t], singles_cpu, None, lacks)
    print(f"  fan-out / the three singles' sum, kernel CPU (reported): {cpu_line}")


def _wall(timings: list[Timing]) -> list[float]:
    return [t.wall for t in timings]


if __name__ == "__main__":
    main()
