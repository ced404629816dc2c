"""The session file: what loads, what is reported, and what appends write."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.reliability_helpers import fill_disk, small_tmpfs

from jupyter_tree_chat.errors import SessionNameError, SessionNotSaved, StoreError
from jupyter_tree_chat.history.store import (
    FileStore,
    MemoryStore,
    create_session_file,
    encode_record,
    header_record,
    hidden_record,
    label_record,
    leaf_record,
    list_sessions,
    load_file,
    parse_session,
    session_path,
    validate_session_name,
)
from jupyter_tree_chat.history.tree import Node, message_text

CHAPTER_LINES = (
    '{"id":"msg_001","parentId":null,"message":{"role":"user","content":"hello","timestamp":1718400000}}\n'
    '{"id":"msg_002","parentId":"msg_001","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1718400005}}\n'
    '{"id":"msg_003","parentId":"msg_002","message":{"role":"user","content":"继续","timestamp":1718400010}}\n'
    '{"id":"msg_004","parentId":"msg_002","message":{"role":"user","content":"换一种问法","timestamp":1718400020}}\n'
).encode()


def node(node_id: str, parent: str | None, role: str = "user", text: Any = None) -> bytes:
    content = node_id if text is None else text
    return encode_record(
        {"id": node_id, "parentId": parent, "message": {"role": role, "content": content}}
    )


def problems(data: bytes) -> list[str]:
    return [str(p) for p in parse_session(data).problems]


# -- the chapter's file ----------------------------------------------------------------


def test_the_chapters_four_lines_load_with_msg_003_and_msg_004_as_siblings() -> None:
    result = parse_session(CHAPTER_LINES)
    tree = result.tree
    assert result.problems == []
    assert result.header is None  # the chapter writes none
    assert [n.id for n in tree.branches("msg_002")] == ["msg_003", "msg_004"]
    assert tree.leaf == "msg_004"  # no leaf record: the last node appended
    assert [message_text(m) for m in tree.active_path()] == ["hello", "hi", "换一种问法"]


def test_the_chapters_literal_placeholder_is_reported_and_orphans_its_children() -> None:
    # the chapter prints `"content":[...]`, which is not JSON: a reader must say so
    data = CHAPTER_LINES.replace(b'[{"type":"text","text":"hi"}]', b"[...]")
    assert problems(data) == ["line 2: not valid JSON (ignored)"] + [
        f"line {n}: node 'msg_00{n}' is an orphan: its parent 'msg_002' has not appeared earlier"
        " (not attached)"
        for n in (3, 4)
    ]
    assert len(parse_session(data).tree) == 1


# -- tolerant loading ------------------------------------------------------------------


GOOD = node("u1", None) + node("a1", "u1", "assistant")


def test_a_torn_last_line_is_reported_and_the_rest_loads() -> None:
    data = GOOD + node("u2", "a1")[:20]
    assert problems(data) == ["line 3: torn last line: an incomplete record of 20 bytes (ignored)"]
    assert parse_session(data).tree.leaf == "a1"


def test_garbage_blank_and_non_record_lines_are_each_reported_with_their_line() -> None:
    data = node("u1", None) + b'garbage\n\n  \n[1, 2]\n"text"\n{}\n' + node("a1", "u1", "assistant")
    assert problems(data) == [
        "line 2: not valid JSON (ignored)",
        "line 3: blank line (ignored)",
        "line 4: blank line (ignored)",
        "line 5: JSON but not a record: an array (ignored)",
        "line 6: JSON but not a record: a string (ignored)",
        "line 7: not a message record: no 'id' field (ignored)",
    ]
    assert len(parse_session(data).tree) == 2


def test_crlf_bom_and_invalid_utf8_are_reported_and_the_nodes_still_load() -> None:
    data = b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n") + b"\xff\xfe\n" + node("u2", "a1")
    assert problems(data) == [
        "line 1: starts with a UTF-8 byte order mark (ignored)",
        "line 1: ends with CRLF (read as LF)",
        "line 2: ends with CRLF (read as LF)",
        "line 3: not valid UTF-8 (ignored)",
    ]
    assert [n.id for n in parse_session(data).tree] == ["u1", "a1", "u2"]


def test_only_newline_splits_lines_u2028_inside_a_string_is_text() -> None:
    data = node("u1", None, text="one\u2028two\u2029three\x85four") + node("a1", "u1", "assistant")
    result = parse_session(data)
    assert result.problems == []
    assert result.tree.get("u1").text == "one\u2028two\u2029three\x85four"


def test_orphans_duplicates_and_cycles_are_reported_never_attached() -> None:
    data = (
        GOOD
        + node("x", "nowhere")  # line 3: parent missing
        + node("u1", None, text="again")  # line 4: duplicate
        + node("self", "self")  # line 5
        + node("p", "q")  # line 6: p and q point at each other
        + node("q", "p", "assistant")  # line 7
    )
    assert problems(data) == [
        "line 3: node 'x' is an orphan: its parent 'nowhere' has not appeared earlier"
        " (not attached)",
        "line 4: duplicate id 'u1', first on line 1 (ignored)",
        "line 5: node 'self' is its own parent, which would form a cycle (not attached)",
        "line 6: node 'p': parent 'q' would close a cycle (not attached)",
        "line 7: node 'q': parent 'p' would close a cycle (not attached)",
    ]
    result = parse_session(data)
    tree = result.tree
    assert [n.id for n in tree] == ["u1", "a1"]
    assert dict(result.lines) == {"u1": 1, "a1": 2}
    assert tree.get("u1").text == "u1"  # the first occurrence wins


def test_unknown_record_types_are_skipped_with_a_warning() -> None:
    data = GOOD + encode_record({"type": "future-thing", "x": 1})
    assert problems(data) == ["line 3: unknown record type 'future-thing' (skipped)"]


def test_role_order_breaks_in_a_file_are_reported_but_kept_as_written() -> None:
    data = GOOD + node("a2", "a1", "assistant")
    assert problems(data) == [
        "line 3: node 'a2': an assistant message under an assistant message (kept as written)"
    ]
    assert parse_session(data).tree.leaf == "a2"


def record(node_id: str, parent: str | None, message: Any, **extra: Any) -> bytes:
    return encode_record({"id": node_id, "parentId": parent, "message": message, **extra})


def test_a_role_that_is_missing_or_not_user_or_assistant_is_reported_and_kept() -> None:
    data = (
        record("s", None, {"role": "system", "content": "be brief"})
        + record("n", None, {"content": "no role"})
        + record("z", None, {"role": None, "content": "x"})
        + record("i", None, {"role": 1, "content": "x"})
        + record("l", None, {"role": ["user"], "content": "x"})
    )
    assert problems(data) == [
        "line 1: node 's': role 'system' is not 'user' or 'assistant' (kept as written)",
        "line 2: node 'n': message has no role (kept as written)",
        "line 3: node 'z': role None is not 'user' or 'assistant' (kept as written)",
        "line 4: node 'i': role 1 is not 'user' or 'assistant' (kept as written)",
        "line 5: node 'l': role ['user'] is not 'user' or 'assistant' (kept as written)",
    ]
    tree = parse_session(data).tree
    assert [n.id for n in tree] == ["s", "n", "z", "i", "l"]
    assert tree.get("s").message == {"role": "system", "content": "be brief"}  # as written


def test_content_that_is_missing_or_not_a_string_or_list_is_reported_and_kept() -> None:
    data = (
        GOOD
        + record("u2", "a1", {"role": "user"})
        + record("u3", "a1", {"role": "user", "content": 5})
        + record("u4", "a1", {"role": "user", "content": {"type": "text", "text": "x"}})
        + record("u5", "a1", {"role": "user", "content": None})
        + record("u6", "a1", {"role": "user", "content": [{"type": "text", "text": "ok"}]})
    )
    assert problems(data) == [
        "line 3: node 'u2': message has no content (kept as written)",
        "line 4: node 'u3': content is a number, not a string or a list (kept as written)",
        "line 5: node 'u4': content is an object, not a string or a list (kept as written)",
        "line 6: node 'u5': content is null, not a string or a list (kept as written)",
    ]
    tree = parse_session(data).tree
    assert [n.id for n in tree.branches("a1")] == ["u2", "u3", "u4", "u5", "u6"]
    assert tree.get("u4").message["content"] == {"type": "text", "text": "x"}


def test_a_meta_that_is_not_an_object_is_reported_and_ignored() -> None:
    data = (
        GOOD
        + record("u2", "a1", {"role": "user", "content": "x"}, meta="fast")
        + record("u3", "a1", {"role": "user", "content": "x"}, meta=[1])
        + record("u4", "a1", {"role": "user", "content": "x"}, meta=None)  # as if absent
        + record("u5", "a1", {"role": "user", "content": "x"}, meta={"model": "m"})
    )
    assert problems(data) == [
        "line 3: node 'u2': meta is a string, not an object (ignored)",
        "line 4: node 'u3': meta is an array, not an object (ignored)",
    ]
    tree = parse_session(data).tree
    metas = [tree.get(i).meta for i in ("u2", "u3", "u4", "u5")]
    assert metas == [None, None, None, {"model": "m"}]


def test_a_nodes_own_problems_follow_its_role_order_problem_on_the_same_line() -> None:
    data = record("s1", None, {"role": "system"}, meta=3) + record(
        "s2", "s1", {"role": "system", "content": "x"}
    )
    assert problems(data) == [
        "line 1: node 's1': role 'system' is not 'user' or 'assistant' (kept as written)",
        "line 1: node 's1': message has no content (kept as written)",
        "line 1: node 's1': meta is a number, not an object (ignored)",
        "line 2: node 's2': a system message under a system message (kept as written)",
        "line 2: node 's2': role 'system' is not 'user' or 'assistant' (kept as written)",
    ]


def test_a_node_that_is_not_kept_reports_only_why() -> None:
    data = (
        GOOD
        + record("u1", None, {"role": "system"})  # duplicate: ignored
        + record("x", "nowhere", {"content": 1})  # orphan: not attached
    )
    assert problems(data) == [
        "line 3: duplicate id 'u1', first on line 1 (ignored)",
        "line 4: node 'x' is an orphan: its parent 'nowhere' has not appeared earlier"
        " (not attached)",
    ]


def test_a_loaded_node_reads_like_a_constructed_one() -> None:
    # the loader decodes lines straight into Nodes and leaves bodies raw until read
    data = GOOD + encode_record(
        {
            "id": "u2",
            "parentId": "a1",
            "message": {"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 5},
            "meta": {"cell_id": "c1"},
        }
    )
    tree = parse_session(data).tree
    made = Node(
        "u2",
        "a1",
        {"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 5},
        {"cell_id": "c1"},
        3,
    )
    loaded = tree.get("u2")
    fields = ("id", "parent_id", "role", "text", "line", "message", "meta")
    assert [getattr(loaded, k) for k in fields] == [getattr(made, k) for k in fields]
    assert loaded == made and loaded.to_record() == made.to_record()
    assert [n.id for n in tree.children("a1")] == ["u2"]
    assert tree.get("a1").meta is None and tree.get("a1").role == "assistant"


def test_leaf_and_label_records_restore_the_switch_and_names() -> None:
    data = (
        GOOD
        + node("u2", "a1")
        + node("u3", "a1")
        + encode_record(leaf_record("u2"))
        + encode_record(label_record("a1", "before the fork"))
        + encode_record(leaf_record("missing"))
        + encode_record(label_record("u1", "x"))
        + encode_record(label_record("u1", ""))  # an empty label removes it
    )
    result = parse_session(data)
    assert result.tree.leaf == "u2"  # not u3, the last node: the switch survives a restart
    assert result.labels == {"a1": "before the fork"}
    assert [str(p) for p in result.problems] == [
        "line 7: leaf record points at unknown node 'missing' (ignored)"
    ]


def test_hidden_records_hide_and_show_branches_and_keep_every_node() -> None:
    data = (
        GOOD
        + node("u2", "a1")
        + node("u3", "a1")
        + encode_record(hidden_record("u2"))
        + encode_record(hidden_record("u3"))
        + encode_record(hidden_record("u3", False))  # the opposite record shows it again
        + encode_record({"type": "hidden", "id": "a1"})  # "hidden" left out means true
        + encode_record(hidden_record("missing"))
        + encode_record({"type": "hidden", "id": "u1", "hidden": "yes"})
    )
    result = parse_session(data)
    assert result.hidden == {"u2", "a1"}
    assert [n.id for n in result.tree] == ["u1", "a1", "u2", "u3"]  # nothing is deleted
    assert result.tree.leaf == "u3"  # a hidden record is not a node: the leaf stays
    assert [str(p) for p in result.problems] == [
        "line 9: hidden record for unknown node 'missing' (ignored)",
        "line 10: hidden record for 'u1': 'hidden' is a string, not a boolean (ignored)",
    ]


def test_a_node_after_a_leaf_record_becomes_the_leaf() -> None:
    data = (
        GOOD + node("u2", "a1") + encode_record(leaf_record("u1")) + node("a2", "u1", "assistant")
    )
    assert parse_session(data).tree.leaf == "a2"


def test_empty_file_is_an_empty_session() -> None:
    result = parse_session(b"")
    assert len(result.tree) == 0 and result.problems == [] and result.tree.leaf is None


def test_loading_never_writes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    damaged = GOOD + b"garbage\n" + node("u2", "a1")[:10]
    path.write_bytes(damaged)
    FileStore(path).load()
    assert path.read_bytes() == damaged


def test_load_file_explains_a_directory_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        load_file(tmp_path)
    assert len(load_file(tmp_path / "missing.chat.jsonl").tree) == 0


# -- appending -------------------------------------------------------------------------


def test_what_the_store_writes_it_loads_back_identically(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    nodes = [
        Node("u1", None, {"role": "user", "content": 'héllo\u2028 "quoted"\n', "timestamp": 1}),
        Node(
            "a1",
            "u1",
            {"role": "assistant", "content": [{"type": "text", "text": "hi 👋"}]},
            {"model": "m", "usage": {"input_tokens": 3, "output_tokens": 2}},
        ),
        Node("u2", "a1", {"role": "user", "content": "more"}),
        Node("u3", "a1", {"role": "user", "content": "other"}),
    ]
    for store in (FileStore(path), MemoryStore()):
        store.load()
        store.append([n.to_record() for n in nodes[:2]], durable=True)
        store.append([n.to_record() for n in nodes[2:]])
        store.append([leaf_record("u2"), label_record("a1", "greeting")], durable=True)
        store.sync()
        result = store.load()
        assert result.problems == []
        assert list(result.tree) == nodes
        assert result.tree.leaf == "u2"
        assert result.labels == {"a1": "greeting"}
        assert result.header is not None and result.header["version"] == 1


def test_the_file_starts_with_a_header_and_has_one_record_a_line(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    store = FileStore(path)
    store.load()
    store.append([{"id": "u1", "parentId": None, "message": {"role": "user", "content": "hi"}}])
    lines = path.read_bytes().split(b"\n")
    assert orjson.loads(lines[0])["type"] == "session"
    assert lines[1] == b'{"id":"u1","parentId":null,"message":{"role":"user","content":"hi"}}'
    assert lines[2:] == [b""]


def test_an_append_after_a_torn_tail_starts_on_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    path.write_bytes(GOOD + b'{"id":"u2","par')
    store = FileStore(path)
    store.load()
    store.append([orjson.loads(node("u2", "a1"))], durable=True)

    assert path.read_bytes() == GOOD + b'{"id":"u2","par\n' + node("u2", "a1")
    result = load_file(path)
    assert [str(p) for p in result.problems] == ["line 3: not valid JSON (ignored)"]
    assert result.tree.leaf == "u2"


def test_an_append_to_a_deleted_file_says_the_session_is_not_saved(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    store = FileStore(path)
    store.load()
    store.append([orjson.loads(node("u1", None))])
    path.unlink()
    with pytest.raises(SessionNotSaved, match=r"NOT being saved.*deleted, moved or replaced"):
        store.append([orjson.loads(node("a1", "u1", "assistant"))])
    assert not path.exists()  # no headless new file


def test_appends_are_locked_with_flock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    calls: list[int] = []
    real = fcntl.flock
    monkeypatch.setattr(fcntl, "flock", lambda fd, op: (calls.append(op), real(fd, op))[1])
    store = FileStore(tmp_path / "s.chat.jsonl")
    store.load()
    store.append([orjson.loads(node("u1", None))])
    assert calls == [fcntl.LOCK_EX]


def test_a_durable_append_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    store = FileStore(tmp_path / "s.chat.jsonl")
    store.load()
    store.append([orjson.loads(node("u1", None))])
    assert synced == []
    store.sync()  # the end of a turn
    assert len(synced) == 1
    store.append([orjson.loads(node("a1", "u1", "assistant"))], durable=True)
    assert len(synced) == 2


def test_memory_store_mends_a_torn_tail_too() -> None:
    store = MemoryStore(GOOD + b"{tor")
    store.append([orjson.loads(node("u2", "a1"))])
    assert bytes(store.data) == GOOD + b"{tor\n" + node("u2", "a1")


# -- where sessions live ---------------------------------------------------------------


# -- a file shared with other processes -------------------------------------------------


def user(node_id: str, parent: str | None) -> dict[str, Any]:
    return {"id": node_id, "parentId": parent, "message": {"role": "user", "content": node_id}}


def answer(node_id: str, parent: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": node_id}]}
    return {"id": node_id, "parentId": parent, "message": message}


def test_read_new_returns_what_another_writer_appended_and_not_our_own(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    ours, theirs = FileStore(path), FileStore(path)
    mine = ours.load()
    theirs.load()
    ours.append([user("u1", None), answer("a1", "u1")])
    theirs.append([user("t1", None)])  # the other process read nothing yet: a new root
    ours.append([user("u2", "a1")])
    theirs.append([answer("t2", "t1"), leaf_record("t2"), label_record("a1", "theirs")])
    for record in (user("u1", None), answer("a1", "u1"), user("u2", "a1")):  # as Session does
        mine.tree.add(Node(record["id"], record["parentId"], record["message"]))
    found = ours.read_new()
    assert [n.id for n in found.nodes] == ["t1", "t2"] and found.problems == []
    assert [n.line for n in found.nodes] == [4, 6]  # lines counted past our own records
    assert found.note is None and ours.read_new().nodes == []  # nothing twice
    assert mine.labels == {"a1": "theirs"}  # labels are shared
    assert mine.tree.leaf is None  # their leaf record does not move ours
    assert [n.id for n in mine.tree.children("t1")] == ["t2"]


def test_read_new_leaves_a_line_being_written_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    store = FileStore(path)
    result = store.load()
    whole = encode_record(user("u1", None))
    with open(path, "ab") as handle:  # another writer, half way through its write
        handle.write(whole[:25])
    assert store.read_new().nodes == [] and result.problems == []
    with open(path, "ab") as handle:
        handle.write(whole[25:])
    assert [n.id for n in store.read_new().nodes] == ["u1"] and result.problems == []
    assert result.tree.get("u1").line == 1


def test_a_torn_tail_at_load_is_reported_and_read_again_once_it_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    whole = encode_record(user("u2", "a1"))
    path.write_bytes(
        encode_record(user("u1", None)) + encode_record(answer("a1", "u1")) + whole[:9]
    )
    store = FileStore(path)
    result = store.load()
    assert [str(p) for p in result.problems] == [
        "line 3: torn last line: an incomplete record of 9 bytes (ignored)"
    ]
    with open(path, "ab") as handle:  # it was still being written
        handle.write(whole[9:])
    assert [n.id for n in store.read_new().nodes] == ["u2"]
    assert result.tree.get("u2").line == 3 and len(result.problems) == 1


def test_a_file_replaced_or_truncated_by_someone_else_is_said_and_nothing_lost(
    tmp_path: Path,
) -> None:
    for change in ("replace", "truncate"):
        path = tmp_path / f"{change}.chat.jsonl"
        path.write_bytes(GOOD)
        store = FileStore(path)
        result = store.load()
        if change == "replace":
            other = tmp_path / "other"
            other.write_bytes(node("x", None))
            os.replace(other, path)
        else:
            with open(path, "r+b") as handle:
                handle.truncate(10)
        found = store.read_new()
        assert found.nodes == [] and found.note is not None
        assert str(path) in found.note and "in memory only" in found.note
        assert ("replaced" if change == "replace" else "truncated") in found.note
        assert [n.id for n in result.tree] == ["u1", "a1"]  # what was read stays
        before = path.read_bytes()
        with pytest.raises(SessionNotSaved, match="NOT being saved"):
            store.append([user("u2", "a1")])
        assert path.read_bytes() == before  # nothing written after the change
        assert store.read_new().note is None  # said once


def test_session_paths_sit_beside_the_notebook(tmp_path: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    assert session_path(notebook) == tmp_path / "analysis.chat.jsonl"
    assert session_path(notebook, "draft-2") == tmp_path / "analysis.draft-2.chat.jsonl"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "cannot be empty"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "'..'"),
        ("a..b", "'..'"),
        ("a\0b", "NUL"),
        ("x\n", "not allowed"),
        ("-x" * 60, "characters long"),
    ],
)
def test_bad_session_names_are_refused_with_the_reason(name: str, why: str) -> None:
    with pytest.raises(SessionNameError, match=why):
        validate_session_name(name)


def test_list_sessions_finds_the_default_and_named_sessions(tmp_path: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    for name in ("analysis.chat.jsonl", "analysis.draft.chat.jsonl", "other.chat.jsonl"):
        (tmp_path / name).write_bytes(b"")
    assert list_sessions(notebook) == {
        None: tmp_path / "analysis.chat.jsonl",
        "draft": tmp_path / "analysis.draft.chat.jsonl",
    }


def test_a_new_session_file_is_created_whole_and_an_existing_one_never_touched(tmp_path: Path):
    target = tmp_path / "imported.chat.jsonl"
    data = encode_record(header_record()) + node("a", None)
    create_session_file(target, data)
    assert target.read_bytes() == data
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    with pytest.raises(FileExistsError):
        create_session_file(target, b"other\n")
    assert target.read_bytes() == data
    create_session_file(target, b"replaced\n", replace=True)
    assert target.read_bytes() == b"replaced\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imported.chat.jsonl"]  # no temp left


def test_a_new_session_file_cut_by_a_full_disk_leaves_nothing_behind():
    with small_tmpfs() as fault:
        if fault.how == "unavailable":  # no mount rights: the fault cannot be made here
            pytest.fail("needs a real tmpfs (run as root) to fill a disk")
        fill_disk(fault.path)
        before = sorted(p.name for p in fault.path.iterdir())
        for replace in (False, True):
            with pytest.raises(OSError) as caught:
                create_session_file(fault.path / "new.chat.jsonl", b"x" * 200_000, replace=replace)
            assert caught.value.errno == errno.ENOSPC
            assert sorted(p.name for p in fault.path.iterdir()) == before


def test_a_sync_that_does_not_wait_fsyncs_on_a_thread_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    synced_on: list[str] = []
    real = os.fsync
    monkeypatch.setattr(
        os, "fsync", lambda fd: (synced_on.append(threading.current_thread().name), real(fd))[1]
    )
    path = tmp_path / "s.chat.jsonl"
    store = FileStore(path)
    store.load()
    store.append([orjson.loads(node("u1", None))], durable=True)  # the question: here
    store.append([orjson.loads(node("a1", "u1", "assistant"))])  # the answer: written
    assert load_file(path).tree.leaf == "a1"  # another reader sees it before any fsync

    store.sync(wait=False)  # the end of a turn
    store.wait_for_sync()
    store.sync(wait=False)  # nothing new: nothing to do

    here = threading.current_thread().name
    assert synced_on[-1] == "session fsync"  # once, the answer's
    assert synced_on[:-1] and set(synced_on[:-1]) == {here}  # the question's (and folder's)


def test_what_a_sync_that_did_not_wait_met_is_raised_by_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "s.chat.jsonl"
    store = FileStore(path)
    store.load()
    store.append([orjson.loads(node("u1", None))])
    path.unlink()
    store.sync(wait=False)
    store.wait_for_sync()
    with pytest.raises(SessionNotSaved, match=r"NOT being saved.*deleted, moved or replaced"):
        store.sync()
    with pytest.raises(SessionNotSaved, match=r"NOT being saved.*deleted"):
        store.append([orjson.loads(node("a1", "u1", "assistant"))])
    assert not path.exists()
