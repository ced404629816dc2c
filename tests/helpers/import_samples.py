"""Synthetic source files in other tools' formats, for the cases public samples miss.

Each builder returns the bytes of a file shaped as the tool's documentation (and the
public samples in tests/data/import) describe it: Claude Code's block-per-record
assistant messages, progress and system records in the parent chain, parallel tool
results, a rewind, a compaction replay, resumed files, sidechains; pi's v3 entries with
labels, summaries and another provider's tool-call ids, and a v1 file with a glued line;
a ChatGPT export with tool calls, reasoning, custom instructions and images; an Open
WebUI export with several models answering one question.

``source_pieces`` lists, independently of the importer, every text, tool_use and
tool_result of a source's user and assistant messages: the no-text-lost check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "import"
SESSION = "5f0c1a2e-0000-4000-8000-00000000c1de"


def jsonl(records: list[Any]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


# -- Claude Code -------------------------------------------------------------------------


def cc_record(
    kind: str,
    uuid: str,
    parent: str | None,
    content: Any = None,
    *,
    stamp: str = "2025-07-01T10:00:00.000Z",
    message_id: str | None = None,
    session: str = SESSION,
    **extra: Any,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/p",
        "sessionId": session,
        "version": "2.1.0",
        "timestamp": stamp,
    }
    if kind == "user":
        record["message"] = {"role": "user", "content": content}
    elif kind == "assistant":
        record["message"] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    record.update(extra)
    return record


def stamp(minute: int, second: int = 0) -> str:
    return f"2025-07-01T10:{minute:02d}:{second:02d}.000Z"


def claude_code_session() -> list[dict[str, Any]]:
    """One session with every shape the importer must straighten out.

    u1 ─ [a1 thinking, a2 text, a3 tool_use t1, a4 tool_use t2]  (msg_01, chained)
         ├ p1 progress ─ r1 tool_result t1
         └ r2 tool_result t2 (a sibling of the progress record, as 2.1.x writes)
           ─ a5 (msg_02) ─ s1 system ─ u2 prompt ─ m1 isMeta caveat ─ a6 (msg_03)
                         ├ u2' a compaction replay of u2 (same time, same text)
                         └ u3 a rewind (another prompt, later) ─ a7 (msg_04)
    """
    thinking = {"type": "thinking", "thinking": "The user wants the bug fixed.", "signature": ""}
    t1 = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "x.py"}}
    t2 = {"type": "tool_use", "id": "toolu_02", "name": "Grep", "input": {"pattern": "bug"}}
    return [
        {"type": "summary", "summary": "Fixing the bug", "leafUuid": "a6"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        cc_record("user", "u1", None, "Fix the bug in x.py", stamp=stamp(0)),
        cc_record("assistant", "a1", "u1", [thinking], stamp=stamp(0, 5), message_id="msg_01"),
        cc_record(
            "assistant",
            "a2",
            "a1",
            [{"type": "text", "text": "Let me look at the file."}],
            stamp=stamp(0, 6),
            message_id="msg_01",
        ),
        cc_record("assistant", "a3", "a2", [t1], stamp=stamp(0, 7), message_id="msg_01"),
        cc_record("assistant", "a4", "a3", [t2], stamp=stamp(0, 8), message_id="msg_01"),
        cc_record("progress", "p1", "a4", stamp=stamp(0, 9), data={"type": "hook_progress"}),
        cc_record(
            "user",
            "r1",
            "p1",
            [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "def f(): return 1/0"}],
            stamp=stamp(0, 10),
            toolUseResult={"type": "text"},
        ),
        cc_record(
            "user",
            "r2",
            "a4",
            [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "x.py:1: bug"}],
            stamp=stamp(0, 11),
        ),
        cc_record(
            "assistant",
            "a5",
            "r2",
            [{"type": "text", "text": "The bug is a division by zero."}],
            stamp=stamp(1),
            message_id="msg_02",
        ),
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION},
        cc_record("system", "s1", "a5", stamp=stamp(1, 1), subtype="local_command", content="x"),
        cc_record("user", "u2", "s1", "Now write a test", stamp=stamp(2)),
        cc_record(
            "user",
            "m1",
            "u2",
            [{"type": "text", "text": "Caveat: the messages below were generated by a command."}],
            stamp=stamp(2, 1),
            isMeta=True,
        ),
        cc_record(
            "assistant",
            "a6",
            "m1",
            [{"type": "text", "text": "Here is a test."}],
            stamp=stamp(3),
            message_id="msg_03",
        ),
        cc_record("user", "u2-replay", "a5", "Now write a test", stamp=stamp(2)),
        cc_record("user", "u3", "a5", "No, explain the fix first", stamp=stamp(9)),
        cc_record(
            "assistant",
            "a7",
            "u3",
            [{"type": "text", "text": "The fix guards the division."}],
            stamp=stamp(9, 30),
            message_id="msg_04",
        ),
        cc_record("system", "s2", "a7", stamp=stamp(9, 31), subtype="turn_duration"),
        {"type": "last-prompt", "lastPrompt": "No, explain the fix first", "leafUuid": "s2"},
    ]


def claude_code_resumed() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A session and its resumption: the second file repeats the first's records
    (same uuid, another sessionId) and goes on; its last-prompt is the newer one."""
    first = [
        cc_record("user", "r-u1", None, "Start the work", stamp=stamp(0)),
        cc_record(
            "assistant",
            "r-a1",
            "r-u1",
            [{"type": "text", "text": "Started."}],
            stamp=stamp(0, 5),
            message_id="msg_r1",
        ),
        cc_record(
            "assistant",
            "r-a1b",
            "r-a1",
            [{"type": "text", "text": "Really."}],
            stamp=stamp(0, 6),
            message_id="msg_r1",
        ),
        {"type": "last-prompt", "lastPrompt": "Start the work", "leafUuid": "r-a1b"},
    ]
    later = "6e6e6e6e-0000-4000-8000-000000000002"
    second = [
        {**first[0], "sessionId": later},
        {**first[1], "sessionId": later},
        {**first[2], "sessionId": later},
        cc_record("user", "r-u2", "r-a1b", "Carry on", stamp=stamp(30), session=later),
        cc_record(
            "assistant",
            "r-a2",
            "r-u2",
            [{"type": "text", "text": "Carried on."}],
            stamp=stamp(30, 5),
            message_id="msg_r2",
            session=later,
        ),
        {"type": "last-prompt", "lastPrompt": "Carry on", "leafUuid": "r-a2"},
    ]
    return first, second


