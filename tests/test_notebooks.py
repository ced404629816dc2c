"""The notebooks: committed without outputs, and run top to bottom in a real kernel.

Each notebook is copied into a temporary folder and executed there by nbclient through
the ``python3`` kernel, with every ``ANTHROPIC_*`` variable removed (so the offline
teaching model answers) and ``JPY_SESSION_NAME`` set to the copy's path, as JupyterLab
sets it, so the magic finds the notebook and writes its session file beside it. A cell
that raises (a failed ``assert`` included) fails the test. Then the test checks what a
user would see: the session files each notebook leaves behind and the trees in them.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import kernel_words

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import is_tool_result

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NAMES = (
    "session-tree-chapter",
    "session-tree-chapter.zh-CN",
    "quickstart",
    "compare",
    "tools",
    "experiments",
)
#: the chapter's lesson in English and in Chinese, the chapter's own language
LESSONS = {"en": "session-tree-chapter", "zh": "session-tree-chapter.zh-CN"}
CELL_TIMEOUT = 120


#: a kernel locale that names no language, and a Chinese one (LANG, as a shell sets it)
ENGLISH_LOCALE = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
CHINESE_LOCALE = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}


def kernel_env(notebook: Path, locale: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a headless kernel gets: no API key, the notebook's path, this repo
    (and ``locale``'s variables, if given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(locale or {})
    env["JPY_SESSION_NAME"] = str(notebook)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def execute(name: str, folder: Path, locale: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """Run notebooks/NAME.ipynb in ``folder`` (a copy); raise on the first failing cell."""
    from nbclient import NotebookClient

    notebook = folder / f"{name}.ipynb"
    shutil.copy(NOTEBOOKS / notebook.name, notebook)
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute(env=kernel_env(notebook, locale))
    nbformat.write(nb, notebook)
    return nb


def outputs_text(nb: nbformat.NotebookNode) -> str:
    parts: list[str] = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output["text"])
            elif "data" in output:
                data = output["data"]
                parts.append(data.get("text/plain") or "")
    return "\n".join(parts)


# -- committed notebooks ---------------------------------------------------------------


def dirty_cells(nb: nbformat.NotebookNode) -> list[str]:
    """The ids of code cells that carry outputs or an execution count."""
    return [
        str(cell.get("id", index))
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_has_no_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    dirty = dirty_cells(nb)
    assert not dirty, f"{name}.ipynb has outputs in cells {dirty}; clear them before committing"
    assert "widgets" not in nb.metadata, f"{name}.ipynb carries saved widget state"
    assert nb.metadata["kernelspec"]["name"] == "python3"


def test_the_no_outputs_check_catches_an_executed_cell() -> None:
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    code = next(cell for cell in nb.cells if cell.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    code.execution_count = 1
    assert dirty_cells(nb) == [code.id]


def code_skeleton(source: str) -> list[str]:
    """A code cell without what a translation changes: strings, comments, a magic's text.

    Python cells keep their tokens but strings and comments; a line magic keeps its
    command and first argument (``%chat edit 2``), a cell magic its first line.
    """
    if source.startswith("%%"):
        return [source.splitlines()[0]]
    skeleton: list[str] = []
    python = []
    for line in source.splitlines():
        if line.startswith("%"):
            skeleton.extend(line.split()[:3])
        else:
            python.append(line)
    dropped = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE}
    dropped |= {
        getattr(tokenize, n)
        for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
        if hasattr(tokenize, n)
    }
    tokens = tokenize.generate_tokens(io.StringIO("\n".join(python) + "\n").readline)
    return skeleton + [token.string for token in tokens if token.type not in dropped]


def test_the_chinese_lesson_has_the_english_lessons_cells_in_the_same_order() -> None:
    english, chinese = (nbformat.read(NOTEBOOKS / f"{LESSONS[k]}.ipynb", 4) for k in LESSONS)
    assert [(c.id, c.cell_type) for c in chinese.cells] == [
        (c.id, c.cell_type) for c in english.cells
    ]
    for en, zh in zip(english.cells, chinese.cells, strict=True):
        if en.cell_type == "code":
            assert code_skeleton(zh.source) == code_skeleton(en.source), en.id
    # each links to the other
    assert f"({LESSONS['zh']}.ipynb)" in english.cells[0].source
    assert f"({LESSONS['en']}.ipynb)" in chinese.cells[0].source


def test_the_skeleton_sees_a_changed_code_cell_but_not_a_translated_one() -> None:
    cell = 'tree.append("A", user("Hi!", T0))  # the root\n%chat edit 2 What is it?'
    translated = 'tree.append("A", user("你好！", T0))  # 根节点\n%chat edit 2 这是什么？'
    assert code_skeleton(translated) == code_skeleton(cell)
    assert code_skeleton(cell.replace("T0", "T0 + 1")) != code_skeleton(cell)
    assert code_skeleton(cell.replace("edit 2", "edit 3")) != code_skeleton(cell)


# -- executed through a real kernel ----------------------------------------------------


@pytest.fixture(scope="module")
def english_lesson(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The English lesson, run once: its folder and what its cells printed. Its kernel's
    locale is Chinese: the lesson's own ``TreeChat.language = "en"`` must win."""
    folder = tmp_path_factory.mktemp("lesson-en")
    return folder, outputs_text(execute(LESSONS["en"], folder, CHINESE_LOCALE))


