"""The notebook as context on a real kernel (kernel/context.py), against the fake API.

Each test runs cells the way JupyterLab does and then reads what the fake Messages API
received: the table's cells, the image block's media type and a decodable image, the
document block, the quoted branch; and what the user sees: the ``sent:`` line under
the footer, or the one-line error when something cannot be sent (and then that no
request left and nothing was written).
"""

from __future__ import annotations

import base64
import io
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.kernel_harness import CellRun, Kernel
from PIL import Image

pytestmark = pytest.mark.kernel

SETUP = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import SVG, Image as IPythonImage
from PIL import Image as PILImage

df = pd.DataFrame({f"c{j}": [i * 100 + j for i in range(1000)] for j in range(12)})
fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
ax.plot([3, 1, 2])
"""


@pytest.fixture(scope="module")
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory, server: FakeAnthropic) -> Iterator[Kernel]:
    env = {"ANTHROPIC_API_KEY": "sk-test-dummy", "ANTHROPIC_BASE_URL": server.base_url}
    with Kernel(tmp_path_factory.mktemp("notebook"), env=env) as started:
        started.run(SETUP).check()
        yield started


@pytest.fixture
def fake(server: FakeAnthropic) -> FakeAnthropic:
    server.reset()
    return server


def ask(kernel: Kernel, text: str, session: str, options: str = "") -> CellRun:
    return kernel.chat(text, None, f"--session {session} {options}")


def question_sent(fake: FakeAnthropic) -> Any:
    """The last message of the last request the API received: its text if it is one text
    block, else its blocks (without the provider's ``cache_control`` marks)."""
    content = fake.requests[-1].body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    blocks = [{k: v for k, v in block.items() if k != "cache_control"} for block in content]
    return blocks[0]["text"] if len(blocks) == 1 and blocks[0]["type"] == "text" else blocks


def stored_questions(kernel: Kernel, session: str) -> list[dict[str, Any]]:
    path = kernel.session_file(session)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in records if r.get("message", {}).get("role") == "user"]


def table_rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return [row for row in rows if not set("".join(row)) <= set("-:")]


def decoded(block: dict[str, Any]) -> Image.Image:
    assert block["type"] == "image" and block["source"]["type"] == "base64"
    image = Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))
    image.load()
    assert block["source"]["media_type"] == Image.MIME[image.format]
    return image


def one_line_error(run: CellRun) -> str:
    """The one line a failed cell shows (IPython prints a UsageError on stderr)."""
    assert run.status == "error"
    lines = [line for line in [*run.stderr.splitlines(), *run.error_lines] if line.strip()]
    assert len(lines) == 1, run.error_lines
    return lines[0]


# -- {name} by type ------------------------------------------------------------------------


def test_a_dataframe_is_sent_as_a_table_and_the_cell_says_so(kernel, fake):
    run = ask(kernel, "What stands out in {df}?", "frame").check()
    sent = question_sent(fake)
    assert isinstance(sent, str) and sent.startswith("What stands out in \n\n|")
    rows = table_rows(sent)
    assert rows[0] == ["", *[f"c{j}" for j in range(12)]]
    assert len(rows) == 41 and rows[-1] == ["999", *[str(99_900 + j) for j in range(12)]]
    assert "1,000 rows × 12 columns, 40 shown\n\n?" in sent
    assert run.markdown[-1] == "sent: df (DataFrame 1,000×12 → 40 rows)"
    assert run.markdown[-2].split(" · ")[1] == "claude-sonnet-4-6"  # the footer above it
    (question,) = stored_questions(kernel, "frame")
    assert question["meta"]["context"] == [
        {
            "name": "df",
            "kind": "variable",
            "type": "DataFrame",
            "size": "1,000×12",
            "became": "40 rows",
        }
    ]


def test_the_limits_are_treechat_settings(kernel, fake):
    kernel.run("%config TreeChat.max_rows = 4").check()
    kernel.run("%config TreeChat.max_chars = 50").check()
    kernel.run("long_list = list(range(1000))").check()
    try:
        run = ask(kernel, "{df} and {long_list}", "limits").check()
    finally:
        kernel.run("%config TreeChat.max_rows = 40").check()
        kernel.run("%config TreeChat.max_chars = 20000").check()
    sent = question_sent(fake)
    assert [row[0] for row in table_rows(sent)[1:]] == ["0", "1", "998", "999"]
    assert "1,000 rows × 12 columns, 4 shown" in sent
    whole = repr(list(range(1000)))
    assert sent.endswith(f"and {whole[:50]}\n… [cut: 4,840 of 4,890 characters not sent]")
    assert run.markdown[-1] == (
        "sent: df (DataFrame 1,000×12 → 4 rows), long_list (list 4,890 chars → repr, cut to 50)"
    )


