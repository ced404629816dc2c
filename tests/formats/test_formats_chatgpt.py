"""ChatGPT exports read into a faithful tree (formats/chatgpt.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.import_samples import DATA, chatgpt_export

from jupyter_tree_chat import formats
from jupyter_tree_chat.errors import FormatError
from jupyter_tree_chat.formats import Imported, Source


def read(export: Any = None, **options: Any) -> Imported:
    data = json.dumps(chatgpt_export() if export is None else export).encode()
    return formats.read([Source("conversations.json", data)], **options)


def nodes(imported: Imported) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in imported.records if "type" not in r}


def test_each_conversation_is_a_root_labelled_with_its_title():
    imported = read()
    roots = [r["id"] for r in nodes(imported).values() if r["parentId"] is None]
    assert roots == ["g-u1", "h-u1"]
    labels = {r["id"]: r["label"] for r in imported.records if r.get("type") == "label"}
    assert labels == {"g-u1": "Parabola", "h-u1": "Greeting"}


def test_custom_instructions_and_system_messages_become_the_roots_system_prompt():
    imported = read()
    assert nodes(imported)["g-u1"]["meta"]["system"] == "I am a data scientist.\n\nAnswer briefly."
    assert "system" not in nodes(imported)["h-u1"]["meta"]
    assert "g-sys" not in nodes(imported) and "g-ctx" not in nodes(imported)


def test_a_message_to_a_tool_is_a_tool_use_and_the_tool_message_its_result():
    imported = read()
    call = nodes(imported)["g-call"]["message"]["content"]
    assert call == [
        {"type": "tool_use", "id": "g-call", "name": "python", "input": {"code": "plot(x**2)"}}
    ]
    result = nodes(imported)["g-tool"]
    assert result["message"]["role"] == "user"
    assert result["message"]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "g-call",
            "content": [{"type": "text", "text": "<figure>"}],
        }
    ]


def test_reasoning_is_unsigned_thinking_merged_into_the_answer_that_follows():
    imported = read()
    answer = nodes(imported)["g-think"]
    assert [b["type"] for b in answer["message"]["content"]] == ["thinking", "text"]
    assert answer["message"]["content"][0]["signature"] == ""
    assert answer["meta"]["merged"][0] == {
        "id": "g-a1",
        "file": "conversations.json",
        "conversation": "conv-aaaa-1111",
        "key": "conversation 'conv-aaaa-1111' node 'g-a1'",
    }


def test_an_edited_question_is_a_branch_and_an_image_a_named_placeholder():
    imported = read()
    edited = [r["id"] for r in nodes(imported).values() if r["parentId"] == "g-think"]
    assert edited == ["g-u2", "g-u2b"]
    parts = nodes(imported)["g-u2b"]["message"]["content"]
    assert parts == [
        {"type": "text", "text": "[image_asset_pointer file-service://file-abc]"},
        {"type": "text", "text": "Make it look like this"},
    ]


def test_current_node_of_the_newest_conversation_is_the_leaf_and_a_cut_reply_is_marked():
    imported = read()
    assert imported.leaf == "g-a2b"
    assert nodes(imported)["g-a2b"]["meta"]["interrupted"] is True
    assert (
        nodes(imported)["g-a2"]["meta"]["source"]["key"]
        == "conversation 'conv-aaaa-1111' node 'g-a2'"
    )


def test_one_conversation_by_id_prefix_or_title():
    for wanted in ("conv-bbbb", "Greeting"):
        imported = read(conversation=wanted)
        assert list(nodes(imported)) == ["h-u1", "h-a1"]
        assert imported.leaf == "h-a1"
        assert imported.counts["conversations not chosen"] == 1


def test_a_single_conversation_object_and_the_public_example_read_too():
    imported = read(chatgpt_export()[1])
    assert list(nodes(imported)) == ["h-u1", "h-a1"]
    public = formats.read([formats.open_source(DATA / "chatgpt-example-conversation.json")])
    assert public.format == "chatgpt" and public.problems == []
    assert [r["id"] for r in nodes(public).values() if r["parentId"] == "msg-3"] == [
        "msg-4",
        "msg-5",
    ]
    assert public.leaf == "msg-6"


def test_damage_in_an_export_is_reported_by_key_and_the_rest_imported():
    export = chatgpt_export()
    export.insert(1, {"title": "broken"})
    export[0]["mapping"]["g-a2"]["message"] = "not an object"
    export[0]["mapping"]["g-u2"]["parent"] = "gone"
    imported = read(export)
    assert [str(p) for p in imported.problems] == [
        "conversations.json, conversation 'conv-aaaa-1111' node 'g-a2': message is not an object "
        "(bridged over)",
        "conversations.json, conversation 1: not a conversation (no mapping; ignored)",
        "conversations.json, conversation 'conv-aaaa-1111' node 'g-u2': record 'g-u2': its parent "
        "'gone' is not in the source (imported as a root)",
    ]
    assert "h-a1" in nodes(imported)


def test_a_file_that_is_not_json_at_all_is_refused_with_the_fix():
    with pytest.raises(FormatError, match="give --format"):
        formats.read([Source("conversations.json", b"<html>")])
    imported = formats.read([Source("conversations.json", b'[{"mapping": {')], "chatgpt")
    assert imported.nodes == 0
    assert imported.problems[0].message.startswith("not valid JSON")
