"""Other tools' session files read into this project's records: pure, beside the store.

    read(sources, fmt="auto") → Imported   records of a *.chat.jsonl file, problems, counts
    detect(data)                           which tool wrote a file (or None)
    open_source(path)                      a file's bytes, read-only, as a Source
    load(imported)                         the tree, built by the store's own loader
    import_files(paths, out)               read, then write one new session file

One module per format (``claude_code``, ``pi``, ``chatgpt``, ``open_webui``) turns a
source into entries; ``builder`` applies the rules every format shares (one assistant
node per API message, tool results joined, roles repaired, orphans and cycles as
reported roots, the leaf and labels carried through). Sources are opened read-only and
never written; ``import_files`` writes only its new session file, through the store.

Only ``detect`` and the names of the formats load with the package: the readers
(``importing``) load on first use, so ``jupyter tree-chat path`` on this project's own
file does not wait for them.

``common`` and ``lines`` hold what the readers share (a source's bytes and lines), and
``exports`` the names of the formats. May import ``history`` (the loader, the store) and
the core below it; nothing of the session, the providers or Jupyter.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .detect import FORMATS, LABELS, NATIVE, detect

if TYPE_CHECKING:
    from .common import Source, SourceProblem
    from .importing import (
        GROUPS,
        Imported,
        default_output,
        gc_paused,
        import_files,
        load,
        open_source,
        read,
    )

_LAZY = {
    "Source": "common",
    "SourceProblem": "common",
    **dict.fromkeys(
        [
            "GROUPS",
            "Imported",
            "default_output",
            "gc_paused",
            "import_files",
            "load",
            "open_source",
            "read",
        ],
        "importing",
    ),
}


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "FORMATS",
    "GROUPS",
    "LABELS",
    "NATIVE",
    "Imported",
    "Source",
    "SourceProblem",
    "default_output",
    "detect",
    "gc_paused",
    "import_files",
    "load",
    "open_source",
    "read",
]
