"""``%chat find`` (kernel/commands/finding.py) and ``%chat export html|ipynb``
(kernel/commands/sharing.py) in an in-process IPython shell: what a user sees printed and
written, every mistake one line with its fix, the session file untouched;
``TreeChat.session_file``, which an exported notebook's setup cell sets."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from IPython.core.error import UsageError

from jupyter_tree_chat.history.store import encode_record, load_file


def usage_error(ip, line: str) -> str:
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("chat", line)
    message = str(caught.value)
    assert "\n" not in message
    return message


def asked(ip, *questions: str) -> None:
    for question in questions:
        ip.run_cell_magic("chat", "", question)


def test_find_lists_matches_on_every_branch_with_their_place(ip, capsys):
    asked(ip, "What is a session tree?", "Show me the tree drawn")
    ip.run_line_magic("chat", "edit 1 What is a branching tree?")
    capsys.readouterr()
    ip.run_line_magic("chat", "find TREE --role user")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3 matches for 'TREE'."
    rows = [re.split(r"\s{2,}", line.strip()) for line in out[1:]]
    assert [(r[1], r[2]) for r in rows] == [("user", "1/2"), ("user", "1/1"), ("user", "2/2")]
    # each named by the question where its branch left the others (here: at the root)
    assert [r[3] for r in rows] == ["“What is a session tree?”"] * 2 + [
        "“What is a branching tree?”"
    ]
    assert "«tree»" in rows[0][4]


def test_find_hidden_branches_and_the_json_for_scripts(ip, capsys):
    asked(ip, "alpha question")
    ip.run_line_magic("chat", "edit 1 alpha again")
    tree = load_file(ip.user_ns["__session__"].replace(".ipynb", ".chat.jsonl")).tree
    old_question = tree.roots()[0].id
    ip.run_line_magic("chat", f"hide {old_question}")
    capsys.readouterr()
    ip.run_line_magic("chat", "find alpha")
    out = capsys.readouterr().out
    assert out.startswith("2 matches for 'alpha'.")  # the new question and its answer
    assert "(2 more matches in hidden branches; --all finds them too)" in out
    found = ip.run_line_magic("chat", "find alpha --all --json")
    assert len(found) == 4 and {m["hidden"] for m in found} == {True, False}
    assert set(found[0]) == {"id", "role", "where", "position", "branch", "before", "match",
                             "after", "hidden", "file"}  # fmt: skip


def test_find_across_the_sessions_beside_the_notebook(ip, tmp_path, capsys):
    asked(ip, "a question about 会话树")
    other = tmp_path / "other.chat.jsonl"
    record = {
        "id": "o1",
        "parentId": None,
        "message": {"role": "user", "content": "会话树 elsewhere"},
    }
    other.write_bytes(encode_record(record))
    (tmp_path / "unrelated.chat.jsonl").write_bytes(
        encode_record({"id": "x", "parentId": None, "message": {"role": "user", "content": "no"}})
    )
    capsys.readouterr()
    ip.run_line_magic("chat", "find 会话树 --sessions")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "3 matches for '会话树' in 2 of 3 session file(s)."
    assert "\nnb.chat.jsonl\n" in out and "\nother.chat.jsonl\n" in out
    assert "unrelated" not in out
    assert other.read_bytes() == encode_record(record)  # only read


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ("find", "usage: %chat find TEXT"),
        ("find x --role robot", "give --role user, assistant or tool"),
        ("find ( --regex", "is not a regular expression"),
        ("find x --limit many", "--limit takes a number of matches"),
        ("find x --color", "unknown option '--color'"),
        ("find x --role", "--role needs a value"),
    ],
)
def test_find_mistakes_are_one_line_with_the_fix(ip, line, fix):
    asked(ip, "something")
    assert fix in usage_error(ip, line)


def test_export_html_writes_one_page_beside_the_notebook(ip, tmp_path, capsys):
    asked(ip, "What is a session tree?")
    session_file = tmp_path / "nb.chat.jsonl"
    before = session_file.read_bytes()
    capsys.readouterr()
    ip.run_line_magic("chat", "export html")
    page = tmp_path / "nb.chat.html"
    assert f"to {page}: one page that opens in any browser" in capsys.readouterr().out
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in text
    assert "What is a session tree?" in text
    assert session_file.read_bytes() == before
    ip.run_line_magic("chat", f"export html {tmp_path / 'elsewhere.html'}")
    assert (tmp_path / "elsewhere.html").read_text() == text
    message = usage_error(ip, f"export html {session_file}")
    assert "never overwritten" in message and "export to a .html file instead" in message


def test_export_ipynb_writes_the_branch_bound_to_the_session(ip, tmp_path, capsys):
    asked(ip, "one", "two")
    capsys.readouterr()
    (tmp_path / "sub").mkdir()
    ip.run_line_magic("chat", "export ipynb sub/branch.ipynb")
    notebook = json.loads((tmp_path / "sub" / "branch.ipynb").read_text())
    nbformat.validate(nbformat.from_dict(notebook))
    setup = notebook["cells"][1]["source"]
    assert '%config TreeChat.session_file = "../nb.chat.jsonl"' in setup  # relative to it
    assert [c["source"] for c in notebook["cells"][2:]] == ["%%chat\none", "%%chat\ntwo"]
    assert "Wrote the current branch (2 question(s))" in capsys.readouterr().out
    ip.run_line_magic("chat", "export ipynb")
    leaf = load_file(tmp_path / "nb.chat.jsonl").tree.leaf
    assert (tmp_path / f"nb.branch-{leaf[:7]}.ipynb").exists()


def test_session_file_names_a_session_outright_and_use_goes_back(ip, tmp_path):
    ip.run_line_magic("config", 'TreeChat.session_file = "shared.chat.jsonl"')
    asked(ip, "into the named file")
    assert load_file(tmp_path / "shared.chat.jsonl").tree.roots()[0].text == "into the named file"
    assert not (tmp_path / "nb.chat.jsonl").exists()
    ip.run_line_magic("chat", "use default")
    asked(ip, "back home")
    assert load_file(tmp_path / "nb.chat.jsonl").tree.roots()[0].text == "back home"


def test_session_file_must_name_a_session_file(ip, tmp_path, caplog):
    ip.run_line_magic("config", 'TreeChat.session_file = "notes.txt"')
    assert "must name a *.chat.jsonl file, not 'notes.txt'" in caplog.text  # %config logs it
    with pytest.raises(UsageError) as caught:  # and %config keeps the value: the cell refuses
        ip.run_cell_magic("chat", "", "where does this go?")
    assert "must name a *.chat.jsonl file, not 'notes.txt'; set it to one" in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written anywhere
