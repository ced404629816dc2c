"""MCP servers as users already write them down: ``.mcp.json`` and ``TreeChat.mcp_servers``.

Claude Code, Claude Desktop and VS Code keep servers in one JSON shape, so a project
that already has a ``.mcp.json`` works here unchanged::

    {"mcpServers": {
        "git": {"command": "mcp-server-git", "args": ["--repository", "."]},
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
               "env": {"DEBUG": "${DEBUG:-0}"}, "cwd": "data"},
        "docs": {"type": "http", "url": "https://example.com/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}

A stdio server is a ``command`` with ``args``, ``env`` and ``cwd`` (relative to the
file's folder; default: the notebook's folder); a Streamable HTTP server is a ``url``
(``"type": "http"``) with ``headers``. ``${VAR}`` and ``${VAR:-default}`` are taken from
the kernel's environment when the server starts (``expanded``), never before and never
written anywhere: the configuration keeps the ``${VAR}`` text, which is all ``%chat mcp``
shows. ``"concurrent": true`` (this project's key; others ignore it) lets calls to one
server overlap; without it they run one at a time. ``"allowed_tools": ["write_note"]``
(the server's own tool names) are tools the user trusts: they run without
``--allow-destructive`` even where the server marks them destructive (tools.py).

Parsing is pure: it reads a mapping and reports each mistake as a one-line problem
(the file, the server, what is wrong and the fix), so one bad entry never hides the
others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import McpServerFailed
from ...i18n import _

#: the file beside the notebook that names its servers
MCP_JSON = ".mcp.json"
#: server names built into the kernel (kernel/notebook_tools/): no configured server may
#: take one, or ``notebook:run`` could mean code run by someone else's server
RESERVED_NAMES = frozenset({"notebook"})
#: what a server's name may not contain: the cell names tools ``server:tool``, lists
#: them with commas and selects all with ``*``
_BAD_NAME = re.compile(r"[:,*\s]")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_COMMON_KEYS = frozenset({"type", "concurrent", "description", "allowed_tools"})
_STDIO_KEYS = _COMMON_KEYS | {"command", "args", "env", "cwd"}
_HTTP_KEYS = _COMMON_KEYS | {"url", "headers"}


@dataclass(frozen=True)
class ServerConfig:
    """One configured server, as written (``${VAR}`` not yet filled in)."""

    name: str
    transport: str  # "stdio" or "http"
    source: str  # where it was configured, for messages
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    concurrent: bool = False
    allowed_tools: frozenset[str] = frozenset()  # tools the user trusts, by the server's names
    folder: str | None = None  # what a relative cwd is relative to
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def expanded(self, environ: Mapping[str, str]) -> ServerConfig:
        """This configuration with every ``${VAR}`` taken from ``environ``.

        ``McpServerFailed`` names the first variable that is not set (and has no
        ``:-default``); its value is never part of any message.
        """

        def fill(text: str) -> str:
            def one(match: re.Match[str]) -> str:
                name, default = match.group(1), match.group(2)
                if name in environ:
                    return environ[name]
                if default is not None:
                    return default
                raise McpServerFailed(
                    _(
                        "MCP server {server} ({source}) needs ${{{variable}}}, which is not set "
                        "in the kernel's environment; set it, or give a default as "
                        "${{{variable}:-value}}"
                    ).format(server=self.name, source=self.source, variable=name)
                )

            return _VARIABLE.sub(one, text)

        cwd = fill(self.cwd) if self.cwd is not None else None
        if cwd is not None and self.folder is not None and not Path(cwd).is_absolute():
            cwd = str(Path(self.folder) / cwd)
        return replace(
            self,
            command=fill(self.command),
            args=tuple(fill(a) for a in self.args),
            env=tuple((k, fill(v)) for k, v in self.env),
            cwd=cwd if cwd is not None else self.folder,
            url=fill(self.url),
            headers=tuple((k, fill(v)) for k, v in self.headers),
        )

    def describe(self) -> str:
        """What ``%chat mcp`` shows of it: the command line or URL, ``${VAR}`` unfilled,
        header names without their values."""
        if self.transport == "http":
            names = ", ".join(k for k, _value in self.headers)
            if names:
                return _("{url} (headers: {names})").format(url=self.url, names=names)
            return f"{self.url}"
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class ServerConfigs:
    """Every server configured for a notebook, and what could not be read."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def get(self, name: str) -> ServerConfig | None:
        return self.servers.get(name)

    def names(self) -> list[str]:
        return list(self.servers)

    def over(self, other: ServerConfigs) -> ServerConfigs:
        """These servers, and ``other``'s whose names these do not use."""
        return ServerConfigs({**other.servers, **self.servers}, (*other.problems, *self.problems))