def test_a_numpy_array_is_its_summary_with_shape_and_dtype(kernel, fake):
    kernel.run("a = np.arange(3000, dtype=np.int16).reshape(1000, 3)").check()
    run = ask(kernel, "Describe {a}", "array").check()
    sent = question_sent(fake)
    assert "array([[   0,    1,    2],\n" in sent and "...,\n" in sent
    assert sent.endswith("shape (1000, 3), dtype int16")
    assert run.markdown[-1] == "sent: a (ndarray 1,000×3 int16 → summarised)"


def test_a_figure_is_an_image_block_where_the_field_stood(kernel, fake):
    run = ask(kernel, "Look at {fig} and say what the trend is.", "figure").check()
    before, block, after = question_sent(fake)
    assert before == {"type": "text", "text": "Look at "}
    assert after["text"] == " and say what the trend is."
    image = decoded(block)
    assert image.format == "PNG" and 500 < image.width <= 600 and 300 < image.height <= 400
    assert run.markdown[-1] == f"sent: fig (PNG {image.width}×{image.height})"
    (question,) = stored_questions(kernel, "figure")
    assert question["message"]["content"][1] == block  # the file keeps the block as sent


def test_rerunning_a_figure_cell_unchanged_is_a_retry(kernel, fake):
    kernel.chat("What is {fig}?", "cfig0001", "--session rerun").check()
    kernel.chat("What is {fig}?", "cfig0001", "--session rerun").check()
    assert len(stored_questions(kernel, "rerun")) == 1
    assert len(fake.requests) == 2


def test_pil_and_ipython_images_are_scaled_to_the_api_limit(kernel, fake):
    kernel.run("photo = PILImage.new('RGB', (4000, 3000), 'orange')").check()
    kernel.run(
        "buffer = __import__('io').BytesIO(); PILImage.new('RGB', (300, 200)).save(buffer, 'GIF')\n"
        "gif = IPythonImage(data=buffer.getvalue())"
    ).check()
    run = ask(kernel, "{photo} {gif}", "images").check()
    photo, gif = question_sent(fake)
    assert decoded(photo).size == (1568, 1176)
    assert decoded(gif).format == "GIF"
    assert run.markdown[-1] == "sent: photo (PNG 4000×3000 → 1568×1176), gif (GIF 300×200)"


def test_without_pillow_a_large_image_is_refused_in_one_line(kernel, fake):
    kernel.run(
        "buffer = __import__('io').BytesIO()\n"
        "PILImage.new('RGB', (3000, 2000)).save(buffer, 'PNG')\n"
        "wide = IPythonImage(data=buffer.getvalue())\n"
        "import sys; saved_pil = sys.modules['PIL']; sys.modules['PIL'] = None"
    ).check()
    try:
        run = ask(kernel, "{wide}", "nopillow")
    finally:
        kernel.run("sys.modules['PIL'] = saved_pil").check()
    assert one_line_error(run) == (
        "UsageError: %%chat: {wide} is 3000×2000 (the API takes at most 1568 px on the long "
        "side); install Pillow (pip install pillow) to have it scaled down"
    )
    assert fake.requests == [] and not kernel.session_file("nopillow").exists()


# -- cells and errors ----------------------------------------------------------------------


