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
"""

from __future__ import annotations

import json
import subprocess
import sys
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


def update(locale: str, report: dict[str, list[dict[str, Any]]]) -> polib.POFile:
    """The locale's .po with the source's messages: translations kept, new ones empty."""
    path = catalog_path(locale, ".po")
    old = polib.pofile(str(path)) if path.exists() else polib.POFile()
    known = {message_key(e.msgctxt, e.msgid): e for e in old if not e.obsolete}
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": DOMAIN,
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
        path = catalog_path(locale, ".po")
        if not path.exists():
            found.append(f"{path.relative_to(ROOT)}: missing; run scripts/catalog.py update")
            continue
        po = polib.pofile(str(path))
        entries = {message_key(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
        for key, message in sorted(source_messages(report).items()):
            place = "{}:{}".format(*message["places"][0])
            entry = entries.get(key)
            if entry is None:
                found.append(f"{place}: {message['msgid']!r} is not in {path.name} ({locale})")
            elif not (all(entry.msgstr_plural.values()) if entry.msgid_plural else entry.msgstr):
                found.append(f"{place}: {message['msgid']!r} has no {locale} translation")
        for key in sorted(set(entries) - set(source_messages(report))):
            found.append(f"{path.name} ({locale}): {key[1]!r} is no longer used")
        want = json_text(compiled(locale, po, package_version()))
        json_path = catalog_path(locale, ".json")
        if not json_path.exists() or json_path.read_text(encoding="utf-8") != want:
            found.append(f"{json_path.relative_to(ROOT)}: not compiled from the .po; run update")
    return found


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "check"
    report = scan()
    if command == "update":
        for locale in LOCALES:
            po = update(locale, report)
            catalog_path(locale, ".po").parent.mkdir(parents=True, exist_ok=True)
            po.save(str(catalog_path(locale, ".po")))
            text = json_text(compiled(locale, po, package_version()))
            catalog_path(locale, ".json").write_text(text, encoding="utf-8")
            missing = sum(1 for e in po if not e.translated())
            print(f"{catalog_path(locale, '.po').relative_to(ROOT)}: {len(po)} messages, "
                  f"{missing} to translate")  # fmt: skip
        return 0
    if command == "check":
        found = problems(report)
        print("\n".join(found) or "every front-end string is translated")
        return 1 if found else 0
    print("usage: scripts/catalog.py [check|update]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
