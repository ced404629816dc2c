"""``jupyter tree-chat find`` (cli/find.py) and ``export --format html|ipynb``: what a
person sees, the exit status, and that sources are only read."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from helpers import DATA
from helpers.import_samples import claude_code_session, jsonl

from jupyter_tree_chat.cli import main
from jupyter_tree_chat.history.store import encode_record, parse_session


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def session(path: Path, *rows: tuple[str, str | None, str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"".join(
            encode_record({"id": i, "parentId": p, "message": {"role": r, "content": c}})
            for i, p, r, c in rows
        )
    )
    return path


def test_find_in_a_file_lists_each_match_and_exits_0(capsys):
    status, out, err = run(capsys, "find", str(DATA / "branches.chat.jsonl"), "session", "tree")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "4 matches for 'session tree'."
    assert lines[1].split()[:3] == ["u1", "user", "1/2"]
    assert "«session tree»" in lines[1]
    assert [line.split()[0] for line in lines[1:]] == ["u1", "a1", "a2", "u1b"]


def test_nothing_found_exits_1_and_mistakes_exit_2(capsys):
    status, out, _ = run(capsys, "find", str(DATA / "branches.chat.jsonl"), "no such words")
    assert (status, out) == (1, "No match for 'no such words'.\n")
    status, _, err = run(capsys, "find", str(DATA / "branches.chat.jsonl"), "(", "--regex")
    assert status == 2 and err.count("\n") == 1 and "leave out --regex" in err
    status, _, err = run(capsys, "find", "missing.chat.jsonl", "x")
    assert status == 2 and "missing.chat.jsonl: no such file" in err


def test_find_json_for_scripts(capsys):
    status, out, _ = run(
        capsys, "find", str(DATA / "branches.chat.jsonl"), "e", "--json", "--limit", "2"
    )
    rows = json.loads(out)
    assert status == 0 and len(rows) == 2
    assert {"id", "role", "where", "position", "branch", "match", "file"} <= set(rows[0])


def test_find_in_a_folder_searches_every_session_file_under_it(tmp_path, capsys):
    one = session(tmp_path / "a.chat.jsonl", ("q", None, "user", "where is the 会话树?"))
    two = session(tmp_path / "deep" / "er" / "b.chat.jsonl", ("q", None, "user", "会话树 below"))
    session(tmp_path / ".hidden" / "c.chat.jsonl", ("q", None, "user", "会话树 hidden folder"))
    session(tmp_path / "node_modules" / "d.chat.jsonl", ("q", None, "user", "会话树 in a package"))
    (tmp_path / "notes.jsonl").write_text('{"id": "q", "parentId": null}\n')  # not a session file
    before = one.read_bytes(), two.read_bytes()
    status, out, _ = run(capsys, "find", str(tmp_path), "会话树")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "2 matches for '会话树' in 2 of 2 session file(s)."
    assert str(one) in lines and str(two) in lines
    assert (one.read_bytes(), two.read_bytes()) == before


def test_find_reads_another_tools_file(tmp_path, capsys):
    source = tmp_path / "claude.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    before = source.read_bytes()
    status, out, _ = run(capsys, "find", str(source), "bug", "--role", "user")
    assert status == 0 and "match" in out.splitlines()[0]
    assert source.read_bytes() == before


def test_export_html_writes_one_page_and_refuses_a_session_file(tmp_path, capsys):
    page = tmp_path / "page.html"
    status, out, err = run(capsys, "export", str(DATA / "branches.chat.jsonl"), "--format", "html",
                           "-o", str(page))  # fmt: skip
    assert (status, out, err) == (0, "", "")
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "default-src 'none'" in text
    target = session(tmp_path / "keep.chat.jsonl", ("q", None, "user", "mine"))
    before = target.read_bytes()
    status, _, err = run(capsys, "export", str(DATA / "branches.chat.jsonl"), "--format", "html",
                         "-o", str(target))  # fmt: skip
    assert status == 2 and "never overwritten" in err and target.read_bytes() == before


def test_export_html_of_a_branch_and_of_another_tools_file(tmp_path, capsys):
    status, out, _ = run(capsys, "export", str(DATA / "branches.chat.jsonl"), "--format", "html",
                         "--branch", "a2")  # fmt: skip
    records = out.split('id="jtc-records">', 1)[1].split("</script>", 1)[0]
    assert status == 0 and [n.id for n in parse_session(records.encode()).tree] == ["u1", "a2"]
    source = tmp_path / "claude.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    status, out, _ = run(capsys, "export", str(source), "--format", "html")
    assert status == 0 and "claude.jsonl (read as a Claude Code session)" in out


def test_export_ipynb_is_the_branch_as_a_valid_notebook(tmp_path, capsys):
    target = tmp_path / "branch.ipynb"
    status, _, _ = run(capsys, "export", str(DATA / "branches.chat.jsonl"), "--format", "ipynb",
                       "--branch", "u1b", "-o", str(target))  # fmt: skip
    assert status == 0
    notebook = json.loads(target.read_text())
    nbformat.validate(nbformat.from_dict(notebook))
    sources = [c["source"] for c in notebook["cells"]]
    assert sources[1].splitlines()[1] == '%config TreeChat.session_file = "branches.chat.jsonl"'
    assert sources[2:] == ["%%chat\nWhat is a branching session tree?"]
    source = tmp_path / "claude.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    status, out, _ = run(capsys, "export", str(source), "--format", "ipynb")
    about = json.loads(out)["cells"][0]["source"]
    assert "jupyter tree-chat import claude.jsonl -o claude.chat.jsonl" in about