def test_in_out_and_err_are_a_cells_source_result_and_error(kernel, fake):
    source = kernel.run("def ratio(a, b):\n    return a / b\n")
    result = kernel.run("df.head(2)").check()
    failed = kernel.run("ratio(1, 0)")
    assert failed.status == "error"
    assert "ZeroDivisionError" in failed.visible_text  # shown as IPython always shows it
    n_source, n_result, n_error = (
        source.execution_count,
        result.execution_count,
        failed.execution_count,
    )
    run = ask(
        kernel, f"Why does {{In[{n_source}]}} fail? {{Err}} Data: {{Out[{n_result}]}}", "cells"
    )
    run.check()
    sent = question_sent(fake)
    assert f"In [{n_source}]:\n\n```python\ndef ratio(a, b):\n    return a / b\n```" in sent
    assert f"The error cell {n_error} raised:\n\n```\nTraceback (most recent call last):" in sent
    assert f'File "Cell In[{n_error}]", line 1, in <module>\n    ratio(1, 0)' in sent
    assert f'File "Cell In[{n_source}]", line 2, in ratio\n    return a / b' in sent
    assert "ZeroDivisionError: division by zero\n```" in sent
    assert "interactiveshell.py" not in sent
    assert table_rows(sent)[-1] == ["1", *[str(100 + j) for j in range(12)]]
    assert run.markdown[-1] == (
        f"sent: In[{n_source}] (code 2 lines), Err (ZeroDivisionError → traceback of "
        f"In[{n_error}]), Out[{n_result}] (DataFrame 2×12 → table)"
    )
    again = ask(kernel, f"{{Err[{n_error}]}}", "cells2").check()
    assert question_sent(fake).startswith(f"The error cell {n_error} raised:")
    assert (
        again.markdown[-1]
        == f"sent: Err[{n_error}] (ZeroDivisionError → traceback of In[{n_error}])"
    )
    assert kernel.run(f"print(Err[{n_error}].headline)").check().stdout == (
        "ZeroDivisionError: division by zero\n"
    )


def test_an_unknown_name_or_cell_is_one_line_and_nothing_is_sent(kernel, fake):
    for text, says in [
        ("{nowhere}", "{nowhere} names no Python variable; define nowhere, write {{nowhere}}"),
        ("{In[9999]}", "{In[9999]}: there is no cell 9999 yet"),
        ("{Out[9998]}", "{Out[9998]}: cell 9998 has no result (cells with one:"),
        ("{Err[9997]}", "{Err[9997]}: cell 9997 raised no error (cells that did:"),
    ]:
        assert one_line_error(ask(kernel, text, "unknown")).startswith(
            f"UsageError: %%chat: {says}"
        )
    assert fake.requests == [] and not kernel.session_file("unknown").exists()


def test_double_braces_and_raw_keep_the_fields_as_written(kernel, fake):
    ask(kernel, 'Literal {{df}} and {{In[1]}}, code {"a": {x}}', "braces", "--raw").check()
    assert question_sent(fake) == 'Literal {{df}} and {{In[1]}}, code {"a": {x}}'
    kernel.run("x = 5").check()
    ask(kernel, "Literal {{df}} and {{In[1]}}, set {x}", "braces").check()
    assert question_sent(fake) == "Literal {df} and {In[1]}, set 5"


# -- --attach ------------------------------------------------------------------------------


def test_attached_files_are_text_document_and_image_blocks(kernel, fake):
    folder = kernel.folder
    (folder / "notes").mkdir(exist_ok=True)
    (folder / "notes" / "plan.md").write_text("# Plan\n\n- ship it\n")
    kernel.run("fig.savefig('chart.pdf'); fig.savefig('notes/chart.png')").check()
    kernel.run("import os; os.chdir('notes')").check()  # relative to the notebook, not the cwd
    try:
        run = ask(
            kernel,
            "Do these agree?",
            "attach",
            "--attach notes/plan.md --attach chart.pdf --attach notes/chart.png",
        ).check()
    finally:
        kernel.run(f"os.chdir({str(folder)!r})").check()
    text, document, image, question = question_sent(fake)
    assert text == {
        "type": "text",
        "text": "File `notes/plan.md`:\n\n```md\n# Plan\n\n- ship it\n```\n\n",
    }
    assert document["type"] == "document" and document["title"] == "chart.pdf"
    assert document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]) == (folder / "chart.pdf").read_bytes()
    assert decoded(image).size == Image.open(folder / "notes" / "chart.png").size
    assert question == {"type": "text", "text": "Do these agree?"}
    size = (folder / "chart.pdf").stat().st_size / (1024 * 1024)
    width, height = Image.open(folder / "notes" / "chart.png").size
    assert run.markdown[-1] == (
        f"sent: notes/plan.md (text 18 chars), chart.pdf (PDF {size:.1f} MB → document), "
        f"notes/chart.png (PNG {width}×{height})"
    )


