"""The front end's translation catalogs: find its words, keep the .po in step, compile it.

Every user-visible string of the lab extension and the widget goes through JupyterLab's
translator in the domain ``jupyter_tree_chat``. JupyterLab's server finds this package's
catalogs through the ``jupyterlab.locale`` entry point (pyproject.toml), at
``jupyter_tree_chat/locale/<locale>/LC_MESSAGES/jupyter_tree_chat.json``, and serves them
together with an installed language pack for that locale (without the pack, JupyterLab
stays English and so do we).

The source of a catalog is the ``.po`` file beside that JSON; the JSON is compiled from it
and committed too, so a wheel built without Node or polib carries it (the test checks the
two never differ). After changing front-end strings:

    .venv/bin/python scripts/catalog.py update   # new msgids in, gone ones out, JSON rebuilt
    (translate the new, empty msgstr entries in the .po)
    .venv/bin/python scripts/catalog.py update   # JSON rebuilt with the translations
    .venv/bin/python scripts/catalog.py check    # what tests/test_catalog.py checks

The words are found by ``labextension/scripts/strings.mjs`` with the TypeScript parser.

The kernel's words (the ``%chat`` magic, the command line, the SVG picture) are a second
domain, ``jupyter_tree_chat_kernel`` (jupyter_tree_chat/i18n.py), read by the standard
library's gettext from ``locale/<locale>/LC_MESSAGES/jupyter_tree_chat_kernel.mo``. They
are found in the package's Python sources with ``ast``: every ``_("...")``,
``ngettext("...", "...", n)`` and ``pgettext("context", "...")`` (a call whose text is not
a literal is reported, since it could never match the catalog). ``update`` keeps that .po
in step the same way and compiles the .mo beside it (committed too); ``check`` covers both
domains.
"""

from __future__ import annotations

import ast
import json
import re
import string
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polib

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = "jupyter_tree_chat"
SOURCES = ROOT / "labextension" / "src"
SCANNER = ROOT / "labextension" / "scripts" / "strings.mjs"
LOCALES = {"zh_CN": {"language": "zh-CN", "plural_forms": "nplurals=1; plural=0;"}}
CONTEXT_SEPARATOR = "\x04"  # gettext's, as JupyterLab's Gettext reads it


def catalog_path(locale: str, suffix: str) -> Path:
    return ROOT / DOMAIN / "locale" / locale / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


def scan(sources: Path = SOURCES) -> dict[str, list[dict[str, Any]]]:
    """The scanner's report: ``messages``, ``bare`` and ``dynamic`` (see strings.mjs)."""
    done = subprocess.run(
        ["node", str(SCANNER), str(sources)], capture_output=True, text=True, check=True
    )
    report: dict[str, list[dict[str, Any]]] = json.loads(done.stdout)
    return report


def message_key(context: str | None, msgid: str) -> tuple[str, str]:
    return (context or "", msgid)


