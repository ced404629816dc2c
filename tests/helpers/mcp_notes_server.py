"""A stdio MCP server for the tests, built on the ``mcp`` SDK's own server, whose tools
are annotated each way the spec allows (and one not at all).

    python tests/mcp_notes_server.py FOLDER

keeps notes as lines of ``FOLDER/notes.txt``. Its tools:

- ``read_notes()``: ``readOnlyHint: true``;
- ``append_note(text)``: ``destructiveHint: false`` (it adds, never loses a line);
- ``erase_notes()``: ``destructiveHint: true``;
- ``write_note(text)``: no annotations (the SDK reports ``annotations=None``): by the
  spec's defaults, destructive. It replaces the file;
- ``hold(seconds)``: read-only; writes ``FOLDER/held`` as it starts, then waits: a test
  knows a call is under way by that file, not by a guess of time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("notes")
NOTES = Path(sys.argv[1] if len(sys.argv) > 1 else ".") / "notes.txt"


def _read() -> str:
    return NOTES.read_text(encoding="utf-8") if NOTES.exists() else ""


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_notes() -> str:
    """The notes, one a line."""
    return _read() or "(no notes)"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def append_note(text: str) -> str:
    """Add a note at the end."""
    NOTES.write_text(_read() + text + "\n", encoding="utf-8")
    return f"appended {text!r}"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def erase_notes() -> str:
    """Erase every note."""
    NOTES.write_text("", encoding="utf-8")
    return "erased"


@server.tool()
def write_note(text: str) -> str:
    """Replace the notes with one note."""
    NOTES.write_text(text + "\n", encoding="utf-8")
    return f"wrote {text!r}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def hold(seconds: float) -> str:
    """Wait, having said so in a file."""
    (NOTES.parent / "held").write_text("under way", encoding="utf-8")
    await anyio.sleep(seconds)
    return f"held {seconds:g} s"


if __name__ == "__main__":
    server.run("stdio")
