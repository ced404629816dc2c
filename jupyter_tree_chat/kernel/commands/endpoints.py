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
import re
import textwrap
from dataclasses import dataclass, field
from html import escape

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

PLAIN_WIDTH = 79
"""The columns a plain report is wrapped to (a terminal's 80, less one)."""


@dataclass
class EndpointEntry:
    """One endpoint as ``%chat models`` shows it: a row of the table, a few lines of text."""

    name: str
    state: str  # "local at http://127.0.0.1:8080 (llama.cpp): answering, ..."
    models: list[str] = field(default_factory=list)  # "local:smollm2 · window 8k · free"
    features: str | None = None  # "supports tools, ...; lacks images, ..."


@dataclass
class ModelsReport:
    """What ``%chat models [ENDPOINT]`` found: each endpoint, then the notes under them."""

    entries: list[EndpointEntry]
    notes: list[str]

    def lines(self) -> list[str]:
        """The report as plain lines (each wrapped to a terminal: see ``plain``)."""
        lines = [_title()]
        for entry in self.entries:
            lines.append(entry.state)
            lines += [f"  {model}" for model in entry.models]
            if entry.features:
                lines.append(f"  {entry.features}")
        return lines + self.notes

    def plain(self, width: int = PLAIN_WIDTH) -> str:
        """The lines wrapped at spaces to ``width`` columns (a continuation indented), so a
        terminal never breaks a word ("b elow")."""
        wrapped = []
        for line in self.lines():
            indent = " " * (len(line) - len(line.lstrip(" ")))
            wrapped.append(
                textwrap.fill(
                    line,
                    width=width,
                    subsequent_indent=indent + "    ",
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
        return "\n".join(wrapped)

    def html(self) -> str:
        """The report as a table, one row an endpoint (what a notebook shows); every text
        escaped, `commands` as code."""
        head = [_("Endpoint"), _("State"), _("Models (name to use · window · price)"),
                _("Supports; lacks")]  # fmt: skip
        rows = ["<tr>" + "".join(f"<th>{escape(cell)}</th>" for cell in head) + "</tr>"]
        for entry in self.entries:
            models = "<br>".join(_cell(model) for model in entry.models)
            cells = [f"<code>{escape(entry.name)}</code>", _cell(entry.state), models,
                     _cell(entry.features or "")]  # fmt: skip
            rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
        notes = "".join(f"<p>{_cell(note)}</p>" for note in self.notes)
        return (
            f"<p>{escape(_title())}</p>"
            f'<table class="jtc-models"><thead>{rows[0]}</thead>'
            f"<tbody>{''.join(rows[1:])}</tbody></table>{notes}"
        )


def _title() -> str:
    return _("Models by endpoint (name one ENDPOINT:MODEL; a bare name is Anthropic's API):")


def _cell(text: str) -> str:
    """``text`` escaped for HTML, its `commands` as code."""
    return _CODE.sub(r"<code>\1</code>", escape(text))


_CODE = re.compile(r"`([^`]+)`")


def models_report(session: Session, config: TreeChat, only: str | None = None) -> ModelsReport:
    """What ``%chat models [ENDPOINT]`` shows. Only endpoints with a base URL are asked,
    each at once with a short timeout (``probe_all``); a hosted one without its key set,
    and one with no base URL (``openai-compatible`` until it is given one), are named in
    the notes, never asked."""
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
    entries = []
    if only in (None, ANTHROPIC):
        entries.append(_anthropic_entry(session, api, has_key))
    keyless, unset = [], []
    for endpoint in endpoints:
        result = found.get(endpoint.name)
        if not endpoint.base_url:
            unset.append(endpoint.name)
        elif result is None:
            keyless.append(f"{endpoint.name} ({' or '.join(endpoint.key_env)})")
        elif not result.answering:
            late = result.problem if result.late else None
            entries.append(EndpointEntry(endpoint.name, _with_problem(_down_line(endpoint), late)))
        else:
            entries.append(_endpoint_entry(session, endpoint, result))
    notes = []
    if keyless:
        notes.append(
            _(
                "Not asked, no key set: {endpoints}; set one in the environment Jupyter starts in."
            ).format(endpoints=", ".join(keyless))
        )
    if unset:
        notes.append(
            _(
                "Not asked, no base_url: {endpoints}; give it one in TreeChat.endpoints "
                "(e.g. {{'{name}': {{'base_url': 'http://host:port/v1'}}}})."
            ).format(endpoints=", ".join(unset), name=unset[-1])
        )
    return ModelsReport(entries, notes)


def _anthropic_entry(session: Session, api: Probe | None, has_key: bool) -> EndpointEntry:
    if not has_key:
        default = session.provider.default_model
        return EndpointEntry(
            ANTHROPIC,
            _(
                "anthropic: no ANTHROPIC_API_KEY set, so bare names go to the offline teaching "
                "model ({model}); named endpoints below need no key of Anthropic's"
            ).format(model=default),
        )
    base = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
    if api is None or not api.answering:
        line = _("anthropic at {url} is not answering: check the network or ANTHROPIC_BASE_URL")
        problem = api.problem if api is not None else None
        return EndpointEntry(ANTHROPIC, _with_problem(line.format(url=base), problem))
    entry = EndpointEntry(
        ANTHROPIC,
        _with_problem(
            _("anthropic at {url}: answering, ANTHROPIC_API_KEY set").format(url=base),
            api.problem,
        ),
    )
    names = [m.id for m in api.models or ()] or sorted(session.context_windows)
    claude = [n for n in names if ":" not in n and n != "offline-teacher"]
    default = session.provider.default_model
    for name in claude:
        mark = _(" (default)") if name == default else ""
        entry.models.append(f"{name}{mark} · {_facts(session, name, None)}")
    entry.features = _("supports everything the Messages API takes; batch at half price")
    return entry


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


def _endpoint_entry(session: Session, endpoint: Endpoint, result: Probe) -> EndpointEntry:
    where = endpoint.where() + (f" ({endpoint.kind})" if endpoint.kind else "")
    key_set = next((v for v in endpoint.key_env if os.environ.get(v)), None)
    if key_set:
        state = _("{where}: answering, {variable} set").format(where=where, variable=key_set)
    elif endpoint.key_env:
        state = _("{where}: answering, no key set (it takes any)").format(where=where)
    else:
        state = _("{where}: answering").format(where=where)
    entry = EndpointEntry(endpoint.name, _with_problem(state, result.problem))
    served: list[Served] = list(result.models or ())
    names = {m.id for m in served}
    served += [Served(name) for name in endpoint.known if name not in names]
    for model in served:
        name = endpoint.qualified(model.id)
        entry.models.append(f"{name} · {_facts(session, name, model.window)}")
    if not served:
        entry.models.append(
            _("(no model list: name the model the server runs, e.g. {example})").format(
                example=endpoint.qualified("MODEL")
            )
        )
    have, lack = _supports(session, endpoint)
    entry.features = _("supports {have}; lacks {lack}").format(
        have=", ".join(have) or "-", lack=", ".join(lack) or "-"
    )
    return entry


def _supports(session: Session, endpoint: Endpoint) -> tuple[list[str], list[str]]:
    """What the endpoint supports now (less what it turned out to lack this session)."""
    supports_of = getattr(session.provider, "supports", None)
    supports = supports_of(endpoint.qualified("x")) if callable(supports_of) else endpoint.supports
    names = (*FEATURES, *CHAT_FEATURES) if endpoint.api == OPENAI_CHAT else FEATURES
    have, lack = supports.features(names)
    have.append(_("temperature {range}").format(range=supports.temperature_range()))
    if endpoint.batch:  # its vendor's batch API (--batch), at its batch price
        share = endpoint.batch_price
        have.append(_("batch at half price") if share == 0.5 else _("batch"))
    else:
        lack.append(_("batch"))
    return have, lack


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
    if endpoint is None:  # no key: the offline model answers whatever was asked for
        asked = route.asked
        return (
            route.name
            if asked is None
            else _("{model} (asked for {asked})").format(model=route.name, asked=asked)
        )
    kind = f"{endpoint.kind} " if endpoint.kind else ""
    return _("{model} ({kind}at {url})").format(model=route.name, kind=kind, url=endpoint.base_url)