def source_messages(report: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], Any]:
    """Each distinct message once, with every place it is used."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for message in report["messages"]:
        key = message_key(message["context"], message["msgid"])
        entry = found.setdefault(key, {**message, "places": []})
        entry["places"].append((message["file"], str(message["line"])))
        if message["plural"] and not entry["plural"]:
            entry["plural"] = message["plural"]
    return found


def update(
    locale: str,
    report: dict[str, list[dict[str, Any]]],
    path: Path | None = None,
    domain: str = DOMAIN,
) -> polib.POFile:
    """The locale's .po with the source's messages: translations kept, new ones empty."""
    path = path or catalog_path(locale, ".po")
    old = polib.pofile(str(path)) if path.exists() else polib.POFile()
    known = {message_key(e.msgctxt, e.msgid): e for e in old if not e.obsolete}
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": domain,
        "Language": locale,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Plural-Forms": LOCALES[locale]["plural_forms"],
    }
    for key, message in sorted(source_messages(report).items()):
        before = known.get(key)
        entry = polib.POEntry(
            msgctxt=message["context"],
            msgid=message["msgid"],
            occurrences=sorted(set(message["places"])),
        )
        if message["plural"]:
            entry.msgid_plural = message["plural"]
            entry.msgstr_plural = (before.msgstr_plural if before else None) or {0: ""}
        else:
            entry.msgstr = before.msgstr if before else ""
        po.append(entry)
    return po


def compiled(locale: str, po: polib.POFile, version: str) -> dict[str, Any]:
    """The JSON JupyterLab's front end loads (the shape of the language packs' files).

    A plural message keeps at least two forms, padded with "": JupyterLab's Gettext takes
    a one-form entry for a singular message and ignores it in ``_n``.
    """
    data: dict[str, Any] = {
        "": {"domain": DOMAIN, "version": version, **LOCALES[locale]},
    }
    for entry in po:
        if entry.obsolete:
            continue
        key = (entry.msgctxt + CONTEXT_SEPARATOR if entry.msgctxt else "") + entry.msgid
        if entry.msgid_plural:
            forms = [entry.msgstr_plural[n] for n in sorted(entry.msgstr_plural)]
            if all(forms):
                data[key] = forms + [""] * max(0, 2 - len(forms))
        elif entry.msgstr:
            data[key] = [entry.msgstr]
    return data


def package_version() -> str:
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise SystemExit("pyproject.toml has no version line")


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def message_problems(
    messages: dict[tuple[str, str], Any],
    path: Path,
    locale: str,
    check: Callable[[polib.POEntry], list[str]] | None = None,
) -> tuple[list[str], polib.POFile | None]:
    """What the .po at ``path`` lacks for ``messages`` (and holds in vain), and the .po."""
    if not path.exists():
        return [f"{path.relative_to(ROOT)}: missing; run scripts/catalog.py update"], None
    po = polib.pofile(str(path))
    entries = {message_key(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
    found = []
    for key, message in sorted(messages.items()):
        place = "{}:{}".format(*message["places"][0])
        entry = entries.get(key)
        if entry is None:
            found.append(f"{place}: {message['msgid']!r} is not in {path.name} ({locale})")
        elif not (all(entry.msgstr_plural.values()) if entry.msgid_plural else entry.msgstr):
            found.append(f"{place}: {message['msgid']!r} has no {locale} translation")
        elif check is not None:
            found += [f"{place}: {message['msgid']!r}: {p}" for p in check(entry)]
    for key in sorted(set(entries) - set(messages)):
        found.append(f"{path.name} ({locale}): {key[1]!r} is no longer used")
    return found, po


def problems(report: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Everything that keeps the UI from being fully translated, one line each."""
    found = [
        f"{b['file']}:{b['line']}: not through the translator: {b['text']}" for b in report["bare"]
    ]
    found += [
        f"{d['file']}:{d['line']}: the translator needs literal text: {d['call']}"
        for d in report["dynamic"]
    ]
    for locale in LOCALES:
        listed, po = message_problems(source_messages(report), catalog_path(locale, ".po"), locale)
        found += listed
        if po is None:
            continue
        want = json_text(compiled(locale, po, package_version()))
        json_path = catalog_path(locale, ".json")
        if not json_path.exists() or json_path.read_text(encoding="utf-8") != want:
            found.append(f"{json_path.relative_to(ROOT)}: not compiled from the .po; run update")
    return found


# --- the kernel's domain: the package's Python sources, read with ast -------------------

