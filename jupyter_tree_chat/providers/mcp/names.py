"""A server's tool has two names: ``server:tool`` for people, and one the API accepts.

A cell names MCP tools ``git:git_log`` (or ``git:*``), as every MCP client does; the
Messages API takes tool names matching ``^[a-zA-Z0-9_-]{1,128}$``, so ``git:git_log`` cannot
go on the wire. ``WireNames`` gives each tool a wire name, ``git__git_log`` where that is
valid and free, else a cleaned name with a short hash of the full one, and maps it back.
A wire name depends only on the server and tool names (and on which names are taken), so
the same configuration gives the same names in every kernel, and a stored ``tool_use``
keeps meaning the same tool when its path is sent again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from ...errors import ToolError
from ...i18n import _

#: the names the Messages API accepts for a tool
API_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_HASHED_HEAD = 128 - 1 - 8  # room for "_" and eight hex digits


def display_name(server: str, tool: str) -> str:
    """``server:tool``: how a person names an MCP tool."""
    return f"{server}:{tool}"


def parse_selector(text: str) -> tuple[str, str]:
    """``"git:git_log"`` → ``("git", "git_log")``; ``"git:*"`` → ``("git", "*")``.

    ``ToolError`` (one line, with the fix) for a name without a server or a tool.
    """
    server, sep, tool = text.partition(":")
    if not sep or not server.strip() or not tool.strip():
        raise ToolError(
            _(
                "{name!r} is not an MCP tool name; write server:tool (e.g. git:git_log) "
                "or server:* for all of a server's tools"
            ).format(name=text)
        )
    return server.strip(), tool.strip()


class WireNames:
    """Wire names for ``(server, tool)`` pairs, unique among themselves and against the
    names ``taken`` says are used (the kernel's own tool functions)."""

    def __init__(self, taken: Callable[[str], bool] = lambda name: False) -> None:
        self._taken = taken
        self._by_pair: dict[tuple[str, str], str] = {}
        self._by_wire: dict[str, tuple[str, str]] = {}

    def wire(self, server: str, tool: str) -> str:
        """The wire name of ``server:tool`` (the same one every time it is asked)."""
        pair = (server, tool)
        known = self._by_pair.get(pair)
        if known is not None:
            return known
        plain = f"{server}{SEPARATOR}{tool}"
        name = plain
        if not API_TOOL_NAME.match(name) or self._used(name):
            digest = hashlib.sha1(display_name(server, tool).encode()).hexdigest()[:8]
            cleaned = _UNSAFE.sub("_", plain).strip("_") or "mcp"
            name = f"{cleaned[:_HASHED_HEAD]}_{digest}"
            extra = 0
            while self._used(name):  # a hash collision: vanishingly rare, still handled
                extra += 1
                name = f"{cleaned[: _HASHED_HEAD - len(str(extra))]}{extra}_{digest}"
        self._by_pair[pair] = name
        self._by_wire[name] = pair
        return name

    def pair(self, wire: str) -> tuple[str, str] | None:
        """The ``(server, tool)`` a wire name was given to, if any."""
        return self._by_wire.get(wire)

    def _used(self, name: str) -> bool:
        return name in self._by_wire or self._taken(name)
