"""Reading and importing other tools' files (formats/__init__.py), over every sample.

For every public and synthetic sample: the import loads with the store's own loader and
no problem, every node names its source, no text, tool_use or tool_result of the
source is lost, and the path to every leaf is a request the fake Messages API (which
holds the real API's rules) accepts. Then ``import_files``: what it writes, what it
refuses, and that it never writes a source.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.import_samples import (
    DATA,
    chatgpt_export,
    claude_code_continuation,
    claude_code_resumed,
    claude_code_session,
    claude_code_sidechains,
    imported_pieces,
    jsonl,
    open_webui_export,
    pi_session,
    pi_v1_with_damage,
    source_pieces,
)
from helpers.sendable import refusal

from jupyter_tree_chat import formats
from jupyter_tree_chat.errors import FormatError
from jupyter_tree_chat.formats import Source


def samples() -> dict[str, list[Source]]:
    first, second = claude_code_resumed()
    main, agent = claude_code_sidechains()
    found = {
        "cc-session": [Source("s.jsonl", jsonl(claude_code_session()))],
        "cc-resumed": [Source("a.jsonl", jsonl(first)), Source("b.jsonl", jsonl(second))],
        "cc-sidechains": [Source("m.jsonl", jsonl(main)), Source("agent-x.jsonl", jsonl(agent))],
        "cc-continuation": [Source("c.jsonl", jsonl(claude_code_continuation()))],
        "pi-v3": [Source("p.jsonl", jsonl(pi_session()))],
        "pi-v1-damaged": [Source("old.jsonl", pi_v1_with_damage())],
        "chatgpt": [Source("conversations.json", json.dumps(chatgpt_export()).encode())],
        "open-webui": [Source("chats.json", json.dumps(open_webui_export()).encode())],
    }
    for path in sorted(DATA.rglob("*.json*")):
        if path.parent.name != "subagents":
            found[path.name] = [formats.open_source(path)]
    showcase = sorted((DATA / "claude-code-showcase").rglob("*.jsonl"))
    found["claude-code-showcase"] = [formats.open_source(p) for p in showcase]
    return found


SAMPLES = samples()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_loads_with_no_problem_and_every_node_names_its_source(name: str):
    imported = formats.read(SAMPLES[name])
    loaded = formats.load(imported)
    assert loaded.problems == []
    assert len(loaded.tree) == imported.nodes > 0
    assert loaded.tree.leaf == imported.leaf
    names = {s.name for s in SAMPLES[name]}
    for node in loaded.tree:
        source = node.meta["source"]
        assert source["format"] == imported.format
        assert source["file"] in names
        assert "line" in source or "key" in source


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_no_text_tool_use_or_tool_result_of_the_source_is_lost(name: str):
    imported = formats.read(SAMPLES[name], sidechains=True)
    kept = imported_pieces(imported.records)
    pieces = [(s.name, p) for s in SAMPLES[name] for p in source_pieces(imported.format, s.data)]
    assert len(pieces) >= 3
    for file, piece in pieces:
        assert piece in kept, f"{piece[:60]!r} of {file} is not in the import"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_path_to_every_leaf_is_a_request_the_api_accepts(name: str):
    loaded = formats.load(formats.read(SAMPLES[name]))
    for leaf in loaded.tree.leaves():
        messages = [node.message for node in loaded.tree.path_nodes(leaf.id)]
        if messages[-1]["role"] == "assistant":  # continuing from it: a new question
            messages.append({"role": "user", "content": "Go on."})
        problem = refusal(messages)
        assert problem is None, f"{leaf.id}: {problem}"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("cc-session", "claude-code"),
        ("pi-v3", "pi"),
        ("pi-v1-damaged", "pi"),
        ("chatgpt", "chatgpt"),
        ("open-webui", "open-webui"),
        ("claude-code-edge-cases.jsonl", "claude-code"),
        ("pi-v1-large-session-head.jsonl", "pi"),
        ("chatgpt-example-conversation.json", "chatgpt"),
    ],
)
def test_the_format_is_detected(name: str, kind: str):
    assert formats.read(SAMPLES[name]).format == kind


def test_the_summary_line_says_shape_leaf_merges_and_problems():
    imported = formats.read(SAMPLES["cc-session"])
    assert imported.summary() == (
        "Claude Code (s.jsonl): 8 nodes, 1 root, 1 branch point; current leaf a7; "
        "merged: split assistant records (3), tool result records (1), role-order repairs (1), "
        "compaction replays (1); left out: non-message records (7); no problems"
    )
    damaged = formats.read(SAMPLES["pi-v1-damaged"]).summary()
    assert damaged.endswith(
        "reported: 2 problems (first: old.jsonl line 7: 2 records glued on one line (each read))"
    )


def test_sources_of_different_formats_or_a_session_file_are_refused():
    with pytest.raises(FormatError, match="different formats"):
        formats.read(SAMPLES["cc-session"] + SAMPLES["pi-v3"])
    native = Source(
        "x.chat.jsonl", b'{"id":"a","parentId":null,"message":{"role":"user","content":"x"}}\n'
    )
    with pytest.raises(FormatError, match="already a jupyter-tree-chat session"):
        formats.read([native])
    with pytest.raises(FormatError, match="unknown format 'word'"):
        formats.read(SAMPLES["pi-v3"], "word")


def test_import_files_writes_a_new_session_file_and_never_its_source(tmp_path: Path):
    source = tmp_path / "session.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    source.chmod(0o444)
    before = (source.read_bytes(), os.stat(source).st_mtime_ns)
    target, imported = formats.import_files([source])
    assert target == tmp_path / "session.chat.jsonl"
    assert (source.read_bytes(), os.stat(source).st_mtime_ns) == before
    lines = target.read_bytes().splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["imported"] == {
        "format": "claude-code",
        "sources": ["session.jsonl"],
    }
    assert len(lines) == 1 + imported.nodes + 1  # header, nodes, the leaf record
    assert json.loads(lines[-1]) == {"type": "leaf", "id": "a7"}


def test_import_files_refuses_to_overwrite_or_to_write_a_source(tmp_path: Path):
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(chatgpt_export()))
    target = tmp_path / "out.chat.jsonl"
    target.write_text("mine\n")
    with pytest.raises(FileExistsError):
        formats.import_files([source], target)
    assert target.read_text() == "mine\n"
    formats.import_files([source], target, replace=True)
    assert formats.load(formats.read([formats.open_source(source)])).tree.leaf == "g-a2b"
    with pytest.raises(FormatError, match="is one of the sources"):
        formats.import_files([source], source, replace=True)
    with pytest.raises(FormatError, match="no such file"):
        formats.import_files([tmp_path / "missing.jsonl"])
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"type":"summary","summary":"x","leafUuid":"y"}\n')
    with pytest.raises(FormatError, match="nothing to import"):
        formats.import_files([empty])
    assert not (tmp_path / "empty.chat.jsonl").exists()


def test_the_default_output_sits_beside_the_source():
    assert formats.default_output("/a/b/c.jsonl") == Path("/a/b/c.chat.jsonl")
    assert formats.default_output("conversations.json") == Path("conversations.chat.jsonl")
    assert formats.default_output("export") == Path("export.chat.jsonl")