@pytest.mark.kernel
def test_chapter_notebook_runs_and_leaves_the_lesson_tree(english_lesson: tuple[Path, str]) -> None:
    tmp_path, shown = english_lesson
    assert "I was sent **3 messages**" in shown

    # the chapter's four lines, as the project wrote them (header + nodes + one fork)
    lines = (tmp_path / "session-tree-chapter.format.chat.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    assert [json.loads(line)["id"] for line in lines[1:]] == [
        "msg_001",
        "msg_002",
        "msg_003",
        "msg_004",
        "msg_005",
    ]

    lesson = load_file(tmp_path / "session-tree-chapter.lesson.chat.jsonl")
    tree = lesson.tree
    assert lesson.problems == []
    assert len(tree.roots()) == 5 and len(tree.leaves()) == 8
    metas = [node.meta or {} for node in tree]
    assert sum("edited_from" in m for m in metas) == 1
    assert sum("forked_before_tool_use" in m for m in metas) == 1
    assert sum("compacted_from" in m for m in metas) == 1
    assert sum(is_tool_result(node.message) for node in tree) == 2
    # the retry scenario: three sibling answers under one question
    assert any(len(tree.children(node.id)) == 3 for node in tree if node.role == "user")
    # the notebook ends on the pre-compaction branch it switched back to
    assert [m["content"] for m in tree.active_path() if m["role"] == "user"][:1] == [
        "I am learning Python. What is a list?"
    ]
    # its closing section: a long branch, and one answer that saw only its newest part
    budget = load_file(tmp_path / "session-tree-chapter.budget.chat.jsonl")
    assert budget.problems == [] and len(budget.tree) == 26
    answer = budget.tree.get(budget.tree.leaf)
    context = answer.meta["context"]
    saw = context["exchanges"] - context["dropped"]
    assert 0 < saw < 13 == context["exchanges"] and context["budget"] == 1500
    assert f"saw {saw} of 13 exchanges" in shown and f"That is **{saw} exchanges**" in answer.text
    assert "left out     " in shown  # %chat context listed the exchanges it leaves out
    nb = nbformat.read(tmp_path / "session-tree-chapter.ipynb", as_version=4)
    cell = next(cell for cell in nb.cells if cell.id == "budget-09")
    side_by_side = cell.outputs[0]["data"]["text/html"]
    assert f"[{context['dropped']} earlier exchanges left out]" in side_by_side
    unseen = re.findall(r'class="node [a-z ]*unseen"', side_by_side)
    assert len(unseen) == len(budget.tree) - 2 * saw  # the picture fades what it did not see


def tree_shape(session_file: Path) -> list[tuple[Any, ...]]:
    """A session file with its texts left out: what both languages' lessons must share.

    One entry a record: its type; for a node its parent, role, content block types and
    meta (the keys of measurements, not their values), every node named by its position
    in the file, since ids are random.
    """
    position: dict[str, int] = {}
    shape: list[tuple[Any, ...]] = []
    for line in session_file.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        kind = record.get("type", "node")
        if kind == "node":
            message, meta = record["message"], dict(record.get("meta") or {})
            for key, value in meta.items():
                if key in ("edited_from", "forked_before_tool_use", "compacted_from"):
                    meta[key] = position[value]
                elif key != "temperature" and not isinstance(value, str | bool):
                    meta[key] = "measured"  # token counts, durations: they follow the texts
            content = message["content"]
            blocks = "text" if isinstance(content, str) else tuple(b["type"] for b in content)
            parent = record["parentId"]
            shape.append(("node", parent and position[parent], message["role"], blocks, meta))
            position[record["id"]] = len(position)
        elif kind in ("leaf", "label"):
            shape.append((kind, position[record["id"]], record.get("label")))
        else:
            shape.append((kind, sorted(record)))
    return shape


