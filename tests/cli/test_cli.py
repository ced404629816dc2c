"""The command line: what a person sees on stdout and stderr, and the exit status."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.fake_rules import validate
from helpers.import_samples import (
    chatgpt_export,
    claude_code_session,
    jsonl,
    open_webui_export,
    pi_entry,
    pi_session,
    pi_v1_with_damage,
)

from jupyter_tree_chat.cli import main
from jupyter_tree_chat.history.store import parse_session
from jupyter_tree_chat.providers.tools.wire import request_tools

CHAPTER = (
    '{"id":"msg_001","parentId":null,"message":{"role":"user","content":"hello","timestamp":1718400000}}\n'
    '{"id":"msg_002","parentId":"msg_001","message":{"role":"assistant","content":[{"type":"text",'
    '"text":"Hi!"}],"timestamp":1718400005}}\n'
    '{"id":"msg_003","parentId":"msg_002","message":{"role":"user","content":"继续","timestamp":1718400010}}\n'
    '{"id":"msg_004","parentId":"msg_002","message":{"role":"user","content":"换一种问法",'
    '"timestamp":1718400020}}\n'
)
SCRIPT = Path(sys.executable).with_name("jupyter-tree-chat")
JUPYTER = Path(sys.executable).with_name("jupyter")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def chapter(tmp_path: Path) -> Path:
    path = tmp_path / "s.chat.jsonl"
    path.write_text(CHAPTER, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_show_draws_the_tree_with_the_current_leaf(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "show", str(chapter))
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "msg_001 user  hello"
    assert lines[1].startswith("msg_002 assistant  Hi!") and lines[1].endswith("[2 replies]")
    assert lines[2] == "├─ msg_003 user  继续"
    assert lines[3].startswith("└─ msg_004 user  换一种问法") and lines[3].endswith("← current")


def test_path_json_is_exactly_what_the_model_is_sent(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "path", str(chapter), "--json")
    assert status == 0
    assert json.loads(out) == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]},
        {"role": "user", "content": "换一种问法"},
    ]  # no timestamp: the API does not accept it


def test_path_takes_a_leaf_by_unique_prefix(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "path", str(chapter), "--leaf", "msg_003")
    assert status == 0
    assert out.splitlines() == [
        "msg_001 user  hello",
        "msg_002 assistant  Hi!",
        "msg_003 user  继续",
    ]


def test_a_whole_id_wins_over_a_longer_id_it_prefixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_text(
        '{"id":"C","parentId":null,"message":{"role":"user","content":"first"}}\n'
        '{"id":"C2","parentId":null,"message":{"role":"user","content":"second"}}\n',
        encoding="utf-8",
    )
    status, out, _ = run(capsys, "path", str(path), "--leaf", "C", "--json")
    assert status == 0 and json.loads(out) == [{"role": "user", "content": "first"}]


@pytest.mark.parametrize(
    ("leaf", "message"),
    [
        (
            "msg_",
            "'msg_' matches 4 nodes (msg_001, msg_002, msg_003, msg_004); give more characters",
        ),
        ("zzz", "no node id starts with 'zzz'; `show` lists the ids"),
    ],
)
def test_an_unknown_or_ambiguous_id_is_one_line_and_exit_2(
    chapter: Path, capsys: pytest.CaptureFixture[str], leaf: str, message: str
) -> None:
    status, out, err = run(capsys, "path", str(chapter), "--leaf", leaf)
    assert (status, out, err) == (2, "", f"jupyter-tree-chat: {message}\n")


def test_check_lists_every_problem_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(
        CHAPTER.encode() + b"garbage\n" + b'{"id":"x","parentId":"nope","message":{}}\n{"id"'
    )
    status, out, _ = run(capsys, "check", str(path))
    assert status == 1
    assert out.splitlines() == [
        "line 5: not valid JSON (ignored)",
        "line 6: node 'x' is an orphan: its parent 'nope' has not appeared earlier (not attached)",
        "line 7: torn last line: an incomplete record of 5 bytes (ignored)",
    ]


def test_check_reports_a_role_content_or_meta_the_format_does_not_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(
        CHAPTER.encode()
        + b'{"id":"s","parentId":null,"message":{"role":"system","content":"be brief"}}\n'
        + b'{"id":"c","parentId":"msg_004","message":{"role":"assistant","content":5}}\n'
        + b'{"id":"m","parentId":"c","message":{"role":"user","content":"x"},"meta":"fast"}\n'
    )
    status, out, _ = run(capsys, "check", str(path))
    assert status == 1
    assert out.splitlines() == [
        "line 5: node 's': role 'system' is not 'user' or 'assistant' (kept as written)",
        "line 6: node 'c': content is a number, not a string or a list (kept as written)",
        "line 7: node 'm': meta is a string, not an object (ignored)",
    ]


def test_check_of_a_clean_file_exits_0_silently(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "check", str(chapter)) == (0, "", "")


def test_export_md_writes_the_path_as_markdown(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "export", str(chapter), "--leaf", "msg_003", "--format", "md")
    assert status == 0
    assert "## User `msg_003`\n\n继续\n" in out
    assert "换一种问法" not in out


def test_export_svg_draws_the_tree_to_a_file_or_stdout(
    chapter: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "slides" / "tree.svg"
    out_file.parent.mkdir()
    status, out, err = run(capsys, "export", str(chapter), "--format", "svg", "-o", str(out_file))
    assert (status, out, err) == (0, "", "")
    root = ET.parse(out_file).getroot()
    nodes = [g for g in root.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]
    edges = [p for p in root.iter(f"{SVG}path") if "edge" in (p.get("class") or "").split()]
    assert len(nodes) == 4 and len(edges) == 3
    current = [g for g in nodes if "current" in g.get("class", "").split()]
    assert "msg_004" in current[0].find(f"{SVG}title").text
    status, out, _ = run(capsys, "export", str(chapter), "--format", "svg", "--leaf", "msg_003")
    assert status == 0 and ET.fromstring(out).tag == f"{SVG}svg"
    assert "msg_003" in next(
        g.find(f"{SVG}title").text
        for g in ET.fromstring(out).iter(f"{SVG}g")
        if "current" in (g.get("class") or "").split()
    )


def test_export_never_overwrites_a_session_file_and_says_why_in_one_line(
    chapter: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = chapter.read_bytes()
    other = tmp_path / "other.chat.jsonl"
    for target in (str(chapter), str(other), str(tmp_path / "no" / "such" / "dir.svg")):
        status, out, err = run(capsys, "export", str(chapter), "--format", "svg", "-o", target)
        assert status == 2 and out == "" and err.count("\n") == 1
    assert chapter.read_bytes() == before and not other.exists()


def test_show_leaves_hidden_branches_out_and_all_shows_them(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with chapter.open("a") as f:
        f.write('{"type":"hidden","id":"msg_003","hidden":true}\n')
    status, out, _ = run(capsys, "show", str(chapter))
    assert status == 0 and "msg_003" not in out
    assert out.splitlines()[-1] == "(1 hidden branch is not shown; `show --all` shows them)"
    status, out, _ = run(capsys, "show", str(chapter), "--all")
    assert "msg_003" in out and "(hidden)" in out and "not shown" not in out
    status, out, _ = run(capsys, "export", str(chapter), "--format", "svg")
    assert "1 hidden branch is not shown" in out


def test_missing_file_directory_and_binary_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "b.chat.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    for target, message in [
        (tmp_path / "missing.chat.jsonl", "no such file"),
        (tmp_path, "is a directory"),
        (binary, "not a session file"),
    ]:
        for command in ("show", "check", "path"):
            status, out, err = run(capsys, command, str(target))
            assert status == 2 and out == ""
            assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_unreadable_file_is_one_line_exit_2(
    chapter: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chapter.chmod(0)
    try:
        with _as_an_ordinary_user():  # root reads any file, so drop root while reading
            status, _, err = run(capsys, "show", str(chapter))
    finally:
        chapter.chmod(0o600)
    assert status == 2 and "cannot read" in err and "ermission denied" in err
    assert err.count("\n") == 1


@contextlib.contextmanager
def _as_an_ordinary_user() -> Iterator[None]:
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)  # nobody; the real uid stays root, so it can be taken back
    try:
        yield
    finally:
        os.seteuid(0)


def test_the_installed_script_and_jupyter_subcommand_work(chapter: Path) -> None:
    for command in ([str(SCRIPT)], [str(JUPYTER), "tree-chat"]):
        done = subprocess.run(
            [*command, "check", str(chapter)], capture_output=True, text=True, check=False
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        done = subprocess.run(
            [*command, "show", str(chapter.parent / "nope")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        assert done.stderr == f"jupyter-tree-chat: {chapter.parent / 'nope'}: no such file\n"


def test_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"n{i}",
                "parentId": f"n{i - 1}" if i else None,
                "message": {"role": "user" if i % 2 == 0 else "assistant", "content": "x"},
            }
        )
        for i in range(20_000)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        f"'{SCRIPT}' show '{path}' | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == "n0 user  x\n" and "Traceback" not in done.stderr


def test_a_pipe_is_refused_in_one_line_instead_of_hanging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "s.chat.jsonl"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    status, out, err = run(capsys, "check", str(fifo))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and "is a device or a pipe" in err


# -- other tools' files ------------------------------------------------------------------


@pytest.fixture
def claude_session(tmp_path: Path) -> Path:
    path = tmp_path / "5f0c1a2e.jsonl"
    path.write_bytes(jsonl(claude_code_session()))
    return path


def test_show_reads_a_claude_code_file_in_memory_and_says_so(
    claude_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = claude_session.read_bytes()
    status, out, err = run(capsys, "show", str(claude_session))
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("(read as a Claude Code file, in memory;")
    assert lines[1] == "u1 user  Fix the bug in x.py"
    assert lines[-1].startswith("   a7 assistant  The fix guards the division.")
    assert lines[-1].endswith("← current")
    assert claude_session.read_bytes() == before
    assert sorted(p.name for p in claude_session.parent.iterdir()) == [claude_session.name]


def test_path_json_of_an_imported_branch_is_what_the_api_accepts(
    claude_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "path", str(claude_session), "--json")
    sent = json.loads(out)
    assert status == 0 and [m["role"] for m in sent] == ["user", "assistant"] * 3
    assert [b["type"] for b in sent[1]["content"]] == ["text", "tool_use", "tool_use"]
    # the messages as a request offering a tool sends them, its used tools defined beside
    lookup = {"name": "lookup", "description": "Look up.", "input_schema": {"type": "object"}}
    messages, tools = request_tools(sent, [lookup])
    assert messages == sent
    assert validate({"model": "m", "max_tokens": 5, "messages": sent, "tools": tools}) is None


def test_check_of_a_damaged_pi_file_lists_its_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(pi_v1_with_damage())
    status, out, _ = run(capsys, "check", str(path))
    assert status == 1
    assert out.splitlines() == [
        "old.jsonl line 7: 2 records glued on one line (each read)",
        "old.jsonl line 8: torn last line: an incomplete record of 47 bytes (ignored)",
    ]


def test_import_writes_the_session_beside_the_source_and_prints_one_line(
    claude_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = claude_session.read_bytes()
    status, out, err = run(capsys, "import", str(claude_session))
    target = claude_session.with_name("5f0c1a2e.chat.jsonl")
    assert (status, err) == (0, "")
    assert out == (
        f"Wrote {target}: Claude Code (5f0c1a2e.jsonl): 8 nodes, 1 root, 1 branch point; "
        "current leaf a7; merged: split assistant records (3), tool result records (1), "
        "role-order repairs (1), compaction replays (1); left out: non-message records (7); "
        "no problems\n"
    )
    assert claude_session.read_bytes() == before
    assert run(capsys, "check", str(target)) == (0, "", "")
    status, out, _ = run(capsys, "show", str(target))
    assert out.splitlines()[0] == "u1 user  Fix the bug in x.py"


def test_import_refuses_an_existing_output_unless_forced(
    claude_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = claude_session.with_name("out.chat.jsonl")
    target.write_text("precious\n")
    status, out, err = run(capsys, "import", str(claude_session), "-o", str(target))
    assert (status, out) == (2, "")
    assert (
        err
        == f"jupyter-tree-chat: {target} exists; give --force to replace it, or -o another file\n"
    )
    assert target.read_text() == "precious\n"
    assert run(capsys, "import", str(claude_session), "-o", str(target), "--force")[0] == 0
    assert target.read_text().startswith('{"type":"session"')


def test_import_of_one_conversation_of_a_chatgpt_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(chatgpt_export()))
    status, out, _ = run(capsys, "import", str(source), "--conversation", "Greeting")
    assert status == 0 and "ChatGPT (conversations.json): 2 nodes, 1 root" in out
    status, out, _ = run(capsys, "show", str(tmp_path / "conversations.chat.jsonl"))
    assert out.splitlines()[0].startswith("h-u1 user  Hello") and "(Greeting)" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["import", "missing.jsonl"], "missing.jsonl: no such file"),
        (["import", "--format", "pi", "x.txt"], "x.txt: no such file"),
        (["import", "s.chat.jsonl"], "is already a jupyter-tree-chat session; give --format"),
        (["import", "notes.txt"], "is not a Claude Code, pi, ChatGPT or Open WebUI file"),
    ],
)
def test_import_mistakes_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    (tmp_path / "s.chat.jsonl").write_text(CHAPTER)
    (tmp_path / "notes.txt").write_text("just some notes\n")
    argv = [*argv[:-1], str(tmp_path / argv[-1])]
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and says in err


# -- path --budget: the request a session would build ----------------------------------------


def long_session(tmp_path: Path, turns: int = 8) -> Path:
    records, parent = [], None
    for k in range(turns):
        for role, text in (("user", f"question {k} "), ("assistant", f"answer {k} ")):
            node_id = f"{role[0]}{k}"
            content = text * 40 if role == "user" else [{"type": "text", "text": text * 40}]
            records.append(
                {"id": node_id, "parentId": parent, "message": {"role": role, "content": content}}
            )
            parent = node_id
    path = tmp_path / "long.chat.jsonl"
    path.write_bytes(jsonl(records))
    return path


def test_path_budget_json_prints_the_request_as_it_would_be_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = long_session(tmp_path)
    status, whole, _ = run(capsys, "path", str(session), "--json")
    status_budgeted, out, err = run(capsys, "path", str(session), "--budget", "1500", "--json")
    assert status == status_budgeted == 0
    sent = json.loads(out)
    assert len(json.loads(whole)) == 16 and len(sent) < 16
    dropped = 8 - len(sent) // 2
    assert sent[0]["content"][0] == {
        "type": "text",
        "text": f"[{dropped} earlier exchanges left out]",
    }
    assert sent[-1] == json.loads(whole)[-1]  # the newest exchange, as it is stored
    assert validate({"model": "m", "max_tokens": 5, "messages": sent}) is None
    assert err.startswith(f"The request keeps {8 - dropped} of 8 exchanges")
    status, roomy, _ = run(capsys, "path", str(session), "--budget", "100000", "--json")
    assert roomy == whole  # within the budget: exactly what path --json prints


def test_path_budget_marks_each_exchange_sent_or_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "path", str(long_session(tmp_path)), "--budget", "1500")
    lines = out.splitlines()
    assert status == 0 and len(lines) == 8
    marks = [line[0] for line in lines]
    assert marks == sorted(marks, key="✗✓".index) and marks[0] == "✗" and marks[-1] == "✓"
    assert "left out" in lines[0] and "question 0" in lines[0] and "sent" in lines[-1]
    status, _, err = run(capsys, "path", str(long_session(tmp_path)), "--budget", "many")
    assert status == 2 and err.strip().endswith("e.g. --budget 8000") and "\n" not in err.strip()


def test_path_budget_of_a_pi_file_sends_its_compaction_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries: list[dict[str, object]] = [{"type": "session", "version": 3, "id": "p1", "cwd": "/p"}]
    parent = None
    for k in range(6):
        for role, text in (("user", f"question {k} "), ("assistant", f"answer {k} ")):
            entry_id = f"{role[0]}{k:07d}"
            content = text * 40 if role == "user" else [{"type": "text", "text": text * 40}]
            entries.append(
                pi_entry("message", entry_id, parent, message={"role": role, "content": content})
            )
            parent = entry_id
        if k == 3:  # pi compacted here, keeping from the third question on
            entries.append(
                pi_entry(
                    "compaction",
                    "c0000000",
                    parent,
                    summary="SUMMARY of 0 and 1",
                    firstKeptEntryId="u0000002",
                    tokensBefore=900,
                )
            )
            parent = "c0000000"
    source = tmp_path / "pi.jsonl"
    source.write_bytes(jsonl(entries))
    status, out, err = run(capsys, "path", str(source), "--budget", "1000", "--json")
    sent = json.loads(out)
    assert status == 0 and "SUMMARY of 0 and 1" in sent[0]["content"][0]["text"]
    assert "question 2" in sent[0]["content"][1]["text"]  # the first kept entry's, after it
    text = json.dumps(sent)
    assert "question 0" not in text and "question 1 " not in text
    assert text.count("SUMMARY of 0 and 1") == 1 and text.count("question 4") == 40  # sent once
    assert err.startswith("The request keeps 4 of 6 exchanges")
    assert validate({"model": "m", "max_tokens": 5, "messages": sent}) is None  # roles alternate
    assert source.read_bytes() == jsonl(entries)  # another tool's file: only read


# -- an imported session reads back as this project's own file ---------------------------

SOURCES = {
    "claude-code": ("5f0c1a2e.jsonl", lambda: jsonl(claude_code_session())),
    "pi": ("pi.jsonl", lambda: jsonl(pi_session())),
    "chatgpt": ("conversations.json", lambda: json.dumps(chatgpt_export()[:1]).encode()),
    "open-webui": ("owui.json", lambda: json.dumps(open_webui_export()[:1]).encode()),
}


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_every_command_reads_an_imported_session_as_this_projects_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever the header carries from the source (pi's ``cwd``), the imported file is
    read as a session of this project: show, path, check and export see its nodes."""
    name, make = SOURCES[kind]
    source = tmp_path / name
    source.write_bytes(make())
    target = tmp_path / "imported.chat.jsonl"
    assert run(capsys, "import", str(source), "-o", str(target))[0] == 0
    loaded = parse_session(target.read_bytes())
    assert loaded.problems == [] and len(loaded.tree) > 1
    path = [n.message for n in loaded.tree.path_nodes(loaded.tree.leaf)]

    status, out, err = run(capsys, "show", str(target))
    assert (status, err) == (0, "") and "(empty session)" not in out
    assert len(out.splitlines()) >= len(loaded.tree)
    status, out, err = run(capsys, "path", str(target), "--json")
    assert (status, err) == (0, "")
    assert len(json.loads(out)) == len(path) > 0
    assert run(capsys, "check", str(target)) == (0, "", "")
    status, out, err = run(capsys, "export", str(target), "--format", "md")
    assert (status, err) == (0, "") and "(empty session)" not in out
    assert f"{len(path)} messages, leaf `{loaded.tree.leaf}`" in out