KERNEL_DOMAIN = "jupyter_tree_chat_kernel"
PACKAGE = ROOT / DOMAIN
# the translator functions of jupyter_tree_chat/i18n.py and what their literal arguments are
TRANSLATORS = {
    "_": ("msgid",),
    "ngettext": ("msgid", "plural"),
    "pgettext": ("context", "msgid"),
    "npgettext": ("context", "msgid", "plural"),
}
# the modules (folders and top-level files) whose bare texts are looked for: all of them
SCANNED_MODULES = tuple(
    p.name for p in sorted(PACKAGE.iterdir()) if p.suffix == ".py" or (p / "__init__.py").exists()
)
# calls whose text arguments a person reads: the function's (or method's) last name
SHOWN_BY = {
    "print", "display", "Markdown", "HTML", "exit", "SystemExit", "error", "warn", "write",
    "ArgumentParser", "add_parser", "add_argument", "add_argument_group",
    "add_mutually_exclusive_group", "UsageError",
}  # fmt: skip
# argparse's words a person reads in ``--help`` (IPython's ``argument(help=...)`` for
# ``%%chat?`` is built when the module loads, before a language is chosen: not scanned)
ARGPARSE = {"ArgumentParser", "add_parser", "add_argument", "add_argument_group"}
SHOWN_KEYWORDS = {"help", "description", "epilog", "title"}
# errors for a developer, not a reader (an attribute that does not exist, a wrong type)
DEVELOPER_ERRORS = {"AttributeError", "TypeError", "NotImplementedError", "AssertionError"}
# a word of two letters or more, in a text that is not one identifier: likely English
WORD = re.compile(r"[A-Za-z]{2,}")
IDENTIFIER = re.compile(r"\s*['\"]?(?:--?|%%?)?[A-Za-z_][\w.:/*-]*['\"]?\s*")
# what a text may hold that is code, not words: %chat commands, options, tags, MIME types
CODE = re.compile(r"%%?chat(?: [a-z][\w-]*)?|--?[A-Za-z][\w-]*|</?\w+[^>]*>|\b\w+/[\w+.-]+")
# texts that look like words but no reader sees (each caught inside, or for a developer)
NOT_WORDS = {
    "{} is not JSON",  # history/problems.py: json's parse_constant hook, caught by the loader
    "replaced by another file",  # history/store.py: an OSError the store words itself
    "usage: guard.py KERNEL_PID COMMAND [ARGS...]",  # providers/mcp/guard.py, run by the kernel
    "cannot start {}: {}",  # providers/mcp/guard.py: its stderr is quoted in the MCP error
    "words_per_chunk must be at least 1",  # providers/offline/provider.py: a programming error
    # providers/offline/provider.py: caught, not arithmetic
    "exponent too large for an offline answer",
    "not arithmetic",  # providers/offline/provider.py: caught, the question is answered otherwise
}


def kernel_catalog_path(locale: str, suffix: str) -> Path:
    return PACKAGE / "locale" / locale / "LC_MESSAGES" / f"{KERNEL_DOMAIN}{suffix}"


def _place(path: Path, sources: Path) -> str:
    base = ROOT if path.is_relative_to(ROOT) else sources
    return str(path.relative_to(base))


