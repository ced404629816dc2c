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

import pytest
from helpers.kernel_harness import Kernel

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


# -- the kernel's domain: the package's Python texts, through jupyter_tree_chat.i18n -------


def test_every_kernel_text_goes_through_gettext_and_is_translated() -> None:
    found = catalog.kernel_problems(catalog.kernel_scan())
    assert found == [], "run `python scripts/catalog.py update`, translate, update:\n" + "\n".join(
        found
    )


def test_the_kernel_catalog_holds_the_magic_cli_and_picture_words() -> None:
    report = catalog.kernel_scan()
    folders = {message["file"].split("/")[1] for message in report["messages"]}
    assert {"kernel", "cli", "picture"} <= folders
    assert len(catalog.source_messages(report)) > 250


PLANTED_PY = """\
from IPython.core.error import UsageError

from ..i18n import _, ngettext


def show(name: str, count: int, parser) -> None:
    print(_("Saved {name}.").format(name=name))
    print(ngettext("{count} branch", "{count} branches", count).format(count=count))
    print("Nothing to show here.")
    print(f"Saved {name} to the tree.")
    print(name, "x", "=", "\\n".join(["a", "b"]))
    message = "Could not read the file"
    print(_(message))
    print(_(f"Loaded {name}"))
    parser.add_argument("--model", help="the model to ask", choices=["a b"])
    if count < 0:
        raise UsageError("unknown command: " + name)
    raise UsageError(_("%chat {command} takes no argument").format(command=name))
"""


def test_the_kernel_scanner_reports_bare_texts_and_non_literal_calls(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text(PLANTED_PY)
    report = catalog.kernel_scan(tmp_path)
    assert [(b["line"], b["text"]) for b in report["bare"]] == [
        (9, "'Nothing to show here.'"),
        (10, "'Saved {} to the tree.'"),
        (15, "'the model to ask'"),
        (17, "'unknown command: '"),
    ]
    assert [(m["msgid"], m["plural"]) for m in report["messages"]] == [
        ("Saved {name}.", None),
        ("{count} branch", "{count} branches"),
        ("%chat {command} takes no argument", None),
    ]
    assert [(d["line"], d["call"]) for d in report["dynamic"]] == [
        (13, "_(message)"),
        (14, "_(f'Loaded {name}')"),
    ]
    found = catalog.kernel_problems(report)
    assert "planted.py:13: _() needs literal text (a catalog can never match it): _(message)" in (
        found
    )
    assert "planted.py:7: 'Saved {name}.' is not in jupyter_tree_chat_kernel.po (zh_CN)" in found


def test_a_translation_keeps_the_fields_commands_and_option_names() -> None:
    import polib

    def problems(msgid: str, msgstr: str) -> list[str]:
        return catalog.translation_problems(polib.POEntry(msgid=msgid, msgstr=msgstr))

    assert problems("{name} is not answering", "{name} 没有应答") == []
    assert problems("{name} is not answering", "{名字} 没有应答") == [
        "fields ['name'] in the msgid but ['名字'] in the translation"
    ]
    assert problems("{count} of {total}", "{count}") == [
        "fields ['count', 'total'] in the msgid but ['count'] in the translation"
    ]
    assert problems("see %chat tree and --model", "见 %chat 树 和 --模型") == [
        "%chat tree, --model must stay as written in the translation"
    ]
    plural = polib.POEntry(
        msgid="{count} branch", msgid_plural="{count} branches", msgstr_plural={0: "{n} 个分支"}
    )
    assert catalog.translation_problems(plural) == [
        "fields ['count'] in the msgid but ['n'] in the translation"
    ]


def test_the_committed_mo_is_what_the_po_compiles_to_and_gettext_reads_it() -> None:
    import gettext

    import polib

    po = polib.pofile(str(catalog.kernel_catalog_path("zh_CN", ".po")))
    mo = catalog.kernel_catalog_path("zh_CN", ".mo")
    assert mo.read_bytes() == catalog.compiled_mo(po)
    read = gettext.translation(
        "jupyter_tree_chat_kernel", ROOT / "jupyter_tree_chat" / "locale", languages=["zh_CN"]
    )
    translated = [e for e in po if e.translated() and not e.msgid_plural]
    assert translated and all(read.gettext(e.msgid) == e.msgstr for e in translated)
    plurals = [e for e in po if e.translated() and e.msgid_plural]
    assert plurals and all(
        read.ngettext(e.msgid, e.msgid_plural, n) == e.msgstr_plural[0]
        for e in plurals
        for n in (1, 5)
    )


@pytest.mark.kernel
def test_a_real_kernel_shows_its_footer_tree_and_errors_in_chinese(tmp_path: Path) -> None:
    with Kernel(tmp_path) as kernel:
        english = kernel.run("%chat tree").check()
        assert "\nThe session is empty (" in english.stdout
        kernel.run("from jupyter_tree_chat.i18n import set_language\nset_language('zh_CN')")
        empty = kernel.run("%chat tree").check()
        assert empty.stdout.startswith("会话是空的（") and "%%chat 单元格。" in empty.stdout
        answered = kernel.chat("什么是会话树？", "cell-1").check()
        footer = answered.markdown[-1]
        assert footer.endswith("回复 1/1") and " · 输入 " in footer, footer
        assert " · 上下文已用 " in footer, footer

        kernel.chat("什么是会话树？", "cell-1").check()  # the same cell again: a retry beside
        tree = kernel.run("%chat branches").check().stdout
        assert "→ 叶子 " in tree and "（深度 2）" in tree, tree
        wrong = kernel.run("%chat nonsense")
        assert "%chat：未知命令 'nonsense'；`%chat help` 列出所有命令" in wrong.visible_text

        helped = kernel.run("%chat help").check().stdout
        assert "把路径总结成一个新的根；旧分支保留" in helped
        for asked, said in (
            ("%%chat?", "向模型提问；回复在下面流式显示"),
            ("%%chat?", "开始一个新的根：全新的对话。"),  # an option's help
            ("%chat?", "在每个分支上查找匹配的节点"),
        ):
            page = kernel.run(asked).check().payload
            assert any(said in p.get("data", {}).get("text/plain", "") for p in page), page
