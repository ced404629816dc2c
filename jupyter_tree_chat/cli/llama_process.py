"""One ``llama-server`` process: its command line, when it is ready, how it stops.

``serve-local`` and the tests' fixtures both start the server here, so the command line
the tests exercise is the one a user runs. The child gets its own process group (a
Ctrl-C reaches ``serve-local`` alone, which then stops the server in order) and, on
Linux, the parent-death signal: a ``serve-local`` or a test run that is killed outright
takes its server with it instead of leaving it holding the port.

Readiness is ``GET /health`` answering 200 (503 while the model loads); a server that
exits first is reported with the error line of its own log. Requests go through
``http.client``, never a proxy from the environment.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..i18n import _
from .local_model import LocalModelError

#: ``--ctx-size`` and ``--parallel`` when nothing else is asked for: four slots sharing
#: one KV pool (``--kv-unified``), so a fan-out of three does not queue and any one
#: conversation may use the whole context
DEFAULT_CONTEXT = 8192
DEFAULT_PARALLEL = 4


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_of(host: str, port: int) -> str:
    """``http://host:port`` (an IPv6 address in brackets)."""
    bare = host.strip("[]")
    return f"http://[{bare}]:{port}" if ":" in bare else f"http://{bare}:{port}"


def port_is_free(host: str, port: int) -> bool:
    """Whether a server could listen on ``host:port`` now (a port in TIME_WAIT is free)."""
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((bare, port))
        except OSError as error:  # another failure (no such address) is llama-server's to say
            return error.errno != errno.EADDRINUSE
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, chosen by the system."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def server_command(
    binary: Path | str,
    model: Path | str,
    *,
    host: str,
    port: int,
    alias: str,
    context: int = DEFAULT_CONTEXT,
    parallel: int = DEFAULT_PARALLEL,
    webui: bool = True,
    prompts_dir: Path | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The ``llama-server`` command line: ``--jinja`` (tools need it), ``--alias`` (or the
    server reports the file's path as the model's name), slots sharing one KV pool;
    ``prompts_dir`` makes it write every prompt it evaluates there, one file each."""
    command = [
        str(binary),
        "--model", str(model),
        "--host", host.strip("[]"),
        "--port", str(port),
        "--alias", alias,
        "--ctx-size", str(context),
        "--parallel", str(parallel),
        "--kv-unified",
        "--jinja",
        "--log-colors", "off",
    ]  # fmt: skip
    if not webui:
        command.append("--no-webui")
    if prompts_dir is not None:
        command += ["--log-prompts-dir", str(prompts_dir)]
    return command + list(extra)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """Linux: have the kernel send SIGTERM to this child when its parent dies."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class LlamaServer:
    """A started ``llama-server``: where it answers, under which model name, its log.

    ``base_url`` (``http://127.0.0.1:PORT``, what a client's ``base_url`` takes), ``model``
    (the alias it reports), ``log_path`` (everything it printed), ``process``.
    ``wait_ready()`` blocks until it answers; ``stop()`` ends it in order (SIGTERM, then
    SIGKILL after a grace period); ``kill()`` ends it at once (SIGKILL), as a crash would.
    """

    def __init__(self, command: Sequence[str], *, base_url: str, model: str, log_path: Path):
        self.command = list(command)
        self.base_url = base_url
        self.model = model
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def running(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        """What the server has printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def health(self) -> int | None:
        """The status of ``GET /health`` (200 ready, 503 loading), None if unreachable."""
        import http.client  # here: every CLI command imports this module, few need HTTP

        host, _sep, port = self.base_url.removeprefix("http://").rpartition(":")
        connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=2)
        try:
            connection.request("GET", "/health")
            return connection.getresponse().status
        except OSError:
            return None
        finally:
            connection.close()

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Return once the model is loaded and the server answers; a one-line
        LocalModelError if it exits first or ``timeout`` seconds pass."""
        deadline = time.monotonic() + timeout
        while self.health() != 200:
            if not self.running():
                raise LocalModelError(
                    _("llama-server stopped before it was ready: {reason} (its log: {log})").format(
                        reason=self.failure(), log=self.log_path
                    )
                )
            if time.monotonic() > deadline:
                self.stop()
                raise LocalModelError(
                    _("llama-server was not ready after {seconds} s (its log: {log})").format(
                        seconds=int(timeout), log=self.log_path
                    )
                )
            time.sleep(0.05)

    def failure(self) -> str:
        """Why the server stopped, from its log: the first error line (llama.cpp marks
        them `` E ``), else the last line, else its exit status."""
        lines = [line.strip() for line in self.log_text().splitlines() if line.strip()]
        marked = [line.split(" E ", 1)[1] for line in lines if " E " in line]
        if marked:  # "srv         start: couldn't bind HTTP server socket, ..."
            return marked[0].split(": ", 1)[-1].strip()
        return lines[-1] if lines else _("exit status {status}").format(status=self.process.poll())

    def stop(self, grace: float = 10.0) -> int:
        """End the server in order (SIGTERM; SIGKILL after ``grace`` s); its exit status."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
                self.process.terminate()
            try:
                return self.process.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        return self.kill()

    def kill(self) -> int:
        """End the server at once (SIGKILL), as a crash would; its exit status."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        return self.process.wait()

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    binary: Path | str,
    model: Path | str,
    *,
    host: str = "127.0.0.1",
    port: int,
    alias: str,
    log_path: Path,
    context: int = DEFAULT_CONTEXT,
    parallel: int = DEFAULT_PARALLEL,
    webui: bool = True,
    prompts_dir: Path | None = None,
    extra: Sequence[str] = (),
) -> LlamaServer:
    """Start ``llama-server`` (the options as ``server_command`` takes them), its output
    appended to ``log_path``; returns at once: call ``wait_ready()`` next."""
    command = server_command(
        binary,
        model,
        host=host,
        port=port,
        alias=alias,
        context=context,
        parallel=parallel,
        webui=webui,
        prompts_dir=prompts_dir,
        extra=extra,
    )
    return LlamaServer(command, base_url=url_of(host, port), model=alias, log_path=log_path)


__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_PARALLEL",
    "LlamaServer",
    "free_port",
    "is_loopback",
    "port_is_free",
    "server_command",
    "start_server",
    "url_of",
]