def claude_code_sidechains() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A main file with an inline sidechain (an older version) and an agent file."""
    main = [
        cc_record("user", "m-u1", None, "Research the code base", stamp=stamp(0)),
        cc_record(
            "assistant",
            "m-a1",
            "m-u1",
            [{"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"prompt": "Look"}}],
            stamp=stamp(0, 1),
            message_id="msg_m1",
        ),
        {
            **cc_record("user", "side-u1", None, "Look around", stamp=stamp(0, 2)),
            "isSidechain": True,
        },
        {
            **cc_record(
                "assistant",
                "side-a1",
                "side-u1",
                [{"type": "text", "text": "Inline sidechain answer"}],
                stamp=stamp(0, 3),
                message_id="msg_s1",
            ),
            "isSidechain": True,
        },
        cc_record(
            "user",
            "m-r1",
            "m-a1",
            [{"type": "tool_result", "tool_use_id": "toolu_task", "content": "Found it"}],
            stamp=stamp(0, 4),
        ),
        cc_record(
            "assistant",
            "m-a2",
            "m-r1",
            [{"type": "text", "text": "Main conversation answer"}],
            stamp=stamp(0, 5),
            message_id="msg_m2",
        ),
    ]
    agent = [
        {
            **cc_record("user", "ag-u1", None, "Agent prompt", stamp=stamp(0, 2)),
            "isSidechain": True,
            "agentId": "a1b2c3",
        },
        {
            **cc_record(
                "assistant",
                "ag-a1",
                "ag-u1",
                [{"type": "text", "text": "Agent file answer"}],
                stamp=stamp(0, 3),
                message_id="msg_ag1",
            ),
            "isSidechain": True,
            "agentId": "a1b2c3",
        },
    ]
    return main, agent


def claude_code_continuation() -> list[dict[str, Any]]:
    """dag.md's "assistant continuation" shape: after a tool_use, the next block of the
    same API message and the lagging tool_result are siblings, the result written last."""
    return [
        cc_record("user", "c-u1", None, "Check both files", stamp=stamp(0)),
        cc_record(
            "assistant",
            "c-a1",
            "c-u1",
            [{"type": "tool_use", "id": "toolu_x", "name": "Read", "input": {"file_path": "a"}}],
            stamp=stamp(0, 1),
            message_id="msg_c1",
        ),
        cc_record(
            "assistant",
            "c-a2",
            "c-a1",
            [{"type": "tool_use", "id": "toolu_y", "name": "Read", "input": {"file_path": "b"}}],
            stamp=stamp(0, 2),
            message_id="msg_c1",
        ),
        cc_record(
            "user",
            "c-ry",
            "c-a2",
            [{"type": "tool_result", "tool_use_id": "toolu_y", "content": "b's text"}],
            stamp=stamp(0, 3),
        ),
        cc_record(
            "user",
            "c-rx",
            "c-a1",
            [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "a's text"}],
            stamp=stamp(0, 40),
        ),
        cc_record(
            "assistant",
            "c-a3",
            "c-ry",
            [{"type": "text", "text": "Both files read."}],
            stamp=stamp(0, 41),
            message_id="msg_c2",
        ),
    ]


# -- pi ----------------------------------------------------------------------------------


def pi_entry(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-12-03T14:00:00.000Z",
        **fields,
    }


def pi_session() -> list[dict[str, Any]]:
    """A v3 session: an OpenAI tool call (its id has a '|'), unsigned reasoning, a
    branch with a branch_summary, a compaction, labels set, moved and cleared."""
    header = {
        "type": "session",
        "version": 3,
        "id": "1f2e3d4c-0000-4000-8000-000000000003",
        "timestamp": "2025-12-03T14:00:00.000Z",
        "cwd": "/p",
    }
    call = {
        "type": "toolCall",
        "id": "call_abc|fc_123",
        "name": "read",
        "arguments": {"path": "notes.md"},
    }
    return [
        header,
        pi_entry("message", "aa000001", None, message={"role": "user", "content": "Read notes.md"}),
        pi_entry(
            "model_change", "aa000002", "aa000001", provider="openai", modelId="gpt-5.1-codex"
        ),
        pi_entry(
            "message",
            "aa000003",
            "aa000002",
            message={
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Reading it.", "thinkingSignature": "rs_1"},
                    {"type": "text", "text": "I'll read it."},
                    call,
                ],
                "api": "openai-responses",
                "provider": "openai",
                "model": "gpt-5.1-codex",
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0},
                "stopReason": "toolUse",
            },
        ),
        pi_entry(
            "message",
            "aa000004",
            "aa000003",
            message={
                "role": "toolResult",
                "toolCallId": "call_abc|fc_123",
                "toolName": "read",
                "content": [{"type": "text", "text": "remember the milk"}],
                "isError": False,
            },
        ),
        pi_entry(
            "message",
            "aa000005",
            "aa000004",
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": "The note says: remember the milk."}],
                "provider": "openai",
                "model": "gpt-5.1-codex",
                "stopReason": "stop",
            },
        ),
        pi_entry("label", "aa000006", "aa000005", targetId="aa000001", label="start"),
        pi_entry("label", "aa000007", "aa000006", targetId="aa000005", label="answer"),
        pi_entry(
            "message",
            "aa000008",
            "aa000007",
            message={
                "role": "bashExecution",
                "command": "ls",
                "output": "notes.md",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            },
        ),
        pi_entry(
            "message",
            "aa000009",
            "aa000008",
            message={"role": "assistant", "content": [{"type": "text", "text": "One file."}]},
        ),
        pi_entry(
            "branch_summary",
            "aa00000a",
            "aa000005",
            fromId="aa000009",
            summary="Listed the folder: one file.",
        ),
        pi_entry(
            "message",
            "aa00000b",
            "aa00000a",
            message={"role": "user", "content": [{"type": "text", "text": "Summarise it"}]},
        ),
        pi_entry(
            "message",
            "aa00000c",
            "aa00000b",
            message={"role": "assistant", "content": [{"type": "text", "text": "Milk."}]},
        ),
        pi_entry(
            "compaction",
            "aa00000d",
            "aa00000c",
            summary="The user keeps notes; one says milk.",
            firstKeptEntryId="aa00000b",
            tokensBefore=5000,
        ),
        pi_entry("session_info", "aa00000e", "aa00000d", name="Milk notes"),
        pi_entry(
            "message",
            "aa00000f",
            "aa00000e",
            message={"role": "user", "content": "What else?"},
        ),
        pi_entry("label", "aa000010", "aa00000f", targetId="aa000005", label=None),
        pi_entry("label", "aa000011", "aa000010", targetId="aa00000f", label="latest"),
    ]


def pi_v1_with_damage() -> bytes:
    """A version-1 file (no ids): a compaction by index, two entries glued on one line,
    a torn last line."""
    header = {"type": "session", "id": "0a0b0c0d-1111", "timestamp": "2025-11-20T10:00:00Z"}
    lines = [
        header,
        {"type": "message", "message": {"role": "user", "content": "one"}},
        {
            "type": "message",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
        },
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "message", "message": {"role": "user", "content": "three"}},
        {
            "type": "compaction",
            "summary": "One, two, three.",
            "firstKeptEntryIndex": 4,
            "tokensBefore": 999,
        },
    ]
    data = jsonl(lines)
    glued = (
        json.dumps({"type": "message", "message": {"role": "user", "content": "four"}})
        + json.dumps(
            {
                "type": "message",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "five"}]},
            }
        )
    ).encode()
    return data + glued + b"\n" + b'{"type":"message","message":{"role":"user","con'


# -- ChatGPT -----------------------------------------------------------------------------


def gpt_node(node_id: str, parent: str | None, children: list[str], message: Any) -> dict:
    return {"id": node_id, "parent": parent, "children": children, "message": message}


def gpt_message(role: str, content: dict, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"m-{role}",
        "author": {"role": role, "name": extra.pop("name", None), "metadata": {}},
        "create_time": 1704067200.5,
        "content": content,
        "status": extra.pop("status", "finished_successfully"),
        "recipient": extra.pop("recipient", "all"),
        "metadata": extra.pop("metadata", {}),
        **extra,
    }


def text(*parts: Any) -> dict[str, Any]:
    return {"content_type": "text", "parts": list(parts)}


def chatgpt_export() -> list[dict[str, Any]]:
    """Two conversations: custom instructions, a python tool call, reasoning, an edited
    question (a branch), an image part, a reply cut short."""
    first = {
        "client-created-root": gpt_node("client-created-root", None, ["g-sys"], None),
        "g-sys": gpt_node(
            "g-sys",
            "client-created-root",
            ["g-ctx"],
            gpt_message(
                "system", text(""), metadata={"is_visually_hidden_from_conversation": True}
            ),
        ),
        "g-ctx": gpt_node(
            "g-ctx",
            "g-sys",
            ["g-u1"],
            gpt_message(
                "user",
                {
                    "content_type": "user_editable_context",
                    "user_profile": "I am a data scientist.",
                    "user_instructions": "Answer briefly.",
                },
            ),
        ),
        "g-u1": gpt_node("g-u1", "g-ctx", ["g-call"], gpt_message("user", text("Plot x squared"))),
        "g-call": gpt_node(
            "g-call",
            "g-u1",
            ["g-tool"],
            gpt_message(
                "assistant",
                {"content_type": "code", "language": "python", "text": "plot(x**2)"},
                recipient="python",
                metadata={"model_slug": "gpt-4o"},
            ),
        ),
        "g-tool": gpt_node(
            "g-tool",
            "g-call",
            ["g-think"],
            gpt_message(
                "tool", {"content_type": "execution_output", "text": "<figure>"}, name="python"
            ),
        ),
        "g-think": gpt_node(
            "g-think",
            "g-tool",
            ["g-a1"],
            gpt_message(
                "assistant",
                {
                    "content_type": "thoughts",
                    "thoughts": [{"summary": "Checking", "content": "The plot is a parabola."}],
                },
            ),
        ),
        "g-a1": gpt_node(
            "g-a1",
            "g-think",
            ["g-u2", "g-u2b"],
            gpt_message(
                "assistant", text("Here is the parabola."), metadata={"model_slug": "gpt-4o"}
            ),
        ),
        "g-u2": gpt_node("g-u2", "g-a1", ["g-a2"], gpt_message("user", text("Make it red"))),
        "g-a2": gpt_node("g-a2", "g-u2", [], gpt_message("assistant", text("Red now."))),
        "g-u2b": gpt_node(
            "g-u2b",
            "g-a1",
            ["g-a2b"],
            gpt_message(
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://file-abc",
                            "width": 1024,
                            "height": 768,
                        },
                        "Make it look like this",
                    ],
                },
            ),
        ),
        "g-a2b": gpt_node(
            "g-a2b",
            "g-u2b",
            [],
            gpt_message("assistant", text("Like th"), status="in_progress"),
        ),
    }
    second = {
        "h-root": gpt_node("h-root", None, ["h-u1"], None),
        "h-u1": gpt_node("h-u1", "h-root", ["h-a1"], gpt_message("user", text("Hello"))),
        "h-a1": gpt_node("h-a1", "h-u1", [], gpt_message("assistant", text("Hi!"))),
    }
    return [
        {
            "title": "Parabola",
            "create_time": 1704067200.0,
            "update_time": 1704070000.0,
            "mapping": first,
            "current_node": "g-a2b",
            "conversation_id": "conv-aaaa-1111",
        },
        {
            "title": "Greeting",
            "create_time": 1704000000.0,
            "update_time": 1704000100.0,
            "mapping": second,
            "current_node": "h-a1",
            "conversation_id": "conv-bbbb-2222",
        },
    ]


# -- Open WebUI --------------------------------------------------------------------------


def owui_message(
    message_id: str, parent: str | None, children: list[str], role: str, content: str, **extra: Any
) -> dict[str, Any]:
    return {
        "id": message_id,
        "parentId": parent,
        "childrenIds": children,
        "role": role,
        "content": content,
        "timestamp": 1717000000,
        **extra,
    }


def open_webui_export() -> list[dict[str, Any]]:
    """Two chats as Settings → Chats → Export writes them: two models answering one
    question (siblings), a failed answer, a system prompt; the second in the legacy shape."""
    messages = {
        "w-u1": owui_message(
            "w-u1", None, ["w-a1", "w-a2"], "user", "Name a colour", models=["m1", "m2"]
        ),
        "w-a1": owui_message("w-a1", "w-u1", ["w-u2"], "assistant", "Blue.", model="llama3:8b"),
        "w-a2": owui_message("w-a2", "w-u1", [], "assistant", "Green.", model="qwen2:7b"),
        "w-u2": owui_message("w-u2", "w-a1", ["w-a3"], "user", "Another?"),
        "w-a3": owui_message(
            "w-a3",
            "w-u2",
            [],
            "assistant",
            "",
            model="llama3:8b",
            error={"content": "Ollama: connection refused"},
        ),
    }
    legacy_messages = {
        "l-s": owui_message("l-s", None, ["l-u1"], "system", "You are terse."),
        "l-u1": owui_message("l-u1", "l-s", ["l-a1"], "user", "Why is the sky blue?"),
        "l-a1": owui_message("l-a1", "l-u1", [], "assistant", "Rayleigh scattering."),
    }
    return [
        {
            "id": "chat-1111",
            "user_id": "user-1",
            "title": "Colours",
            "chat": {
                "id": "",
                "title": "Colours",
                "models": ["llama3:8b", "qwen2:7b"],
                "params": {"system": "Answer in one word."},
                "history": {"messages": messages, "currentId": "w-a3"},
                "messages": list(messages.values()),
            },
            "updated_at": 1717000500,
            "created_at": 1717000000,
            "archived": False,
            "pinned": False,
            "meta": {},
            "folder_id": None,
        },
        {
            "id": "chat-2222",
            "title": "Sky",
            "history": {"messages": legacy_messages, "currentId": "l-a1"},
            "messages": list(legacy_messages.values()),
            "updated_at": 1716000000,
        },
    ]


# -- no text lost ------------------------------------------------------------------------


def pieces_of_content(content: Any) -> list[str]:
    """Texts, tool_use ids/names/inputs and tool_result texts of one message's content."""
    if isinstance(content, str):
        return [content] if content else []
    found: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            found.append(block["text"])
        elif kind in ("tool_use", "toolCall"):
            found.append(f"tool_use {block['id']} {block['name']}")
            found.extend(strings_in(block.get("input", block.get("arguments"))))
        elif kind == "tool_result":
            found.append(f"tool_result {block['tool_use_id']}")
            found.extend(pieces_of_content(block.get("content")))
    return found