@pytest.mark.kernel
def test_the_chinese_lesson_runs_and_builds_the_same_trees_as_the_english_one(
    english_lesson: tuple[Path, str], tmp_path: Path
) -> None:
    english, _ = english_lesson
    executed = execute(LESSONS["zh"], tmp_path, ENGLISH_LOCALE)
    shown = outputs_text(executed)
    check_the_kernels_words_cell_by_cell(
        nbformat.read(english / f"{LESSONS['en']}.ipynb", as_version=4), executed
    )
    assert "我在 active path 上收到了 **3 条消息**：user → assistant → user。" in shown
    assert "我只看得到这一条路径" in shown and "I was sent" not in shown
    for session in ("format", "lesson", "budget"):
        en = tree_shape(english / f"{LESSONS['en']}.{session}.chat.jsonl")
        zh = tree_shape(tmp_path / f"{LESSONS['zh']}.{session}.chat.jsonl")
        assert zh == en, session
    lesson = load_file(tmp_path / f"{LESSONS['zh']}.lesson.chat.jsonl")
    assert lesson.problems == [] and len(lesson.tree) == 24
    user_texts = [m["content"] for m in lesson.tree.active_path() if m["role"] == "user"]
    assert user_texts == [
        "我在学 Python。list 是什么？",
        "2 + 3 * 4 等于多少？",
        "怎样给 list 排序？",
    ]
    summary = next(node for node in lesson.tree if "compacted_from" in (node.meta or {}))
    assert summary.text.startswith("到目前为止的对话总结：")
    # and it draws the same pictures: the same shapes and edges in the same cells
    en_pictures = pictures_of(nbformat.read(english / f"{LESSONS['en']}.ipynb", as_version=4))
    zh_pictures = pictures_of(executed)
    assert {k: drawn(v) for k, v in zh_pictures.items()} == {
        k: drawn(v) for k, v in en_pictures.items()
    }


#: the Chinese lesson's cells that show the kernel's own texts (footers, notices, `%chat`
#: output, the picture's caption), each with words a reader sees there
KERNEL_CELLS = {
    "chapter-36": ["正在使用会话 'lesson'", "个节点"],  # %chat use lesson
    "chapter-42": ["输入", "输出", "回复 1/1", "问题 2/2"],  # %chat edit 2: the footer
    "chapter-45-draw": ["会话树：显示了 8 条消息"],  # %chat tree --svg
    "chapter-53-draw": ["会话树：显示了 16 条消息"],
    "chapter-55": ["输入", "输出", "回复 1/1"],  # %%chat --new
    "chapter-56": ["回复 2/2"],  # %chat retry: a sibling answer
    "chapter-57-draw": ["会话树：显示了 20 条消息"],
    "chapter-60": ["→ 叶子", "深度"],  # %chat branches first-answer
    "chapter-61": ["现在在"],  # %chat switch original
    "chapter-67": ["已压缩成新的根", "旧分支仍在"],  # %chat compact
    "chapter-69": ["输入", "输出"],  # %%chat after the compaction
    "chapter-72": ["现在在"],  # %chat switch before-compaction
    "chapter-73-draw": ["会话树：显示了 24 条消息", "标签：first-answer"],
    "chapter-75": ["我在学 Python"],  # %chat tree
    "budget-03": ["正在使用会话 'budget'"],  # %chat use budget
    "budget-06": ["看到了", "轮问答"],  # %%chat --budget 1500: what the answer saw
    "budget-12": ["当前路径的上下文", "预算", "已省去", "已发送"],  # %chat context
}
#: the words that stay English in Chinese: roles, the offline model's settings line, the
#: chapter's own term (its replies say "active path"), units
IDENTIFIERS = {"user", "assistant", "tool", "active", "path", "model", "temperature"}
IDENTIFIERS |= {"system", "prompt", "token", "tokens"}
_TOKEN = re.compile(r"[\w.\-/:$%<>]+(?:\s?…)?")


