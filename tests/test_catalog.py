"""The front end's catalogs (scripts/catalog.py): every string translated, shipped, found.

- No user-visible string in labextension/src bypasses the translator, and every message
  has a zh_CN translation (a new untranslated string fails here, with its file and line).
- The scanner that finds them (labextension/scripts/strings.mjs, the TypeScript parser)
  reports a planted untranslated string and leaves code strings alone.
- The committed JSON is exactly what the .po compiles to, in the shape JupyterLab's
  front end loads, and JupyterLab's own server code finds it through the package's
  ``jupyterlab.locale`` entry point.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_catalog_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("catalog", ROOT / "scripts" / "catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


catalog = load_catalog_script()


def test_every_front_end_string_goes_through_the_translator_and_is_translated() -> None:
    found = catalog.problems(catalog.scan())
    assert found == [], "run `python scripts/catalog.py update`, translate, update:\n" + "\n".join(
        found
    )


def test_the_catalog_holds_the_panel_viewer_and_command_words() -> None:
    report = catalog.scan()
    files = {message["file"].split("/")[0] for message in report["messages"]}
    assert {"components", "panel", "viewer"} <= files
    assert len(catalog.source_messages(report)) > 100


PLANTED = """\
import { h } from './dom';

export function view(trans: Translation, count: number, busy: boolean): HTMLElement {
  const box = h('div', { class: 'jtc-box jtc-wide', title: 'Shown on hover', 'data-x': 'a b' },
    'interrupted',
    trans.__('Retry'),
    trans._n('%1 reply', '%1 replies', count),
    trans._p('role', 'user'),
    busy ? 'Working…' : trans.__('Done')
  );
  box.textContent = 'waiting';
  box.setAttribute('aria-label', 'The tree');
  box.setAttribute('class', 'jtc-a jtc-b');
  box.querySelector('.jtc-a .jtc-b');
  console.warn('This is for developers.');
  if (box.dataset.kind === 'Some Kind') {
    throw new Error('Something went wrong.');
  }
  const kept = 'Python repr True'; // not for translation: a Python repr
  const sentence = 'Could not read the file';
  trans.__(sentence);
  app.commands.addCommand('jupyter-tree-chat:open', { label: 'Open as a tree', execute });
  return box;
}
"""


def test_the_scanner_reports_strings_a_person_reads_and_only_those(tmp_path: Path) -> None:
    (tmp_path / "planted.ts").write_text(PLANTED)
    report = catalog.scan(tmp_path)
    assert [(b["line"], b["text"]) for b in report["bare"]] == [
        (4, "'Shown on hover'"),
        (5, "'interrupted'"),
        (9, "'Working…'"),
        (11, "'waiting'"),
        (12, "'The tree'"),
        (20, "'Could not read the file'"),
        (22, "'Open as a tree'"),
    ]
    assert [(m["context"], m["msgid"], m["plural"]) for m in report["messages"]] == [
        (None, "Retry", None),
        (None, "%1 reply", "%1 replies"),
        ("role", "user", None),
        (None, "Done", None),
    ]
    assert [d["call"] for d in report["dynamic"]] == ["trans.__(sentence)"]
    assert len(catalog.problems(report)) >= len(report["bare"]) + 1


def test_a_message_without_a_translation_is_reported_with_its_place() -> None:
    report = {
        "messages": [
            {"context": None, "msgid": "Nobody translated this", "plural": None,
             "file": "panel/new.ts", "line": 7},
        ],
        "bare": [],
        "dynamic": [],
    }  # fmt: skip
    found = catalog.problems(report)
    assert (
        "panel/new.ts:7: 'Nobody translated this' is not in jupyter_tree_chat.po (zh_CN)" in found
    )


def test_the_compiled_json_is_what_jupyterlabs_front_end_loads() -> None:
    data = json.loads(catalog.catalog_path("zh_CN", ".json").read_text(encoding="utf-8"))
    header = data.pop("")
    assert header["domain"] == "jupyter_tree_chat" and header["language"] == "zh-CN"
    assert header["plural_forms"] == "nplurals=1; plural=0;"
    assert all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in data.values())
    contexts = [key for key in data if "\x04" in key]
    plurals = [key for key, value in data.items() if len(value) > 1]
    assert contexts and plurals  # _p and _n entries are there, in gettext's shape
    assert all(data[key][0] for key in data)


def test_jupyterlab_server_finds_the_catalog_through_the_entry_point() -> None:
    from jupyterlab_server.translation_utils import get_language_pack

    data, message = get_language_pack("zh_CN")
    assert "jupyterlab" in data, f"the zh_CN language pack is not installed: {message}"
    ours = data.get("jupyter_tree_chat")
    assert ours is not None, "pip install -e . (the jupyterlab.locale entry point is missing)"
    shipped = json.loads(catalog.catalog_path("zh_CN", ".json").read_text(encoding="utf-8"))
    assert ours == shipped
