"""Which tool wrote a file (formats/detect.py), from the first records only."""

from __future__ import annotations

import json

import pytest
from helpers.import_samples import (
    DATA,
    chatgpt_export,
    claude_code_session,
    jsonl,
    open_webui_export,
)

from jupyter_tree_chat import formats
from jupyter_tree_chat.formats import detect


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (jsonl(claude_code_session()), "claude-code"),
        (b'{"type":"file-history-snapshot","messageId":"x"}\n', "claude-code"),
        ((DATA / "claude-code-edge-cases.jsonl").read_bytes(), "claude-code"),
        ((DATA / "pi-v1-large-session-head.jsonl").read_bytes(), "pi"),
        (b'{"type":"message","id":"a1b2c3d4","parentId":null,"message":{}}\n', "pi"),
        (json.dumps(chatgpt_export()).encode(), "chatgpt"),
        (json.dumps(chatgpt_export(), indent=2).encode(), "chatgpt"),
        (json.dumps(chatgpt_export()[0]).encode(), "chatgpt"),
        (json.dumps(open_webui_export(), indent=1).encode(), "open-webui"),
        (b'{"type":"session","version":1,"created":1}\n', "tree-chat"),
        # an imported pi session's header keeps pi's cwd: still this project's file
        (
            b'{"type":"session","version":1,"created":1,"imported":{"format":"pi"},"cwd":"/p"}\n',
            "tree-chat",
        ),
        (
            b'{"type":"session","version":3,"id":"x","timestamp":"2024-12-03T14:00:00Z","cwd":"/p"}\n',
            "pi",
        ),
        (b'{"id":"a","parentId":null,"message":{"role":"user","content":"x"}}\n', "tree-chat"),
        (b"garbage\n{}\n", None),
        (b"", None),
    ],
)
def test_each_tools_files_are_told_apart(data: bytes, kind: str | None):
    assert detect(data) == kind


def test_a_json_export_cut_short_is_still_recognised():
    data = json.dumps(chatgpt_export(), indent=2).encode()
    assert detect(data[: len(data) // 3]) == "chatgpt"


def test_the_names_detect_gives_are_the_readers_names():
    from jupyter_tree_chat.formats import chatgpt, claude_code, open_webui, pi

    assert formats.FORMATS == (claude_code.NAME, pi.NAME, chatgpt.NAME, open_webui.NAME)
    assert set(formats.LABELS) == {*formats.FORMATS, formats.NATIVE}
