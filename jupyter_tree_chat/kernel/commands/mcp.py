"""``%chat mcp``: which MCP servers this notebook has, how each is, and what it offers.

    %chat mcp            every server: its state (not started, running, failed with the
                         last lines of its stderr), where it is configured, and the tools of
                         those running, with their descriptions and what each may do:
                         read-only, not destructive or destructive, annotated so by its
                         server or by the MCP spec's default (destructive), and "allowed"
                         for a tool named in the server's allowed_tools
    %chat mcp NAME       start NAME if need be, and list its tools
    %chat mcp stop NAME  stop NAME (the next use starts it again); no NAME: all of them

The built-in ``notebook`` server (kernel/notebook_tools/) ends the listing: it needs no
configuration, and its line says whether its ``run`` is allowed.
Nothing here starts a server except ``%chat mcp NAME``. What a server says of itself
(descriptions, stderr) is printed as plain text.
"""

from __future__ import annotations

from IPython.core.error import UsageError

from ...i18n import _
from ...providers.mcp.config import MCP_JSON
from ...providers.mcp.servers import (
    DESTRUCTIVE,
    NOT_DESTRUCTIVE,
    READ_ONLY,
    ServerState,
    ServerTool,
)
from ..sessions import KernelSessions

USAGE = "mcp [NAME] | mcp stop [NAME]"
_DESCRIPTION_CHARS = 100


def mcp_command(sessions: KernelSessions, args: list[str]) -> None:
    """Run ``%chat mcp ARGS`` (see the module docstring)."""
    if args and args[0] == "stop":
        if len(args) > 2:
            raise UsageError(_("usage: %chat {usage}").format(usage=USAGE))
        _stop(sessions, args[1] if len(args) == 2 else None)
        return
    if len(args) > 1:
        raise UsageError(_("usage: %chat {usage}").format(usage=USAGE))
    configs = sessions.mcp_configs()
    if not configs.servers:
        print(
            _(
                'No MCP servers are configured. Put {{"mcpServers": {{NAME: {{"command": '
                '..., "args": [...]}}}}}} in {path}, or set TreeChat.mcp_servers.'
            ).format(path=sessions.notebook().parent / MCP_JSON)
        )
        for problem in configs.problems:
            print(_("problem: {problem}").format(problem=problem))
        _builtin(sessions)
        return
    if args:
        name = args[0]
        sessions.mcp.tools(name)  # starts it, or raises its one line
        states = [sessions.mcp.state(name)]
    else:
        states = sessions.mcp.states()
    for state in states:
        config = configs.get(state.name)
        where = f"{config.transport}: {config.describe()}  ({config.source})" if config else ""
        print(f"{state.name}  {_state_word(state)}  {where}".rstrip())
        for line in _details(state):
            print(f"    {line}")
    for problem in configs.problems:
        print(_("problem: {problem}").format(problem=problem))
    if not args:
        print(
            _(
                "`%chat mcp NAME` starts a server and lists its tools; a cell offers them "
                "with --tools NAME:* or NAME:TOOL."
            )
        )
        _builtin(sessions)


def _builtin(sessions: KernelSessions) -> None:
    """The built-in ``notebook`` server's line (kernel/notebook_tools/): always there."""
    if "notebook" not in sessions.tools.builtin:
        return
    allowed = (
        _("allowed in every cell (TreeChat.allow_run)")
        if sessions.config.allow_run
        else _("not allowed here; %%chat --allow-run or TreeChat.allow_run allows it")
    )
    print(
        _("notebook  built in: variables, describe, cells, run, insert (run: {allowed})").format(
            allowed=allowed
        )
    )


def _stop(sessions: KernelSessions, name: str | None) -> None:
    if name is None:
        sessions.mcp.stop_all()
        print(_("Every MCP server of this kernel is stopped."))
        return
    if sessions.mcp_configs().get(name) is None:
        raise UsageError(
            _("%chat mcp stop: no MCP server named {name}; `%chat mcp` lists them").format(
                name=name
            )
        )
    sessions.mcp.stop(name)
    print(_("MCP server {name} is stopped; its next use starts it again.").format(name=name))


def _state_word(state: ServerState) -> str:
    words = {
        "not started": _("not started"),
        "starting": _("starting"),
        "running": _("running"),
        "failed": _("failed"),
        "stopped": _("stopped"),
    }
    return words.get(state.state, state.state)


def _details(state: ServerState) -> list[str]:
    if state.state == "failed":
        return [state.reason]  # it ends with the last lines of the server's stderr
    if state.state != "running":
        return []
    if not state.tools:
        return [_("(no tools)")]
    width = max(len(t.name) for t in state.tools)
    notes = [safety_note(tool) for tool in state.tools]
    note_width = max(len(note) for note in notes)
    return [
        _tool_line(tool, width, note, note_width)
        for tool, note in zip(state.tools, notes, strict=True)
    ]


def safety_note(tool: ServerTool) -> str:
    """``destructive (by default), allowed``: what the tool may do, on whose word, and
    whether the user trusts it in ``allowed_tools``."""
    words = {READ_ONLY: _("read-only"), NOT_DESTRUCTIVE: _("not destructive")}
    word = words.get(tool.safety, _("destructive"))
    source = _("annotated") if tool.annotated else _("by default")
    note = f"{word} ({source})"
    if tool.safety == DESTRUCTIVE and tool.trusted:
        note = _("{note}, allowed").format(note=note)
    return note


def _tool_line(tool: ServerTool, width: int, note: str, note_width: int) -> str:
    description = " ".join(tool.description.split())
    if len(description) > _DESCRIPTION_CHARS:
        description = description[: _DESCRIPTION_CHARS - 1] + "…"
    return f"{tool.server}:{tool.name:<{width}}  {note:<{note_width}}  {description}".rstrip()