def translator_names(tree: ast.Module) -> dict[str, str]:
    """The names this module binds to i18n's translators (``from ..i18n import _``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "i18n":
            for alias in node.names:
                if alias.name in TRANSLATORS:
                    names[alias.asname or alias.name] = alias.name
    return names


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _texts(node: ast.AST, translators: dict[str, str]) -> list[str]:
    """The string literals under ``node`` a person would read, skipping translated ones."""
    if isinstance(node, ast.Call) and _call_name(node) in translators:
        return []
    if isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
        return ["".join(str(p) for p in parts)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Subscript, ast.Compare, ast.Lambda)):
        return []  # a key, a comparison, a function: code, not text
    if isinstance(node, ast.Call):  # "...".join(...), "...".format(...): the literal counts
        children: list[ast.AST] = [node.func, *node.args, *[k.value for k in node.keywords]]
        return [t for child in children for t in _texts(child, translators)]
    if isinstance(node, ast.Attribute):
        return _texts(node.value, translators)
    return [t for child in ast.iter_child_nodes(node) for t in _texts(child, translators)]


def looks_english(text: str) -> bool:
    if text in NOT_WORDS:
        return False
    try:
        bare = "".join(part for part, *_ in string.Formatter().parse(text))
    except ValueError:
        bare = text
    return bool(WORD.search(CODE.sub("", bare))) and not IDENTIFIER.fullmatch(bare)


def _shown_arguments(call: ast.Call) -> list[ast.expr]:
    name = _call_name(call)
    shown = [k.value for k in call.keywords if k.arg in SHOWN_KEYWORDS and name in ARGPARSE]
    if name in SHOWN_BY and name not in ARGPARSE:
        shown += [*call.args, *[k.value for k in call.keywords if k.arg is None]]
    return shown


def _raised(node: ast.Raise) -> list[ast.expr]:
    if not isinstance(node.exc, ast.Call) or _call_name(node.exc) in DEVELOPER_ERRORS:
        return []
    return [*node.exc.args, *[k.value for k in node.exc.keywords]]


def scan_python(path: Path, sources: Path, bare: bool) -> dict[str, list[dict[str, Any]]]:
    """One module's messages, non-literal translator calls and (if ``bare``) bare texts."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    translators = translator_names(tree)
    place = _place(path, sources)
    report: dict[str, list[dict[str, Any]]] = {"messages": [], "dynamic": [], "bare": []}
    for node in ast.walk(tree):
        shown: list[ast.expr] = []
        if isinstance(node, ast.Raise):
            shown = _raised(node)
        elif isinstance(node, ast.Call):
            kind = translators.get(_call_name(node)) if isinstance(node.func, ast.Name) else None
            if kind is not None:
                fields = TRANSLATORS[kind]
                texts = [_literal(arg) for arg in node.args[: len(fields)]]
                if len(texts) < len(fields) or any(t is None for t in texts) or node.keywords:
                    report["dynamic"].append(
                        {"file": place, "line": node.lineno, "call": ast.unparse(node)}
                    )
                    continue
                found = dict(zip(fields, texts, strict=True))
                report["messages"].append(
                    {"context": found.get("context"), "msgid": found["msgid"],
                     "plural": found.get("plural"), "file": place, "line": node.lineno}
                )  # fmt: skip
                continue
            shown = _shown_arguments(node)
        if bare:
            for argument in shown:
                for text in _texts(argument, translators):
                    if looks_english(text):
                        report["bare"].append(
                            {"file": place, "line": argument.lineno, "text": repr(text)}
                        )
    return report


def kernel_scan(sources: Path = PACKAGE) -> dict[str, list[dict[str, Any]]]:
    """The kernel's report, in the shape of the front end's: messages, bare, dynamic."""
    report: dict[str, list[dict[str, Any]]] = {"messages": [], "dynamic": [], "bare": []}
    for path in sorted(sources.rglob("*.py")):
        folder = path.relative_to(sources).parts[0]
        bare = sources != PACKAGE or folder in SCANNED_MODULES
        for key, found in scan_python(path, sources, bare).items():
            report[key] += found
    unique = {(b["file"], b["line"], b["text"]): b for b in report["bare"]}  # raise X(...)
    report["bare"] = list(unique.values())
    for key in report:
        report[key].sort(key=lambda m: (m["file"], m["line"]))
    return report


