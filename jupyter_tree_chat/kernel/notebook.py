"""What the kernel knows about the notebook it serves: its path and the running cell's id.

The notebook-native rule needs both, and neither is part of IPython's own API: the
path arrives as ``__session__`` (set by ipykernel from ``JPY_SESSION_NAME``, which
jupyter_server puts in the kernel's environment) or as ``__vsc_ipynb_file__`` (VS Code);
the cell id arrives in the execute request's metadata (``cellId``: an 8-hex nbformat id
from JupyterLab, a ``vscode-notebook-cell:`` URI from VS Code). This module reads them,
tolerates their absence, and keeps that knowledge out of the magic.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: the stem of the session file used when the kernel is given no notebook path
FALLBACK_STEM = "jupyter-tree-chat"


def notebook_path(
    user_ns: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> Path | None:
    """The notebook this kernel runs, absolute, or ``None`` when nothing says.

    ``__session__`` may be a path relative to the kernel's working directory (older
    servers sent the URL path); it is resolved against the current directory.
    """
    environ = os.environ if environ is None else environ
    for candidate in (
        user_ns.get("__vsc_ipynb_file__"),
        user_ns.get("__session__"),
        environ.get("JPY_SESSION_NAME"),
    ):
        if isinstance(candidate, str | os.PathLike) and str(candidate).strip():
            path = Path(str(candidate)).expanduser()
            if not path.is_absolute():
                path = Path.cwd() / path
            return path  # a .ipynb, or a console's name: either is a fine place
    return None


def fallback_notebook(cwd: Path | None = None) -> Path:
    """Where sessions go in a kernel with no notebook: ``./jupyter-tree-chat.chat.jsonl``."""
    return (cwd or Path.cwd()) / f"{FALLBACK_STEM}.ipynb"


def cell_id_from_metadata(metadata: Mapping[str, Any] | None) -> str | None:
    """The cell id in an execute request's metadata, or ``None``.

    JupyterLab sends the nbformat id (``"a1b2c3d4"``); VS Code sends a URI such as
    ``vscode-notebook-cell:/path/nb.ipynb#W1sZmlsZQ%3D%3D``, whose fragment names the
    cell; it is kept whole, since only equality matters.
    """
    if not metadata:
        return None
    value = metadata.get("cellId") or metadata.get("cell_id")
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def current_cell_id(shell: Any) -> str | None:
    """The id of the cell being executed, from the kernel's current request, if any."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent()
    except Exception:  # an old ipykernel, or no request in flight
        parent = getattr(kernel, "_parent_header", None)
    if not isinstance(parent, Mapping):
        return None
    metadata = parent.get("metadata")
    return cell_id_from_metadata(metadata if isinstance(metadata, Mapping) else None)
