"""Session: user actions over the tree, what the model is shown, what lands in the file."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes.scripted_provider import ScriptedProvider

from jupyter_tree_chat.conversation.events import (
    LeafChanged,
    NodeAdded,
    Notice,
    ReplyDelta,
    ReplyEnded,
    ReplyStarted,
    ReplyThinking,
    TurnInterrupted,
)
from jupyter_tree_chat.conversation.many.variants import Fanout
from jupyter_tree_chat.conversation.replies import DeltaBatch
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.errors import (
    ConnectionFailed,
    RoleOrderError,
    SessionBusy,
    StreamError,
    TreeError,
)
from jupyter_tree_chat.history.store import FileStore, MemoryStore, load_file
from jupyter_tree_chat.history.tree import is_tool_result


@pytest.fixture
def model() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    return tmp_path / "analysis.chat.jsonl"


def open_session(path: Path, model: ScriptedProvider, **kwargs: object) -> Session:
    return Session(FileStore(path), model, **kwargs)  # type: ignore[arg-type]


def test_ask_stores_the_question_on_disk_before_the_request_is_sent(session_file, model):
    seen_on_disk: list[list[str]] = []
    model.on_request = lambda request: seen_on_disk.append(
        [n.text for n in load_file(session_file).tree]
    )
    session = open_session(session_file, model)

    turn = session.ask("What is a session tree?")

    assert seen_on_disk == [["What is a session tree?"]]
    assert turn.text == "echo: What is a session tree?"
    on_disk = load_file(session_file)
    assert [n.text for n in on_disk.tree] == ["What is a session tree?", turn.text]
    assert on_disk.tree.leaf == turn.replies[0].id
    assert on_disk.problems == []


def test_retry_adds_a_sibling_answer_under_the_same_question(model):
    session = Session.in_memory(model)
    model.enqueue("first answer")
    model.enqueue("second answer")
    first = session.ask("explain quantum computing")
    second = session.retry()

    question = first.user
    assert second.user is None  # no duplicate user node
    assert [n.text for n in session.tree.children(question.id)] == ["first answer", "second answer"]
    assert str(session.tree.sibling_position(second.replies[0].id)) == "2/2"
    assert model.seen_texts(0) == model.seen_texts(1) == ["explain quantum computing"]


def test_edit_forks_a_sibling_and_the_model_sees_only_the_new_branch(model):
    session = Session.in_memory(model)
    session.ask("A")
    c = session.ask("C asked badly")
    session.ask("D")

    edited = session.edit(c.user.id, "C asked another way")

    assert session.tree.get(c.user.id).text == "C asked badly"  # the original is kept
    assert edited.user.parent_id == c.user.parent_id
    assert model.seen_texts() == ["A", "echo: A", "C asked another way"]
    assert [n.text for n in session.path()][-2:] == [
        "C asked another way",
        "echo: C asked another way",
    ]


def test_switch_is_remembered_across_a_restart(session_file, model):
    session = open_session(session_file, model)
    first = session.ask("one")
    session.retry()
    session.switch(first.replies[0].id)

    reopened = open_session(session_file, ScriptedProvider())
    assert reopened.leaf == first.replies[0].id
    assert [n.text for n in reopened.path()] == ["one", "echo: one"]


def test_the_question_is_fsynced_before_the_request_and_the_reply_after_the_turn(
    session_file, model, monkeypatch
):
    synced: list[tuple[str, int]] = []  # (thread, requests sent by then)
    real = os.fsync
    monkeypatch.setattr(
        os,
        "fsync",
        lambda fd: (
            synced.append((threading.current_thread().name, len(model.requests))),
            real(fd),
        )[1],
    )
    session = open_session(session_file, model)
    session.ask("first")  # a new file: its folder is fsynced too
    session.store.wait_for_sync()  # type: ignore[attr-defined]
    synced.clear()

    turn = session.ask("second")
    session.store.wait_for_sync()  # type: ignore[attr-defined]

    here = threading.current_thread().name
    assert synced == [(here, 1), ("session fsync", 2)]
    on_disk = load_file(session_file).tree
    assert [n.text for n in on_disk.path_nodes(turn.replies[0].id)][-2:] == [
        "second",
        "echo: second",
    ]


def test_switching_to_an_inner_node_goes_to_its_newest_deepest_leaf(model):
    session = Session.in_memory(model)
    a = session.ask("A")
    session.ask("B")
    b2 = session.ask("B2", parent=a.replies[0].id)
    session.switch(a.user.id)
    assert session.leaf == b2.replies[0].id


def test_events_arrive_in_order_for_one_turn(model):
    session = Session.in_memory(model)
    events: list[object] = []
    session.subscribe(events.append)
    model.enqueue("two words")

    session.ask("hi")

    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "NodeAdded",
        "ReplyStarted",
        "ReplyDelta",
        "ReplyDelta",
        "NodeAdded",
        "ReplyEnded",
        "LeafChanged",
    ]
    deltas = "".join(e.text for e in events if isinstance(e, ReplyDelta))
    assert deltas == "two words"
    assert isinstance(events[0], NodeAdded) and events[0].node.text == "hi"
    assert isinstance(events[1], ReplyStarted) and events[1].parent_id == events[0].node.id
    assert isinstance(events[-2], ReplyEnded) and events[-2].node.text == "two words"
    assert isinstance(events[-1], LeafChanged) and events[-1].leaf == session.leaf


def test_unsubscribed_listener_hears_nothing_more(model):
    session = Session.in_memory(model)
    heard: list[object] = []
    unsubscribe = session.subscribe(heard.append)
    unsubscribe()
    session.ask("quiet")
    assert heard == []


def test_a_reply_cut_by_an_error_is_kept_and_marked(session_file, model):
    session = open_session(session_file, model)
    model.enqueue(
        "the beginning of a long answer",
        fail_after=3,
        fault=StreamError("The API sent an error mid-stream (overloaded); retry."),
    )
    notices: list[Notice] = []
    session.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)

    turn = session.ask("tell me a story")

    assert isinstance(turn.error, StreamError)
    assert turn.interrupted
    lines = load_file(session_file)
    user, cut = list(lines.tree)
    assert user.text == "tell me a story"
    assert cut.text == "the beginning of "
    assert cut.meta["interrupted"] is True and cut.meta["error"] == "stream_error"
    assert [n.message for n in notices] == ["The API sent an error mid-stream (overloaded); retry."]


def test_a_failed_request_leaves_the_question_and_the_next_one_goes_beside_it(model):
    session = Session.in_memory(model)
    session.ask("first")
    model.enqueue("never", fail_after=0, fault=ConnectionFailed("Could not reach the API."))
    failed = session.ask("unanswered")
    assert failed.replies == [] and session.leaf == failed.user.id

    nxt = session.ask("second try")

    assert nxt.user.parent_id == failed.user.parent_id  # a sibling, not user under user
    assert any("got no answer" in line for line in nxt.notices)
    assert model.seen_texts()[-1] == "second try"
    assert "unanswered" not in model.seen_texts()


def test_keyboard_interrupt_keeps_what_arrived_and_says_so(session_file, model):
    session = open_session(session_file, model)
    model.enqueue("one two three four", fail_after=2, fault=KeyboardInterrupt())

    with pytest.raises(TurnInterrupted) as stopped:
        session.ask("count")

    kept = stopped.value.turn.replies[0]
    assert kept.text == "one two "
    on_disk = load_file(session_file).tree.get(kept.id)
    assert on_disk.meta["interrupted"] is True
    assert load_file(session_file).tree.leaf == kept.id


def announced(events: list[object]) -> list[tuple[str, str]]:
    """The streamed pieces the listeners were told, in order: ("text" | "thinking", text)."""
    return [
        ("text" if isinstance(e, ReplyDelta) else "thinking", e.text)
        for e in events
        if isinstance(e, (ReplyDelta, ReplyThinking))
    ]


def test_a_fast_stream_is_announced_in_batches_with_all_its_text_in_order(model):
    session = Session.in_memory(model)
    session.delta_interval = 60.0  # nothing but the first piece goes out before the end
    events: list[object] = []
    session.subscribe(events.append)
    model.enqueue("one two three four five", thinking="hmm")

    turn = session.ask("count", settings=ChatSettings(thinking=2048))

    assert announced(events) == [("thinking", "hmm"), ("text", "one two three four five")]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ReplyDelta") < kinds.index("ReplyEnded")
    assert turn.text == "one two three four five"


def test_every_delta_is_announced_with_no_interval(model):
    session = Session.in_memory(model)
    session.delta_interval = 0
    events: list[object] = []
    session.subscribe(events.append)
    model.enqueue("one two three")

    session.ask("count")

    assert announced(events) == [("text", "one "), ("text", "two "), ("text", "three")]


def test_pieces_wait_for_the_interval_and_thinking_never_joins_the_answer():
    now = [0.0]
    events: list[object] = []
    batch = DeltaBatch(events.append, "q1", interval=0.02, clock=lambda: now[0])
    batch.think("a")  # the first piece: at once
    batch.think("b")
    now[0] = 0.01
    batch.think("c")  # still within the interval: waits
    batch.text("X")  # the answer begins: the thinking so far goes first
    now[0] = 0.03
    batch.text("Y")  # the interval has passed: out, with what waited
    batch.text("Z")
    batch.flush()
    batch.flush()  # nothing left: says nothing

    assert announced(events) == [
        ("thinking", "a"),
        ("thinking", "bc"),
        ("text", "XY"),
        ("text", "Z"),
    ]
    assert all(getattr(e, "parent_id", None) == "q1" for e in events)


def test_an_interrupted_stream_announces_all_it_kept_before_the_reply_ends(session_file, model):
    session = open_session(session_file, model)
    session.delta_interval = 60.0
    events: list[object] = []
    session.subscribe(events.append)
    model.enqueue("one two three four", fail_after=3, fault=KeyboardInterrupt())

    with pytest.raises(TurnInterrupted) as stopped:
        session.ask("count")

    kept = stopped.value.turn.replies[0]
    assert kept.text == "one two three "
    assert "".join(text for _, text in announced(events)) == kept.text
    ended = next(i for i, e in enumerate(events) if isinstance(e, ReplyEnded))
    assert all(i < ended for i, e in enumerate(events) if isinstance(e, ReplyDelta))
    assert load_file(session_file).tree.get(kept.id).text == kept.text


def test_a_stream_cut_by_an_error_announces_all_it_kept(model):
    session = Session.in_memory(model)
    session.delta_interval = 60.0
    events: list[object] = []
    session.subscribe(events.append)
    model.enqueue("one two three four", fail_after=2)

    turn = session.ask("count")

    assert turn.error is not None and turn.replies[0].text == "one two "
    assert "".join(text for _, text in announced(events)) == "one two "


def test_tools_run_in_the_loop_and_their_results_become_nodes(model):
    session = Session.in_memory(model)

    @session.tools.register
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model.enqueue("Let me add.", tool_use={"name": "add", "input": {"a": 2, "b": 3}})
    model.enqueue("It is 5.")

    turn = session.ask("what is 2+3?")

    roles = [(n.role, is_tool_result(n.message)) for n in session.path()]
    assert roles == [("user", False), ("assistant", False), ("user", True), ("assistant", False)]
    result = session.path()[2].message["content"][0]
    assert result["content"] == "5" and not result.get("is_error")
    assert turn.text == "It is 5."
    assert [t.name for t in model.requests[0].tools] == ["add"]


def test_a_tool_that_raises_becomes_an_error_result_not_a_crash(model):
    session = Session.in_memory(model)

    @session.tools.register
    def explode() -> str:
        """Always fails."""
        raise RuntimeError("boom")

    model.enqueue("", tool_use={"name": "explode", "input": {}})
    model.enqueue("The tool failed.")
    session.ask("run explode")
    result = session.path()[2].message["content"][0]
    assert result["is_error"] is True and "boom" in result["content"]


def test_the_tool_loop_stops_at_the_round_limit(model):
    session = Session.in_memory(model, settings=ChatSettings(max_tool_rounds=2))

    @session.tools.register
    def ping() -> str:
        """Answer pong."""
        return "pong"

    for _ in range(5):
        model.enqueue("again", tool_use={"name": "ping", "input": {}})
    turn = session.ask("loop forever")
    assert len(model.requests) == 3
    assert any("Stopped after 2 tool rounds" in n for n in turn.notices)


def test_fork_before_tool_use_goes_back_to_the_last_real_user_message(model):
    session = Session.in_memory(model)

    @session.tools.register
    def edit_file(path: str) -> str:
        """Edit a file."""
        return "file changed"

    model.enqueue("", tool_use={"name": "edit_file", "input": {"path": "a.py"}})
    model.enqueue("Refactoring done.")
    first = session.ask("refactor this file")
    model.enqueue("Here is another plan.")

    again = session.fork_before_tool_use()

    assert again.user.parent_id == first.user.parent_id
    assert again.user.text == "refactor this file"
    assert model.seen_texts() == ["refactor this file"]  # no old tool call, no tool result
    assert len(session.tree.roots()) == 2


def test_compaction_is_a_new_root_and_the_old_branch_stays(model):
    session = Session.in_memory(model)
    session.ask("A")
    old = session.ask("B")
    model.enqueue("We talked about A and B.")

    turn = session.compact()

    root = turn.user
    assert root.parent_id is None
    assert "We talked about A and B." in root.text
    assert root.meta["compacted_from"] == old.replies[0].id
    nxt = session.ask("go on")
    assert model.seen_texts()[0].startswith("Summary of our conversation")
    assert len(model.seen_texts()) == 3
    session.switch(old.replies[0].id)
    assert [n.text for n in session.path()][:2] == ["A", "echo: A"]
    assert nxt.user.parent_id == turn.replies[0].id


def test_compaction_asks_without_thinking_and_skips_a_reply_cut_while_thinking(model):
    session = Session.in_memory(model)
    session.ask("A")
    model.enqueue("never finished", thinking="I wonder", fail_after=0, fault=KeyboardInterrupt())
    with pytest.raises(TurnInterrupted) as stopped:
        session.ask("B", settings=ChatSettings(thinking=2048))
    cut = stopped.value.turn.replies[0]
    assert cut.message["content"] == [{"type": "thinking", "thinking": "I wonder", "signature": ""}]
    model.enqueue("We talked about A.")

    session.compact(settings=ChatSettings(thinking=2048))

    assert model.requests[-1].thinking is None
    assert model.seen_texts()[:2] == ["A", "echo: A"]
    assert model.seen_texts()[2].startswith("Summarise our conversation")


def test_a_chinese_conversation_is_compacted_in_chinese(model):
    session = Session.in_memory(model)
    session.ask("什么是会话树？")
    model.enqueue("我们聊了会话树。")

    turn = session.compact()

    assert model.requests[-1].messages[-1]["content"].startswith("请总结我们到目前为止的对话")
    assert turn.user.text == "到目前为止的对话总结：\n\n我们聊了会话树。"
    assert turn.replies[0].text == "明白了。我会从这份总结继续。"


def test_max_tokens_and_refusal_are_told_as_one_line(model):
    session = Session.in_memory(model)
    model.enqueue("cut", stop_reason="max_tokens")
    model.enqueue("", stop_reason="refusal")
    assert "max_tokens" in session.ask("long").notices[0]
    assert "declined" in session.ask("bad").notices[0]


def test_role_order_is_enforced_for_user_actions(model):
    session = Session.in_memory(model)
    turn = session.ask("hi")
    with pytest.raises(TreeError, match="only your own messages can be edited"):
        session.edit(turn.replies[0].id, "rewrite the answer")
    with pytest.raises(RoleOrderError):
        session.tree.fork(turn.replies[0].id, "x", {"role": "assistant", "content": "no"})


def test_labels_are_saved_and_name_nodes(session_file, model):
    session = open_session(session_file, model)
    turn = session.ask("keep this")
    session.label(turn.replies[0].id, "good-answer")
    reopened = open_session(session_file, ScriptedProvider())
    assert reopened.labels == {turn.replies[0].id: "good-answer"}
    assert reopened.resolve("good-answer").id == turn.replies[0].id


def test_hide_and_unhide_append_records_and_refuse_the_current_path(session_file, model):
    session = open_session(session_file, model)
    first = session.ask("first")
    session.ask("second", new_root=True)
    lines_before = session_file.read_bytes().count(b"\n")

    assert session.hide(first.user.id) is True
    assert session.hide(first.user.id) is False  # already hidden: nothing appended
    with pytest.raises(TreeError, match="on the current path, which cannot be hidden"):
        session.hide(session.leaf)
    assert load_file(session_file).hidden == {first.user.id}
    assert session_file.read_bytes().count(b"\n") == lines_before + 1

    assert session.hide(first.user.id, hidden=False) is True
    reopened = open_session(session_file, ScriptedProvider())
    assert reopened.hidden == set() and len(reopened.tree) == 4  # nothing was deleted
    tail = session_file.read_text().splitlines()[-2:]
    assert [json.loads(line) for line in tail] == [
        {"type": "hidden", "id": first.user.id, "hidden": True},
        {"type": "hidden", "id": first.user.id, "hidden": False},
    ]


def test_when_the_file_vanishes_the_session_goes_on_and_says_it_is_not_saved(session_file, model):
    session = open_session(session_file, model)
    session.ask("saved")
    before = session_file.read_bytes()
    session_file.rename(session_file.with_suffix(".moved"))

    turn = session.ask("not saved")

    assert turn.text == "echo: not saved"  # the conversation goes on in memory
    assert session.save_error is not None
    assert "NOT being saved" in str(session.save_error)
    assert session_file.with_suffix(".moved").read_bytes() == before
    assert not session_file.exists()


class TestNotebookRule:
    """What running %%chat cells does (docs/design.md, "The notebook-native rule")."""

    def run_all(self, session: Session, cells: dict[str, str]) -> None:
        for cell_id, text in cells.items():
            session.run_cell(text, cell_id=cell_id)

    def test_run_all_builds_one_branch(self, model):
        session = Session.in_memory(model)
        self.run_all(session, {"c1": "one", "c2": "two"})
        assert [n.text for n in session.path()] == ["one", "echo: one", "two", "echo: two"]

    def test_edit_cell_one_then_run_all_builds_a_new_branch_and_keeps_the_old(self, model):
        session = Session.in_memory(model)
        self.run_all(session, {"c1": "one", "c2": "two"})
        old_leaf = session.leaf
        self.run_all(session, {"c1": "ONE", "c2": "two"})
        assert [n.text for n in session.path()] == ["ONE", "echo: ONE", "two", "echo: two"]
        assert len(session.tree.roots()) == 2
        assert session.path(old_leaf)[0].text == "one"
        assert len(session.tree) == 8

    def test_rerunning_an_unchanged_cell_is_a_retry(self, model):
        session = Session.in_memory(model)
        session.run_cell("same", cell_id="c1")
        session.run_cell("same", cell_id="c1")
        (question,) = session.tree.roots()
        assert len(session.tree.children(question.id)) == 2
        assert len(session.tree) == 3

    def test_a_cell_without_an_id_appends(self, model):
        session = Session.in_memory(model)
        session.run_cell("same", cell_id=None)
        session.run_cell("same", cell_id=None)
        assert [n.text for n in session.path()] == ["same", "echo: same", "same", "echo: same"]

    def test_options_override_the_rule(self, model):
        session = Session.in_memory(model)
        first = session.run_cell("one", cell_id="c1")
        session.run_cell("one", cell_id="c1", continue_leaf=True)
        assert session.tree.depth(session.leaf) == 4
        session.run_cell("fresh", cell_id="c9", new_root=True)
        assert len(session.tree.roots()) == 2
        forked = session.run_cell("from one", cell_id="c8", from_node=first.replies[0].id[:6])
        assert forked.user.parent_id == first.replies[0].id


def test_memory_store_round_trip_gives_the_same_tree(model):
    store = MemoryStore()
    session = Session(store, model)
    session.ask("x")
    session.retry()
    again = Session(store, ScriptedProvider())
    assert [n.to_record() for n in again.tree] == [n.to_record() for n in session.tree]
    assert again.leaf == session.leaf


def test_an_action_from_another_thread_during_a_turn_is_told_the_session_is_busy(model):
    session = Session.in_memory(model)
    outcome: list[str] = []

    def click_retry_meanwhile(_request: object) -> None:
        worker = threading.Thread(target=lambda: outcome.append(_attempt(session.retry)))
        worker.start()
        worker.join()

    model.on_request = click_retry_meanwhile
    session.ask("long question")

    assert outcome == [
        "busy: the session is busy writing a reply; wait for it to finish, then try again"
    ]
    assert len(session.tree) == 2  # the interleaved retry changed nothing
    model.on_request = None
    assert session.retry().text  # once the turn is over, the action goes through


def _attempt(action: Callable[[], object]) -> str:
    try:
        action()
    except SessionBusy as busy:
        return f"busy: {busy}"
    return "ran"


def test_an_imported_roots_system_prompt_is_sent_unless_the_settings_name_one(model):
    store = MemoryStore()
    store.append(
        [
            {
                "id": "g-u1",
                "parentId": None,
                "message": {"role": "user", "content": "Plot x squared"},
                "meta": {"system": "Answer briefly.", "source": {"format": "chatgpt"}},
            },
            {
                "id": "g-a1",
                "parentId": "g-u1",
                "message": {"role": "assistant", "content": "Done."},
            },
        ]
    )
    session = Session(store, model)
    without = session.meter(settings=ChatSettings(system=""))
    assert session.meter().tokens > without.tokens  # estimated with the imported prompt
    model.enqueue("ok")
    session.ask("Make it red")
    assert model.requests[-1].system == "Answer briefly."
    model.enqueue("one")
    model.enqueue("two")
    session.ask("Two ways, please", fanout=Fanout(n=2))
    assert [r.system for r in model.requests[-2:]] == ["Answer briefly.", "Answer briefly."]
    model.enqueue("ok")
    session.ask("And blue", settings=ChatSettings(system="Be verbose."))
    assert model.requests[-1].system == "Be verbose."
    model.enqueue("ok")
    session.ask("A new topic", new_root=True)
    assert model.requests[-1].system is None


# -- a file shared with another process ---------------------------------------------------


def test_each_action_first_reads_what_another_session_appended(session_file, model):
    mine, theirs = open_session(session_file, model), open_session(session_file, model)
    seen: list[str] = []
    mine.subscribe(lambda e: seen.append(e.node.id) if isinstance(e, NodeAdded) else None)
    model.enqueue("first answer")
    first = mine.ask("mine")
    model.enqueue("their answer")
    their = theirs.ask("theirs")  # a fresh view of the file: a root beside ours
    assert theirs.tree.get(their.user.id).parent_id is None
    assert first.user.id in theirs.tree  # it read ours before asking
    seen.clear()
    model.enqueue("second answer")
    second = mine.ask("mine again")
    assert seen[:2] == [their.user.id, their.replies[0].id]  # the panel hears of them
    assert mine.tree.get(second.user.id).parent_id == first.replies[0].id  # our leaf
    theirs.switch(first.user.id)  # their leaf record must not move ours
    assert mine.refresh() == [] and mine.leaf == second.replies[0].id
    assert theirs.refresh() == [] and len(theirs.tree) == len(mine.tree) == 6
    assert load_file(session_file).problems == []
    assert mine.problems == [] and theirs.problems == []
