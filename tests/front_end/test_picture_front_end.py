"""The front end's picture (labextension/src/components/picture: fold.ts, and layout.ts on
d3-hierarchy) chooses and places exactly what the kernel's picture does (picture/fold.py,
picture/layout.py), on the same files: every item's key, kind, parent, depth, count and
x. So the panel, the viewer, ``%chat tree --svg`` and ``export --format svg`` draw one
drawing. The TypeScript runs under Node, reading each file with the browser's reader.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest
from helpers import DATA
from helpers.node_runner import LABEXT, node_module

from jupyter_tree_chat.history.store import parse_session
from jupyter_tree_chat.picture import fold, place

ENTRY = """
export { parseSession } from '{src}/format/parse';
export { FileSource } from '{src}/components/filesource';
export { english } from '{src}/components/translate';
export { fold } from '{src}/components/picture/fold';
export { place } from '{src}/components/picture/layout';
"""
RUNNER = """
import { parseSession, FileSource, english, fold, place } from './bundle.mjs';
import { readFileSync } from 'node:fs';
const cases = JSON.parse(readFileSync(0, 'utf8'));
const out = cases.map(({ file, options }) => {
  const source = new FileSource(english);
  source.load(parseSession(new Uint8Array(Buffer.from(file, 'base64'))), 'case');
  const folded = fold(source.tree, {
    leaf: options.leaf === undefined ? source.leaf : options.leaf,
    reveal: options.reveal ?? null,
    labelled: id => source.label(id) !== undefined,
    hidden: source.hidden,
    links: source.links,
    showHidden: options.show_hidden ?? false,
    opened: new Set(options.opened ?? []),
    width: options.width,
    budget: options.budget,
  });
  const x = place(folded);
  const items = folded.items;
  const parentKey = item => (item.parent < 0 ? null : items[item.parent].key);
  return items.map((item, i) =>
    [item.key, item.kind, parentKey(item), item.depth, item.count, item.branches, x[i]]);
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def ts_picture(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("ts-picture")
    entry = work / "entry.ts"
    entry.write_text(ENTRY.replace("{src}", str(LABEXT / "src")))
    call = node_module(str(entry), RUNNER, work)

    def run(cases: list[tuple[bytes, dict[str, Any]]]) -> list[list[list[Any]]]:
        return call([{"file": base64.b64encode(f).decode(), "options": o} for f, o in cases])

    return run


def python_picture(data: bytes, options: dict[str, Any]) -> list[list[Any]]:
    result = parse_session(data)
    tree = result.tree
    folded = fold(
        tree,
        leaf=options.get("leaf", tree.leaf),
        reveal=options.get("reveal"),
        labels=result.labels,
        hidden=result.hidden,
        show_hidden=options.get("show_hidden", False),
        opened=options.get("opened", ()),
        **{k: options[k] for k in ("width", "budget") if k in options},
    )
    x = place(folded)
    items = folded.items
    return [
        [item.key, item.kind, None if item.parent < 0 else items[item.parent].key,
         item.depth, item.count, item.branches, x[i]]
        for i, item in enumerate(items)
    ]  # fmt: skip


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode() + b"\n"


def node(node_id: str, parent: str | None, role: str, **meta: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": node_id,
        "parentId": parent,
        "message": {"role": role, "content": f"text of {node_id}"},
    }
    if meta:
        record["meta"] = meta
    return record


def random_session(rng: random.Random, size: int, shape: str) -> bytes:
    """A session file: nodes, forks, compaction roots, labels, hidden records, a leaf."""
    out = bytearray(line({"type": "session", "version": 1}))
    ids: list[str] = []
    roles: dict[str, str] = {}
    for i in range(size):
        if not ids or rng.random() < 0.01:
            parent = None
        elif shape == "stringy" and rng.random() < 0.93:
            parent = ids[-1]
        else:
            parent = rng.choice(ids)
        role = "user" if parent is None or roles[parent] == "assistant" else "assistant"
        meta = {"model": rng.choice(["m-a", "m-b", "m-c"])} if role == "assistant" else {}
        if parent is None and ids and rng.random() < 0.5:
            meta = {"compacted_from": rng.choice(ids)}
        node_id = f"{shape}{i:05d}"
        out += line(node(node_id, parent, role, **meta))
        ids.append(node_id)
        roles[node_id] = role
        if rng.random() < 0.02:
            out += line({"type": "label", "id": rng.choice(ids), "label": f"l{i}"})
        if rng.random() < 0.02:
            out += line({"type": "hidden", "id": rng.choice(ids), "hidden": rng.random() < 0.8})
    out += line({"type": "leaf", "id": rng.choice(ids)})
    return bytes(out)


def test_the_samples_fold_and_lay_out_alike(ts_picture) -> None:
    files = [p.read_bytes() for p in sorted(DATA.glob("*.chat.jsonl"))]
    cases = [(f, {}) for f in files] + [(f, {"show_hidden": True, "width": 2}) for f in files]
    assert ts_picture(cases) == [python_picture(f, o) for f, o in cases]


def test_random_sessions_with_every_rule_fold_and_lay_out_alike(ts_picture) -> None:
    rng = random.Random(16)
    cases: list[tuple[bytes, dict[str, Any]]] = []
    for k in range(24):
        shape = "stringy" if k % 2 else "bushy"
        data = random_session(rng, rng.choice([30, 300, 2000]), shape)
        folded = python_picture(data, {"budget": 60, "width": 4})
        some_folds = [row[0] for row in folded if row[1] != "node"]
        tree = parse_session(data).tree
        options: dict[str, Any] = {
            "budget": rng.choice([20, 60, 400]),
            "width": rng.choice([2, 4, 6]),
            "opened": rng.sample(some_folds, min(3, len(some_folds))),
            "show_hidden": rng.random() < 0.3,
        }
        if rng.random() < 0.5:
            options["reveal"] = rng.choice([n.id for n in tree])
        cases.append((data, options))
    got = ts_picture(cases)
    for (data, options), ts in zip(cases, got, strict=True):
        assert ts == python_picture(data, options), options


def test_a_100000_deep_session_folds_and_lays_out_alike(ts_picture) -> None:
    records = [node(f"n{i}", f"n{i - 1}" if i else None, "user" if i % 2 == 0 else "assistant")
               for i in range(100_000)]  # fmt: skip
    records[70_000]["parentId"] = "n500"  # a fork deep down
    data = b"".join(line(r) for r in records) + line({"type": "label", "id": "n900", "label": "x"})
    options = {"opened": ["chain:n3"], "reveal": "n40000"}  # a page opened, a node selected
    (got,) = ts_picture([(data, options)])  # (the browser's reader takes seconds here)
    assert got == python_picture(data, options)
    assert len(got) < 100  # folded: a picture, not 100,000 shapes
