"""``GET jupyter-tree-chat/read?path=PATH``: a file as the viewer shows it, read-only.

The answer is JSON: ``format`` (``claude-code``, ``pi``, ``chatgpt``, ``open-webui``; or
``tree-chat`` / ``null`` for a file the viewer reads itself), and for another tool's file
``label`` (its name for people), ``data`` (the records, as the lines of a session file),
``problems`` (each with ``line`` or ``key``, ``message`` and ``text``, as ``check``
prints it) and ``summary`` (the line ``import`` would print). Reading and converting run
in a worker thread: a big session does not hold up the server.
"""

from __future__ import annotations

import asyncio
import base64
import json
import posixpath
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import ensure_async
from tornado import web

from .. import formats


def read_for_viewer(name: str, data: bytes) -> dict[str, Any]:
    """What the viewer is sent for a file's bytes (pure: no server needed)."""
    kind = formats.detect(data)
    if kind not in formats.FORMATS:
        return {"format": kind}
    imported = formats.read([formats.Source(name, data)], kind)
    problems = [
        {"line": p.line, "key": p.key, "message": p.message, "text": str(p)}
        for p in imported.problems
    ]
    return {
        "format": kind,
        "label": formats.LABELS[kind],
        "data": imported.data().decode("utf-8"),
        "problems": problems,
        "summary": imported.summary(),
    }


class ReadHandler(APIHandler):
    """Reads one file of the server's root for the viewer; writes nothing."""

    auth_resource = "contents"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        path = self.get_query_argument("path", "").strip("/")
        if not path:
            raise web.HTTPError(400, "give the file as ?path=PATH")
        model = await ensure_async(
            self.contents_manager.get(path, content=True, type="file", format="base64")
        )
        data = base64.b64decode(model["content"])
        name = posixpath.basename(path)
        answer = await asyncio.get_running_loop().run_in_executor(None, read_for_viewer, name, data)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer, ensure_ascii=False))
