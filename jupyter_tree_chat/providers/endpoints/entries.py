"""The user's ``TreeChat.endpoints`` entries read into ``Endpoint``s, on top of the presets.

An entry adds an endpoint or overrides a preset field by field (``{"local": {"supports":
{"images": True}}}`` changes one capability and keeps the rest). Every field is checked
here, once, so a bad entry is one line naming the endpoint and the fix, before any
request; config.py holds what an endpoint is and the presets themselves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...i18n import _
from ...measures.models import Price
from .capabilities import Supports
from .config import (
    ANTHROPIC,
    APIS,
    AZURE_API_VERSION,
    ENTRY_KEYS,
    MAX_TOKENS_FIELDS,
    OPENAI_CHAT,
    OPENAI_COMPATIBLE,
    PRESETS,
    Endpoint,
    KnownModel,
    local_supports,
)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def endpoint_table(config: Mapping[str, Any] | None = None) -> dict[str, Endpoint]:
    """The presets with ``TreeChat.endpoints``'s entries added or merged in, field by
    field; ``ValueError`` (one line, with the fix) for an entry that cannot be used."""
    table = dict(PRESETS)
    for name, entry in (config or {}).items():
        table[name] = configured(str(name), entry, table.get(name))
    return table


def _batch_price(name: str, value: Any) -> float | None:
    if value is None or (type(value) in (int, float) and 0 < value <= 1):
        return None if value is None else float(value)
    why = _("endpoint {name!r}: batch_price is a share of the price, in (0, 1], not {value!r}")
    raise ValueError(why.format(name=name, value=value))


def configured(name: str, entry: Any, base: Endpoint | None) -> Endpoint:
    """The endpoint ``name`` as ``entry`` describes it, on top of ``base`` if there is one."""
    if name == ANTHROPIC:
        raise ValueError(
            _(
                "'anthropic' is Anthropic's own API, set by ANTHROPIC_BASE_URL and "
                "ANTHROPIC_API_KEY; give your endpoint another name"
            )
        )
    if not _NAME.fullmatch(name):
        raise ValueError(
            _(
                "endpoint name {name!r} must be letters, digits, '.', '_' or '-' "
                "(no ':'), e.g. 'lab'"
            ).format(name=name)
        )
    if not isinstance(entry, Mapping):
        raise ValueError(
            _("endpoint {name!r} must be a dict like {example}").format(
                name=name, example="{'base_url': 'http://127.0.0.1:8081'}"
            )
        )
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise ValueError(
            _("unknown field {field!r} in endpoint {name!r}: use {fields}").format(
                field=unknown[0], name=name, fields=", ".join(ENTRY_KEYS)
            )
        )
    if "api" in entry and entry["api"] not in APIS:
        raise ValueError(
            _("endpoint {name!r}: api must be one of {apis}, not {value!r}").format(
                name=name, apis=", ".join(APIS), value=entry["api"]
            )
        )
    if base is None:
        if not isinstance(entry.get("base_url"), str):
            raise ValueError(
                _("endpoint {name!r} needs a base_url, e.g. {example}").format(
                    name=name, example="{'base_url': 'http://127.0.0.1:8081'}"
                )
            )
        if entry.get("api") == OPENAI_CHAT:  # what any compatible server takes
            base = replace(PRESETS[OPENAI_COMPATIBLE], name=name, kind="")
        else:
            base = Endpoint(name, None, key_required=False, supports=local_supports())
    changes: dict[str, Any] = {}
    if "base_url" in entry:
        changes["base_url"] = _base_url(name, entry["base_url"])
    if "key_env" in entry:
        changes["key_env"] = _key_env(name, entry["key_env"])
        if not changes["key_env"]:
            changes["key_required"] = False
        elif name not in PRESETS or PRESETS[name].base_url is None:
            # a key named for a server elsewhere must be set
            url = changes.get("base_url", base.base_url) or ""
            changes["key_required"] = not _on_this_machine(url)
    if "api" in entry:
        changes["api"] = entry["api"]
        if entry["api"] == OPENAI_CHAT != base.api:  # the wire has neither of these
            changes["supports"] = replace(base.supports, count_tokens=False, cache_control=False)
    if "supports" in entry:
        if not isinstance(entry["supports"], Mapping):
            raise ValueError(
                _("endpoint {name!r}: supports must be a dict like {example}").format(
                    name=name, example="{'images': True}"
                )
            )
        changes["supports"] = Supports.merged(
            changes.get("supports", base.supports), entry["supports"]
        )
    if "known" in entry:
        changes["known"] = {**base.known, **_known(name, entry["known"])}
    if "batch_price" in entry:
        changes["batch_price"] = _batch_price(name, entry["batch_price"])
    for flag in ("free", "batch"):
        if flag in entry:
            changes[flag] = bool(entry[flag])
    for text in ("start", "kind"):
        if text in entry:
            changes[text] = str(entry[text]) if entry[text] is not None else None
    changes.update(_azure(name, entry))
    if "max_tokens_field" in entry:
        if entry["max_tokens_field"] not in MAX_TOKENS_FIELDS:
            raise ValueError(
                _(
                    "endpoint {name!r}: max_tokens_field must be one of {names}, not {value!r}"
                ).format(
                    name=name, names=", ".join(MAX_TOKENS_FIELDS), value=entry["max_tokens_field"]
                )
            )
        changes["max_tokens_field"] = entry["max_tokens_field"]
    if "concurrency" in entry:  # a whole number from 1, or None: no limit of its own
        value = entry["concurrency"]
        if value is not None and (type(value) is not int or value < 1):
            raise ValueError(
                _(
                    "endpoint {name!r}: concurrency is how many requests it takes at once, "
                    "a whole number from 1 (its slots) or None, not {value!r}"
                ).format(name=name, value=value)
            )
        changes["concurrency"] = value
    return replace(base, **changes)


def _azure(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """``deployment`` and ``api_version`` as given: names, never a URL."""
    found: dict[str, Any] = {}
    for key in ("deployment", "api_version"):
        if key not in entry:
            continue
        value = entry[key]
        if value is not None and not (
            isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value)
        ):
            raise ValueError(
                _("endpoint {name!r}: {field} must be a name like {example}, not {value!r}").format(
                    name=name,
                    field=key,
                    example="'gpt-5-mini'" if key == "deployment" else repr(AZURE_API_VERSION),
                    value=value,
                )
            )
        found[key] = value
    return found


def _base_url(name: str, value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"https?://[^/\s]+", value):
        raise ValueError(
            _("endpoint {name!r}: base_url must be an http(s) URL, not {value!r}").format(
                name=name, value=value
            )
        )
    return value.rstrip("/")


def _on_this_machine(url: str) -> bool:
    host = re.sub(r"^https?://", "", url).split("/")[0].rsplit(":", 1)[0]
    return host in ("localhost", "127.0.0.1", "[::1]", "0.0.0.0")


def _key_env(name: str, value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    if names is None:
        return ()
    if isinstance(names, (list, tuple)) and all(
        isinstance(v, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v) for v in names
    ):
        return tuple(names)
    raise ValueError(
        _(
            "endpoint {name!r}: key_env names the environment variable holding the key "
            "(e.g. 'LAB_API_KEY'), never the key itself"
        ).format(name=name)
    )


def _known(name: str, value: Any) -> dict[str, KnownModel]:
    if not isinstance(value, Mapping):
        raise ValueError(
            _("endpoint {name!r}: known must be a dict like {example}").format(
                name=name, example="{'my-model': {'window': 32768}}"
            )
        )
    found = {}
    for model, facts in value.items():
        facts = facts or {}
        if not isinstance(facts, Mapping) or set(facts) - {"window", "price"}:
            raise ValueError(
                _("endpoint {name!r}: each known model takes window and price").format(name=name)
            )
        window = facts.get("window")
        if window is not None and (not isinstance(window, int) or window <= 0):
            raise ValueError(
                _("endpoint {name!r}: the window of {model!r} must be a number of tokens").format(
                    name=name, model=model
                )
            )
        price = facts.get("price")
        if price is not None and not isinstance(price, Price):
            price = Price.from_mapping(price)
        found[str(model)] = KnownModel(window, price)
    return found


# -- the model tables ------------------------------------------------------------------------
