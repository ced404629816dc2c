"""What does an MCP tool call cost through the project, against the bare ``mcp`` client?

1. **A tool turn in a cell** (reported): on a real kernel, the model (the
   local fake Messages API, through the real SDK) asks for server-everything's ``echo``,
   the tool runs, the result goes back, the answer streams. Through the project that is a
   ``%%chat --tools everything:echo`` cell (cell rule, the question fsynced, three more
   nodes appended, Markdown updated in place, a footer). The baseline is a cell doing the
   same by hand with the two bare SDKs and no output: ``messages.stream`` for the
   tool_use, ``await ClientSession.call_tool`` on a session opened once in the kernel's
   own loop, ``messages.stream`` again with the result. Cells alternate; times are the
   kernel's own (``pre_run_cell`` → ``post_run_cell``).
2. **The call alone** (the target, at most 1.2×): ``Toolbox.start(block).answer()`` (the
   wire name mapped back, the destructive check, the calling thread running the MCP event
   loop while it waits, the per-server lock, the result's conversion) against the SDK's
   ``call_tool`` awaited in a loop, each alone in a fresh process of its own, in alternating blocks;
   wall time per call and CPU time per call (every thread of the side's process);
   with ``--instructions`` also the instructions per call, counted by valgrind in each
   side's process: exact, where the shared machine makes times noisy.
3. **Before any use**: in fresh processes, ``%load_ext jupyter_tree_chat`` with
   ``-X importtime``: whether any module of the SDK or of ``providers/mcp/`` is imported
   (none should be), against what importing the SDK costs the first use.

    .venv/bin/python benchmarks/bench_mcp.py [--cells 15] [--rounds 10] [--calls 50]
        [--calls-only] [--instructions]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
EVERYTHING = ROOT / "tests" / "mcp_servers" / "node_modules" / ".bin" / "mcp-server-everything"

LOAD_EXT = """
from IPython.testing.globalipapp import start_ipython
shell = start_ipython()
shell.run_line_magic("load_ext", "jupyter_tree_chat")
import sys
print(sum(1 for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "httpx2")))
print(sum(1 for m in sys.modules if m.startswith("jupyter_tree_chat.providers.mcp")))
"""
SDK_IMPORT = """
import time
started = time.perf_counter()
import mcp.client.session, mcp.client.stdio, mcp.client.streamable_http  # noqa: E401
print(time.perf_counter() - started)
"""


TIMING_HOOKS = """
import time as _bench_time
_bench = {"start": 0.0, "cells": []}
def _bench_pre(*_):
    _bench["start"] = _bench_time.perf_counter()
def _bench_post(*_):
    _bench["cells"].append(_bench_time.perf_counter() - _bench["start"])
get_ipython().events.register("pre_run_cell", _bench_pre)
get_ipython().events.register("post_run_cell", _bench_post)
"""
BARE_SETUP = """
import contextlib, anthropic
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
_client = anthropic.Anthropic()
_stack = contextlib.AsyncExitStack()
_read, _write = await _stack.enter_async_context(
    stdio_client(StdioServerParameters(command=COMMAND, args=["stdio"])))
_mcp = await _stack.enter_async_context(ClientSession(_read, _write))
await _mcp.initialize()
_tools = [{"name": "everything__echo", "description": "Echoes back the input string",
           "input_schema": (await _mcp.list_tools()).tools[0].input_schema}]
"""
BARE_TURN = """
_question = {"role": "user", "content": "Echo hi, please."}
with _client.messages.stream(model="claude-sonnet-4-6", max_tokens=4096,
                             messages=[_question], tools=_tools) as _s:
    _asked = _s.get_final_message()
_use = next(b for b in _asked.content if b.type == "tool_use")
_result = await _mcp.call_tool("echo", _use.input)
_answer = [{"type": "tool_result", "tool_use_id": _use.id,
            "content": [{"type": "text", "text": _result.content[0].text}]}]
