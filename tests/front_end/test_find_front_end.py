"""The browser's find (labextension/src/components/find.ts, behind the viewer's and an
exported page's search box) finds what the kernel's does (share/find.py, behind ``%chat
find``, ``jupyter tree-chat find`` and the panel's box): the same nodes, in the same
order, the same count left in hidden branches, on the same files, for the same
queries (literal and regular expressions, case, roles, hidden branches, thinking, tool
results and calls, CJK). The TypeScript runs under Node, reading each file with the
browser's reader.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA
from helpers.node_runner import LABEXT, node_module

from jupyter_tree_chat.history.store import parse_session
from jupyter_tree_chat.share.find import Query, find

ENTRY = """
export { parseSession } from '{src}/format/parse';
export { FileSource } from '{src}/components/filesource';
export { english } from '{src}/components/translate';
export { hiddenBranches } from '{src}/components/model';
export { messageFields } from '{src}/components/find';
"""
RUNNER = """
import { parseSession, FileSource, english, hiddenBranches } from './bundle.mjs';
import { readFileSync } from 'node:fs';
const cases = JSON.parse(readFileSync(0, 'utf8'));
const out = cases.map(({ file, queries }) => {
  const source = new FileSource(english);
  source.load(parseSession(new Uint8Array(Buffer.from(file, 'base64'))), 'case');
  const onPath = new Set(source.tree.pathTo(source.leaf));
  const folds = hiddenBranches(source.tree, source.hidden, id => onPath.has(id));
  return queries.map(q => {
    const found = source.find(q, folds);
    return found.error ? { error: true } : { ids: found.ids, hidden: found.hidden };
  });
});
process.stdout.write(JSON.stringify(out));
"""
FIELDS_RUNNER = """
import { messageFields } from './bundle.mjs';
import { readFileSync } from 'node:fs';
process.stdout.write(JSON.stringify(JSON.parse(readFileSync(0, 'utf8')).map(messageFields)));
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("ts-find")
    entry = work / "entry.ts"
    entry.write_text(ENTRY.replace("{src}", str(LABEXT / "src")))
    return work


@pytest.fixture(scope="module")
def ts_find(bundle: Path):
    call = node_module(str(bundle / "entry.ts"), RUNNER, bundle)

    def run(cases: list[tuple[bytes, list[dict[str, Any]]]]) -> list[list[dict[str, Any]]]:
        return call([{"file": base64.b64encode(f).decode(), "queries": q} for f, q in cases])

    return run


def ts_query(text: str, **options: Any) -> dict[str, Any]:
    return {
        "text": text,
        "regex": options.get("regex", False),
        "caseSensitive": options.get("case_sensitive", False),
        "role": options.get("role"),
        "includeHidden": options.get("include_hidden", False),
    }


def python_find(data: bytes, query: dict[str, Any]) -> dict[str, Any]:
    result = parse_session(data)
    found = find(
        result.tree,
        Query(
            query["text"],
            regex=query["regex"],
            case_sensitive=query["caseSensitive"],
            role=query["role"],
            include_hidden=query["includeHidden"],
        ),
        labels=result.labels,
        hidden=result.hidden,
        leaf=result.tree.leaf,
    )
    return {"ids": found.ids, "hidden": found.hidden}


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


WORDS = ["tree", "Tree", "branch", "会话树", "分支", "path", "PATH", "leaf", "needle", "x(y"]


def random_session(rng: random.Random, size: int) -> bytes:
    """Questions, answers with thinking and tool calls, tool results, hidden records."""
    out = bytearray(line({"type": "session", "version": 1}))
    ids: list[str] = []
    roles: dict[str, str] = {}
    for i in range(size):
        parent = None if not ids or rng.random() < 0.02 else rng.choice(ids[-20:])
        role = "user" if parent is None or roles[parent] == "assistant" else "assistant"
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        content: Any = words
        if role == "assistant" and rng.random() < 0.5:
            content = [
                {"type": "thinking", "thinking": rng.choice(WORDS) + " thought", "signature": "s"},
                {"type": "text", "text": words},
            ]
            if rng.random() < 0.4:
                arguments = {"q": rng.choice(WORDS), "n": rng.randint(0, 9), "deep": [1, "二"]}
                content.append(
                    {"type": "tool_use", "id": f"t{i}", "name": "look", "input": arguments}
                )
        elif role == "user" and parent is not None and rng.random() < 0.3:
            body: Any = rng.choice([words, [{"type": "text", "text": words}, {"type": "image"}]])
            content = [{"type": "tool_result", "tool_use_id": "t", "content": body}]
        node_id = f"n{i:04d}"
        out += line(
            {"id": node_id, "parentId": parent, "message": {"role": role, "content": content}}
        )
        ids.append(node_id)
        roles[node_id] = role
        if rng.random() < 0.05:
            out += line({"type": "hidden", "id": rng.choice(ids), "hidden": rng.random() < 0.85})
    out += line({"type": "leaf", "id": rng.choice(ids)})
    return bytes(out)


QUERIES = [
    ts_query("tree"),
    ts_query("Tree", case_sensitive=True),
    ts_query("会话树"),
    ts_query("thought"),
    ts_query('"q": "path"'),
    ts_query("needle", include_hidden=True),
    ts_query("branch", role="assistant"),
    ts_query("leaf", role="tool"),
    ts_query("path", role="user", include_hidden=True),
    ts_query(r"\b(tree|leaf)\b.*分支", regex=True),
    ts_query(r"^PATH", regex=True, case_sensitive=True),
    ts_query("x(y"),
]


def test_the_samples_find_alike(ts_find) -> None:
    files = [p.read_bytes() for p in sorted(DATA.glob("*.chat.jsonl"))]
    queries = [ts_query(w) for w in ("tree", "the", "a", "<script", "thinking")] + QUERIES
    got = ts_find([(f, queries) for f in files])
    for data, answers in zip(files, got, strict=True):
        assert answers == [python_find(data, q) for q in queries]


def test_random_sessions_find_alike(ts_find) -> None:
    rng = random.Random(27)
    files = [random_session(rng, rng.choice([40, 400, 1500])) for _ in range(12)]
    got = ts_find([(f, QUERIES) for f in files])
    found_any = 0
    for data, answers in zip(files, got, strict=True):
        expected = [python_find(data, q) for q in QUERIES]
        assert answers == expected
        found_any += sum(len(e["ids"]) + e["hidden"] for e in expected)
    assert found_any > 1000  # the queries do find things: the comparison is not empty


def test_a_bad_regular_expression_is_an_error_on_both_sides(ts_find) -> None:
    data = (DATA / "branches.chat.jsonl").read_bytes()
    assert ts_find([(data, [ts_query("(unclosed", regex=True)])]) == [[{"error": True}]]


def test_tool_calls_are_written_as_python_writes_them(bundle: Path) -> None:
    from jupyter_tree_chat.share.find import message_fields

    call = node_module(str(bundle / "entry.ts"), FIELDS_RUNNER, bundle)
    messages = [
        {
            "content": [
                {"type": "tool_use", "name": "f", "input": {"a": [1, {"b": None}], "c": "三"}}
            ]
        },
        {"content": [{"type": "tool_use", "input": {}}, {"type": "text", "text": "after"}]},
        {"content": [{"type": "tool_result", "content": [{"type": "text", "text": "r"}]}]},
        {"content": "plain"},
        {"content": 7},
    ]
    expected = [[list(pair) for pair in message_fields(m)] for m in messages]
    assert call(messages) == expected
