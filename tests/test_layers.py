"""The folders say what each file may know (docs/design.md, "A layout that shows the layers").

- The core (``errors language textview`` at the top; the rooms ``history/`` (node, tree,
  loader, store), ``conversation/`` (session, asking, host, events, fanout, ...), ``measures/``
  (models, usage, preflight, compare, diff), ``formats/``, ``context/`` and ``picture/``) and
  ``providers/`` import nothing from IPython, ipykernel, ipywidgets, anywidget or Jupyter.
- Inside the core and providers, imports go one way: tree ← store ← providers ← session;
  inside ``providers/``: ``base`` ← ``tools/`` ← ``mcp/``, and ``base`` ← the Messages API's
  send rules (``anthropic/wire``) ← ``endpoints/`` (capabilities, config, probe) ← the wires'
  providers (``anthropic/``, ``openai/``, ``offline/``) ← ``endpoints/router``; no module
  imports itself back through others (no circles, counting imports made only for type
  checks or inside functions).
- At most ten modules at the package's top: the rest live in rooms, none holding more
  than twelve modules, each saying in its ``__init__`` docstring what lives there and
  what it may import.
- The views (``kernel/``, ``widget/``, ``cli/``, ``server/``: the Jupyter server extension
  that reads other tools' files for the viewer) import the core and never each other;
  the one hook between them is ``kernel.sessions`` (``turn_hooks``, ``panel_hook``),
  which the package root wires up, so only ``__init__`` names both. In ``kernel/`` the
  ``%chat`` command families (``commands/``) sit above the cell's own path: only
  ``magics`` imports them.
- The front end (``labextension/src``) the same way: ``format/`` (the file reader) and
  ``components/`` (the views, framework-free) import no package but the d3 modules the
  tree picture lays out and zooms with; the kernel-connected
  ``panel/``, the file-connected ``viewer/`` and an exported page's ``page/`` use them
  and never each other (the panel and a page share the sanitizer, ``sanitize/``); the one
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

#: the core's rooms and modules, each with its layer: a module may import only modules of
#: its own layer or below (the longest matching name decides: ``history.tree`` is 1;
#: ``providers`` is 3, its rooms 3.x in the order they may import each other)
CORE_LAYER: dict[str, float] = {
    "errors": 0,
    "i18n": 0,
    "measures": 0,
    "measures.models": 0,
    "history": 1,
    "history.node": 1,
    "history.tree": 1,
    "measures.diff": 1,
    "history.loader": 2,
    "history.store": 2,
    "formats": 2,
    "language": 2,
    "measures.usage": 2,
    "measures.compare": 2,
    "measures.grades": 2,
    "measures.budget": 2,
    "measures.sizes": 2,
    "measures.seen": 4,
    "providers.base": 3,
    "providers.batches": 3.01,
    "providers.redirects": 3.05,
    "providers.retry": 3.05,
    "providers.sse": 3.05,
    "providers.tools": 3.1,
    "providers.anthropic.wire": 3.1,
    "providers.mcp": 3.2,
    "providers.endpoints": 3.3,
    "providers.endpoints.capabilities": 3.2,
    "providers.anthropic": 3.5,
    "providers.openai": 3.5,
    "providers.offline": 3.5,
    "providers.endpoints.router": 3.6,
    "providers": 3.9,
    "measures.preflight": 4,
    "conversation": 4,
    "textview": 4,
    "context": 4,
    "picture": 4,
    "share": 4,
}
VIEWS = {"kernel", "widget", "cli", "server"}
FRONT_END_PACKAGES = ("IPython", "ipykernel", "ipywidgets", "anywidget", "jupyter", "traitlets")
#: at most this many modules at the package's top (docs/design.md: a few named rooms)
MOST_TOP_MODULES = 10
#: at most this many modules (its ``__init__`` counted) in any folder of the package
MOST_MODULES_IN_A_ROOM = 12
#: the folder of the ``%chat`` command families, and the one kernel module that imports it
COMMANDS = "kernel.commands"
COMMANDS_IMPORTED_BY = "kernel.magics"


def top_of(module: str) -> str:
    return module.split(".")[0]


def layer_of(module: str) -> float:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        found = CORE_LAYER.get(".".join(parts[:end]))
        if found is not None:
            return found
    return 5


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "static" in path.parts or "labextension" in path.relative_to(PACKAGE).parts:
            continue
        found.append((".".join(path.relative_to(PACKAGE).with_suffix("").parts), path))
    return found


def module_names() -> set[str]:
    """Every module of the package by dotted name (a package by its own name)."""
    return {name.removesuffix(".__init__") for name, _ in modules()}


def imports(path: Path) -> tuple[set[str], set[str]]:
    """(modules of this package, outside top-level packages) that ``path`` imports.

    ``from .x import y`` names ``x.y`` when ``y`` is itself a module, else ``x``; every
    import counts, those made only for type checks or inside functions included."""
    here = path.relative_to(PACKAGE).with_suffix("").parts
    if path.name == "__init__.py":
        here = (*here, "")  # relative imports are relative to the package itself
    known = module_names()
    ours: set[str] = set()
    outside: set[str] = set()

    def add(target: str, names: list[str]) -> None:
        submodules = [f"{target}.{n}" if target else n for n in names]
        found = [m for m in submodules if m in known]
        ours.update(found)
        if len(found) < len(submodules) and target:
            ours.add(target)

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(here[: len(here) - node.level])
            target = [*base, *(node.module.split(".") if node.module else [])]
            add(".".join(target), [alias.name for alias in node.names])
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(PREFIX) or node.module == PREFIX[:-1]:
                add(node.module.removeprefix(PREFIX[:-1]).lstrip("."), [a.name for a in node.names])
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
    rooms = {top_of(room) for room in CORE_LAYER} | VIEWS | {"__init__"}
    assert sorted({top_of(module) for module, _ in modules()} - rooms) == []


def test_few_modules_sit_at_the_top():
    top = sorted(m for m, path in modules() if "." not in m and path.parent == PACKAGE)
    assert len(top) <= MOST_TOP_MODULES, top


def rooms() -> dict[Path, list[str]]:
    """Each folder of the package (the top excepted) and the modules directly in it."""
    found: dict[Path, list[str]] = {}
    for _, path in modules():
        if path.parent != PACKAGE:
            found.setdefault(path.parent, []).append(path.name)
    return found


def test_no_room_holds_more_than_twelve_modules():
    crowded = {
        str(room.relative_to(PACKAGE)): len(names)
        for room, names in rooms().items()
        if len(names) > MOST_MODULES_IN_A_ROOM
    }
    assert crowded == {}


def test_every_room_says_what_lives_there_and_what_it_may_import():
    """Each folder's ``__init__`` opens with a docstring naming its modules (or subfolders)
    and saying what it imports."""
    silent = []
    for room, names in sorted(rooms().items()):
        init = room / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) if init.exists() else None
        doc = " ".join(doc.split()) if doc else None
        inside = [n.removesuffix(".py") for n in names if n != "__init__.py"]
        inside += [p.name for p in room.iterdir() if (p / "__init__.py").exists()]
        if (
            not doc
            or "May import" not in doc
            or not all(f"``{name}" in doc or f"``{name}/``" in doc for name in inside)
        ):
            silent.append(str(room.relative_to(PACKAGE)))
    assert silent == []


def test_only_the_magics_import_the_command_families():
    wrong = []
    for module, path in modules():
        if module.startswith("kernel.") and not module.startswith(COMMANDS):
            if module == COMMANDS_IMPORTED_BY:
                continue
            wrong += [
                f"{module} imports {name}"
                for name in sorted(imports(path)[0])
                if name.startswith(COMMANDS)
            ]
    assert wrong == []


def import_graph() -> dict[str, set[str]]:
    """Each module (a package by its name) and the modules of this package it imports."""
    known = module_names()
    graph: dict[str, set[str]] = {}
    for module, path in modules():
        name = module.removesuffix(".__init__")
        graph[name] = {m for m in imports(path)[0] if m in known and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph`` (strongly connected parts of more than one
    module), found without recursion (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_no_module_imports_itself_back():
    """No circle through any chain of imports (the root package, which wires the views
    together on load, is the one module that may name everything)."""
    graph = {m: deps - {"__init__"} for m, deps in import_graph().items() if m != "__init__"}
    assert circles(graph) == []


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_checker_sees_wrong_imports(tmp_path):
    assert layer_of("kernel.magics") > layer_of("conversation.session")
    assert layer_of("conversation.session") > layer_of("history.store")
    assert layer_of("history.store") > layer_of("history.tree")
    assert layer_of("measures.preflight") > layer_of("measures.models")
    assert "conversation.session" in imports(PACKAGE / "kernel" / "display" / "output.py")[0]
    assert "history.tree" in imports(PACKAGE / "providers" / "offline" / "provider.py")[0]
    assert layer_of("providers.endpoints.router") > layer_of("providers.openai.provider")
    assert layer_of("providers.mcp.tools") > layer_of("providers.tools.toolbox")
    assert layer_of("providers.tools.toolbox") > layer_of("providers.base")
    assert "kernel.commands.chat" in imports(PACKAGE / "kernel" / "magics.py")[0]
    assert "measures.preflight" in imports(PACKAGE / "conversation" / "asking.py")[0]
    assert "IPython" in imports(PACKAGE / "kernel" / "magics.py")[1]
    assert "anywidget" in imports(PACKAGE / "widget" / "base.py")[1]
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
    "sanitize": ({"sanitize", "components"}, ("dompurify", "marked")),
    "panel": ({"panel", "components", "format", "bridge", "sanitize"}, ()),
    "viewer": ({"viewer", "components", "format"}, ("@jupyterlab/", "@lumino/")),
    "page": ({"page", "components", "format", "sanitize"}, ()),
    "notebook": ({"bridge", "components"}, ("@jupyterlab/",)),
    # the lab plugin registers the widget (panel/) once for the page: panel/registry.ts
    "index": ({"viewer", "bridge", "notebook", "panel"}, ("@jupyterlab/", "@lumino/")),
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
    assert "dompurify" in ts_imports(FRONT_END / "sanitize" / "markdown.ts")[1]
    assert ts_imports(FRONT_END / "page" / "index.ts")[0] >= {"components", "sanitize"}
    assert ts_imports(FRONT_END / "components" / "filesource.ts")[0] >= {"components", "format"}


#: no module of the package past this many lines (STYLE.md: a few hundred; issue 36)
MOST_LINES_IN_A_MODULE = 600


def test_no_module_is_over_six_hundred_lines():
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES_IN_A_MODULE
    }
    assert long == {}


def test_every_import_of_the_package_names_a_module_that_exists():
    """A relative import that points nowhere fails only when its line runs (mypy, with
    ``ignore_missing_imports``, does not say): a moved module must leave none behind."""
    nowhere = []
    for module, path in modules():
        package = module.split(".")[:-1]  # an __init__'s own name ends in "__init__"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == PACKAGE.name:
                target = node.module.split(".")[1:]
            else:
                continue
            where = PACKAGE.joinpath(*target)
            if not (where.with_suffix(".py").exists() or (where / "__init__.py").exists()):
                nowhere.append(f"{module}:{node.lineno} imports {'.'.join(target)}")
    assert nowhere == []