def test_a_missing_folder_or_huge_attachment_is_one_line_and_nothing_is_written(kernel, fake):
    huge = kernel.folder / "huge.png"
    with huge.open("wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n")
        file.truncate(100 * 1024 * 1024)  # sparse: 100 MB that take no disk
    (kernel.folder / "adir").mkdir(exist_ok=True)
    if not (kernel.folder / "pipe").exists():
        os.mkfifo(kernel.folder / "pipe")  # reading it would wait forever
    for option, says in [
        ("--attach missing.txt", "--attach missing.txt: no such file (looked for "),
        ("--attach adir", "--attach adir: is a folder; attach its files one by one"),
        ("--attach pipe", "--attach pipe: is not a regular file"),
        ("--attach huge.png", "--attach huge.png: is 100.0 MB; files over 50.0 MB are not read"),
        ("--attach logo.svg", "--attach: logo.svg is an SVG, which is not sent"),
    ]:
        (kernel.folder / "logo.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
        line = one_line_error(ask(kernel, "hi", "badattach", option))
        assert line.startswith(f"UsageError: %%chat {says}")
    assert fake.requests == [] and not kernel.session_file("badattach").exists()


# -- hostile images ------------------------------------------------------------------------


class _Counter(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Counter.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_hostile_images_run_load_nothing_and_are_refused_in_one_line(kernel, fake):
    web = ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    remote = f"http://127.0.0.1:{web.server_port}/cat.png"
    try:
        kernel.run(
            f"remote = IPythonImage(url={remote!r})\n"
            "script = IPythonImage(url='javascript:alert(document.cookie)')\n"
            'logo = SVG(\'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>\')'
        ).check()
        lines = [
            one_line_error(ask(kernel, f"{{{name}}}", "hostile"))
            for name in ("remote", "script", "logo")
        ]
    finally:
        web.shutdown()
        web.server_close()
    url = "is an image by URL, which is never fetched; download it and pass the bytes"
    assert lines[0].startswith(f"UsageError: %%chat: {{remote}} {url}")
    assert lines[1].startswith(f"UsageError: %%chat: {{script}} {url}")
    assert lines[2].startswith("UsageError: %%chat: {logo} is an SVG, which is not sent")
    assert _Counter.hits == [] and fake.requests == []
    assert not kernel.session_file("hostile").exists()


# -- --with --------------------------------------------------------------------------------


def test_with_quotes_an_answer_from_a_sibling_branch(kernel, fake):
    fake.enqueue(text="Use a B-tree: it keeps keys sorted.")
    kernel.chat("Which index for range queries?", "cw000001", "--session with").check()
    first_answer = kernel.run("print(_chat_id)").check().stdout.strip()
    kernel.chat("Which index for point lookups?", "cw000001", "--session with").check()  # an edit
    run = kernel.chat(
        "Compare with the other branch.", "cw000002", f"--session with --with {first_answer[:8]}"
    ).check()
    quote, question = question_sent(fake)
    assert quote["text"] == (
        f"From branch {first_answer[:7]} (an answer):\n\n> Use a B-tree: it keeps keys sorted.\n\n"
    )
    assert question == {"type": "text", "text": "Compare with the other branch."}
    path = [m["content"] for m in fake.requests[-1].body["messages"]]
    assert path[0] == "Which index for point lookups?"  # the current branch, not the old one
    assert run.markdown[-1] == f"sent: {first_answer[:7]} (answer 35 chars → quote)"

    kernel.chat(
        "And its whole path?", "cw000003", f"--session with --with {first_answer[:8]} --with-path"
    ).check()
    whole = question_sent(fake)[0]["text"]
    assert whole.startswith(
        f"From branch {first_answer[:7]}, the whole path to it:\n\n# Chat session\n\n2 messages"
    )
    assert "Which index for range queries?" in whole and "Use a B-tree" in whole


def test_with_an_unknown_node_is_one_line(kernel, fake):
    line = one_line_error(ask(kernel, "hi", "with", "--with zzzzzzz"))
    assert line == (
        "UsageError: %%chat --with zzzzzzz: no node id or label starts with 'zzzzzzz'; "
        "`%chat tree` shows the ids"
    )
    assert fake.requests == []


# -- %chat edit and %chat code -------------------------------------------------------------


def test_chat_edit_fills_fields_by_type_too(kernel, fake):
    kernel.chat("First question", "ce000001", "--session edit").check()
    kernel.run("%chat use edit").check()
    try:
        run = kernel.run("%chat edit 1 Now with {fig}").check()
    finally:
        kernel.run("%chat use default").check()
    text, image = question_sent(fake)
    assert text == {"type": "text", "text": "Now with "} and decoded(image).format == "PNG"
    assert run.markdown[-1].startswith("sent: fig (PNG ")
    assert stored_questions(kernel, "edit")[-1]["meta"]["context"][0]["name"] == "fig"


def test_a_question_keeps_its_typed_text_and_an_edit_fills_its_fields_in_again(kernel, fake):
    kernel.run("small = pd.DataFrame({'x': range(100), 'y': range(100)})").check()
    (kernel.folder / "notes.txt").write_text("x grows\n")
    ask(kernel, "What does {small} show? {{not_a_field}}", "typed").check()
    ask(kernel, "And now {small}?", "typed", "--attach notes.txt").check()
    first, second = stored_questions(kernel, "typed")
    chip = first["meta"]["typed"][1]
    assert first["meta"]["typed"] == ["What does ", chip, " show? {{not_a_field}}"]
    assert chip["field"] == "small" and chip["about"] == "DataFrame 100×2"
    start, end = chip["sent"]
    assert first["message"]["content"][start:end].endswith("100 rows × 2 columns, 40 shown")
    attached = "File `notes.txt`:\n\n```txt\nx grows\n```"
    assert second["meta"]["typed"][0] == {
        "field": "notes.txt",
        "kind": "attachment",
        "about": "text 8 chars",
        "sent": [0, len(attached)],
    }
    kernel.run("%chat use typed").check()
    try:
        tree = kernel.run("%chat tree").check().stdout
        kernel.run("small = pd.DataFrame({'x': range(7), 'y': range(7)})").check()
        again = kernel.run("%chat edit 2").check()
        refilled = question_sent(fake)
        answer = second["parentId"]  # two versions of question 2 now branch from it
        branches = kernel.run(f"%chat branches {answer}").check().stdout
        raw = kernel.run("%chat edit 1 --raw Plain {small}").check()
        raw_sent = question_sent(fake)
    finally:
        kernel.run("%chat use default").check()
    assert "user  What does [small · DataFrame 100×2] show? {{not_a_field}}" in tree
    assert "user  [notes.txt · text 8 chars] And now [small · DataFrame 100×2] …" in tree
    assert "user      [notes.txt · text 8 chars] And now [small · DataFrame 100×2] …" in branches
    assert "user      [notes.txt · text 8 chars] And now [small · DataFrame 7×2]?" in branches
    assert "|" not in (tree + branches).replace("│", "")  # the chips, never the table
    assert again.stdout.startswith(
        "Filled in again from the kernel's values now: {small} (DataFrame 7×2).\n"
    )
    file_block, words = refilled  # the file kept as it was sent, the table new
    assert file_block["text"] == attached + "\n\n"
    assert "7 rows × 2 columns" in words["text"] and words["text"].startswith("And now ")
    assert table_rows(words["text"])[-1] == ["6", "6", "6"]
    edited = stored_questions(kernel, "typed")[-2]
    assert edited["meta"]["typed"][0]["field"] == "notes.txt"
    assert edited["meta"]["typed"][2]["about"] == "DataFrame 7×2"
    assert "Filled in again" not in raw.stdout
    assert raw_sent == "Plain {small}"  # --raw: as written


def test_chat_code_puts_a_code_block_into_the_next_cell(kernel, fake):
    fake.enqueue(
        text="Try:\n\n```python\nimport math\nprint(math.pi)\n```\n\nor\n\n```\nx = 1\n```\n"
    )
    kernel.chat("How do I print pi?", "cc000001", "--session code").check()
    kernel.run("%chat use code").check()
    try:
        last = kernel.run("%chat code").check()
        first = kernel.run("%chat code 1").check()
        wrong = kernel.run("%chat code 3")
    finally:
        kernel.run("%chat use default").check()
    assert last.payload == [{"source": "set_next_input", "text": "x = 1", "replace": False}]
    assert first.payload == [
        {"source": "set_next_input", "text": "import math\nprint(math.pi)", "replace": False}
    ]
    assert "Code block 1 of 2 of " in first.stdout
    assert one_line_error(wrong).endswith("has 2 code block(s); give K from 1 to 2")
