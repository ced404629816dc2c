"""The Jupyter server extension: other tools' session files read for the JupyterLab viewer.

The viewer reads ``*.chat.jsonl`` files itself. For a Claude Code, pi, ChatGPT or Open
WebUI file it asks the server: ``GET {base_url}jupyter-tree-chat/read?path=PATH`` answers
with the file read by ``jupyter_tree_chat.formats`` (the one implementation of the
readers) as this project's records, the format it was read as, and the source's problems.
``POST {base_url}jupyter-tree-chat/export?path=PATH`` writes the file as one HTML page
beside it (the viewer's "Export HTML").
The file is read through the server's contents manager, so only files the user may read
under the server's root, and never written. Enabled on install by
``etc/jupyter/jupyter_server_config.d/jupyter_tree_chat.json``.

``handlers`` holds the two routes. May import ``formats``, ``share`` and the core below
them, and ``jupyter_server``; never another view.
"""

from __future__ import annotations

from typing import Any

from .handlers import ExportHandler, ReadHandler

ROUTE = "jupyter-tree-chat/read"
EXPORT_ROUTE = "jupyter-tree-chat/export"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_tree_chat.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.utils import url_path_join

    web_app = serverapp.web_app
    base = web_app.settings["base_url"]
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, ROUTE), ReadHandler),
            (url_path_join(base, EXPORT_ROUTE), ExportHandler),
        ],
    )