with _client.messages.stream(
    model="claude-sonnet-4-6", max_tokens=4096, tools=_tools,
    messages=[_question, {"role": "assistant", "content": [
        {"type": "text", "text": b.text} if b.type == "text"
        else {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
        for b in _asked.content]}, {"role": "user", "content": _answer}],
) as _s:
    for _t in _s.text_stream:
        pass
"""


FUNCTION_TOOL = """
from jupyter_tree_chat import tool

@tool
def echo(message: str) -> str:
    'Echoes back the input string.'
    return f"Echo: {message}"
"""


def tool_turns(cells: int) -> dict[str, list[float]]:
    """Cell times in seconds by kind (``bare``, ``mcp``, ``function``: a kernel function
    doing the same), alternated on one real kernel."""
    from fakes.fake_anthropic import FakeAnthropic
    from helpers.kernel_harness import Kernel

    entry = {"command": str(EVERYTHING), "args": ["stdio"]}
    times: dict[str, list[float]] = {"bare": [], "mcp": [], "function": []}
    with FakeAnthropic() as server, tempfile.TemporaryDirectory() as folder:
        (Path(folder) / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": entry}}))
        env = {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.base_url}
        with Kernel(Path(folder), env=env) as kernel:
            kernel.run(BARE_SETUP.replace("COMMAND", repr(str(EVERYTHING)))).check()
            kernel.run(FUNCTION_TOOL).check()
            kernel.run(TIMING_HOOKS).check()
            for n in range(cells + 1):  # the first of each warms its path
                order = ("bare", "mcp", "function") if n % 2 else ("function", "mcp", "bare")
                for kind in order:
                    name = "echo" if kind == "function" else "everything__echo"
                    server.enqueue(tool_use={"name": name, "input": {"message": "hi"}})
                    server.enqueue(text="It says hi.")
                    if kind == "bare":
                        kernel.run(BARE_TURN).check()
                    else:
                        tools = "everything:echo" if kind == "mcp" else "echo"
                        options = f"--new --tools {tools}"
                        kernel.chat("Echo hi, please.", f"{kind}{n}", options).check()
                    took = float(kernel.run("print(_bench['cells'][-1])").check().stdout)
                    if n:
                        times[kind].append(took)
    return times


def bare_worker() -> None:
    """The baseline, alone in its own process: on each line ``N`` from stdin, ``N`` calls of
    the SDK's ``call_tool`` awaited in a loop; their times and the block's CPU time (all
    threads) go back as a JSON line."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def serve() -> None:
        params = StdioServerParameters(command=str(EVERYTHING), args=["stdio"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            print("ready", flush=True)
            while line := await anyio.to_thread.run_sync(sys.stdin.readline):
                times = []
                cpu = time.process_time()
                for _ in range(int(line)):
                    began = time.perf_counter()
                    result = await session.call_tool("echo", {"message": "hi"})
                    times.append(time.perf_counter() - began)
                    assert result.content[0].text == "Echo: hi"
                cpu = time.process_time() - cpu
                print(json.dumps({"times": times, "cpu": cpu}), flush=True)

    anyio.run(serve)


def our_worker() -> None:
    """The project's side, alone in its own process the same way:
    ``Toolbox.start(block).answer()`` in a loop (the first line out: the first use)."""
    from jupyter_tree_chat.providers.mcp.config import parse_servers
    from jupyter_tree_chat.providers.mcp.servers import McpServers
    from jupyter_tree_chat.providers.mcp.tools import McpTools
    from jupyter_tree_chat.providers.tools.functions import ToolRegistry
    from jupyter_tree_chat.providers.tools.toolbox import Toolbox

    entry = {"command": str(EVERYTHING), "args": ["stdio"]}
    servers = McpServers(lambda: parse_servers({"everything": entry}, "bench"))
    box = Toolbox(ToolRegistry(), McpTools(servers, timeout=30))
    started = time.perf_counter()
    (spec,) = box.specs(["everything:echo"])
    print(f"ready {time.perf_counter() - started}", flush=True)
    block = {"type": "tool_use", "id": "t", "name": spec.name, "input": {"message": "hi"}}
    try:
        while line := sys.stdin.readline():
            times = []
            cpu = time.process_time()
            for _ in range(int(line)):
                began = time.perf_counter()
                answer = box.start(block).answer()
                times.append(time.perf_counter() - began)
                assert answer.result["content"][0]["text"] == "Echo: hi"
            cpu = time.process_time() - cpu
            print(json.dumps({"times": times, "cpu": cpu}), flush=True)
    finally:
        servers.stop_all()


class _Worker:
    """A side of the call alone in a process of its own, asked for blocks of calls."""

    def __init__(self, flag: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, flag],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        ready = self.stdout.readline().split()
        assert ready and ready[0] == "ready", ready
        self.first_start = float(ready[1]) if len(ready) > 1 else 0.0
        self.cpu: list[float] = []  # CPU seconds per call, block by block

    def block(self, n: int) -> list[float]:
        self.stdin.write(f"{n}\n")
        self.stdin.flush()
        answer = json.loads(self.stdout.readline())
        self.cpu.append(answer["cpu"] / n)
        return list(answer["times"])

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(10)


def round_trips(
    rounds: int, calls: int
) -> tuple[list[float], list[float], list[float], list[float], float]:
    """(bare call times, project call times, bare CPU per call by block, the project's, its
    first start) in seconds.

    Each side runs alone in a fresh process of its own, in alternating blocks of ``calls``:
    the two event loops never share a process, and the shared machine's drift hits both
    alike. CPU time counts every thread of the side's process (not the server's)."""
    bare, ours = _Worker("--bare-worker"), _Worker("--our-worker")
    bare_times: list[float] = []
    our_times: list[float] = []
    try:
        bare.block(10), ours.block(10)  # both warm
        bare.cpu.clear(), ours.cpu.clear()
        for round_number in range(rounds):
            if round_number % 2:
                our_times += ours.block(calls)
                bare_times += bare.block(calls)
            else:
                bare_times += bare.block(calls)
                our_times += ours.block(calls)
    finally:
        bare.close()
        ours.close()
    return bare_times, our_times, bare.cpu, ours.cpu, ours.first_start


def instructions_per_call(flag: str, calls: tuple[int, int] = (100, 300)) -> float | None:
    """Instructions one call costs on a side, counted by valgrind (callgrind): the side's
    process run twice, with ``calls[0]`` and ``calls[1]`` calls after ten to warm, the
    difference divided. Exact where the shared machine makes times noisy; None without
    valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None

    worker = (sys.executable, __file__, flag)

    def counted(n: int) -> int:
        run = subprocess.run(
            [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *worker],
            input=f"10\n{n}\n",
            capture_output=True,
            text=True,
            check=True,
        )
        found = re.search(r"Collected : (\d+)", run.stderr)
        assert found, run.stderr[-500:]
        return int(found.group(1))

    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # the machine's two cores
        few, many = pool.map(counted, calls)
    return (many - few) / (calls[1] - calls[0])


def import_costs() -> tuple[int, int, float, float, float]:
    """(SDK modules and the project's MCP modules imported by %load_ext, %load_ext's import
    time, the tool box's share of it, importing the SDK) in seconds, in fresh processes."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", LOAD_EXT],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    sdk_modules, our_modules = (int(n) for n in run.stdout.strip().splitlines()[-2:])
    total = ours = 0.0
    for line in run.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        self_us, name = int(parts[0]), parts[2]
        total += self_us
        if name.startswith("jupyter_tree_chat.providers.tools.toolbox"):
            ours += self_us
    sdk = min(
        float(
            subprocess.run(
                [sys.executable, "-c", SDK_IMPORT], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(3)
    )
    return sdk_modules, our_modules, total / 1e6, ours / 1e6, sdk


def _quartile(times: list[float]) -> float:
    """The first quartile: what a call costs when the shared machine lets it run."""
    return statistics.quantiles(times, n=4)[0]


def tool_cells(cells: int) -> None:
    """Print the cell part: a tool turn in a cell, by kind."""
    turns = tool_turns(cells)
    b, o, f = (statistics.median(turns[kind]) for kind in ("bare", "mcp", "function"))
    print(f"a tool turn in a cell (tool_use, echo, the answer), median of {cells} each:")
    print(f"  bare SDKs by hand, no output     {b * 1e3:7.1f} ms")
    print(f"  %%chat --tools everything:echo   {o * 1e3:7.1f} ms  -> {o / b:.2f}x")
    print(
        f"  %%chat --tools echo (a function) {f * 1e3:7.1f} ms  -> the MCP cell is {o / f:.2f}x it"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--bare-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--our-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--calls-only", action="store_true", help="only the call alone")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the call's instructions with valgrind (about two minutes)",
    )
    args = parser.parse_args()
    if args.bare_worker:
        bare_worker()
        return
    if args.our_worker:
        our_worker()
        return
    if not EVERYTHING.exists():
        sys.exit("run scripts/setup.sh first: it installs tests/mcp_servers")

    if not args.calls_only:
        tool_cells(args.cells)
    bare, ours, bare_cpu, our_cpu, first_start = round_trips(args.rounds, args.calls)
    print(f"the call alone, {len(bare)} calls each, in {args.rounds} alternating blocks:")
    for what, pick in (("median", statistics.median), ("fastest quarter", _quartile)):
        b, o = pick(bare), pick(ours)
        print(
            f"  {what:>15}: bare ClientSession.call_tool {b * 1e3:.3f} ms,"
            f" through the project {o * 1e3:.3f} ms -> {o / b:.2f}x (target <= 1.2x)"
        )
    b, o = statistics.median(bare_cpu), statistics.median(our_cpu)
    print(
        f"  CPU per call (median of blocks): bare {b * 1e3:.3f} ms, ours {o * 1e3:.3f} ms"
        f" -> {o / b:.2f}x"
    )
    print(f"  first use (server start, initialise, list tools): {first_start * 1e3:.0f} ms")
    if args.instructions:
        bare_ir = instructions_per_call("--bare-worker")
        our_ir = instructions_per_call("--our-worker")
        if bare_ir is None or our_ir is None:
            print("  instructions per call: valgrind is not installed (apt-get install valgrind)")
        else:
            print(
                f"  instructions per call (callgrind): bare {bare_ir / 1e3:.0f}k,"
                f" ours {our_ir / 1e3:.0f}k -> {our_ir / bare_ir:.2f}x"
            )
    if args.calls_only:
        return

    sdk_modules, our_modules, load_total, box, sdk = import_costs()
    print("%load_ext jupyter_tree_chat, fresh process, -X importtime:")
    print(f"  modules of the mcp SDK imported: {sdk_modules} (target 0)")
    print(f"  modules of the project's providers/mcp/ imported: {our_modules} (target 0)")
    print(
        f"  all imports {load_total * 1e3:.0f} ms; the tool box (functions and MCP tools as"
        f" one set) {box * 1e3:.1f} ms ({box / load_total:.1%})"
    )
    print(
        f"  importing the SDK, paid by the first MCP use only: {sdk * 1e3:.0f} ms"
        f" ({sdk / load_total:.2f}x all of %load_ext's imports)"
    )


if __name__ == "__main__":
    main()
