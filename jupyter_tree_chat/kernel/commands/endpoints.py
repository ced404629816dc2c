"""``%chat models``: every configured endpoint, whether it answers, its models, what it takes.

Connecting a local or non-default model is the most common setup complaint of notebook
chat tools; this command is where a user sees, in one place, what each name would reach.
Every endpoint is asked at once (``providers.probe``, a short timeout each): one that is
down is one line saying how to start it, a hosted one without its key set is named in
the last line with the variable to set (and not asked), and one that answers lists its
models (``GET /v1/models``, or the ones its preset knows) as the name to use, with the
window and price the session measures them with, then what the endpoint supports and
lacks. Keys are never shown: only whether the variable is set.
"""

from __future__ import annotations

import os

from IPython.core.error import UsageError

from ...conversation.session import Session
from ...i18n import _
from ...measures.models import Price, by_model
from ...measures.usage import window_label
from ...providers.base import route_of
from ...providers.endpoints.capabilities import CHAT_FEATURES, FEATURES
from ...providers.endpoints.config import ANTHROPIC, OPENAI_CHAT, Endpoint
from ...providers.endpoints.probe import Probe, Served, probe_all
from ..config import TreeChat


def models_lines(session: Session, config: TreeChat, only: str | None = None) -> list[str]:
    """What ``%chat models [ENDPOINT]`` prints, line by line."""
    table = config.endpoint_table()
    if only is not None and only not in table and only != ANTHROPIC:
        raise UsageError(
            _("%chat models: no endpoint named {name!r}; known: {names}").format(
                name=only, names=", ".join([ANTHROPIC, *table])
            )
        )
    endpoints = [e for e in table.values() if only in (None, e.name)]
    has_key = bool(os.environ.get("ANTHROPIC_API_KEY"))
    api, found = probe_all(endpoints, anthropic=has_key and only in (None, ANTHROPIC))
    lines = [_("Models by endpoint (name one ENDPOINT:MODEL; a bare name is Anthropic's API):")]
    if only in (None, ANTHROPIC):
        lines += _anthropic_lines(session, api, has_key)
    keyless = []
    for endpoint in endpoints:
        result = found.get(endpoint.name)
        if result is None:
            keyless.append(f"{endpoint.name} ({' or '.join(endpoint.key_env)})")
        elif not result.answering:
            lines.append(_down_line(endpoint))
        else:
            lines += _endpoint_lines(session, endpoint, result)
    if keyless:
        lines.append(
            _(
                "Not asked, no key set: {endpoints}; set one in the environment Jupyter starts in."
            ).format(endpoints=", ".join(keyless))
        )
    return lines


def _anthropic_lines(session: Session, api: Probe | None, has_key: bool) -> list[str]:
    if not has_key:
        default = session.provider.default_model
        return [
            _(
                "anthropic: no ANTHROPIC_API_KEY set, so bare names go to the offline teaching "
                "model ({model}); named endpoints below need no key of Anthropic's"
            ).format(model=default)
        ]
    base = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
    if api is None or not api.answering:
        line = _("anthropic at {url} is not answering: check the network or ANTHROPIC_BASE_URL")
        return [_with_problem(line.format(url=base), api.problem if api is not None else None)]
    lines = [
        _with_problem(
            _("anthropic at {url}: answering, ANTHROPIC_API_KEY set").format(url=base),
            api.problem,
        )
    ]
    names = [m.id for m in api.models or ()] or sorted(session.context_windows)
    claude = [n for n in names if ":" not in n and n != "offline-teacher"]
    default = session.provider.default_model
    for name in claude:
        mark = _(" (default)") if name == default else ""
        lines.append(f"  {name}{mark} · {_facts(session, name, None)}")
    return lines


def _with_problem(line: str, problem: str | None) -> str:
    """``line`` with what went wrong in its answer, if anything did."""
    return _("{line} ({problem})").format(line=line, problem=problem) if problem else line


def _down_line(endpoint: Endpoint) -> str:
    if endpoint.start:
        return _("{where} is not answering: start it with `{command}`").format(
            where=endpoint.where(), command=endpoint.start
        )
    return _("{where} is not answering: check that it runs and its base_url").format(
        where=endpoint.where()
    )


def _endpoint_lines(session: Session, endpoint: Endpoint, result: Probe) -> list[str]:
    where = endpoint.where() + (f" ({endpoint.kind})" if endpoint.kind else "")
    key_set = next((v for v in endpoint.key_env if os.environ.get(v)), None)
    if key_set:
        state = _("{where}: answering, {variable} set").format(where=where, variable=key_set)
    elif endpoint.key_env:
        state = _("{where}: answering, no key set (it takes any)").format(where=where)
    else:
        state = _("{where}: answering").format(where=where)
    lines = [_with_problem(state, result.problem)]
    served: list[Served] = list(result.models or ())
    names = {m.id for m in served}
    served += [Served(name) for name in endpoint.known if name not in names]
    for model in served:
        name = endpoint.qualified(model.id)
        lines.append(f"  {name} · {_facts(session, name, model.window)}")
    if not served:
        lines.append(
            _("  (no model list: name the model the server runs, e.g. {example})").format(
                example=endpoint.qualified("MODEL")
            )
        )
    have, lack = _supports(session, endpoint)
    lines.append(
        _("  supports {have}; lacks {lack}").format(
            have=", ".join(have) or "-", lack=", ".join(lack) or "-"
        )
    )
    return lines


def _supports(session: Session, endpoint: Endpoint) -> tuple[list[str], list[str]]:
    """What the endpoint supports now (less what it turned out to lack this session)."""
    supports_of = getattr(session.provider, "supports", None)
    supports = supports_of(endpoint.qualified("x")) if callable(supports_of) else endpoint.supports
    names = (*FEATURES, *CHAT_FEATURES) if endpoint.api == OPENAI_CHAT else FEATURES
    have, lack = supports.features(names)
    return [*have, _("temperature {range}").format(range=supports.temperature_range())], lack


def _facts(session: Session, name: str, served_window: int | None) -> str:
    window = by_model(session.context_windows, name) or served_window
    price = by_model(session.prices, name)
    parts = [
        _("window {size}").format(size=window_label(window))
        if window
        else _("window unknown (TreeChat.context_windows)")
    ]
    parts.append(_price(price))
    return " · ".join(parts)


def _price(price: Price | None) -> str:
    if price is None:
        return _("tokens only (no price known)")
    if price.input == price.output == 0:
        return _("free")
    return _("${input:g} in, ${output:g} out per million tokens").format(
        input=price.input, output=price.output
    )


def describe_model(session: Session, model: str) -> str:
    """``local:smollm2 (llama.cpp at http://127.0.0.1:8080)``: where a model goes."""
    route = route_of(session.provider, model)
    endpoints = getattr(session.provider, "endpoints", {})
    endpoint = endpoints.get(route.endpoint) if route.endpoint else None
    if endpoint is None:
        return route.name
    kind = f"{endpoint.kind} " if endpoint.kind else ""
    return _("{model} ({kind}at {url})").format(model=route.name, kind=kind, url=endpoint.base_url)