def format_fields(text: str) -> set[str] | None:
    """The ``{named}`` fields ``str.format`` fills in ``text`` (None: not a format string)."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return None


COMMANDS = (
    "tree|branches|switch|edit|retry|compare|fork-before-tool|compact|export|find|context|"
    "usage|text|code|sessions|use|import|model|models|label|hide|unhide|panel|mcp|help|language"
)
# what a translation keeps as written: %chat commands, options, `code`, argparse's %(fields)s
KEPT = re.compile(rf"%%chat|%chat(?: (?:{COMMANDS})\b)?|--[a-z][\w-]*|`[^`]+`|%\(\w+\)s")


def translation_problems(entry: polib.POEntry) -> list[str]:
    """What a translation changed that must stay: its fields, commands, option names."""
    forms = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
    found = []
    want = format_fields(entry.msgid)
    kept = set(KEPT.findall(entry.msgid + " " + (entry.msgid_plural or "")))
    for form in forms:
        if not form:
            continue
        have = format_fields(form)
        if want is not None and have != want:
            found.append(f"fields {sorted(want)} in the msgid but {sorted(have or [])} in the "
                         "translation")  # fmt: skip
        lost = sorted(k for k in kept if k not in form)
        if lost:
            found.append(f"{', '.join(lost)} must stay as written in the translation")
    return found


def update_kernel(locale: str, report: dict[str, list[dict[str, Any]]]) -> polib.POFile:
    """The kernel .po of ``locale``: the sources' messages, translations kept."""
    return update(locale, report, kernel_catalog_path(locale, ".po"), KERNEL_DOMAIN)


def compiled_mo(po: polib.POFile) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "catalog.mo"
        po.save_as_mofile(str(path))
        return path.read_bytes()


def kernel_problems(report: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Everything that keeps the kernel's texts from being fully translated, one line each."""
    found = [f"{b['file']}:{b['line']}: not through _(): {b['text']}" for b in report["bare"]]
    found += [
        f"{d['file']}:{d['line']}: _() needs literal text (a catalog can never match it): "
        f"{d['call']}"
        for d in report["dynamic"]
    ]
    for locale in LOCALES:
        path = kernel_catalog_path(locale, ".po")
        listed, po = message_problems(source_messages(report), path, locale, translation_problems)
        found += listed
        if po is None:
            continue
        mo = kernel_catalog_path(locale, ".mo")
        if not mo.exists() or mo.read_bytes() != compiled_mo(po):
            found.append(f"{mo.relative_to(ROOT)}: not compiled from the .po; run update")
    return found


def save_kernel(locale: str, po: polib.POFile) -> None:
    path = kernel_catalog_path(locale, ".po")
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    kernel_catalog_path(locale, ".mo").write_bytes(compiled_mo(po))


def untranslated(locale: str, limit: int = 0) -> list[str]:
    """The kernel .po's messages still without a translation (for translating in batches)."""
    po = polib.pofile(str(kernel_catalog_path(locale, ".po")))
    todo = [e.msgid for e in po if not e.obsolete and not e.translated()]
    return todo[:limit] if limit else todo


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "check"
    if command == "todo":  # the kernel's untranslated messages, a batch at a time
        for msgid in untranslated("zh_CN", int(argv[2]) if len(argv) > 2 else 0):
            print(json.dumps(msgid, ensure_ascii=False))
        return 0
    report = scan()
    kernel_report = kernel_scan()
    if command == "update":
        for locale in LOCALES:
            po = update(locale, report)
            catalog_path(locale, ".po").parent.mkdir(parents=True, exist_ok=True)
            po.save(str(catalog_path(locale, ".po")))
            text = json_text(compiled(locale, po, package_version()))
            catalog_path(locale, ".json").write_text(text, encoding="utf-8")
            kernel_po = update_kernel(locale, kernel_report)
            save_kernel(locale, kernel_po)
            for path, each in (
                (catalog_path(locale, ".po"), po),
                (kernel_catalog_path(locale, ".po"), kernel_po),
            ):
                missing = sum(1 for e in each if not e.translated())
                print(f"{path.relative_to(ROOT)}: {len(each)} messages, {missing} to translate")
        return 0  # fmt: skip
    if command == "check":
        found = problems(report)
        print("\n".join(found) or "every front-end string is translated")
        kernel_found = kernel_problems(kernel_report)
        print("\n".join(kernel_found) or "every kernel string is translated")
        return 1 if found or kernel_found else 0
    print("usage: scripts/catalog.py [check|update|todo [N]]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
