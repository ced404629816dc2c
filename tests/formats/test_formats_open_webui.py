"""Open WebUI exports read into a faithful tree (formats/open_webui.py)."""

from __future__ import annotations

import json
from typing import Any

from helpers.import_samples import open_webui_export

from jupyter_tree_chat import formats
from jupyter_tree_chat.formats import Imported, Source


def read(export: Any = None, **options: Any) -> Imported:
    data = json.dumps(open_webui_export() if export is None else export).encode()
    return formats.read([Source("chat-export-1717000600.json", data)], **options)


def nodes(imported: Imported) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in imported.records if "type" not in r}


def test_message_ids_are_node_ids_and_two_models_answering_are_siblings():
    imported = read()
    assert imported.format == "open-webui"
    answers = [r for r in nodes(imported).values() if r["parentId"] == "w-u1"]
    assert [(r["id"], r["meta"]["model"]) for r in answers] == [
        ("w-a1", "llama3:8b"),
        ("w-a2", "qwen2:7b"),
    ]
    assert nodes(imported)["w-a1"]["message"] == {
        "role": "assistant",
        "content": "Blue.",
        "timestamp": 1717000000,
    }


def test_current_id_of_the_newest_chat_is_the_leaf_and_an_error_is_kept_in_meta():
    imported = read()
    assert imported.leaf == "w-a3"
    assert nodes(imported)["w-a3"]["meta"]["error"] == {"content": "Ollama: connection refused"}


def test_system_prompts_and_titles_land_on_each_chats_root_in_both_shapes():
    imported = read()
    by_id = nodes(imported)
    assert by_id["w-u1"]["meta"]["system"] == "Answer in one word."
    assert by_id["l-u1"]["parentId"] is None and by_id["l-u1"]["meta"]["system"] == "You are terse."
    labels = {r["id"]: r["label"] for r in imported.records if r.get("type") == "label"}
    assert labels == {"w-u1": "Colours", "l-u1": "Sky"}
    assert by_id["l-a1"]["meta"]["source"] == {
        "format": "open-webui",
        "file": "chat-export-1717000600.json",
        "chat": "chat-2222",
        "key": "chat 'chat-2222' message 'l-a1'",
    }


def test_one_chat_by_title_and_damage_reported_by_key():
    imported = read(conversation="Sky")
    assert list(nodes(imported)) == ["l-u1", "l-a1"]
    export = open_webui_export()
    export[0]["chat"]["history"]["messages"]["w-u2"]["content"] = None
    export.append({"id": "chat-3333", "chat": {"title": "no history"}})
    damaged = read(export)
    assert [str(p) for p in damaged.problems] == [
        "chat-export-1717000600.json, chat 'chat-1111' message 'w-u2': message has no content "
        "(imported as empty)",
        "chat-export-1717000600.json, chat 2: not a chat (no history.messages; ignored)",
    ]
    assert "l-a1" in nodes(damaged)
