"""Keeps a stdio MCP server from outliving the kernel that started it.

The ``mcp`` SDK starts a stdio server in a session of its own (so that stopping it can
stop its whole process tree) and stops it when the client closes. A kernel that is
killed (JupyterLab's "shut down", a crash, ``kill -9``) closes nothing: most servers
exit when their stdin closes, but one busy in a long call, or one that ignores its stdin,
would be left running with no one to talk to.

So a stdio server is started through this guard, a small program of the standard library
only (run by path with ``python -I``, so it loads nothing of the package)::

    python -I guard.py KERNEL_PID COMMAND [ARGS...]

It starts the server as its child, with its own stdin, stdout and stderr (the guard
reads none of them), waits for it and exits with its exit code. Every 0.2 s it checks
that the kernel is still its parent; once the kernel is gone it stops its process group
(the server and whatever the server started): SIGTERM, then SIGKILL two seconds later.
A SIGTERM to the guard (the SDK stopping the server's process group) is passed on the
same way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

POLL_S = 0.2
GRACE_S = 2.0


def stop_group(child: subprocess.Popen[bytes]) -> int:
    """SIGTERM to this process group (the server and its children), then SIGKILL."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the guard stays to finish
    try:
        os.killpg(os.getpgid(0), signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if child.poll() is None:
            os.killpg(os.getpgid(0), signal.SIGKILL)  # the guard too: nothing is left
    finally:
        signal.signal(signal.SIGTERM, previous)
    return child.wait()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: guard.py KERNEL_PID COMMAND [ARGS...]", file=sys.stderr)
        return 2
    kernel = int(argv[0])
    try:
        child = subprocess.Popen(argv[1:])
    except OSError as error:
        print(f"cannot start {argv[1]}: {error}", file=sys.stderr)
        return 127

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(stop_group(child))

    signal.signal(signal.SIGTERM, on_term)
    while True:
        try:
            return child.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            if os.getppid() != kernel:
                return stop_group(child)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
