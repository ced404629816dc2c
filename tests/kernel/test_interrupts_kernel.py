"""Stop at any moment: an interrupt at each point of a turn ends in one "Interrupted" line.

A real kernel, the real SDK against the fake Messages API, a real MCP server. Each test
brings the kernel to one point of a turn and holds it there, then presses stop (the
kernel manager's interrupt, as JupyterLab's button does), so where the interrupt lands
is decided by the test, not by timing:

- **streaming**, **a notice being printed**, **a reply's tool-call line being printed**,
  **a fan-out**: a listener of the session (``Session.subscribe``, as every view is one)
  waits at that event until the interrupt arrives, as a slow terminal would;
- **a tool call**: the notes server's ``hold`` tool writes a file as it starts, then waits;
- **a write**: the test holds a shared ``flock`` on the session file, so the kernel's
  append (which takes an exclusive one) waits inside the write until the test lets go,
  after pressing stop (``/proc/locks`` shows when the kernel is waiting).

Each ends with the cell's one line (never a traceback), what was stored kept whole on
disk, and the session usable by the next cell.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.kernel_harness import CellRun, Kernel
from helpers.mcp_helpers import notes, wait_until, write_mcp_json

from jupyter_tree_chat.history.store import load_file

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("reference_servers")]

#: a cell that makes the session's first listener wait at the first event of ``kind``
#: that ``accept`` takes, having written ``marker``; the interrupt lands in that wait
PAUSE = """
import pathlib as _p, time as _t
from jupyter_tree_chat.conversation import events as _events
from jupyter_tree_chat.kernel.sessions import current_session as _current
_marker = _p.Path({marker!r})
def _pause(event):
    if isinstance(event, _events.{kind}) and ({accept}) and not _marker.exists():
        _marker.write_text("paused")
        while True:
            _t.sleep(0.01)
_current().subscribe(_pause)
"""


@pytest.fixture
def claude(tmp_path: Path, fake_anthropic: Any) -> Iterator[Kernel]:
    env = {"ANTHROPIC_API_KEY": "sk-test-dummy", "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    with Kernel(tmp_path, env=env) as kernel:
        yield kernel


def pause_at(kernel: Kernel, folder: Path, kind: str, accept: str = "True") -> Path:
    marker = folder / f"paused-at-{kind}"
    kernel.run(PAUSE.format(marker=str(marker), kind=kind, accept=accept)).check()
    return marker


def stop_when(kernel: Kernel, cell: str, ready: Any, what: str) -> CellRun:
    """Run ``cell``, press stop once ``ready()`` holds, and collect what the cell shows."""
    msg_id = kernel.send(cell, "c-stopped")
    wait_until(ready, timeout=60, what=what)
    kernel.interrupt()
    return kernel.collect(msg_id)


def lines_on_disk(kernel: Kernel) -> list[dict[str, Any]]:
    """Every line of the session file, each parsed whole (a torn line fails here)."""
    return [json.loads(line) for line in kernel.session_file().read_text().splitlines()]


def path_roles(kernel: Kernel) -> list[str]:
    loaded = load_file(kernel.session_file())
    assert loaded.problems == []
    tree = loaded.tree
    return [n.role for n in tree.path_nodes(tree.leaf)]


def leaf_id(kernel: Kernel) -> str:
    tree = load_file(kernel.session_file()).tree
    assert tree.leaf is not None
    return tree.leaf[:7]


def the_one_line(run: CellRun) -> str:
    assert run.status == "error"
    assert "Traceback" not in run.visible_text and "KeyboardInterrupt" not in run.visible_text
    (line,) = run.error_lines
    return line


def still_usable(kernel: Kernel, fake_anthropic: Any) -> None:
    fake_anthropic.enqueue("Still here.")
    kernel.chat("Go on.", "c-after").check()
    assert path_roles(kernel)[-2:] == ["user", "assistant"]


def test_a_stop_while_streaming_keeps_the_partial_reply(claude, fake_anthropic, tmp_path):
    marker = pause_at(claude, tmp_path, "ReplyDelta")
    fake_anthropic.enqueue("The first words of a long answer, and more after them.")

    run = stop_when(claude, "%%chat\nTell me a lot.", marker.exists, "the first delta")

    assert the_one_line(run) == f"Interrupted: the partial reply is kept as {leaf_id(claude)}."
    assert path_roles(claude) == ["user", "assistant"]
    assert lines_on_disk(claude)[-1]["meta"]["interrupted"]
    still_usable(claude, fake_anthropic)


def test_a_stop_while_a_notice_is_printed_keeps_the_reply_that_asked(
    claude, fake_anthropic, tmp_path
):
    write_mcp_json(tmp_path, {"notes": notes(tmp_path)})
    marker = pause_at(claude, tmp_path, "Notice", "'write_note' in event.message")
    fake_anthropic.enqueue(tool_use={"name": "notes__write_note", "input": {"text": "x"}})

    run = stop_when(
        claude, "%%chat --tools notes:*\nWrite x.", marker.exists, "the refusal's notice"
    )

    assert the_one_line(run) == (
        "Interrupted: the tool call was stopped; the reply that asked for it is kept as "
        f"{leaf_id(claude)}."
    )
    assert path_roles(claude) == ["user", "assistant"]
    assert not (tmp_path / "notes.txt").exists()
    still_usable(claude, fake_anthropic)


def test_a_stop_while_a_tool_call_line_is_printed_keeps_the_reply_that_asked(
    claude, fake_anthropic, tmp_path
):
    write_mcp_json(tmp_path, {"notes": notes(tmp_path)})
    marker = pause_at(claude, tmp_path, "ReplyEnded", "event.node is not None")
    fake_anthropic.enqueue(tool_use={"name": "notes__read_notes", "input": {}})

    run = stop_when(
        claude, "%%chat --tools notes:*\nRead them.", marker.exists, "the tool call's line"
    )

    assert the_one_line(run) == (
        "Interrupted: the tool call was stopped; the reply that asked for it is kept as "
        f"{leaf_id(claude)}."
    )
    assert path_roles(claude) == ["user", "assistant"]
    still_usable(claude, fake_anthropic)  # the unanswered call is sent as "no result"


def test_a_stop_during_a_tool_call_keeps_the_reply_that_asked(claude, fake_anthropic, tmp_path):
    write_mcp_json(tmp_path, {"notes": notes(tmp_path)})
    fake_anthropic.enqueue(tool_use={"name": "notes__hold", "input": {"seconds": 60}})

    run = stop_when(
        claude,
        "%%chat --tools notes:*\nTake your time.",
        (tmp_path / "held").exists,
        "the call to reach the server",
    )

    assert the_one_line(run) == (
        "Interrupted: the tool call was stopped; the reply that asked for it is kept as "
        f"{leaf_id(claude)}."
    )
    assert path_roles(claude) == ["user", "assistant"]
    still_usable(claude, fake_anthropic)


def test_a_stop_during_a_fan_out_keeps_what_each_answer_had(claude, fake_anthropic, tmp_path):
    marker = pause_at(claude, tmp_path, "ReplyDelta", "event.variant is not None")
    fake_anthropic.enqueue("One answer, at some length.")
    fake_anthropic.enqueue("Another answer, at some length.")

    run = stop_when(claude, "%%chat --n 2\nTwo ways?", marker.exists, "a fan-out's first delta")

    line = the_one_line(run)
    assert line.startswith("Interrupted: what each answer had received is kept (")
    loaded = load_file(claude.session_file())
    assert loaded.problems == []
    kept = [n for n in loaded.tree.children(loaded.tree.roots()[0].id)]
    assert kept and all(n.id[:7] in line for n in kept)
    still_usable(claude, fake_anthropic)


def _waiting_for_a_write_lock(path: Path) -> bool:
    inode = os.stat(path).st_ino
    locks = Path("/proc/locks").read_text().splitlines()
    return any("->" in line and "WRITE" in line and f":{inode} " in line for line in locks)


def _sigint_pending(pid: int) -> bool:
    """Whether a SIGINT sent to ``pid`` is not yet delivered to it."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    masks = [int(line.split()[1], 16) for line in status if line.startswith(("SigPnd", "ShdPnd"))]
    return any(mask & (1 << (2 - 1)) for mask in masks)  # SIGINT is signal 2


def test_a_stop_during_a_write_finishes_the_write_then_stops(claude, fake_anthropic, tmp_path):
    fake_anthropic.enqueue("First answer.")
    claude.chat("First question.", "c1").check()
    before = len(fake_anthropic.requests)
    fd = os.open(claude.session_file(), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # readers pass, the kernel's append waits
        msg_id = claude.send("%%chat\nSecond question.", "c2")
        wait_until(
            lambda: _waiting_for_a_write_lock(claude.session_file()),
            timeout=60,
            what="the kernel to wait inside its append",
        )
        pid = claude.kernel_pid()
        claude.interrupt()
        wait_until(lambda: not _sigint_pending(pid), what="the kernel to receive the SIGINT")
    finally:
        os.close(fd)  # the write goes on, whole, and then the interrupt is raised
    run = claude.collect(msg_id)

    assert (
        the_one_line(run) == "Interrupted: nothing had arrived; the question is kept, unanswered."
    )
    records = lines_on_disk(claude)
    assert records[-1]["message"]["content"] == "Second question."
    assert path_roles(claude) == ["user", "assistant", "user"]
    assert len(fake_anthropic.requests) == before  # stopped before anything was sent
    still_usable(claude, fake_anthropic)
