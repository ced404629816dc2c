"""``GET jupyter-tree-chat/read?path=PATH``: a file as the viewer shows it, read-only;
``POST jupyter-tree-chat/export?path=PATH``: that file as one HTML page beside it.

The answer is JSON: ``format`` (``claude-code``, ``pi``, ``chatgpt``, ``open-webui``; or
``tree-chat`` / ``null`` for a file the viewer reads itself), and for another tool's file
``label`` (its name for people), ``data`` (the records, as the lines of a session file),
``problems`` (each with ``line`` or ``key``, ``message`` and ``text``, as ``check``
prints it) and ``summary`` (the line ``import`` would print). Reading and converting run
in a worker thread: a big session does not hold up the server.

The export answers ``{"path": PAGE, "bytes": N}``: the page (share/page.py, the same as
``jupyter tree-chat export FILE --format html``) written through the contents manager
as ``NAME.chat.html`` beside ``NAME.chat.jsonl`` (``x.html`` beside another tool's
``x.jsonl``), replacing an earlier export; the session file is only read.
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
from ..errors import ChatError
from ..history.store import parse_session
from ..i18n import _
from ..share.page import native_problems, page_html, page_path, source_problems


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


def page_for_viewer(name: str, data: bytes) -> str:
    """The page of a file's bytes, whoever wrote the file (pure: no server needed)."""
    kind = formats.detect(data)
    if kind in formats.FORMATS:
        imported = formats.read([formats.Source(name, data)], kind)
        result = formats.load(imported)
        return page_html(
            result,
            title=name,
            problems=source_problems(imported.problems),
            source_format=formats.LABELS[kind],
        )
    result = parse_session(data)
    return page_html(result, title=name, problems=native_problems(result))


async def _read_bytes(handler: APIHandler, path: str) -> bytes:
    model = await ensure_async(
        handler.contents_manager.get(path, content=True, type="file", format="base64")
    )
    return base64.b64decode(model["content"])


class ReadHandler(APIHandler):
    """Reads one file of the server's root for the viewer; writes nothing."""

    auth_resource = "contents"

    @web.authenticated
    @authorized
    async def get(self) -> None:
        path = self.get_query_argument("path", "").strip("/")
        if not path:
            raise web.HTTPError(400, _("give the file as ?path=PATH"))
        data = await _read_bytes(self, path)
        name = posixpath.basename(path)
        answer = await asyncio.get_running_loop().run_in_executor(None, read_for_viewer, name, data)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer, ensure_ascii=False))


class ExportHandler(APIHandler):
    """Writes one file of the server's root as an HTML page beside it."""

    auth_resource = "contents"

    @web.authenticated
    @authorized
    async def post(self) -> None:
        path = self.get_query_argument("path", "").strip("/")
        if not path:
            raise web.HTTPError(400, _("give the file as ?path=PATH"))
        data = await _read_bytes(self, path)
        name = posixpath.basename(path)
        loop = asyncio.get_running_loop()
        try:
            page = await loop.run_in_executor(None, page_for_viewer, name, data)
        except ChatError as error:
            raise web.HTTPError(400, reason=str(error)) from None
        target = page_path(path).as_posix()
        await ensure_async(
            self.contents_manager.save({"type": "file", "format": "text", "content": page}, target)
        )
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"path": target, "bytes": len(page.encode("utf-8"))}))
