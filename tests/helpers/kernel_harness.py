"""A real IPython kernel driven the way JupyterLab drives it, for tests and benchmarks.

nbclient sends no cell id, and the notebook-native rule depends on one, so this harness
builds each execute request itself with ``metadata.cellId`` (as JupyterLab 4 does) and
collects the iopub messages a front end would render: stream text, display outputs with
their in-place updates applied, and error lines. The kernel is started from this
Python (``sys.executable``), with ``JPY_SESSION_NAME`` naming a notebook in a temporary
folder, exactly as jupyter_server starts kernels for a notebook.
"""

from __future__ import annotations

import os
import queue
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import KernelManager


@dataclass
class CellRun:
    """What a user sees after a cell ran: outputs in order, with updates applied."""

    status: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    updates: int = 0  # update_display_data messages received
    messages: list[dict[str, Any]] = field(default_factory=list)
    payload: list[dict[str, Any]] = field(default_factory=list)  # e.g. set_next_input
    execution_count: int | None = None

    def check(self) -> CellRun:
        """This run, if the cell succeeded; else an AssertionError showing its output."""
        if self.status != "ok":
            raise AssertionError(f"cell failed: {self.visible_text}")
        return self

    @property
    def stdout(self) -> str:
        return "".join(o["text"] for o in self.outputs if o.get("name") == "stdout")

    @property
    def stderr(self) -> str:
        return "".join(o["text"] for o in self.outputs if o.get("name") == "stderr")

    @property
    def markdown(self) -> list[str]:
        """Every rendered (HTML) output's final text, in order (a reply, its footer, ...)."""
        return [
            o["data"].get("text/plain", "")
            for o in self.outputs
            if o["output_type"] == "display_data" and "text/html" in o["data"]
        ]

    @property
    def html(self) -> list[str]:
        """Every HTML output's final HTML, in order (what JupyterLab renders)."""
        return [
            o["data"]["text/html"]
            for o in self.outputs
            if o["output_type"] == "display_data" and "text/html" in o["data"]
        ]

    @property
    def plain(self) -> list[str]:
        return [
            o["data"].get("text/plain", "")
            for o in self.outputs
            if o["output_type"] in ("display_data", "execute_result")
        ]

    @property
    def error_lines(self) -> list[str]:
        """The lines of an error output (what JupyterLab prints in red)."""
        lines: list[str] = []
        for o in self.outputs:
            if o["output_type"] == "error":
                for chunk in o["traceback"]:
                    lines.extend(chunk.splitlines())
        return lines

    @property
    def visible_text(self) -> str:
        """Everything shown, as text, in order."""
        parts = []
        for o in self.outputs:
            if o["output_type"] == "stream":
                parts.append(o["text"])
            elif o["output_type"] == "error":
                parts.append("\n".join(o["traceback"]) + "\n")
            else:
                data = o["data"]
                parts.append(data.get("text/plain", "") + "\n")
        return "".join(parts)


class Kernel:
    """One kernel for one notebook path; ``run(code, cell_id)`` executes like JupyterLab."""

    def __init__(
        self,
        folder: Path,
        *,
        notebook: str = "analysis.ipynb",
        env: dict[str, str] | None = None,
        load_extension: bool = True,
    ) -> None:
        self.folder = Path(folder)
        self.notebook = self.folder / notebook
        self.env = env or {}
        self.load_extension = load_extension
        self.km: KernelManager | None = None
        self.kc: Any = None

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> Kernel:
        km = KernelManager()
        km._kernel_spec = KernelSpec(  # this venv's Python, whatever kernelspecs exist
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="test",
            language="python",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(self.env)
        env["JPY_SESSION_NAME"] = str(self.notebook)
        km.start_kernel(env=env, cwd=str(self.folder))
        self.km = km
        self._connect()
        if self.load_extension:
            self.run("%load_ext jupyter_tree_chat").check()
        return self

    def _connect(self) -> None:
        assert self.km is not None
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def restart(self) -> None:
        assert self.km is not None
        self.kc.stop_channels()
        self.km.restart_kernel(now=True)
        self._connect()
        if self.load_extension:
            self.run("%load_ext jupyter_tree_chat").check()

    def stop(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None:
            self.km.shutdown_kernel(now=True)
        self.km = None

    def __enter__(self) -> Kernel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- running cells ------------------------------------------------------------------

    def send(self, code: str, cell_id: str | None = None) -> str:
        """Send an execute request as JupyterLab does; returns its msg_id."""
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        metadata = {"cellId": cell_id} if cell_id else {}
        msg = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def collect(
        self, msg_id: str, timeout: float = 60, until: Any = None, run: CellRun | None = None
    ) -> CellRun:
        """Gather the iopub outputs of ``msg_id`` until the kernel is idle again.

        With ``until(run)``, return as soon as it is true instead (the cell goes on).
        """
        run = run or CellRun("running")
        by_display: dict[str, dict[str, Any]] = {}
        for o in run.outputs:
            display_id = o.get("transient", {}).get("display_id")
            if display_id:
                by_display[display_id] = o
        deadline = time.monotonic() + timeout
        while True:
            if until is not None and until(run):
                return run
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no idle after {timeout}s; outputs so far: {run.outputs}")
            try:
                msg = self.kc.get_iopub_msg(timeout=min(remaining, 1.0))
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            run.messages.append(msg)
            kind = msg["msg_type"]
            content = msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                break
            if kind == "stream":
                last = run.outputs[-1] if run.outputs else None
                if last and last["output_type"] == "stream" and last["name"] == content["name"]:
                    last["text"] += content["text"]
                else:
                    run.outputs.append({"output_type": "stream", **content})
            elif kind in ("display_data", "execute_result"):
                output = {"output_type": kind, **content}
                run.outputs.append(output)
                display_id = content.get("transient", {}).get("display_id")
                if display_id:
                    by_display[display_id] = output
            elif kind == "update_display_data":
                run.updates += 1
                target = by_display.get(content.get("transient", {}).get("display_id"))
                if target is not None:
                    target["data"] = content["data"]
            elif kind == "error":
                run.outputs.append({"output_type": "error", **content})
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        run.status = reply["content"]["status"]
        run.payload = reply["content"].get("payload", [])
        run.execution_count = reply["content"].get("execution_count")
        return run

    def run(self, code: str, cell_id: str | None = None, timeout: float = 60) -> CellRun:
        return self.collect(self.send(code, cell_id), timeout=timeout)

    def chat(self, text: str, cell_id: str | None, options: str = "") -> CellRun:
        """Run a ``%%chat`` cell."""
        return self.run(f"%%chat {options}\n{text}".rstrip(), cell_id)

    def interrupt(self) -> None:
        assert self.km is not None
        self.km.interrupt_kernel()

    def kernel_pid(self) -> int:
        """The kernel process's id (its ``/proc`` entry tells what it waits for)."""
        assert self.km is not None and self.km.provisioner is not None
        pid = getattr(self.km.provisioner, "pid", None)
        assert isinstance(pid, int), "the kernel's provisioner does not say its pid"
        return pid

    def session_file(self, name: str | None = None) -> Path:
        stem = self.notebook.stem
        return self.folder / (f"{stem}.{name}.chat.jsonl" if name else f"{stem}.chat.jsonl")


def unwrapped(text: str) -> list[str]:
    """The lines of a report wrapped for a terminal, each continuation (indented four more
    than its line) joined back to it."""
    lines: list[str] = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if lines and indent >= len(lines[-1]) - len(lines[-1].lstrip(" ")) + 4:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines
