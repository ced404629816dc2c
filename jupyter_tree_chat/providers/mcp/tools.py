"""MCP servers' tools as the session's tools: specs in, ``tool_result`` blocks out.

``McpTools`` is the ``ToolSource`` (toolbox.py) over the kernel's ``McpServers``:

- ``resolve("git:*")`` starts ``git`` if it is not running and gives a ``ToolSpec`` per
  tool, named on the wire as names.py says (``git__git_log``);
- ``start(block)`` calls the tool the wire name stands for and turns its outcome into a
  ``tool_result`` block (results.py), always: a destructive tool that the cell did not
  allow, a server that crashed or was killed mid-call, a call past ``timeout`` and an
  MCP error each become an ``is_error`` result the model can read, the first three with
  a one-line notice for the cell. Nothing waits for a click.

A tool is gated (runs only with ``--allow-destructive``) unless its server annotates it
``readOnlyHint: true`` or ``destructiveHint: false``: the MCP spec's defaults make a tool
that says nothing destructive. A tool the user names in its server's ``allowed_tools``
runs ungated whatever the server says (the user's word over the server's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...errors import ToolError
from ...i18n import _
from ..base import ToolSpec
from ..tools.toolbox import PendingTool, ToolAnswer
from .names import WireNames, display_name, parse_selector
from .results import result_content
from .servers import CallOutcome, McpServers, ServerTool

DEFAULT_MAX_CHARS = 20_000


class McpTools:
    """The tools of the kernel's MCP servers, by ``server:tool`` and by wire name."""

    def __init__(
        self,
        servers: McpServers,
        taken: Callable[[str], bool] = lambda name: False,
        *,
        timeout: float | None = None,
        max_chars: int | None = DEFAULT_MAX_CHARS,
    ) -> None:
        self.servers = servers
        self.timeout = timeout
        """Seconds a call may take before it is cancelled (``TreeChat.tool_timeout``)."""
        self.max_chars = max_chars
        """Most characters of text in one result (``TreeChat.max_chars``)."""
        self._names = WireNames(taken)
        self._by_wire: dict[str, ServerTool] = {}
        #: specs by selector, kept while the server's listing is the same one
        self._chosen_for: dict[str, tuple[tuple[ServerTool, ...], list[ToolSpec]]] = {}

    def resolve(self, selector: str, *, start: bool = True) -> list[ToolSpec]:
        server, wanted = parse_selector(selector)
        if not start:
            running = self.servers.running_tools(server)
            return [] if running is None else self._chosen(server, wanted, running, quiet=True)
        return self._chosen(server, wanted, self.servers.tools(server))

    def _chosen(
        self, server: str, wanted: str, listed: tuple[ServerTool, ...], quiet: bool = False
    ) -> list[ToolSpec]:
        key = f"{server}:{wanted}"
        known = self._chosen_for.get(key)
        if known is not None and known[0] is listed:
            return known[1]
        specs = self._choose(server, wanted, listed, quiet)
        if specs:
            self._chosen_for[key] = (listed, specs)
        return specs

    def _choose(
        self, server: str, wanted: str, listed: tuple[ServerTool, ...], quiet: bool
    ) -> list[ToolSpec]:
        chosen = listed if wanted == "*" else tuple(t for t in listed if t.name == wanted)
        if not chosen and not quiet:
            have = ", ".join(t.name for t in listed) or _("none")
            raise ToolError(
                _("MCP server {server} has no tool named {tool!r} (its tools: {have})").format(
                    server=server, tool=wanted, have=have
                )
            )
        return [self._spec(tool) for tool in chosen]

    def owns(self, wire_name: str) -> bool:
        return wire_name in self._by_wire

    def display_name(self, wire_name: str) -> str | None:
        tool = self._by_wire.get(wire_name)
        return display_name(tool.server, tool.name) if tool is not None else None

    def start(self, block: Mapping[str, Any], *, allow_destructive: bool) -> PendingTool:
        tool_use_id = str(block.get("id", ""))
        tool = self._by_wire[str(block.get("name"))]
        shown = display_name(tool.server, tool.name)
        arguments = block.get("input")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            text = _("Bad arguments for {tool}: input must be a JSON object.").format(tool=shown)
            return PendingTool.ready(ToolAnswer(_error(tool_use_id, text)))
        if tool.gated and not allow_destructive:
            return PendingTool.ready(_refused(tool_use_id, tool, shown))
        timeout, max_chars = self.timeout, self.max_chars
        future = self.servers.call(tool.server, tool.name, dict(arguments), timeout)

        def finish(outcome: CallOutcome) -> ToolAnswer:
            return _answer(tool_use_id, shown, outcome, max_chars)

        return PendingTool(future, finish, wait=self.servers.wait, watch=self.servers.when_done)

    def _spec(self, tool: ServerTool) -> ToolSpec:
        wire = self._names.wire(tool.server, tool.name)
        self._by_wire[wire] = tool
        description = tool.description or _("The tool {tool} of the MCP server {server}.").format(
            tool=tool.name, server=tool.server
        )
        schema = tool.input_schema if tool.input_schema.get("type") == "object" else {}
        schema = schema or {"type": "object", "properties": {}}
        return ToolSpec(wire, description, schema, display_name(tool.server, tool.name))


def _answer(
    tool_use_id: str, shown: str, outcome: CallOutcome, max_chars: int | None
) -> ToolAnswer:
    if outcome.kind == "ok":
        content, is_error = result_content(outcome.result, max_chars)
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
        result["content"] = content
        if is_error:
            result["is_error"] = True
        return ToolAnswer(result)
    if outcome.kind == "timeout":
        text = _("{tool} did not answer within {seconds} s and was cancelled.").format(
            tool=shown, seconds=outcome.message
        )
        notice = _(
            "{tool} took longer than TreeChat.tool_timeout ({seconds} s) and was cancelled; "
            "the model was told. Allow more with %config TreeChat.tool_timeout = 120"
        ).format(tool=shown, seconds=outcome.message)
        return ToolAnswer(_error(tool_use_id, text), notice)
    if outcome.kind == "crashed":
        text = _("{tool} failed: its MCP server stopped before answering.").format(tool=shown)
        notice = _("{tool} failed: {why}; the server starts again on its next use").format(
            tool=shown, why=outcome.message
        )
        return ToolAnswer(_error(tool_use_id, text), notice)
    text = _("{tool} failed: {error}").format(tool=shown, error=outcome.message)
    return ToolAnswer(_error(tool_use_id, text))


def _refused(tool_use_id: str, tool: ServerTool, shown: str) -> ToolAnswer:
    if tool.annotated:
        text = _(
            "{tool} was not run: it is annotated destructive and the user has not allowed "
            "destructive tools here. Ask the user, or do without it."
        ).format(tool=shown)
        why = _("{tool} was not run: its server annotates it destructive.").format(tool=shown)
    else:
        text = _(
            "{tool} was not run: its server does not say it is read-only or not destructive, "
            "so it counts as destructive, and the user has not allowed destructive tools "
            "here. Ask the user, or do without it."
        ).format(tool=shown)
        why = _(
            "{tool} was not run: its server does not annotate it, and by the MCP spec's "
            "defaults a tool that does not say readOnlyHint: true or destructiveHint: false "
            "is destructive."
        ).format(tool=shown)
    notice = _(
        "{why} Allow it with %%chat --allow-destructive (this cell) or %config "
        'TreeChat.allow_destructive = True, or trust it with "allowed_tools": ["{name}"] in '
        "the entry of the server {server}"
    ).format(why=why, name=tool.name, server=tool.server)
    return ToolAnswer(_error(tool_use_id, text), notice)


def _error(tool_use_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": True}
