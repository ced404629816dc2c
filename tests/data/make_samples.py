"""Write the sample session files the browser tests open (run: python tests/data/make_samples.py).

``branches.chat.jsonl``: a header, two retries of one answer (siblings to compare), an
edited first prompt (a second root), a follow-up cut short (interrupted), a label, a leaf
record, and damage: a garbage line, an orphan and a torn last line.

``thinking.chat.jsonl``: a reply that thought first, as the API sends it (a signed
``thinking`` block whose text carries Markdown and a script payload, a
``redacted_thinking`` block), then its answer, with ``meta.thinking`` and usage.

``hostile.chat.jsonl``: messages, ids, labels and metadata carrying script payloads. Every
payload would set ``window.__xss`` or call ``alert`` if it ran; a remote image points at
``remote.invalid``, which must never be requested.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _node(node_id: str, parent: str | None, role: str, content, meta: dict | None = None) -> dict:
    record = {
        "id": node_id,
        "parentId": parent,
        "message": {"role": role, "content": content, "timestamp": 1718400000},
    }
    if meta is not None:
        record["meta"] = meta
    return record


def _meta(model: str, tokens_in: int, tokens_out: int, **extra) -> dict:
    return {
        "model": model,
        "provider": "offline",
        "usage": {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "cache_read_input_tokens": 0,
        },
        "stop_reason": "end_turn",
        **extra,
    }


def branches() -> str:
    lines = [
        _line({"type": "session", "version": 1, "created": 1718400000}),
        _line(_node("u1", None, "user", "What is a session tree?", {"cell_id": "a1b2c3d4"})),
        _line(
            _node(
                "a1",
                "u1",
                "assistant",
                "A session tree keeps **every** branch of a chat, and the model sees one path.",
                _meta("claude-sonnet-4-6", 12, 17),
            )
        ),
        _line(
            _node(
                "a2",
                "u1",
                "assistant",
                "A session tree keeps each branch of a chat, and the model sees only one path.",
                _meta("claude-haiku-4-5", 12, 18),
            )
        ),
        "{this line is not json\n",
        _line({"type": "label", "id": "a2", "label": "concise"}),
        _line(_node("u2", "a1", "user", "Show me an example.")),
        _line(
            _node(
                "a3",
                "u2",
                "assistant",
                "Here is a tree:\n\n```\nu1\n├─ a1\n└─ a2\n```\nand then",
                _meta("claude-sonnet-4-6", 40, 9, interrupted=True, stop_reason=None),
            )
        ),
        _line(_node("lost", "never-written", "user", "an orphan: its parent is not in the file")),
        _line(_node("u1b", None, "user", "What is a branching session tree?")),
        _line(
            _node(
                "a4",
                "u1b",
                "assistant",
                "The same idea, asked differently: one path at a time.",
                _meta("claude-sonnet-4-6", 13, 12),
            )
        ),
        _line({"type": "leaf", "id": "a3"}),
        '{"id":"a5","parentId":"a3","message":{"role":"user","content":"torn',
    ]
    return "".join(lines)


PAYLOADS = [
    "<script>window.__xss = 1</script>script tag",
    '<img src="x" onerror="window.__xss = 1; alert(1)">img onerror',
    "[a javascript link](javascript:window.__xss=1) and "
    '<a href="javascript:alert(1)">an html javascript link</a>',
    '<svg onload="window.__xss = 1"><circle r="4"/></svg>svg onload',
    '<svg><script>window.__xss = 1</script><a href="javascript:alert(1)"><text>t</text></a></svg>',
    '<iframe src="javascript:alert(1)"></iframe>'
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    '<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">',
    '<details open ontoggle="window.__xss = 1"><summary>details ontoggle</summary>x</details>',
    '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=1">',
    '<form><button formaction="javascript:alert(1)">button</button></form>',
    '<div style="background:url(javascript:alert(1))">style url</div>',
    "![remote pixel](http://remote.invalid/pixel.png) "
    '<img src="https://remote.invalid/pixel2.png"> remote images',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">meta refresh',
    '<a href="data:text/html,<script>alert(1)</script>">data link</a>',
]


def hostile() -> str:
    lines = [_line({"type": "session", "version": 1})]
    parent = None
    for number, payload in enumerate(PAYLOADS):
        user = f"u{number}"
        lines.append(_line(_node(user, parent, "user", f"Q{number}: {payload}")))
        answer = f"a{number}"
        lines.append(
            _line(
                _node(
                    answer,
                    user,
                    "assistant",
                    [
                        {"type": "text", "text": f"A{number}: {payload}"},
                        {
                            "type": "tool_use",
                            "id": "t",
                            "name": "<img src=x onerror=window.__xss=1>",
                            "input": {"html": payload},
                        },
                    ],
                    _meta("<script>window.__xss=1</script>", 1, 2),
                )
            )
        )
        parent = answer
    # a sibling answer, so the side-by-side view renders payloads too
    lines.append(_line(_node("a0b", "u0", "assistant", "A0 again: " + PAYLOADS[1])))
    lines.append(
        _line(_node('<img src=x onerror="window.__xss=1">', parent, "user", "an id with markup"))
    )
    lines.append(_line({"type": "label", "id": "a0", "label": "<script>window.__xss=1</script>"}))
    lines.append(_line({"type": "<img src=x onerror=window.__xss=1>"}))
    lines.append(_line({"type": "leaf", "id": parent}))
    return "".join(lines)


def thinking() -> str:
    thought = (
        "Multiply **27** by 453: 27 * 453 = 12,231. "
        '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'
    )
    content = [
        {"type": "thinking", "thinking": thought, "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "text", "text": "27 * 453 = **12,231**."},
    ]
    meta = _meta("claude-sonnet-4-6", 40, 85, thinking=2048)
    return "".join(
        [
            _line({"type": "session", "version": 1, "created": 1718400000}),
            _line(_node("u1", None, "user", "What is 27 * 453?")),
            _line(_node("a1", "u1", "assistant", content, meta)),
        ]
    )


def main() -> None:
    (HERE / "branches.chat.jsonl").write_text(branches(), encoding="utf-8")
    (HERE / "thinking.chat.jsonl").write_text(thinking(), encoding="utf-8")
    (HERE / "hostile.chat.jsonl").write_text(hostile(), encoding="utf-8")


if __name__ == "__main__":
    main()