def cell_texts(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Cell id -> what its outputs show as text: streams, errors, each display's plain
    text (a widget's is only its repr: left out), a picture's words."""
    texts: dict[str, str] = {}
    for cell in nb.cells:
        parts: list[str] = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output["text"])
            elif output.get("output_type") == "error":
                parts.append(f"{output['ename']}: {output['evalue']}")
            elif "data" in output:
                data = output["data"]
                svg = data.get("image/svg+xml")
                if svg:
                    parts.extend(re.findall(r"<(?:text|title)\b[^>]*>([^<]*)<", svg))
                elif "application/vnd.jupyter.widget-view+json" not in data:
                    parts.append(data.get("text/plain") or "")
        texts[cell.id] = "\n".join(parts)
    return texts


def typed_words(nb: nbformat.NotebookNode) -> set[str]:
    """The words of the questions and labels a lesson's cells type: a cell's output may
    show them as they are (not the keys of JSON the cells read: those show nowhere)."""
    typed: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.source.startswith("%"):  # a %%chat cell's question; not a command's name
            body = cell.source.partition("\n")[2] if cell.source.startswith("%%") else ""
            typed.update(re.findall(r"[A-Za-z]+", body))
            continue
        tokens = tokenize.generate_tokens(io.StringIO(cell.source + "\n").readline)
        for token in tokens:  # a question (it has Chinese in it), a label, a tool's default
            said = kernel_words.HAN.search(token.string) or ".label(" in token.line
            said = said or token.line.lstrip().startswith("def ")
            if token.type == tokenize.STRING and said:
                typed.update(re.findall(r"[A-Za-z]+", token.string))
    return typed


def english_words(text: str, allowed: set[str]) -> list[str]:
    """The English words left in a Chinese cell's output: words of letters only that are
    not ``allowed``, leaving out identifiers (ids, names joined by ``-``, ``_`` or ``.``,
    paths, numbers, 'quoted' names), `code`, %chat commands and words cut short by ``…``."""
    text = re.sub(r"`[^`]*`|%%?chat(?: [\w-]+)+|'[^'\s]+'", " ", text)
    words = []
    for token in _TOKEN.findall(text):
        if token.endswith("…") or not re.fullmatch(r"[A-Za-z]{2,}", token):
            continue
        if token in allowed or re.fullmatch(r"[a-f]{7}|[a-f]{16}", token):
            continue
        words.append(token)
    return words


def check_the_kernels_words_cell_by_cell(
    english: nbformat.NotebookNode, chinese: nbformat.NotebookNode
) -> None:
    """Each cell of the Chinese lesson that shows the kernel's texts shows its Chinese
    words and no English word but identifiers; every cell shows the translation of each
    catalog message the same English cell shows, and no English sentence of the catalog."""
    en, zh = cell_texts(english), cell_texts(chinese)
    assert en.keys() == zh.keys()
    allowed = IDENTIFIERS | typed_words(chinese)
    magic = {c.id for c in chinese.cells if c.cell_type == "code" and c.source.startswith("%")}
    shown = {cell for cell in magic if zh[cell].strip()}
    assert shown == set(KERNEL_CELLS), shown ^ set(KERNEL_CELLS)
    for cell, words in KERNEL_CELLS.items():
        assert all(word in zh[cell] for word in words), (cell, words, zh[cell])
        assert english_words(zh[cell], allowed) == [], (cell, zh[cell])
        assert kernel_words.shown(en[cell]), (cell, en[cell])  # and English in English,
        assert not kernel_words.HAN.search(en[cell]), (cell, en[cell])  # its kernel's
        # locale Chinese: the English lesson's TreeChat.language = "en" wins
    for cell in en:
        assert kernel_words.english_left(zh[cell]) == [], (cell, zh[cell])
        assert kernel_words.translation_missing(en[cell], zh[cell]) == [], (cell, zh[cell])


def test_the_english_words_check_sees_a_footer_left_in_english() -> None:
    allowed = IDENTIFIERS | {"Python"}
    chinese = "f4d94b5 · offline-teacher · 输入 154 · 输出 90 · 回复 1/1"
    assert english_words(chinese, allowed) == []
    assert english_words(chinese.replace("输入 154", "154 in"), allowed) == ["in"]
    assert english_words("我在学 Python `%chat switch abc` /tmp/a.chat.jsonl 200k …", allowed) == []
    assert english_words("← current  [2 replies]", allowed) == ["current", "replies"]
    assert english_words("正在使用会话 'budget'", allowed) == []


SVG = "{http://www.w3.org/2000/svg}"
#: cell id -> (messages drawn, roots) for each tree the lesson draws
PICTURES = {
    "chapter-10-draw": (5, 1),  # the linear chain A → B → C → D → E
    "chapter-11-draw": (7, 1),  # C' → D' forked at B
    "chapter-34-draw": (7, 1),  # the edit: C, C' and C2 under B
    "chapter-45-draw": (8, 1),  # scenario 1: the edited question beside the original
    "chapter-53-draw": (16, 3),  # scenario 2: the tool call, and the fork before it
    "chapter-57-draw": (20, 4),  # scenario 3: three retry siblings
}


def drawn(svg: str) -> tuple[int, int, int]:
    """(message shapes, edges, compaction links) in a picture, parsed as strict XML."""
    root = ET.fromstring(svg)
    nodes = [g for g in root.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]
    edges = [p for p in root.iter(f"{SVG}path") if "edge" in (p.get("class") or "").split()]
    links = [p for p in root.iter(f"{SVG}path") if p.get("class") == "compaction"]
    return len(nodes), len(edges), len(links)


def pictures_of(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Cell id -> the SVG picture it output, for each cell that drew one."""
    return {
        cell.id: output["data"]["image/svg+xml"]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if "image/svg+xml" in output.get("data", {})
    }


@pytest.mark.kernel
def test_the_lesson_draws_each_tree_and_keeps_the_pictures_in_its_html(
    english_lesson: tuple[Path, str],
) -> None:
    folder, _ = english_lesson
    nb = nbformat.read(folder / f"{LESSONS['en']}.ipynb", as_version=4)  # as executed
    pictures = pictures_of(nb)
    assert set(pictures) == {*PICTURES, "chapter-73-draw"}
    for cell_id, (messages, roots) in PICTURES.items():
        assert drawn(pictures[cell_id]) == (messages, messages - roots, 0), cell_id
    final = load_file(folder / "session-tree-chapter.lesson.chat.jsonl").tree
    nodes, edges, links = drawn(pictures["chapter-73-draw"])
    assert (nodes, links) == (len(final), 1) and edges == nodes - len(final.roots())

    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(nb)  # a static page: no kernel behind it
    images = re.findall(r'<img[^>]* src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    assert [base64.b64decode(image).decode() for image in images] == list(pictures.values())


@pytest.mark.kernel
def test_quickstart_runs_and_leaves_its_session_beside_it(tmp_path: Path) -> None:
    nb = execute("quickstart", tmp_path)
    session_file = tmp_path / "quickstart.chat.jsonl"
    assert session_file.exists()
    assert not (tmp_path / "jupyter-tree-chat.chat.jsonl").exists()  # no fallback file
    loaded = load_file(session_file)
    tree = loaded.tree
    assert loaded.problems == []
    assert list(loaded.labels.values()) == ["first-answer"]
    assert len(tree.roots()) == 2  # the first question and its edit
    user_texts = [m["content"] for m in tree.active_path() if m["role"] == "user"]
    assert user_texts == [
        "What is 2 + 3 * 4?",
        "Good. Now what is 14 * 14?",
        "And what is 196 - 14?",
    ]
    edited = tree.roots()[1]
    assert edited.text == "What is (2 + 3) * 4?" and len(tree.children(edited.id)) == 2
    assert "using the offline teaching model" in outputs_text(nb)
    assert "sk-ant" not in session_file.read_text()


@pytest.mark.kernel
def test_compare_notebook_runs(tmp_path: Path) -> None:
    nb = execute("compare", tmp_path)
    tree = load_file(tmp_path / "compare.chat.jsonl").tree
    # one fan-out cell per kind: 3 samples, 3 temperatures, 2 models
    roots = tree.roots()
    assert [len(tree.children(root.id)) for root in roots] == [3, 3, 2]
    models = tree.children(roots[2].id)
    # offline, each answer is named for what answered and keeps what was asked for
    assert [a.meta["model"] for a in models] == ["offline-teacher", "offline-teacher"]
    assert [a.meta["asked_model"] for a in models] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
    follow_up = next(n for n in tree if n.text == "Say that again, shorter.")
    assert follow_up.parent_id in {a.id for a in models}  # continued from the best answer
    html = [
        out["data"]["text/html"]
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "text/html" in out.get("data", {})
    ]
    assert sum('class="jtc-fanout"' in h for h in html) == 3
    assert sum('<details class="jtc-differences">' in h for h in html) == 3
    source = "".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "<" not in source  # no hand-written HTML


@pytest.mark.kernel
def test_experiments_notebook_runs_two_versions_over_its_rows(tmp_path: Path) -> None:
    nb = execute("experiments", tmp_path)
    tree = load_file(tmp_path / "experiments.chat.jsonl").tree
    rows = [n for n in tree.roots() if (n.meta or {}).get("experiment")]
    assert [(n.meta["experiment"]["version"], n.meta["experiment"]["index"]) for n in rows] == [
        (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)
    ]  # fmt: skip
    assert [len(tree.children(n.id)) for n in rows] == [1] * 6
    html = [
        out["data"]["text/html"]
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "text/html" in out.get("data", {})
    ]
    assert sum('class="jtc-experiment-grid"' in h for h in html) == 2
    assert sum('class="jtc-version-row"' in h for h in html) == 1  # the versions compared
    assert not any("jtc-experiment-progress" in h for h in html)  # replaced by the grids
    # section 6: grades by hand, a preference, a function; the judge says it needs a model
    records = [json.loads(line) for line in (tmp_path / "experiments.chat.jsonl").open()]
    grades = [r for r in records if r.get("type") == "grade"]
    answers = [tree.children(n.id)[0].id for n in rows]
    assert [(g["id"], g["score"]) for g in grades if g["by"] == "hand"] == [
        (answers[0], 4), (answers[3], 5)
    ]  # fmt: skip
    assert len([g for g in grades if g["grader"] == "one_word"]) == 6
    assert [(r["better"], r["worse"]) for r in records if r.get("type") == "preference"] == [
        (answers[3], answers[0])
    ]
    shown = outputs_text(nb)
    assert "a judge needs a real model" in shown
    assert "version  model            answers  grade" in shown  # %chat experiment


@pytest.mark.kernel
def test_tools_notebook_calls_server_everything_and_forks_before_the_call(tmp_path: Path) -> None:
    nb = execute("tools", tmp_path)
    shown = outputs_text(nb)
    tree = load_file(tmp_path / "tools.chat.jsonl").tree
    assert 'tool call: everything:get-sum {"a": 2, "b": 40}' in shown
    assert "everything:get-sum" in shown and "read-only" in shown  # %chat mcp everything
    (result,) = [n for n in tree if is_tool_result(n.message)]
    assert "42" in json.dumps(result.message["content"])
    forked = next(n for n in tree if (n.meta or {}).get("forked_before_tool_use"))
    assert tree.leaf is not None and forked.id in {n.id for n in tree.path_nodes(tree.leaf)}


@pytest.mark.kernel
def test_tools_notebook_shows_the_notebook_server_offline(tmp_path: Path) -> None:
    nb = execute("tools", tmp_path)
    shown = outputs_text(nb)
    tree = load_file(tmp_path / "tools.notebook-tools.chat.jsonl").tree
    results = [json.dumps(n.message["content"]) for n in tree if is_tool_result(n.message)]
    assert any("sales: pandas.DataFrame, shape (4, 2)" in r for r in results)
    assert any("| Apr     |     140 |" in r for r in results)  # describe: the table
    assert any("notebook:run was not run" in r for r in results)
    assert any("result:\\nMar" in r for r in results)
    assert any("No cell was inserted" in r for r in results)
    assert "Allow it with %%chat --allow-run" in shown
    assert "best is still Mar" in shown
    assert "['notebook:describe', 'notebook:insert', 'notebook:run', 'notebook:variables']" in shown


@pytest.mark.kernel
def test_demo_execution_step_leaves_notebook_session_and_tree(tmp_path: Path) -> None:
    """``scripts/demo.sh --no-setup DIR``: what the README's demo does after the setup."""
    out = tmp_path / "demo"
    env = kernel_env(out / "quickstart.ipynb")
    env.pop("JPY_SESSION_NAME")  # the script sets it itself
    env["DEMO_PYTHON"] = sys.executable
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh"), "--no-setup", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    executed = nbformat.read(out / "quickstart.ipynb", as_version=4)
    assert all(
        cell.execution_count is not None for cell in executed.cells if cell.cell_type == "code"
    )
    assert (out / "quickstart.chat.jsonl").exists()
    assert "What is 2 + 3 * 4?" in result.stdout  # the printed tree
    assert "jupyter lab" in result.stdout
