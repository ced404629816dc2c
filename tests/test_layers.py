"""The layers of DESIGN.md import in one direction: tree ← store ← providers ← session ← views."""

from __future__ import annotations

import ast
from pathlib import Path

import jupyter_tree_chat

PACKAGE = Path(jupyter_tree_chat.__file__).parent

LAYER = {"errors": 0, "tree": 1, "store": 2, "providers": 3, "cellrule": 4, "session": 4}
VIEWS = 5  # everything else: the magic, the widget, the CLI and their helpers
PREFIX = "jupyter_tree_chat."


def layer_of(module: str) -> int:
    return LAYER.get(module.split(".")[0], VIEWS)


def package_imports(path: Path) -> set[str]:
    """Modules of this package that ``path`` imports, as dotted names below the package."""
    here = path.relative_to(PACKAGE).with_suffix("").parts
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(here[: len(here) - node.level])
            target = [*base, *(node.module.split(".") if node.module else [])]
            if target:
                found.add(".".join(target))
            else:  # from . import x
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "jupyter_tree_chat."
        ):
            found.add((node.module or "").removeprefix(PREFIX))
    return found


def test_no_module_imports_a_layer_below_it():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        if module == "__init__":
            continue  # the package's front door re-exports from every layer
        for imported in package_imports(path):
            if layer_of(imported) > layer_of(module):
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_the_checker_sees_a_wrong_import(tmp_path):
    assert layer_of("magic") > layer_of("session") > layer_of("store") > layer_of("tree")
    assert "session" in package_imports(PACKAGE / "output.py")
    assert "tree" in package_imports(PACKAGE / "providers" / "offline.py")
