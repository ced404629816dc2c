"""Whether an endpoint answers, and which models it serves (``GET /v1/models``).

``%chat models`` asks every configured endpoint at once, all within ``TIMEOUT_S``, so a
server that is down or never answers costs 1.5 s at most and is said in one line, never a
traceback. A server on this machine is asked directly, never through a proxy.
The Messages API, llama-server, Ollama, vLLM and LM Studio all answer ``GET
/v1/models`` with ``{"data": [{"id": ...}, ...]}`` (llama-server adds each model's
``meta``), and so do the Chat Completions servers under their own base URL
(``Endpoint.models_url``: OpenAI's, Gemini's, Azure's ``/openai/models``); a server
without the route still answers (a 404), which is all "answering" means. Plain
``urllib``: one GET needs no client, and no SDK is imported for it.

Keys: an endpoint's key is read from the environment for the request and sent as both
``x-api-key`` and ``Authorization: Bearer`` (servers take one or the other; Azure's
``api-key`` too); it is never part of what a probe returns, and it never follows a
redirect to another host or from https to http (redirects.py: urllib would keep every
header on any redirect).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from ...errors import RedirectRefused
from ...i18n import _
from ..redirects import GuardedRedirects, guarded_opener
from .config import Endpoint

TIMEOUT_S = 1.5
"""How long ``%chat models`` waits for all its probes together (the docs promise two
seconds at most). A socket's timeout bounds each step (the connection to each address a
name resolves to, then each read), not a probe, so the probes are also given up on as a
whole when this has passed: one server that takes the connection and never answers
cost 2 s per step before, 3 s in all where a user measured it."""
LOOPBACK = ("localhost", "127.0.0.1", "::1")
ANTHROPIC_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_MOST_MODELS = 100


@dataclass(frozen=True)
class Served:
    """One model a server lists, and its context size where the server says it."""

    id: str
    window: int | None = None


@dataclass(frozen=True)
class Probe:
    """What asking one endpoint found."""

    answering: bool
    models: tuple[Served, ...] | None = None
    """None: the server lists no models (no such route, or not asked)."""
    problem: str | None = None
    """Why it is not answering, or why its list could not be read."""
    late: bool = False
    """No answer came within the time all probes are given (it may be busy, or a firewall
    may drop the connection): said beside the fix."""


def probe(
    models_url: str, key: str | None, timeout: float = TIMEOUT_S, *, azure: bool = False
) -> Probe:
    """Ask ``models_url`` (``.../v1/models``) for the models it serves; ``azure``: the key
    goes in Azure's ``api-key`` header too."""
    joiner = "&" if "?" in models_url else "?"
    url = f"{models_url}{joiner}limit={_MOST_MODELS}"
    headers = {"anthropic-version": API_VERSION, "accept": "application/json"}
    if key:
        headers["x-api-key"] = key
        headers["authorization"] = f"Bearer {key}"
        if azure:
            headers["api-key"] = key
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with _opener(url).open(request, timeout=timeout) as response:
            body = response.read()
    except RedirectRefused as refused:
        return Probe(True, problem=str(refused))
    except urllib.error.HTTPError as error:
        error.close()
        if error.code in (401, 403):
            return Probe(True, problem=_("it refused the key ({status})").format(status=error.code))
        return Probe(True, problem=_("it lists no models ({status})").format(status=error.code))
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError):
            return _late(timeout)
        return Probe(False, problem=str(reason).splitlines()[0] if str(reason) else None)
    return Probe(True, models=served_models(body))


def _opener(url: str) -> urllib.request.OpenerDirector:
    """An opener for ``url``, its redirects checked (a key never follows one off its
    host: ``redirects``): a server on this machine is asked directly, never through the
    proxy the environment names (which would take the question out to the network, and
    answer for a server that is not there)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in LOOPBACK or host.startswith("127."):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}), GuardedRedirects)
    return guarded_opener


def served_models(body: bytes) -> tuple[Served, ...] | None:
    """The models of a ``/v1/models`` answer (None if it is not such an answer)."""
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return None
    items = parsed.get("data") if isinstance(parsed, dict) else None
    if not isinstance(items, list):
        return None
    found = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            meta = item.get("meta")
            window = (
                (meta.get("n_ctx") or meta.get("n_ctx_train")) if isinstance(meta, dict) else None
            )
            found.append(Served(item["id"], window if isinstance(window, int) else None))
    return tuple(found)


def probe_all(
    endpoints: list[Endpoint], *, anthropic: bool, timeout: float = TIMEOUT_S
) -> tuple[Probe | None, dict[str, Probe]]:
    """Probe Anthropic's API (when ``anthropic``: its key is set) and every endpoint that
    can be asked (a hosted one only with its key), all at once."""
    asked = [e for e in endpoints if e.base_url and (e.key() or not e.key_required)]
    pool = ThreadPoolExecutor(max_workers=max(len(asked) + 1, 1), thread_name_prefix="probe")
    api = None
    if anthropic:
        base = (os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL).rstrip("/")
        key = os.environ.get("ANTHROPIC_API_KEY")
        api = pool.submit(probe, f"{base}/v1/models", key, timeout)
    futures = {
        e.name: pool.submit(
            probe, str(e.models_url()), e.key(), timeout, azure=e.api_version is not None
        )
        for e in asked
    }
    wait([*futures.values(), *([api] if api else [])], timeout=timeout)
    pool.shutdown(wait=False, cancel_futures=True)  # a probe still waiting is left to end
    return (_outcome(api, timeout) if api else None), {
        name: _outcome(future, timeout) for name, future in futures.items()
    }


def _outcome(future: Future[Probe], timeout: float) -> Probe:
    """What a probe found, or that it had no answer within ``timeout`` seconds."""
    if future.done():
        return future.result()
    return _late(timeout)


def _late(timeout: float) -> Probe:
    late = _("no answer within {seconds:g} s").format(seconds=timeout)
    return Probe(False, problem=late, late=True)
