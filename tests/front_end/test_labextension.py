"""The browser's `*.chat.jsonl` reader (labextension/src/format/parse.ts) agrees with
`store.parse_session`: same tree, same leaf, same labels and hidden branches, and the
same problem lines,
word for word, as the command line's `check` prints them.

The TypeScript is bundled with the project's esbuild and run under Node on a corpus of
damaged files: hand-written edge cases plus seeded random mutations of a good file.
Needs `npm ci` in labextension/ (as every front-end build does).
"""

from __future__ import annotations

import base64
import json
import random

import pytest
from helpers import DATA
from helpers.node_runner import node_module

from jupyter_tree_chat.history.store import parse_session

RUNNER = """
import { parseSession, formatProblem } from './bundle.mjs';
import { readFileSync } from 'node:fs';
const files = JSON.parse(readFileSync(0, 'utf8'));
const out = files.map(b64 => {
  const s = parseSession(new Uint8Array(Buffer.from(b64, 'base64')));
  return {
    problems: s.problems.map(formatProblem),
    nodes: [...s.nodes.values()].map(n => [n.id, n.parentId, n.line]),
    leaf: s.leaf,
    labels: Object.fromEntries(s.labels),
    hidden: [...s.hidden].sort(),
    grades: Object.fromEntries([...s.grades.latest].map(([id, by]) =>
      [id, Object.fromEntries([...by].map(([g, x]) =>
        [g, [x.by, x.score, x.scale, x.note, x.error]]))])),
    preferences: [...s.grades.preferences.values()].map(p => p.join(' ')).sort(),
    header: s.header !== null,
  };
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def ts_parse(tmp_path_factory):
    """Parse many files with the TypeScript reader in one Node process."""
    call = node_module("src/format/parse.ts", RUNNER, tmp_path_factory.mktemp("ts-format"))

    def parse(files: list[bytes]) -> list[dict]:
        return call([base64.b64encode(f).decode() for f in files])

    return parse


def python_view(data: bytes) -> dict:
    result = parse_session(data)
    return {
        "problems": [str(p) for p in result.problems],
        "nodes": [[n.id, n.parent_id, result.lines[n.id]] for n in result.tree],
        "leaf": result.tree.leaf,
        "labels": result.labels,
        "hidden": sorted(result.hidden),
        "grades": {
            node: {
                name: [g.by, g.score, list(g.scale) if g.scale else None, g.note, g.error]
                for name, g in by.items()
            }
            for node, by in result.grades.latest.items()
        },
        "preferences": sorted(
            f"{better} {worse} {str(tie).lower()}"
            for better, worse, tie in result.grades.preferences.values()
        ),
        "header": result.header is not None,
    }


def line(record) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def node(node_id, parent, role="user", content="hi", **extra) -> dict:
    return {
        "id": node_id,
        "parentId": parent,
        "message": {"role": role, "content": content},
        **extra,
    }


GOOD = (
    line({"type": "session", "version": 1})
    + line(node("u1", None))
    + line(node("a1", "u1", "assistant", "hello", meta={"model": "m"}))
    + line(node("a2", "u1", "assistant", [{"type": "text", "text": "hi"}]))
    + line(node("u2", "a1", "user", "more"))
    + line({"type": "leaf", "id": "a2"})
    + line({"type": "label", "id": "a1", "label": "first"})
)

EDGE_CASES: list[bytes] = [
    b"",
    b"\n",
    b"\xef\xbb\xbf" + GOOD,
    GOOD.replace(b"\n", b"\r\n"),
    GOOD + b"\n\n   \n\t\n",
    GOOD + b'{"id":"x","parentId":"u1","mess',
    GOOD + b"\xff\xfe garbage\n" + line(node("z", None)),
    GOOD + b"\xff\xfe torn and not UTF-8",
    GOOD + b"\xed\xa0\x80\n",  # an encoded surrogate
    GOOD + b'not json\n[1, 2]\n"text"\n42\n1.5\ntrue\nnull\n{}\n',
    GOOD + line({"id": "a1", "parentId": None, "message": {"role": "user"}}),
    GOOD + line(node("o", "missing")) + line(node("self", "self")),
    GOOD + line(node("u3", "u2", "user")),  # a user message under a user message
    GOOD
    + line({"id": "r", "parentId": "u1", "message": {"content": "no role"}})
    + line({"id": "r2", "parentId": "r", "message": {}}),
    GOOD + line(node("n1", "a1", 1)) + line(node("n2", "n1", 1.0)) + line(node("n3", "n2", True)),
    GOOD
    + b'{"id":"f1","parentId":"a1","message":{"role":1.0}}\n'
    + b'{"id":"f2","parentId":"f1","message":{"role":1e16}}\n'
    + b'{"id":"f3","parentId":"f2","message":{"role":1e16}}\n'
    + b'{"id":"f4","parentId":"f3","message":{"role":{"b":1,"1":[null,false,0.0001,1e-05]}}}\n'
    + b'{"id":"f5","parentId":"f4","message":{"role":{"b":1,"1":[null,false,0.0001,1e-05]}}}\n',
    GOOD
    + line({"parentId": None, "message": {}})
    + line({"id": "x", "message": {}})
    + line({"id": "x", "parentId": None})
    + line({"id": "x", "parentId": None, "message": "s"})
    + line({"id": "", "parentId": None, "message": {}})
    + line({"id": 5, "parentId": None, "message": {}})
    + line({"id": "p", "parentId": 7, "message": {}}),
    GOOD
    + line({"type": "leaf", "id": "nope"})
    + line({"type": "leaf"})
    + line({"type": "leaf", "id": 3})
    + line({"type": "leaf", "id": [1, {"a": None}]})
    + line({"type": "leaf", "id": "u2"}),
    GOOD
    + line({"type": "label", "id": "u1", "label": ""})
    + line({"type": "label", "id": "zz", "label": "x"})
    + line({"type": "label", "id": "u1", "label": 5})
    + line({"type": "label", "id": "u2", "label": "ok"}),
    GOOD
    + line({"type": "session", "version": 2})
    + line({"type": "compaction"})
    + line({"type": 3})
    + line({"type": False})
    + line({"type": None, "id": "tn", "parentId": None, "message": {}})
    + line({"type": {"nested": [1.5, "x"]}})
    + b'{"type":18446744073709551615}\n{"type":18446744073709551616}\n'
    + b'{"type":-9223372036854775809}\n{"type":-0.0}\n{"type":123456789.125}\n',
    GOOD
    + line(node("it's", "a1"))
    + line(node('say "hi"', "a1"))
    + line(node("both '\"", "a1"))
    + line(node("tab\there\\", "a1"))
    + line(node("\x00\x7f\x85\u00a0\u2028\u200b\U0001f600\ue000", "a1"))
    + line(node("é中文", "missing\x01")),
    GOOD
    + b'{"id":"s1","parentId":null,"message":{"role":"user","content":"\\ud800"}}\n'
    + b'{"id":"s2","parentId":null,"message":{"role":"user","content":"\\ud83d\\ude00"}}\n'
    + b'{"id":"s3","parentId":null,"message":{"role":"user","content":"\\udc00\\ud800"}}\n'
    + b'{"id":"s4","parentId":null,"message":{"role":"user","content":"x"}} \r\r\n'
    + b'{"id":"s5","parentId":null,"message":{"role":"user","content":"\xe2\x80\xa8"}}\n'
    + b'{"id":"s6","parentId":null,"message":{"role":"user","content":1e400}}\n'
    + b'{"id":"s7","parentId":null,"message":{"role":"user","content":01}}\n'
    + b'{"id":"s8","parentId":null,"message":{"role":"user","content":[1,]}}\n'
    + b'{"id":"s9","parentId":null,"message":{"role":"user","content":"\t"}}\n'
    + b'{"id":"s10","parentId":null,"message":{"role":"user","__proto__":{"x":1}}}\n'
    + b'{"id":"s11","parentId":null,"message":{"role":"user"},"id":"s11b"}\n'
    + b"\x0c{}\n{} \x00\n",
    GOOD + b"[" * 1024 + b"]" * 1024 + b"\n" + b"[" * 1025 + b"]" * 1025 + b"\n",
    b"\r",
    b"   ",
    # orphans that point at each other close a cycle; later orphans sort in by line
    GOOD
    + line(node("c1", "c2"))
    + line(node("c2", "c3"))
    + line(node("c3", "c1"))
    + line(node("c4", "c1"))
    + line(node("c1", "u1"))
    + b"\r\n"
    + line(node("c5", "c5")),
    # lone surrogates with what only Python's json reads: big ints, floats that overflow
    GOOD + b'{"id":"l1","parentId":"a1","message":{"role":"user","content":"\\udc00",'
    b'"n":123456789012345678901234567890,"f":1e400}}\n'
    + b'{"type":"\\ud800","x":1}\n{"type":123456789012345678901234567890,"y":"\\ud800"}\n'
    + b'{"type":1e400,"y":"\\ud800"}\n[1, "\\ud800"]\n"\\ud800\\u0041"\n'
    + b'{"type":"leaf","id":"\\ud800"}\n',
    # a kept node whose role, content or meta the format does not allow
    GOOD
    + line({"id": "m1", "parentId": "a1", "message": {"role": "system", "content": "x"}})
    + line({"id": "m2", "parentId": "m1", "message": {"role": "system"}, "meta": "fast"})
    + line({"id": "m3", "parentId": None, "message": {"content": {"a": [1, None]}}, "meta": [1]})
    + line({"id": "m4", "parentId": "a1", "message": {"role": "user", "content": None}})
    + line(
        {"id": "m5", "parentId": "a1", "message": {"role": "user", "content": "x"}, "meta": None}
    )
    + line(
        {"id": "m6", "parentId": "a1", "message": {"role": "user", "content": True}, "meta": 1.5}
    )
    + line({"id": "m7", "parentId": "nowhere", "message": {"role": "system"}})
    + line({"id": "m1", "parentId": None, "message": {}, "meta": "x"})
    + b'{"id":"m8","parentId":null,"message":{"role":1e16,"content":1.0}}\n'
    + b'{"id":"m9","parentId":null,"message":{"role":{"b":1,"a":[1.5,null,"\\ud800"]}}}\n'
    + b'{"id":"m10","parentId":null,"message":{"role":"\\udc00","content":7},"meta":false}\n'
    + b'{"id":"m11","parentId":null,"message":{"role":123456789012345678901234567890},'
    b'"meta":"\\ud800","content":"x"}\n'
    + b'{"id":"m12","parentId":null,"message":{"role":"user","role":"x","content":[]}}\n',
    GOOD
    + line({"type": "hidden", "id": "a1", "hidden": True})
    + line({"type": "hidden", "id": "u2"})  # "hidden" left out: true
    + line({"type": "hidden", "id": "u2", "hidden": False})  # shown again
    + line({"type": "hidden", "id": "zz", "hidden": True})
    + line({"type": "hidden", "hidden": True})
    + line({"type": "hidden", "id": "a2", "hidden": "yes"})
    + line({"type": "hidden", "id": "a2", "hidden": None})
    + line({"type": "hidden", "id": "a2", "hidden": 1})
    + line({"type": "hidden", "id": "a2", "hidden": [True]}),
    GOOD
    + line({"type": "grade", "id": "a1", "grader": "grade", "by": "hand", "score": 4, "note": "ok"})
    + line({"type": "grade", "id": "a1", "grader": "grade", "score": 2})  # regraded: latest wins
    + line({"type": "grade", "id": "a2", "grader": "grade", "score": 1, "scale": [0, 1]})
    + line({"type": "grade", "id": "a2", "grader": "short", "by": "code", "score": True})
    + line(
        {
            "type": "grade",
            "id": "a1",
            "grader": "short",
            "by": "code",
            "score": None,
            "error": "ValueError: x",
        }
    )
    + line({"type": "grade", "id": "zz", "grader": "grade", "score": 3})
    + line({"type": "grade", "grader": "grade", "score": 3})
    + line({"type": "grade", "id": "a1", "grader": "", "score": 3})
    + line({"type": "grade", "id": "a1", "grader": "g", "by": "eye", "score": 3})
    + line({"type": "grade", "id": "a1", "grader": "g", "score": None})
    + line({"type": "grade", "id": "a1", "grader": "g", "score": "3"})
    + line({"type": "grade", "id": "a1", "grader": "g", "score": 3, "scale": [1]})
    + line({"type": "grade", "id": "a1", "grader": "g", "score": 3, "note": 5})
    + line({"type": "grade", "id": "a1", "grader": "g", "score": 3, "judge": []})
    + line({"type": "preference", "better": "a1", "worse": "a2"})
    + line({"type": "preference", "better": "a2", "worse": "a1", "tie": True})
    + line({"type": "preference", "better": "a1", "worse": "a1"})
    + line({"type": "preference", "better": "a1", "worse": "zz"})
    + line({"type": "preference", "better": "a1", "worse": "u1", "tie": "no"}),
    GOOD  # a vendor batch's records (batch_record.py), good and damaged
    + line(
        {
            "type": "batch",
            "key": "k1",
            "wire": "anthropic",
            "model": "m",
            "variants": [{"model": "m"}],
            "requests": [["u2-0", "u2", 0]],
        }
    )
    + line({"type": "batch", "key": "k1", "wire": "anthropic", "model": "m"})
    + line({"type": "batch", "key": "k'2", "wire": "anthropic", "model": "m", "variants": []})
    + line({"type": "batch", "key": "k3", "wire": 1, "model": "m", "variants": [], "requests": []})
    + line({"type": "batch_sent", "key": "k1", "id": "msgbatch_1"})
    + line({"type": "batch_sent", "key": "k1", "id": "b2", "requests": "u2-0"})
    + line({"type": "batch_sent", "key": "nope", "id": "b3"})
    + line({"type": "batch_sent", "id": "b4"})
    + line({"type": "batch_applied", "key": "k1", "done": ["u2-0"]})
    + line({"type": "batch_applied", "key": "k1", "done": [], "failed": None})
    + line({"type": "batch_applied", "key": "k1", "done": "u2-0"})
    + line(node("a3", "u2", "assistant", "late", meta={"batch": {"id": "msgbatch_1"}})),
    GOOD
    + line({"type": "label", "id": "u1", "label": {"a": 1}})
    + line({"type": "label", "id": "u1", "label": None})
    + line(node("a9", "a1", "assistant")),
]


def mutate(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        choice = rng.randrange(6)
        if choice == 0 and lines[i]:
            cut = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:cut]
        elif choice == 1:
            lines.insert(i, rng.choice(lines))
        elif choice == 2 and lines[i]:
            pos = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:pos] + bytes([rng.randrange(256)]) + lines[i][pos + 1 :]
        elif choice == 3:
            del lines[i]
        elif choice == 4:
            lines.insert(
                i,
                rng.choice(
                    [
                        b"",
                        b"\r",
                        b"\xef\xbb\xbf{}",
                        b'{"type":"leaf","id":"a1"}',
                        b'{"type":"hidden","id":"a1"}',
                        b'{"type":"hidden","id":"u2","hidden":false}',
                    ]
                ),
            )
        else:
            lines[i] = lines[i].replace(b'"u1"', rng.choice([b'"a2"', b'"zz"', b"null", b"1"]))
    return b"\n".join(lines)


def test_samples_read_the_same_as_the_python_loader(ts_parse):
    files = [p.read_bytes() for p in sorted(DATA.glob("*.chat.jsonl"))]
    assert files, "tests/data/*.chat.jsonl are missing: run python tests/data/make_samples.py"
    assert ts_parse(files) == [python_view(f) for f in files]


@pytest.mark.parametrize("index", range(len(EDGE_CASES)))
def test_edge_case_problems_match_the_python_loader(ts_parse, index):
    data = EDGE_CASES[index]
    assert ts_parse([data])[0] == python_view(data)


def test_random_damage_reads_the_same_as_the_python_loader(ts_parse):
    rng = random.Random(20240615)
    sources = [GOOD, *(p.read_bytes() for p in sorted(DATA.glob("*.chat.jsonl")))]
    files = [mutate(rng, rng.choice(sources)) for _ in range(600)]
    got = ts_parse(files)
    for data, ts in zip(files, got, strict=True):
        assert ts == python_view(data), data
