"""The server extension (jupyter_tree_chat/server): other tools' files read for the viewer.

A real ``jupyter server`` runs with the extension enabled as installed (the
jupyter-config file the wheel ships); the tests ask it what the viewer asks and read the
JSON it answers, the way the viewer does: the records parse into the tree the command
line shows, the problems are the source's, and nothing is written.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.import_samples import (
    chatgpt_export,
    claude_code_session,
    jsonl,
    open_webui_export,
    pi_session,
    pi_v1_with_damage,
)

from jupyter_tree_chat import formats
from jupyter_tree_chat.history.store import parse_session
from jupyter_tree_chat.server.handlers import read_for_viewer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    base = tmp_path_factory.mktemp("server")
    root = base / "root"
    root.mkdir()
    port = free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    log = (base / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser",
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         "--IdentityProvider.token=", f"--ServerApp.root_dir={root}", "--allow-root"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "jupyter server did not start:\n" + (base / "server.log").read_text()
                    )
                time.sleep(0.3)
        yield url, root
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


def ask(url: str, path: str) -> tuple[int, Any]:
    query = urllib.parse.urlencode({"path": path})
    try:
        with urllib.request.urlopen(f"{url}/jupyter-tree-chat/read?{query}", timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def test_a_claude_code_file_comes_back_as_records_the_viewer_parses(server):
    url, root = server
    source = root / "5f0c1a2e.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    before = source.read_bytes()
    status, answer = ask(url, "5f0c1a2e.jsonl")
    assert status == 200
    assert (answer["format"], answer["label"]) == ("claude-code", "Claude Code")
    loaded = parse_session(answer["data"].encode())
    expected = formats.load(formats.read([formats.open_source(source)]))
    assert loaded.problems == []
    assert [n.id for n in loaded.tree] == [n.id for n in expected.tree]
    assert loaded.tree.leaf == "a7"
    assert answer["summary"].startswith("Claude Code (5f0c1a2e.jsonl): 8 nodes")
    assert source.read_bytes() == before
    assert sorted(p.name for p in root.iterdir()) == ["5f0c1a2e.jsonl"]


def test_the_sources_problems_come_with_their_lines_or_keys(server):
    url, root = server
    (root / "old.jsonl").write_bytes(pi_v1_with_damage())
    status, answer = ask(url, "old.jsonl")
    assert status == 200 and answer["format"] == "pi"
    assert [(p["line"], p["key"], p["text"]) for p in answer["problems"]] == [
        (7, None, "old.jsonl line 7: 2 records glued on one line (each read)"),
        (8, None, "old.jsonl line 8: torn last line: an incomplete record of 47 bytes (ignored)"),
    ]
    export = chatgpt_export()
    export[0]["mapping"]["g-a2"]["message"] = "not an object"
    (root / "conversations.json").write_text(json.dumps(export))
    status, answer = ask(url, "conversations.json")
    assert [(p["line"], p["key"]) for p in answer["problems"]] == [
        (None, "conversation 'conv-aaaa-1111' node 'g-a2'")
    ]


def test_a_session_file_or_an_unknown_file_is_left_to_the_viewer(server):
    url, root = server
    (root / "s.chat.jsonl").write_text(
        '{"id":"a","parentId":null,"message":{"role":"user","content":"x"}}\n'
    )
    (root / "notes.json").write_text('{"shopping": ["milk"]}')
    assert ask(url, "s.chat.jsonl") == (200, {"format": "tree-chat"})
    assert ask(url, "notes.json") == (200, {"format": None})


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("5f0c1a2e.jsonl", jsonl(claude_code_session())),
        ("pi.jsonl", jsonl(pi_session())),
        ("conversations.json", json.dumps(chatgpt_export()[:1]).encode()),
        ("owui.json", json.dumps(open_webui_export()[:1]).encode()),
    ],
)
def test_an_imported_session_is_left_to_the_viewer_as_this_projects_file(server, name, data):
    """Its header carries what the source's said (pi's ``cwd``); it is still ours."""
    url, root = server
    source = root / f"imported-{name}"
    source.write_bytes(data)
    target = root / f"imported-{name}.chat.jsonl"
    formats.import_files([source], target)
    assert ask(url, target.name) == (200, {"format": "tree-chat"})
    assert len(parse_session(target.read_bytes()).tree) > 1


def test_only_files_of_the_root_can_be_read(server):
    url, _ = server
    assert ask(url, "missing.jsonl")[0] == 404
    assert ask(url, "../../etc/passwd")[0] in (400, 403, 404)
    assert ask(url, "")[0] == 400


def test_what_the_viewer_is_sent_does_not_need_a_server():
    answer = read_for_viewer("c.json", json.dumps(chatgpt_export()).encode())
    assert answer["format"] == "chatgpt"
    assert parse_session(answer["data"].encode()).tree.leaf == "g-a2b"