def parse_servers(entries: Any, source: str, folder: str | None = None) -> ServerConfigs:
    """The servers of one ``{name: {...}}`` mapping, and a problem line per bad entry."""
    if not isinstance(entries, Mapping):
        return ServerConfigs(
            problems=(
                _("{source}: the servers must be a JSON object of name: settings").format(
                    source=source
                ),
            )
        )
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for name, entry in entries.items():
        try:
            servers[str(name)] = parse_server(str(name), entry, source, folder)
        except McpServerFailed as problem:
            problems.append(str(problem))
    return ServerConfigs(servers, tuple(problems))


def parse_server(name: str, entry: Any, source: str, folder: str | None = None) -> ServerConfig:
    """One server's settings; ``McpServerFailed`` (one line, with the fix) if wrong."""

    def wrong(what: str) -> McpServerFailed:
        return McpServerFailed(
            _("{source}: MCP server {server}: {what}").format(source=source, server=name, what=what)
        )

    if not name or _BAD_NAME.search(name):
        raise wrong(_("a server name may not be empty or hold ':', ',', '*' or spaces; rename it"))
    if name in RESERVED_NAMES:
        raise wrong(
            _(
                "{name!r} is the name of the built-in notebook tools; give this server another name"
            ).format(name=name)
        )
    if not isinstance(entry, Mapping):
        raise wrong(_("its settings must be a JSON object with a command or a url"))
    kind = entry.get("type")
    if kind is None:
        kind = "http" if "url" in entry and "command" not in entry else "stdio"
    if kind == "streamable-http":
        kind = "http"
    if kind == "sse":
        raise wrong(
            _("the old SSE transport is not supported; use its Streamable HTTP url (type http)")
        )
    if kind not in ("stdio", "http"):
        raise wrong(_("type {kind!r} is unknown; use stdio or http").format(kind=kind))
    known = _STDIO_KEYS if kind == "stdio" else _HTTP_KEYS
    extra = {k: v for k, v in entry.items() if k not in known}
    concurrent = entry.get("concurrent", False)
    if not isinstance(concurrent, bool):
        raise wrong(_("concurrent must be true or false"))
    allowed = entry.get("allowed_tools", [])
    if not isinstance(allowed, list) or not all(isinstance(t, str) for t in allowed):
        raise wrong(_('allowed_tools must be a list of the server\'s tool names: ["write_note"]'))
    if kind == "http":
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            raise wrong(_("a Streamable HTTP server needs a url"))
        return ServerConfig(
            name,
            "http",
            source,
            url=url.strip(),
            headers=_pairs(entry.get("headers"), "headers", wrong),
            concurrent=concurrent,
            allowed_tools=frozenset(allowed),
            folder=folder,
            extra=extra,
        )
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise wrong(_("a stdio server needs a command (or a url for Streamable HTTP)"))
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise wrong(_("args must be a list of strings"))
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise wrong(_("cwd must be a folder's path"))
    return ServerConfig(
        name,
        "stdio",
        source,
        command=command.strip(),
        args=tuple(str(a) for a in args),
        env=_pairs(entry.get("env"), "env", wrong),
        cwd=cwd,
        concurrent=concurrent,
        allowed_tools=frozenset(allowed),
        folder=folder,
        extra=extra,
    )


def _pairs(value: Any, key: str, wrong: Any) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise wrong(_("{key} must be a JSON object of names and strings").format(key=key))
    return tuple((str(k), v if isinstance(v, str) else json.dumps(v)) for k, v in value.items())


def read_mcp_json(path: Path) -> ServerConfigs:
    """The servers in a ``.mcp.json`` (none if there is no such file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ServerConfigs()
    except OSError as error:
        return ServerConfigs(
            problems=(_("{path}: cannot be read ({error})").format(path=path, error=error),)
        )
    try:
        document = json.loads(text)
    except ValueError as error:
        return ServerConfigs(
            problems=(
                _("{path} is not valid JSON ({error}); fix it to use its servers").format(
                    path=path, error=error
                ),
            )
        )
    if not isinstance(document, Mapping):
        document = {}
    entries = document.get("mcpServers", document.get("servers"))
    if entries is None:
        return ServerConfigs(
            problems=(
                _(
                    '{path} has no "mcpServers" object; write {{"mcpServers": {{name: ...}}}}'
                ).format(path=path),
            )
        )
    return parse_servers(entries, str(path), str(path.parent))
