"""``jupyter tree-chat serve-local``: a real model on this machine, with no key at all.

It starts llama.cpp's ``llama-server`` on 127.0.0.1 (port 8080, the ``local`` endpoint's
address) with SmolLM2-135M-Instruct, or any GGUF file given with ``--model-file``,
after finding or building the server and fetching the model (local_model.py), and prints
a line of progress while it prepares and one line when it is ready. It stays in the
foreground: Ctrl-C (or SIGTERM, or closing the terminal) stops the server in order and
leaves no process behind. ``--prepare`` only builds and fetches, for setup scripts.

The server answers the Messages API (``/v1/messages``, ``/v1/messages/count_tokens``) and
OpenAI's Chat Completions (``/v1/chat/completions``), to anyone who can reach its address:
so it listens on loopback only, unless ``--allow-remote`` says otherwise.
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from types import FrameType

from ..i18n import _
from . import local_model
from .llama_process import (
    DEFAULT_CONTEXT,
    DEFAULT_PARALLEL,
    LlamaServer,
    is_loopback,
    port_is_free,
    start_server,
    url_of,
)
from .reading import CliError

#: the address of the built-in ``local`` endpoint (llama.cpp's own default port)
LOCAL_HOST = "127.0.0.1"
LOCAL_PORT = 8080
LOCAL_ENDPOINT = "local"


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``serve-local`` command and its options, under the CLI's ``commands``."""
    serve = commands.add_parser(
        "serve-local",
        help=_("run a small real model on this machine (llama.cpp's llama-server; no key)"),
        description=_(
            "Start llama.cpp's llama-server with SmolLM2-135M-Instruct (or any GGUF file), "
            "building the server and fetching the model on first use; Ctrl-C stops it. "
            "Options after -- go to llama-server as they are."
        ),
    )
    option = serve.add_argument
    option("--port", type=int, default=LOCAL_PORT, help=_("default: %(default)s"))
    option("--host", default=LOCAL_HOST, help=_("a loopback address (default: %(default)s)"))
    option(
        "--allow-remote",
        action="store_true",
        help=_("let --host be an address other machines reach (the server has no key)"),
    )
    option("--model-file", metavar="FILE", help=_("any GGUF model file (default: SmolLM2-135M)"))
    option(
        "--alias",
        metavar="NAME",
        help=_(
            "the model's name in requests (default: {alias}, or the file's name without .gguf)"
        ).format(alias=local_model.MODEL_ALIAS),
    )
    option(
        "--ctx-size",
        type=int,
        default=DEFAULT_CONTEXT,
        metavar="N",
        help=_("tokens of context, shared by the slots (default: %(default)s)"),
    )
    option(
        "--parallel",
        type=int,
        default=DEFAULT_PARALLEL,
        metavar="N",
        help=_("requests answered at once (default: %(default)s)"),
    )
    option("--log", metavar="FILE", help=_("the server's log (default: in the cache folder)"))
    option(
        "--prepare",
        action="store_true",
        help=_("only find or build the server and fetch the model, then exit"),
    )
    option("llama_args", nargs="*", metavar="-- LLAMA_ARGS", help=argparse.SUPPRESS)


def _say(line: str) -> None:
    print(line, flush=True)


def _check_address(args: argparse.Namespace) -> None:
    if not 0 < args.port < 65536:
        raise CliError(_("--port {port} is not a port (1 to 65535)").format(port=args.port))
    if not is_loopback(args.host) and not args.allow_remote:
        raise CliError(
            _(
                "--host {host} would let other machines use this server, which has no key: "
                "give --allow-remote too if that is what you want"
            ).format(host=args.host)
        )
    if not port_is_free(args.host, args.port):
        raise CliError(
            _(
                "port {port} on {host} is in use (a server already running?): stop it, "
                "or choose another port with --port"
            ).format(port=args.port, host=args.host)
        )


def _ready_line(url: str, model: str) -> str:
    if url == url_of(LOCAL_HOST, LOCAL_PORT):
        return _(
            "{endpoint} at {url} is ready (model {model}): ask it with "
            "%%chat --model {endpoint}:{model}; Ctrl-C stops it"
        ).format(endpoint=LOCAL_ENDPOINT, url=url, model=model)
    config = f'%config TreeChat.endpoints = {{"{LOCAL_ENDPOINT}": {{"base_url": "{url}"}}}}'
    return _(
        "llama-server at {url} is ready (model {model}): ask it with "
        "%%chat --model {endpoint}:{model} after {config}; Ctrl-C stops it"
    ).format(endpoint=LOCAL_ENDPOINT, url=url, model=model, config=config)


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP stop the server as Ctrl-C does."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), interrupt)


def run(args: argparse.Namespace) -> int:
    """Prepare, start, announce and keep the server; 0 once Ctrl-C has stopped it."""
    _stop_on_signals()
    try:
        model_file = None
        if args.model_file:
            model_file = local_model.check_gguf(Path(args.model_file).expanduser())
        if not args.prepare:
            _check_address(args)
        try:
            binary, fetched = local_model.prepare(_say, model=model_file is None)
        except KeyboardInterrupt:
            raise CliError(_("stopped before the server was ready")) from None
        model = model_file or fetched
        assert model is not None
        if args.prepare:
            ready = _("Ready: llama-server {binary}, model {model}")
            _say(ready.format(binary=binary, model=model))
            return 0
        return _serve(args, binary, model)
    except local_model.LocalModelError as error:
        raise CliError(str(error)) from None


def _serve(args: argparse.Namespace, binary: Path, model: Path) -> int:
    alias = args.alias or (
        local_model.MODEL_ALIAS if args.model_file is None else model.name.removesuffix(".gguf")
    )
    log = (
        Path(args.log)
        if args.log
        else local_model.cache_root() / "logs" / (f"serve-local-{args.port}.log")
    )
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"")  # this run's log only
    url = url_of(args.host, args.port)
    _say(
        _("Starting llama-server ({binary}) with {model} at {url}…").format(
            binary=binary, model=model.name, url=url
        )
    )
    server = start_server(
        binary,
        model,
        host=args.host,
        port=args.port,
        alias=alias,
        log_path=log,
        context=args.ctx_size,
        parallel=args.parallel,
        extra=args.llama_args,
    )
    try:
        server.wait_ready()
        _say(_ready_line(url, alias))
        status = server.process.wait()
        raise CliError(
            _("llama-server stopped by itself ({reason}); its log: {log}").format(
                reason=server.failure() if status else _("exit status 0"), log=log
            )
        )
    except KeyboardInterrupt:
        _say(_("Stopping llama-server…"))
        _stop(server)
        _say(_("Stopped."))
        return 0
    finally:
        _stop(server)


def _stop(server: LlamaServer) -> None:
    """Stop the server; a second Ctrl-C while it shuts down kills it at once."""
    try:
        server.stop()
    except KeyboardInterrupt:
        server.kill()
