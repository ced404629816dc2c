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
   wire name mapped back, the destructive check, the MCP event loop run while it waits,
   the per-server lock, the result's conversion) against the SDK's ``call_tool`` awaited
   in a loop, each alone in a fresh process of its own, in alternating blocks. Two ways
   of the project's: from a thread that runs no event loop (it runs the MCP loop itself)
   and from inside a running asyncio loop, as a kernel's cell is (ipykernel's loop cannot
   be set aside without CPython's private API, so the background thread runs the MCP loop
   and the caller waits). Wall time and CPU time per call (every thread of the side's
   process) are reported; the target is judged on the exact measure: instructions per
   call counted by valgrind (``--instructions``), else CPU time per call. The shared
   machine makes wall times noisy, so they judge nothing.
3. **Before any use**: in fresh processes, ``%load_ext jupyter_tree_chat`` with
   ``-X importtime``: whether any module of the SDK or of ``providers/mcp/`` is imported
   (none should be), against what importing the SDK costs the first use.

    .venv/bin/python benchmarks/bench_mcp.py [--cells 15] [--rounds 10] [--calls 50]
        [--calls-only] [--instructions]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
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
sys.path.insert(0, str(HERE))
from alternating import alternate  # noqa: E402

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
    with FakeAnthropic() as server, tempfile.TemporaryDirectory() as folder:
        (Path(folder) / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": entry}}))
        env = {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.base_url}
        with Kernel(Path(folder), env=env) as kernel:
            kernel.run(BARE_SETUP.replace("COMMAND", repr(str(EVERYTHING)))).check()
            kernel.run(FUNCTION_TOOL).check()
            kernel.run(TIMING_HOOKS).check()
            turns = itertools.count()

            def turn(kind: str) -> float:
                name = "echo" if kind == "function" else "everything__echo"
                server.enqueue(tool_use={"name": name, "input": {"message": "hi"}})
                server.enqueue(text="It says hi.")
                if kind == "bare":
                    kernel.run(BARE_TURN).check()
                else:
                    tools = "everything:echo" if kind == "mcp" else "echo"
                    options = f"--new --tools {tools}"
                    kernel.chat("Echo hi, please.", f"{kind}{next(turns)}", options).check()
                return float(kernel.run("print(_bench['cells'][-1])").check().stdout)

            kinds = ("bare", "mcp", "function")
            for kind in kinds:  # the first of each warms its path
                turn(kind)
            return alternate({kind: lambda kind=kind: turn(kind) for kind in kinds}, cells)


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


def our_worker(in_loop: bool = False) -> None:
    """The project's side, alone in its own process the same way:
    ``Toolbox.start(block).answer()`` in a loop (the first line out: the first use);
    ``in_loop``: from inside a running asyncio loop, as a kernel's cell runs."""
    if in_loop:
        import asyncio

        async def inside() -> None:
            our_worker()

        asyncio.run(inside())
        return
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


#: the sides of the call alone, by the flag that runs each in its own process
SIDES = {
    "bare": "--bare-worker",
    "ours": "--our-worker",
    "ours, in a running loop": "--our-worker-in-loop",
}


def round_trips(rounds: int, calls: int) -> dict[str, _Worker | list[float]]:
    """Each side's call times (seconds) under its name, and its worker (for CPU per call
    by block and the first start) under ``NAME cpu``.

    Each side runs alone in a fresh process of its own, in blocks of ``calls`` whose order
    turns each round: the event loops never share a process, and the shared machine's
    drift hits every side alike. CPU time counts every thread of the side's process (not
    the server's)."""
    workers = {name: _Worker(flag) for name, flag in SIDES.items()}
    try:
        for worker in workers.values():  # all warm
            worker.block(10)
            worker.cpu.clear()
        blocks = alternate(
            {name: lambda name=name: workers[name].block(calls) for name in SIDES}, rounds
        )
        times = {name: [t for block in taken for t in block] for name, taken in blocks.items()}
    finally:
        for worker in workers.values():
            worker.close()
    found: dict[str, _Worker | list[float]] = dict(times)
    found.update({f"{name} cpu": worker for name, worker in workers.items()})
    return found


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
    parser.add_argument("--our-worker-in-loop", action="store_true", help=argparse.SUPPRESS)
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
    if args.our_worker or args.our_worker_in_loop:
        our_worker(in_loop=args.our_worker_in_loop)
        return
    if not EVERYTHING.exists():
        sys.exit("run scripts/setup.sh first: it installs tests/mcp_servers")

    if not args.calls_only:
        tool_cells(args.cells)
    found = round_trips(args.rounds, args.calls)
    bare_times = found["bare"]
    assert isinstance(bare_times, list)
    print(
        f"the call alone, {len(bare_times)} calls a side, in {args.rounds} blocks a side,"
        " their order turning:"
    )
    exact: dict[str, float] = {}
    if args.instructions:
        counted = {name: instructions_per_call(flag) for name, flag in SIDES.items()}
        if any(v is None for v in counted.values()):
            print("  instructions per call: valgrind is not installed (apt-get install valgrind)")
        else:
            exact = {name: float(v) for name, v in counted.items() if v is not None}
    bare_cpu = found["bare cpu"]
    assert isinstance(bare_cpu, _Worker)
    for name in ("ours", "ours, in a running loop"):
        times, worker = found[name], found[f"{name} cpu"]
        assert isinstance(times, list) and isinstance(worker, _Worker)
        print(f"  through the project ({name}):")
        for what, pick in (("median", statistics.median), ("fastest quarter", _quartile)):
            b, o = pick(bare_times), pick(times)
            print(
                f"    wall {what:>15}: bare {b * 1e3:.3f} ms, ours {o * 1e3:.3f} ms"
                f" -> {o / b:.2f}x (reported, not judged: the machine is shared)"
            )
            if o < b:
                print(
                    "      under 1x: the bare call does not map the wire name, check the"
                    " tool's gate, take the server's lock nor convert the result; it does"
                    " less, so this is the shared machine's noise (or a second thread"
                    " overlapping the wait), not speed"
                )
        b_cpu, o_cpu = statistics.median(bare_cpu.cpu), statistics.median(worker.cpu)
        spread = (
            f"{min(worker.cpu) / max(bare_cpu.cpu):.2f}-{max(worker.cpu) / min(bare_cpu.cpu):.2f}"
        )
        cpu_ratio = o_cpu / b_cpu
        print(
            f"    CPU per call (median of blocks): bare {b_cpu * 1e3:.3f} ms,"
            f" ours {o_cpu * 1e3:.3f} ms -> {cpu_ratio:.2f}x (blocks' extremes {spread}x)"
        )
        if exact:
            ratio = exact[name] / exact["bare"]
            print(
                f"    instructions per call (callgrind): bare {exact['bare'] / 1e3:.0f}k,"
                f" ours {exact[name] / 1e3:.0f}k -> {ratio:.2f}x"
            )
            judged, measure = ratio, "instructions per call"
        else:
            judged, measure = cpu_ratio, "CPU per call"
        verdict = "met" if judged <= 1.2 else "not met"
        print(f"    target <= 1.2x on {measure}: {judged:.2f}x, {verdict}")
        print(f"    first use (start, initialise, list tools): {worker.first_start * 1e3:.0f} ms")
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
