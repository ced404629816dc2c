"""docs/architecture.md names only files and folders that exist.

The page is the next contributor's map; a path on it that moved (``viewer/source.ts``
became ``components/filesource.ts``) sends them nowhere. Every name in backticks that
looks like a file (``history/loader.py``, ``treelist.ts``) or a folder (``providers/``)
must be found: a path from the repository, the package (or its ``providers/``), the front
end's sources or its components; a bare file name anywhere in those.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO

PAGES = [REPO / "docs" / "architecture.md"]
#: where a path on the page may start
ROOTS = [
    REPO,
    REPO / "jupyter_tree_chat",
    REPO / "jupyter_tree_chat" / "providers",
    REPO / "labextension" / "src",
    REPO / "labextension" / "src" / "components",
    REPO / "labextension",
    REPO / "docs",
]
#: build products named on the page (made by ``npm run build``, not kept in git)
BUILT = {"static/", "widget/static/widget.css", "jupyter_tree_chat/widget/static/widget.js",
         "jupyter_tree_chat/share/static/page.js", "share/static/page.css"}  # fmt: skip
#: names of a user's files the page gives as examples, not files of this repository
EXAMPLES = {".mcp.json", "analysis.chat.jsonl"}
CODE = re.compile(r"`([^`\s]+)`")
FILE = re.compile(r"^[\w./-]+\.(?:py|ts|css|md|json|mjs|jsonl|po)$|^[\w./-]+/$")


def named_paths(page: Path) -> set[str]:
    """Each backticked name on ``page`` that looks like a file or a folder."""
    found = set()
    for text in CODE.findall(page.read_text()):
        text = text.rstrip(",.;:")
        if FILE.match(text) and not text.startswith(("*", "http")) and "*" not in text:
            found.add(text)
    return found


def file_names() -> set[str]:
    names: set[str] = set()
    for root in ("jupyter_tree_chat", "labextension/src", "labextension/style", "tests", "docs",
                 "scripts", "benchmarks"):  # fmt: skip
        names.update(p.name for p in (REPO / root).rglob("*") if "node_modules" not in p.parts)
    return names


def exists(name: str, names: set[str]) -> bool:
    if name in BUILT or name in EXAMPLES:
        return True
    if "/" not in name.rstrip("/") and name.rstrip("/") in names:
        return True
    return any((root / name).exists() for root in ROOTS)


def test_every_path_the_architecture_page_names_exists():
    names = file_names()
    missing = {
        f"{page.name}: {name}"
        for page in PAGES
        for name in named_paths(page)
        if not exists(name, names)
    }
    assert sorted(missing) == []


def test_the_checker_sees_a_path_that_moved(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "`viewer/source.ts` and `components/filesource.ts`, `treelist.ts`, `nowhere.py`"
    )
    names = file_names()
    assert {n for n in named_paths(page) if not exists(n, names)} == {
        "viewer/source.ts",
        "nowhere.py",
    }