def strings_in(value: Any) -> list[str]:
    """Every non-empty string inside a JSON value (a tool call's arguments)."""
    found: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str) and item:
            found.append(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


def source_pieces(kind: str, data: bytes) -> list[str]:
    """Every piece of the source's user/assistant messages, read as the tool's docs say."""
    found: list[str] = []
    if kind == "claude-code":
        for line in data.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
                message = record.get("message")
                if isinstance(message, dict) and record.get("uuid"):
                    found.extend(pieces_of_content(message.get("content")))
    elif kind == "pi":
        for line in data.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            message = record.get("message") if isinstance(record, dict) else None
            if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
                found.extend(pieces_of_content(message.get("content")))
            if isinstance(message, dict) and message.get("role") == "toolResult":
                found.append(f"tool_result {message['toolCallId']}")
                found.extend(pieces_of_content(message.get("content")))
    elif kind == "chatgpt":
        for conversation in json.loads(data):
            for node_id, node in conversation["mapping"].items():
                message = node.get("message") or {}
                role = message.get("author", {}).get("role")
                content = message.get("content", {})
                if role not in ("user", "assistant") or (
                    "parts" not in content and "text" not in content
                ):
                    continue
                if content.get("content_type") in (
                    "user_editable_context",
                    "model_editable_context",
                ):
                    continue
                if role == "assistant" and message.get("recipient", "all") != "all":
                    found.append(f"tool_use {node_id} {message['recipient']}")
                    found.append(content.get("text", ""))
                    continue
                for part in content.get("parts", [content.get("text")]):
                    if isinstance(part, str) and part:
                        found.append(part)
                    elif isinstance(part, dict) and part.get("text"):
                        found.append(part["text"])
    elif kind == "open-webui":
        for item in json.loads(data):
            chat = item.get("chat", item)
            for message in chat["history"]["messages"].values():
                if message["role"] in ("user", "assistant") and message["content"]:
                    found.append(message["content"])
    return found


def imported_pieces(records: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for record in records:
        message = record.get("message")
        if isinstance(message, dict):
            found.update(pieces_of_content(message.get("content")))
    return found
