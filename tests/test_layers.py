"""The folders say what each file may know (DESIGN.md, "A layout that shows the layers").

- The core (``errors models node tree diff language loader store compare usage preflight
  events session fanout cellrule textview``, ``formats/``, ``context/`` and ``picture/``) and
  ``providers/`` import nothing from IPython, ipykernel, ipywidgets, anywidget or Jupyter.
- Inside the core and providers, imports go one way: tree ← store ← providers ← session.
- The views (``kernel/``, ``widget/``, ``cli/``, ``server/``: the Jupyter server extension
  that reads other tools' files for the viewer) import the core and never each other;
  the one hook between them is ``kernel.sessions`` (``turn_hooks``, ``panel_hook``),
  which the package root wires up, so only ``__init__`` names both.
- The front end (``labextension/src``) the same way: ``format/`` (the file reader) and
  ``components/`` (the views, framework-free) import no package but the d3 modules the
  tree picture lays out and zooms with; the kernel-connected
  ``panel/`` and the file-connected ``viewer/`` use them and never each other; the one
  bridge between the lab extension and the widget bundle is ``bridge.ts``; the lab's
  notebook command (``notebook.ts``) is the extension's, beside ``index.ts``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupyter_tree_chat

PACKAGE = Path(jupyter_tree_chat.__file__).parent
PREFIX = "jupyter_tree_chat."

CORE_LAYER = {
    "errors": 0,
    "models": 0,
    "node": 1,
    "tree": 1,
    "loader": 2,
    "diff": 1,
    "formats": 2,
    "language": 2,
    "store": 2,
    "usage": 2,
    "compare": 2,
    "providers": 3,
    "events": 4,  # what a session announces; names fanout's Answer for type checks only
    "cellrule": 4,
    "preflight": 4,
    "session": 4,
    "fanout": 4,  # Session's own helper: each imports the other inside functions
    "textview": 4,
    "context": 4,
    "picture": 4,
}
VIEWS = {"kernel", "widget", "cli", "server"}
FRONT_END_PACKAGES = ("IPython", "ipykernel", "ipywidgets", "anywidget", "jupyter", "traitlets")


def top_of(module: str) -> str:
    return module.split(".")[0]


def layer_of(module: str) -> int:
    return CORE_LAYER.get(top_of(module), 5)


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "static" in path.parts or "labextension" in path.relative_to(PACKAGE).parts:
            continue
        found.append((".".join(path.relative_to(PACKAGE).with_suffix("").parts), path))
    return found


def imports(path: Path) -> tuple[set[str], set[str]]:
    """(modules of this package, outside top-level packages) that ``path`` imports."""
    here = path.relative_to(PACKAGE).with_suffix("").parts
    if path.name == "__init__.py":
        here = (*here, "")  # relative imports are relative to the package itself
    ours: set[str] = set()
    outside: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(here[: len(here) - node.level])
            target = [*base, *(node.module.split(".") if node.module else [])]
            if target:
                ours.add(".".join(target))
            else:  # from . import x
                ours.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(PREFIX):
                ours.add(node.module.removeprefix(PREFIX))
            else:
                outside.add(top_of(node.module))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PREFIX):
                    ours.add(alias.name.removeprefix(PREFIX))
                else:
                    outside.add(top_of(alias.name))
    return ours, outside


def is_front_end(package: str) -> bool:
    return package.startswith(FRONT_END_PACKAGES)


def test_the_core_and_providers_import_no_jupyter_package():
    wrong = []
    for module, path in modules():
        if top_of(module) in CORE_LAYER and module != "__init__":
            _, outside = imports(path)
            wrong += [f"{module} imports {name}" for name in sorted(outside) if is_front_end(name)]
    assert wrong == []


def test_the_core_imports_in_one_direction():
    wrong = []
    for module, path in modules():
        if top_of(module) not in CORE_LAYER:
            continue
        for imported in imports(path)[0]:
            if top_of(imported) in VIEWS or layer_of(imported) > layer_of(module):
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_views_never_import_each_other():
    wrong = []
    for module, path in modules():
        view = top_of(module)
        if view not in VIEWS:
            continue
        for imported in imports(path)[0]:
            if top_of(imported) in VIEWS and top_of(imported) != view:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_every_module_lives_in_a_known_room():
    rooms = set(CORE_LAYER) | VIEWS | {"__init__"}
    assert sorted({top_of(module) for module, _ in modules()} - rooms) == []


def test_the_checker_sees_wrong_imports(tmp_path):
    assert layer_of("kernel.magics") > layer_of("session") > layer_of("store") > layer_of("tree")
    assert "session" in imports(PACKAGE / "kernel" / "output.py")[0]
    assert "tree" in imports(PACKAGE / "providers" / "offline.py")[0]
    assert "IPython" in imports(PACKAGE / "kernel" / "magics.py")[1]
    assert "anywidget" in imports(PACKAGE / "widget" / "widgets.py")[1]
    assert "jupyter_server" in imports(PACKAGE / "server" / "handlers.py")[1]
    assert "formats" in imports(PACKAGE / "server" / "handlers.py")[0]
    assert is_front_end("ipykernel") and is_front_end("jupyter_client")
    assert not is_front_end("orjson")


# -- the front end ----------------------------------------------------------------------

FRONT_END = PACKAGE.parent / "labextension" / "src"
#: each room of labextension/src: the rooms and the npm packages it may import
FRONT_END_ROOMS: dict[str, tuple[set[str], tuple[str, ...]]] = {
    "format": ({"format"}, ()),
    "components": ({"components", "format"}, ("d3-hierarchy", "d3-selection", "d3-zoom")),
    "bridge": ({"components"}, ()),
    "panel": ({"panel", "components", "format", "bridge"}, ("dompurify", "marked")),
    "viewer": ({"viewer", "components", "format"}, ("@jupyterlab/", "@lumino/")),
    "notebook": ({"bridge", "components"}, ("@jupyterlab/",)),
    "index": ({"viewer", "bridge", "notebook"}, ("@jupyterlab/", "@lumino/")),
}
IMPORT_FROM = re.compile(r"""^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]""", re.M)


def room_of(path: Path) -> str:
    return path.relative_to(FRONT_END).parts[0].removesuffix(".ts")


def ts_imports(path: Path) -> tuple[set[str], set[str]]:
    """(rooms of labextension/src, npm packages) that a TypeScript module imports."""
    rooms: set[str] = set()
    packages: set[str] = set()
    for target in IMPORT_FROM.findall(path.read_text()):
        if target.startswith("."):
            rooms.add(room_of((path.parent / target).resolve()))
        else:
            packages.add(target)
    return rooms, packages


def test_the_front_end_rooms_import_only_what_they_may():
    wrong = []
    for path in sorted(FRONT_END.rglob("*.ts")):
        room = room_of(path)
        assert room in FRONT_END_ROOMS, f"{path}: a file outside the known rooms"
        allowed_rooms, allowed_packages = FRONT_END_ROOMS[room]
        rooms, packages = ts_imports(path)
        wrong += [f"{path.name} ({room}) imports {r}/" for r in sorted(rooms - allowed_rooms)]
        wrong += [
            f"{path.name} ({room}) imports {p}"
            for p in sorted(packages)
            if not p.startswith(allowed_packages)
        ]
    assert wrong == []


def test_the_front_end_checker_sees_imports():
    assert ts_imports(FRONT_END / "panel" / "index.ts")[0] >= {"bridge", "components"}
    assert "@jupyterlab/translation" in ts_imports(FRONT_END / "index.ts")[1]
    assert "dompurify" in ts_imports(FRONT_END / "panel" / "markdown.ts")[1]
    assert ts_imports(FRONT_END / "viewer" / "source.ts")[0] >= {"components", "format"}
