"""A question as typed in the front end (labextension/src/components/chips.ts), run under
Node and held against the kernel's reading of the same ``meta.typed``
(``textview.question_as_typed``, ``typed_source``, ``chip_text``; the row's head of
``widget/protocol.typed_head``): the list, the picture, the compare and the conversation
show the line the kernel's ``%chat tree`` shows, and open exactly what was sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.node_runner import LABEXT, node_module

from jupyter_tree_chat.context import Converted, QuestionParts, Sent
from jupyter_tree_chat.textview import (
    Chip,
    chip_text,
    question_as_typed,
    typed_pieces,
    typed_source,
)
from jupyter_tree_chat.widget.protocol import typed_head

CHIPS_TS = json.dumps(str(LABEXT / "src/components/chips.ts"))
TRANSLATE_TS = json.dumps(str(LABEXT / "src/components/translate.ts"))
ENTRY = f"""
export {{ questionAsTyped, typedSource, typedHead, typedPieces, chipText }} from {CHIPS_TS};
export {{ english }} from {TRANSLATE_TS};
"""
RUNNER = """
import {
  questionAsTyped, typedSource, typedHead, typedPieces, chipText, english
} from './bundle.mjs';
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString());
process.stdout.write(JSON.stringify(cases.map(({ meta, text }) => {
  const pieces = typedPieces(meta);
  return {
    line: questionAsTyped(meta, english),
    source: typedSource(meta),
    head: typedHead(meta, english),
    opened: pieces ? pieces.filter(p => typeof p !== 'string').map(c => chipText(c, text)) : null
  };
})));
"""


@pytest.fixture(scope="module")
def chips_ts(tmp_path_factory: pytest.TempPathFactory):
    work: Path = tmp_path_factory.mktemp("chips")
    (work / "entry.ts").write_text(ENTRY)
    return node_module(str(work / "entry.ts"), RUNNER, work)


def asked(*steps: tuple[str, Any]) -> dict[str, Any]:
    """A question built as the kernel builds one: its content and its meta."""
    parts = QuestionParts()
    for how, what in steps:
        if how == "lead":
            parts.lead(what)
        elif how == "value":
            parts.value(what)
        else:
            parts.text(*what) if isinstance(what, tuple) else parts.text(what)
    return {"message": {"role": "user", "content": parts.content()}, "meta": parts.meta()}


TABLE = Converted(
    ("| 🙂 | x |\n|---|---|\n| 𝔸 | 1 |\n\n1 rows × 1 columns",),
    Sent("df", "DataFrame", "100×2"),
    True,
)
QUOTE = Converted(
    ("From branch 3f2a9c1 (an answer):\n\n> 你好 🙂",),
    Sent("3f2a9c1", "answer", "5 chars", kind="node"),
)
PDF = Converted(
    ({"type": "document", "source": {}, "title": "r.pdf"},),
    Sent("r.pdf", "PDF", "1.2 MB", kind="attachment"),
)
ERROR = Converted(
    ("The error cell 3 raised:\n\n```\nKeyError: 'z'\n```\n",),
    Sent("Err", "KeyError", kind="cell"),
    True,
)
CASES = [
    asked(("text", "What does "), ("value", TABLE), ("text", " show? 🙂")),
    asked(
        ("lead", PDF),
        ("lead", QUOTE),
        ("text", "Why "),
        ("value", ERROR),
        ("text", (" {x}?", " {{x}}?")),
    ),
    asked(("text", "🙂" * 30 + " and "), ("value", TABLE), ("text", " then " + "word " * 20)),
    asked(("text", "no fields at all")),
    {
        "message": {"role": "user", "content": "old"},
        "meta": {"typed": [{"field": "x", "kind": "?"}]},
    },
]


def test_the_front_end_reads_a_question_as_typed_as_the_kernel_does(chips_ts):
    cases = [
        {"meta": case["meta"], "text": "".join(b["text"] for b in _text_blocks(case["message"]))}
        for case in CASES
    ]
    shown = chips_ts(cases)
    for case, front in zip(CASES, shown, strict=True):
        message, meta = case["message"], case["meta"]
        pieces = typed_pieces(meta)
        if pieces is None:
            assert front == {"line": None, "source": None, "head": None, "opened": None}
            continue
        assert front["line"] == question_as_typed(message, meta)
        assert front["source"] == typed_source(meta)
        assert front["head"] == typed_head(pieces)
        chips = [p for p in pieces if isinstance(p, Chip)]
        assert front["opened"] == [chip_text(c, message) for c in chips]
    assert shown[0]["line"] == "What does [df · DataFrame 100×2] show? 🙂"
    assert shown[0]["opened"] == ["| 🙂 | x |\n|---|---|\n| 𝔸 | 1 |\n\n1 rows × 1 columns"]
    assert shown[1]["line"] == "[r.pdf · PDF 1.2 MB] [from 3f2a9c1] Why [Err · KeyError] {{x}}?"
    assert shown[1]["source"] == "Why {Err} {{x}}?"
    assert shown[1]["opened"][0] is None  # the PDF: its own block was sent


def _text_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if b.get("type") == "text"]
