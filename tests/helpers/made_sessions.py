"""Session files made for tests: damaged ones (every kind of damage a loader must
survive, from a seed) and valid ones drawn by Hypothesis, shared by the loader's, the fuzz
and the CLI's ``path`` tests."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from jupyter_tree_chat.history.store import encode_record, header_record, label_record, leaf_record


def record(node_id: str, parent: str | None, role: str, i: int) -> dict[str, Any]:
    if role == "user":
        message: dict[str, Any] = {"role": "user", "content": f"question {i}", "timestamp": i}
        return {"id": node_id, "parentId": parent, "message": message}
    blocks = [{"type": "text", "text": f"answer {i} 继续"}]
    return {
        "id": node_id,
        "parentId": parent,
        "message": {"role": "assistant", "content": blocks, "timestamp": i},
        "meta": {"model": "m", "usage": {"input_tokens": i, "output_tokens": 1}},
    }


def next_parent(
    rng: random.Random, nodes: list[tuple[str, str]], *, stay: float, newest: float
) -> tuple[str | None, str]:
    """Where a random conversation grows next, among ``nodes`` (id, role): with chance
    ``stay`` under a node (the newest with chance ``newest``, else any), else a new
    root; and the role that follows."""
    if nodes and rng.random() < stay:
        parent, parent_role = nodes[-1] if rng.random() < newest else rng.choice(nodes)
        return parent, "assistant" if parent_role == "user" else "user"
    return None, "user"


def damaged_file(seed: int, size: int = 400) -> bytes:
    """A branching session with every kind of damage sprinkled through it."""
    rng = random.Random(seed)
    lines: list[bytes] = [encode_record({"type": "session", "version": 1})]
    ids: list[tuple[str, str]] = []
    for i in range(size):
        parent_id, role = next_parent(rng, ids, stay=0.9, newest=0.7)
        node_id = f"n{i:04d}"
        line = encode_record(record(node_id, parent_id, role, i))
        roll = rng.random()
        if roll < 0.02:
            line = line[: rng.randrange(1, len(line))] + b"\n"  # garbage
        elif roll < 0.04:
            line = encode_record(record(ids[0][0] if ids else node_id, None, "user", i))  # dup
        elif roll < 0.05:
            line = encode_record(record(node_id, "missing", "user", i))  # orphan
        elif roll < 0.06:
            role = "assistant" if role == "user" else "user"  # role order kept as written
            line = encode_record(record(node_id, parent_id, role, i))
        elif roll < 0.07:
            line = line.replace(b'"meta":{', b'"meta":"x","old":{')  # meta not an object
        elif roll < 0.08:
            line = line.replace(b'"role":"user",', b"")  # no role
        elif roll < 0.09:
            line = line.replace(b'"timestamp"', b'"extra"')  # a key the fast path lacks
        elif roll < 0.10:
            line = b"\xff" + line  # not UTF-8
        elif roll < 0.11:
            line = line.replace(b"question", b"\\ud83d question")  # a lone surrogate
        elif roll < 0.12:
            line = encode_record(leaf_record(rng.choice(ids)[0] if ids else "x"))
        elif roll < 0.13:
            line = encode_record(label_record(rng.choice(ids)[0] if ids else "x", f"l{i}"))
        elif roll < 0.14:
            line = b"\n"  # a blank line before it
        elif roll < 0.15:
            line = line.replace(b"\n", b"\r\n")
        lines.append(line)
        if roll >= 0.05:
            ids.append((node_id, role))
    data = b"".join(lines)
    return data[: -rng.randrange(1, 40)] if seed % 3 == 0 else data  # a torn tail


# -- valid sessions, drawn by Hypothesis ---

content_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40
)


@st.composite
def sessions(draw: st.DrawFn, max_nodes: int = 25) -> list[dict[str, Any]]:
    """A valid session as records: a header, a random tree, some leaf and label records."""
    count = draw(st.integers(1, max_nodes))
    records: list[dict[str, Any]] = []
    if draw(st.booleans()):
        records.append(header_record())
    roles: dict[str, str] = {}
    ids: list[str] = []
    for i in range(count):
        parent = draw(st.sampled_from([None, *ids])) if ids else None
        role = "user" if parent is None or roles[parent] == "assistant" else "assistant"
        node_id = f"n{i:03d}" + draw(st.sampled_from(["", "-x", "é"]))
        content: Any = draw(content_text)
        if draw(st.integers(0, 5)) == 0:
            content = [{"type": "text", "text": content}]
        records.append(
            {"id": node_id, "parentId": parent, "message": {"role": role, "content": content}}
        )
        roles[node_id] = role
        ids.append(node_id)
        extra = draw(st.integers(0, 9))
        if extra == 0:
            records.append(leaf_record(draw(st.sampled_from(ids))))
        elif extra == 1:
            records.append(label_record(draw(st.sampled_from(ids)), draw(content_text)))
    return records


def lines_of(records: list[dict[str, Any]]) -> list[bytes]:
    return [encode_record(r) for r in records]
