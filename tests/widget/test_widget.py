"""The widget's kernel side: what it sends to the browser, and what browser actions do.

Real ``Session`` objects over real files, the real ipywidgets comm path (a recording
comm, see widget_comm.py), and browser actions delivered as the custom messages the
front end sends. A scripted provider and a fake clock make streaming deterministic.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.content_blocks import image_block, pdf_block, url_image
from helpers.widget_comm import Recorder, RecordingComm, recording_comms

from jupyter_tree_chat.conversation.host import Refilled
from jupyter_tree_chat.conversation.many.experiment import Plan, RowQuestion
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.errors import Overloaded
from jupyter_tree_chat.history.tree import Node, thinking_text
from jupyter_tree_chat.measures.models import Price
from jupyter_tree_chat.measures.usage import dollars, node_cost
from jupyter_tree_chat.providers.base import Finished, ReplyRequest, TextDelta
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.textview import typed_pieces
from jupyter_tree_chat.widget.protocol import (
    CHIP_END,
    CHIP_START,
    HEAD_CHARS,
    DeltaCoalescer,
    head,
    meta_summary,
    plain_text,
    summary,
    text_payload,
    typed_head,
)
from jupyter_tree_chat.widget.widgets import BUSY_TEXT, TreePanel, TurnControl


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Scripted:
    """A provider whose replies are given as lists of chunks; ``tick`` s pass per chunk."""

    name = "scripted"
    default_model = "scripted-1"

    def __init__(self, clock: FakeClock | None = None, tick: float = 0.0) -> None:
        self.replies: list[list[str] | Exception] = []
        self.clock = clock
        self.tick = tick

    def enqueue(self, *chunks: str) -> None:
        self.replies.append(list(chunks))

    def fail_after(self, *chunks: str) -> None:
        self.replies.append([*chunks, "\0fail"])  # type: ignore[list-item]

    def stream(self, request: ReplyRequest) -> Iterator[Any]:
        script = self.replies.pop(0) if self.replies else ["ok"]
        assert isinstance(script, list)
        text = ""
        for chunk in script:
            if chunk == "\0fail":
                raise Overloaded("the model is overloaded; try again in a minute")
            if self.clock is not None:
                self.clock.now += self.tick
            text += chunk
            yield TextDelta(chunk)
        yield Finished(
            message={"role": "assistant", "content": [{"type": "text", "text": text}]},
            model="scripted-1",
            stop_reason="end_turn",
            usage={"input_tokens": 10, "output_tokens": len(script)},
        )


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with recording_comms() as recorder:
        yield recorder


@pytest.fixture
def provider() -> Scripted:
    return Scripted()


@pytest.fixture
def session(tmp_path: Path, provider: Scripted) -> Session:
    return Session.open(tmp_path / "nb.chat.jsonl", provider)


def comm_of(recorder: Recorder, widget: Any) -> RecordingComm:
    return next(c for c in recorder.comms if c.comm_id == widget.comm.comm_id)


def file_records(session: Session) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(session.location).read_text().splitlines()]


def updates(recorder: Recorder) -> list[dict[str, Any]]:
    return [s.data["state"] for s in recorder.sent if s.data.get("method") == "update"]


# -- the summary -----------------------------------------------------------------------


def test_panel_summary_is_one_short_row_per_node(session: Session, provider: Scripted, recorder):
    provider.enqueue("**Paris** is the capital. " * 20)
    turn = session.ask("What is the capital of France? " * 10)
    panel = TreePanel(session)
    user, reply = turn.user, turn.replies[0]
    assert user is not None
    assert panel.nodes == [
        [user.id, -1, "u", head(user.text), None],
        [
            reply.id,
            0,
            "a",
            summary(reply.text),
            ["scripted-1", 10, 1, reply.meta["duration_ms"], 0],
        ],
    ]
    assert len(panel.nodes[0][3]) == HEAD_CHARS + 1 and panel.nodes[0][3].endswith("…")
    assert panel.nodes[1][3].startswith("Paris is the capital. Paris")  # no raw `**`
    assert panel.leaf == reply.id


def test_a_new_node_is_one_small_message_and_the_tree_is_never_resent(
    session: Session, provider: Scripted, recorder: Recorder
):
    for i in range(100):
        session.ask(f"question {i}")
    panel = TreePanel(session)
    recorder.clear()
    provider.enqueue("a", "b", "c")
    session.ask("one more")
    assert all("nodes" not in state for state in updates(recorder))
    assert max(s.payload_bytes for s in recorder.sent) < 300
    rows = [m["r"] for m in recorder.customs() if m["t"] == "n"]
    assert [r[2] for r in rows] == ["u", "a"]
    assert rows[0][1] == 199  # the parent's index among the rows: the last reply
    assert panel.nodes[-1] == rows[1]  # the trait stays current for a reloaded page


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("**Paris** is the *capital*.", "Paris is the capital."),
        ("# Title\n\n- item _one_\n- item __two__\n> a quote", "Title item one item two a quote"),
        ("1. first\n2) second\n\n---\n## Head ##", "first second Head"),
        (
            "see [the docs](http://x.y), ![a cat](c.png) and <http://z.example>",
            "see the docs, a cat and http://z.example",
        ),
        ("***both*** and ~~gone~~, **bold _and italic_**", "both and gone, bold and italic"),
        ("```python\nprint(1)\n```", "print(1)"),
        ('`tool call: add({"a": 1})`', 'tool call: add({"a": 1})'),
        # not Markdown syntax: left as written
        ("What is 2 + 3 * 4?", "What is 2 + 3 * 4?"),
        ("2*3*4, snake_case_name, a ** b", "2*3*4, snake_case_name, a ** b"),
        ("call `__init__` or `a*b*c`", "call __init__ or a*b*c"),
        ("\\*not emphasis\\*", "*not emphasis*"),
    ],
)
def test_tree_row_summaries_are_plain_text(markdown: str, plain: str):
    assert " ".join(plain_text(markdown).split()) == plain
    assert summary(markdown) == plain


def test_a_long_summary_is_cut_after_the_markdown_is_taken_out():
    text = "**" + "word " * 100 + "**"
    assert summary(text) == ("word " * 20)[:HEAD_CHARS] + "…"
    assert "*" not in summary("Some *emphasis* " * 40)


def test_a_view_that_missed_rows_gets_them_again(session: Session, provider, recorder):
    """Messages sent while the browser was still loading the front end reach nobody."""
    session.ask("one")
    panel = TreePanel(session)
    recorder.clear()
    session.ask("two")  # rows 2 and 3, announced as such
    assert [m["i"] for m in recorder.customs() if m["t"] == "n"] == [2, 3]
    recorder.clear()
    comm_of(recorder, panel).deliver({"a": "rows", "from": 2, "req": 1})
    (rows,) = [m for m in recorder.customs() if m["t"] == "rows"]
    assert rows == {"t": "rows", "from": 2, "rows": panel.nodes[2:]} and len(rows["rows"]) == 2
    recorder.clear()
    comm_of(recorder, panel).deliver({"a": "rows", "from": "x", "req": 2})
    assert next(m for m in recorder.customs() if m["t"] == "rows")["rows"] == []


# -- streaming -------------------------------------------------------------------------


def test_deltas_are_coalesced_and_the_stored_reply_is_not_sent_again(tmp_path: Path, recorder):
    clock = FakeClock()
    provider = Scripted(clock, tick=0.01)  # 100 chunks a second
    session = Session.open(tmp_path / "s.chat.jsonl", provider)
    panel = TreePanel(session, clock=clock)
    chunks = [f"word{i} " for i in range(1000)]
    provider.enqueue(*chunks)
    turn = session.ask("write a lot")
    messages = recorder.customs()
    deltas = [m["x"] for m in messages if m["t"] == "d"]
    assert "".join(deltas) == "".join(chunks) == turn.text
    assert len(deltas) <= 1000 * 0.01 / 0.05 + 1  # at most one message per 50 ms
    assert all(set(m) == {"t", "x"} for m in messages if m["t"] == "d")
    added = [m for m in messages if m["t"] == "n" and m["r"][2] == "a"]
    assert added[0]["s"] == 1 and len(json.dumps(added[0])) < 300
    kinds = [m["t"] for m in messages]
    assert kinds.index("s") < kinds.index("d") < kinds.index("e")
    assert panel.busy is False


def test_coalescer_waits_for_a_little_text_but_never_long():
    clock = FakeClock()
    sent: list[str] = []
    coalescer = DeltaCoalescer(sent.append, clock=clock, interval=0.05, min_chars=32, max_wait=0.2)
    coalescer.start()
    for _ in range(5):
        clock.now += 0.06
        coalescer.add("ab")  # late enough, but too little text ...
    assert sent == ["ab" * 4]  # ... until max_wait passed
    coalescer.add("x" * 40)  # 60 ms since that chunk, and enough text: sent
    assert sent == ["ab" * 4, "ab" + "x" * 40]
    coalescer.add("y")  # too soon after the last chunk: held ...
    assert len(sent) == 2
    coalescer.flush()  # ... until the reply ends
    assert sent[-1] == "y" and coalescer.streamed == "ab" * 5 + "x" * 40 + "y"


def test_comm_bytes_stay_under_three_times_the_reply_in_a_10000_node_session(
    tmp_path: Path, recorder: Recorder
):
    clock = FakeClock()
    provider = Scripted(clock, tick=1 / 60)  # 60 tokens a second, a typical speed
    session = Session.in_memory(provider)
    while len(session.tree) < 10_000:
        provider.enqueue("fine.")
        session.ask("next question, please")
    panel = TreePanel(session, clock=clock)
    tokens = [("Token" if i % 7 else "\nlonger-token")[: 3 + i % 5] + " " for i in range(4000)]
    provider.enqueue(*tokens)
    recorder.clear()
    turn = session.ask("now a long answer")
    reply_bytes = len(turn.text.encode())
    assert panel.comm is not None
    sent = recorder.payload_bytes()
    assert sent < 3 * reply_bytes, (sent, reply_bytes)


def test_a_control_is_right_after_an_append_of_many_nodes(session: Session, recorder):
    """An experiment over 30 rows from a new root: each row's question is a sibling of an
    earlier turn's question. That turn's control looks at an append once, at its last
    node (``NodeAdded.more``), and then counts every sibling and follows the leaf."""
    turn = session.ask("question one")
    control = TurnControl.for_turn(session, turn)
    assert control is not None
    rows = [RowQuestion(f"Row {n}.", None, {"n": n}) for n in range(30)]

    session.run_experiment(Plan("Row {n}.", rows), cell_id=None, parent=None, chosen=True)

    mine = [m for m in recorder.sent if m.comm_id == control.comm.comm_id]
    sent = [m.data["state"]["turn"] for m in mine if "turn" in m.data.get("state", {})]
    # every sibling counted; the path now goes through the first row, and so does the control
    assert sent[-1]["q"]["count"] == 31 and sent[-1]["q"]["pos"] == 2
    assert sent[-1]["q"]["sibs"] == [q.id for q in session.tree.children(None)]
    assert sent[-1]["onPath"] is True


# -- actions from the browser --------------------------------------------------------


def test_retry_from_the_widget_streams_into_it_and_lands_in_the_file(
    session: Session, provider: Scripted, recorder: Recorder
):
    provider.enqueue("first answer")
    turn = session.ask("hello")
    control = TurnControl.for_turn(session, turn)
    assert control is not None
    assert (control.turn["r"]["pos"], control.turn["r"]["count"]) == (1, 1)
    recorder.clear()
    provider.enqueue("second ", "answer")
    comm_of(recorder, control).deliver({"a": "retry", "id": turn.replies[0].id, "req": 7})
    kinds = [m["t"] for m in recorder.customs()]
    assert kinds[0] == "ack" and kinds[-1] == "done"
    assert "".join(m["x"] for m in recorder.customs() if m["t"] == "d") == "second answer"
    assert (control.turn["r"]["pos"], control.turn["r"]["count"]) == (2, 2)
    assert control.turn["shown"] == turn.replies[0].id  # the cell still shows the first
    texts = [r["message"]["content"] for r in file_records(session) if "message" in r]
    assert texts[-1] == [{"type": "text", "text": "second answer"}]


def test_switch_edit_label_and_text_requests(session: Session, provider: Scripted, recorder):
    provider.enqueue("A1")
    turn = session.ask("question one")
    provider.enqueue("A2")
    retried = session.retry()
    panel = TreePanel(session)
    comm = comm_of(recorder, panel)
    first, second = turn.replies[0].id, retried.replies[0].id
    assert panel.leaf == second

    comm.deliver({"a": "switch", "id": first, "req": 1})
    assert panel.leaf == first == session.leaf
    assert file_records(session)[-1] == {"type": "leaf", "id": first}

    provider.enqueue("A3")
    comm.deliver({"a": "edit", "id": turn.user.id, "text": "question one, edited", "req": 2})
    edited = session.tree.get(session.tree.get(session.leaf).parent_id)
    assert edited.text == "question one, edited" and edited.parent_id is None
    assert edited.meta == {"edited_from": turn.user.id}
    assert panel.leaf == session.leaf

    comm.deliver({"a": "label", "id": first, "label": "short", "req": 3})
    assert panel.labels == {first: "short"}

    recorder.clear()
    comm.deliver({"a": "text", "ids": [second, "nope"], "req": 4})
    (texts,) = [m for m in recorder.customs() if m["t"] == "texts"]
    assert texts["texts"][second]["text"] == "A2"
    assert texts["texts"][second]["meta"]["model"] == "scripted-1"
    assert "nope" not in texts["texts"]


def test_hide_from_the_panel_appends_a_record_and_the_current_path_is_refused(
    session: Session, provider: Scripted, recorder
):
    provider.enqueue("A1")
    first = session.ask("question one")
    provider.enqueue("A2")
    session.ask("question two", new_root=True)
    panel = TreePanel(session)
    comm = comm_of(recorder, panel)
    assert panel.hidden == []

    comm.deliver({"a": "hide", "id": first.user.id, "req": 1})
    assert panel.hidden == [first.user.id]
    assert file_records(session)[-1] == {"type": "hidden", "id": first.user.id, "hidden": True}
    comm.deliver({"a": "hide", "id": first.user.id, "hidden": False, "req": 2})
    assert panel.hidden == [] and file_records(session)[-1]["hidden"] is False

    recorder.clear()
    comm.deliver({"a": "hide", "id": session.leaf, "req": 3})
    (done,) = [m for m in recorder.customs() if m["t"] == "done"]
    assert "on the current path, which cannot be hidden" in done["err"]
    assert file_records(session)[-1]["hidden"] is False  # nothing appended


def test_compaction_links_reach_the_panel(session: Session, provider: Scripted, recorder):
    provider.enqueue("A1")
    session.ask("a long conversation")
    before = session.leaf
    panel = TreePanel(session)
    provider.enqueue("the gist")
    session.compact()
    (root,) = [n for n in session.tree.roots() if n.meta]
    assert panel.links == {root.id: before}
    assert TreePanel(session).links == panel.links  # a new panel gets them at once


def test_a_refused_action_is_one_line_in_the_widget(session: Session, provider, recorder):
    turn = session.ask("hello")
    panel = TreePanel(session)
    recorder.clear()
    comm_of(recorder, panel).deliver({"a": "edit", "id": turn.replies[0].id, "text": "x", "req": 5})
    done = recorder.customs()[-1]
    assert done["t"] == "done" and done["req"] == 5
    assert "only your own messages can be edited" in done["err"]
    assert panel.error == done["err"]
    comm_of(recorder, panel).deliver({"a": "switch", "id": "zzzz", "req": 6})
    assert "no node id starts with 'zzzz'" in panel.error


def test_a_failed_reply_started_from_the_widget_says_so(session: Session, provider, recorder):
    turn = session.ask("hello")
    panel = TreePanel(session)
    recorder.clear()
    provider.fail_after("half an ")
    comm_of(recorder, panel).deliver({"a": "retry", "id": turn.replies[0].id, "req": 1})
    ended = next(m for m in recorder.customs() if m["t"] == "e")
    assert "overloaded" in ended["err"]
    assert "overloaded" in recorder.customs()[-1]["err"]
    assert "overloaded" in panel.error and panel.busy is False
    kept = session.tree.get(session.leaf)
    assert kept.text == "half an " and kept.meta["interrupted"] is True


def test_an_action_while_a_reply_is_written_says_busy_and_changes_nothing(
    session: Session, recorder: Recorder
):
    """ipykernel 7 delivers a panel click while a %%chat cell streams, on another thread."""
    first = session.ask("hello")
    panel = TreePanel(session)
    control = TurnControl.for_turn(session, first)
    assert control is not None
    started, release = threading.Event(), threading.Event()

    class Slow:
        name = "slow"
        default_model = "slow-1"

        def stream(self, request: ReplyRequest) -> Iterator[Any]:
            yield TextDelta("thinking ")
            started.set()
            assert release.wait(10)
            yield Finished(
                {"role": "assistant", "content": [{"type": "text", "text": "thinking done"}]},
                "slow-1",
                "end_turn",
                {"input_tokens": 1, "output_tokens": 2},
            )

    session.provider = Slow()
    cell = threading.Thread(target=session.ask, args=("a slow question",))
    cell.start()
    try:
        assert started.wait(10)
        assert panel.busy and control.busy  # the views disable Retry / Edit on this
        before = Path(session.location).read_text()
        recorder.clear()
        reply_id = first.replies[0].id
        comm_of(recorder, control).deliver({"a": "retry", "id": reply_id, "req": 1})
        comm_of(recorder, panel).deliver({"a": "switch", "id": reply_id, "req": 2})
        comm_of(recorder, panel).deliver({"a": "edit", "id": first.user.id, "text": "x", "req": 3})
        dones = [m for m in recorder.customs() if m["t"] == "done"]
        assert dones == [{"t": "done", "req": n, "err": BUSY_TEXT, "busy": 1} for n in (1, 2, 3)]
        assert control.error == panel.error == BUSY_TEXT
        assert "\n" not in BUSY_TEXT and "wait for it to finish" in BUSY_TEXT
        assert Path(session.location).read_text() == before  # nothing written by the clicks
    finally:
        release.set()
        cell.join(10)
    # the reply ended: the busy message goes, and the same click now works
    assert not panel.busy and panel.error == control.error == ""
    comm_of(recorder, control).deliver({"a": "retry", "id": first.replies[0].id, "req": 4})
    assert recorder.customs()[-1] == {"t": "done", "req": 4}
    assert len(session.tree.siblings(first.replies[0].id)) == 2


# -- views in step -------------------------------------------------------------------


def test_every_view_follows_actions_from_any_other_and_from_the_magic(
    session: Session, provider: Scripted, recorder: Recorder
):
    session.ask("warm-up")
    provider.enqueue("A1")
    turn = session.ask("question")
    panel = TreePanel(session)
    control = TurnControl.for_turn(session, turn)
    other_panel = TreePanel(session)
    assert control is not None
    provider.enqueue("A2")
    comm_of(recorder, control).deliver({"a": "retry", "id": turn.replies[0].id, "req": 1})
    assert panel.leaf == other_panel.leaf == session.leaf
    assert len(panel.nodes) == len(other_panel.nodes) == 5

    comm_of(recorder, panel).deliver({"a": "switch", "id": turn.replies[0].id, "req": 2})
    assert control.turn["r"]["id"] == turn.replies[0].id
    assert (control.turn["r"]["pos"], control.turn["r"]["count"]) == (1, 2)

    # what a %%chat cell does: here, a new conversation (a second root)
    provider.enqueue("A3")
    session.run_cell("something else", cell_id=None, new_root=True)
    assert other_panel.leaf == session.leaf and len(other_panel.nodes) == 7
    assert control.turn["onPath"] is False  # another branch is current now

    comm_of(recorder, panel).deliver({"a": "switch", "id": turn.replies[0].id, "req": 3})
    comm_of(recorder, panel).deliver({"a": "edit", "id": turn.user.id, "text": "q2", "req": 4})
    assert control.turn["q"]["count"] == 2 and control.turn["q"]["pos"] == 2
    assert control.turn["q"]["id"] == session.path()[-2].id
    assert control.turn["r"]["id"] == session.leaf and control.turn["onPath"] is True


def test_a_turn_control_streams_only_its_own_turn(session: Session, provider, recorder):
    first = session.ask("one")
    second = session.ask("two")
    control_1 = TurnControl.for_turn(session, first)
    control_2 = TurnControl.for_turn(session, second)
    assert control_1 is not None and control_2 is not None
    recorder.clear()
    provider.enqueue("again")
    comm_of(recorder, control_2).deliver({"a": "retry", "id": second.replies[0].id, "req": 1})
    by_comm: dict[str, list[str]] = {}
    for sent in recorder.sent:
        if sent.custom is not None:
            by_comm.setdefault(sent.comm_id, []).append(sent.custom["t"])
    assert "d" in by_comm[control_2.comm.comm_id]
    assert "d" not in by_comm.get(control_1.comm.comm_id, [])


def test_a_closed_widget_stops_listening(session: Session, provider, recorder):
    session.ask("one")
    panel = TreePanel(session)
    panel.close()
    recorder.clear()
    session.ask("two")
    assert recorder.sent == []


def test_a_reply_says_busy_once_for_the_session_not_once_per_control(
    session: Session, provider, recorder
):
    """Every view reads one shared ``busy``: a cell's reply starts and ends in one message
    each, however many earlier cells' controls the notebook has (issue 35)."""
    controls = [TurnControl.for_turn(session, session.ask(f"question {k}")) for k in range(6)]
    panel = TreePanel(session)
    assert all(c is not None and c.session_state is panel.session_state for c in controls)
    shared = panel.session_state.comm.comm_id
    seen: list[bool] = []
    session.subscribe(lambda _event: seen.append(panel.busy))
    recorder.clear()
    provider.enqueue("a reply", " in pieces")
    session.ask("one more")
    busy = [(s.comm_id, s.data["state"]["busy"]) for s in recorder.sent if "busy" in updates_of(s)]
    assert busy == [(shared, True), (shared, False)]
    assert True in seen and not panel.busy and not any(c.busy for c in controls if c)
    # a view closed: the others keep the state; the last one closed ends it
    for view in [panel, *controls]:
        assert view is not None
        view.close()
    closed = [s for s in recorder.sent if s.msg_type == "comm_close"]
    assert shared in {s.comm_id for s in closed}
    recorder.clear()
    session.ask("nobody watching")
    assert recorder.sent == []


def test_a_reply_started_elsewhere_is_said_in_a_control_s_bar_not_streamed_into_it(
    session: Session, provider, recorder
):
    """A ``--new`` cell's question takes an earlier root question's place in its control
    (question 2/2): the control's bar follows, once its answer is in (one update, not one
    for the question and one for the answer); the text streams in the cell and panel."""
    control = TurnControl.for_turn(session, session.ask("first question"))
    panel = TreePanel(session)
    assert control is not None
    recorder.clear()
    provider.enqueue("the new ", "conversation's answer")
    session.run_cell("something else", cell_id=None, new_root=True)
    kinds = {c: [s.custom["t"] for s in recorder.sent if s.comm_id == c and s.custom] for c in
             (control.comm.comm_id, panel.comm.comm_id)}  # fmt: skip
    assert not {"s", "d", "e"} & set(kinds[control.comm.comm_id])
    assert {"s", "d", "e"} <= set(kinds[panel.comm.comm_id])
    assert (control.turn["q"]["pos"], control.turn["q"]["count"]) == (2, 2)
    assert control.turn["r"]["id"] == session.leaf
    mine = [updates_of(s) for s in recorder.sent if s.comm_id == control.comm.comm_id]
    assert [u["turn"]["r"]["id"] for u in mine if "turn" in u] == [session.leaf]
    # a reply that fails before any text (no answer stored): the turn's end brings the
    # bar up to date all the same
    provider.fail_after()
    session.run_cell("and a third", cell_id=None, new_root=True)
    assert (control.turn["q"]["pos"], control.turn["q"]["count"]) == (3, 3)
    assert control.turn["r"] is None


def updates_of(sent: Any) -> dict[str, Any]:
    return sent.data.get("state", {}) if sent.data.get("method") == "update" else {}


# -- thinking, the context meter, cost ----------------------------------------------------


def test_thinking_streams_before_the_answer_and_comes_with_the_full_text(tmp_path, recorder):
    session = Session.open(tmp_path / "t.chat.jsonl", OfflineProvider())
    panel = TreePanel(session)

    turn = session.ask("What is 2 + 3?", settings=ChatSettings(thinking=2048))

    kinds = [m["t"] for m in recorder.customs()]
    thought = "".join(m["x"] for m in recorder.customs() if m["t"] == "k")
    assert thought == thinking_text(turn.replies[0].message) != ""
    assert kinds.index("s") < kinds.index("k") < kinds.index("d")
    assert max(i for i, k in enumerate(kinds) if k == "k") < kinds.index("d")
    comm_of(recorder, panel).deliver({"a": "text", "ids": [turn.replies[0].id], "req": 1})
    texts = next(m for m in recorder.customs() if m["t"] == "texts")["texts"]
    assert texts[turn.replies[0].id]["thinking"] == thought
    assert texts[turn.replies[0].id]["text"] == turn.replies[0].text  # the answer alone


def test_the_full_text_of_a_reply_counts_its_redacted_thinking():
    content = [
        {"type": "redacted_thinking", "data": "ZW5j"},
        {"type": "redacted_thinking", "data": "ZW5k"},
        {"type": "text", "text": "Done."},
    ]
    payload = text_payload(Node("a", "q", {"role": "assistant", "content": content}))
    assert payload == {"text": "Done.", "meta": {}, "redacted": 2}


def test_an_mcp_call_shows_server_colon_tool_and_its_result_image_reaches_the_panel():
    use = {"type": "tool_use", "id": "t1", "name": "git__git_log", "input": {"max_count": 2}}
    asking = Node(
        "a",
        "q",
        {"role": "assistant", "content": [use]},
        {"tool_names": {"git__git_log": "git:git_log"}},
    )
    png = image_block("iVBORw0KGgo=")
    svg = image_block("PHN2Zz48L3N2Zz4=", "image/svg+xml")
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [png, svg]}
    answered = Node("r", "a", {"role": "user", "content": [result]}, {"tool_results": True})

    assert text_payload(asking)["text"] == '`tool call: git:git_log({"max_count": 2})`'
    media = text_payload(answered)["media"]
    assert media[0]["source"]["data"] == "iVBORw0KGgo="
    assert "data" not in media[1]["source"]  # an SVG never reaches the browser


def test_the_panel_knows_how_full_the_window_is_and_what_each_reply_cost(
    session: Session, provider: Scripted, recorder
):
    session.prices = {"scripted-1": Price(3, 15, 3.75, 0.30)}
    session.context_windows = {"scripted-1": 1_000}
    first = session.ask("hello").replies[0]
    panel = TreePanel(session)
    assert panel.context == {"tokens": 11, "window": 1_000, "exact": True}  # 10 in, 1 out
    assert panel.nodes[1][4][5] == dollars(node_cost(first, session.prices)) == "<$0.0001"
    recorder.clear()

    provider.enqueue("a", "b", "c")
    second = session.ask("more").replies[0]

    assert panel.context == {"tokens": 13, "window": 1_000, "exact": True}
    assert {"context"} <= {key for state in updates(recorder) for key in state}
    row = next(m["r"] for m in recorder.customs() if m["t"] == "n" and m["r"][0] == second.id)
    assert row[4][5] == dollars(node_cost(second, session.prices))
    assert meta_summary(second, {}) == row[4][:5]  # no price: the five items only


# -- images, documents and the asking cell ---------------------------------------------------

PNG_BLOCK = image_block("iVBORw0KGgo=")


def test_an_opened_node_carries_its_images_as_data_and_hostile_ones_hidden(
    session: Session, provider: Scripted, recorder
):
    hostile = [
        url_image("javascript:alert(1)"),
        url_image("https://example.invalid/x.png"),
        image_block("PHN2Zz4=", "image/svg+xml"),
        image_block('x" onerror="'),
    ]
    document = pdf_block(b"%PDF-")
    content = [document, PNG_BLOCK, *hostile, {"type": "text", "text": "what are these?"}]
    turn = session.ask(content, meta={"cell_id": "cell0001"})
    panel = TreePanel(session)
    comm = comm_of(recorder, panel)
    recorder.clear()
    comm.deliver({"a": "text", "ids": [turn.user.id, turn.replies[0].id], "req": 1})
    (texts,) = [m for m in recorder.customs() if m["t"] == "texts"]
    question, answer = texts["texts"][turn.user.id], texts["texts"][turn.replies[0].id]
    assert question["text"] == "what are these?"
    assert question["media"] == [
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf"},
            "title": "paper.pdf",
        },
        PNG_BLOCK,
        {"type": "image", "source": {"type": "url"}},
        {"type": "image", "source": {"type": "url"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png"}},
    ]
    assert "javascript" not in json.dumps(texts) and "example.invalid" not in json.dumps(texts)
    assert answer["cell"] == "cell0001" and "media" not in answer  # where "Insert below" goes


def test_a_tree_row_says_where_a_questions_image_and_document_stand(session: Session, recorder):
    session.ask(
        [
            pdf_block(b"%PDF-", "notes.pdf"),
            {"type": "text", "text": "What is in "},
            PNG_BLOCK,
            {"type": "text", "text": "?"},
        ]
    )
    panel = TreePanel(session)
    assert panel.nodes[0][3] == "[notes.pdf]What is in [image]?"


def test_editing_a_question_in_the_panel_keeps_its_image(
    session: Session, provider: Scripted, recorder
):
    turn = session.ask([{"type": "text", "text": "Look at "}, PNG_BLOCK])
    panel = TreePanel(session)
    comm_of(recorder, panel).deliver(
        {"a": "edit", "id": turn.user.id, "text": "Describe", "req": 1}
    )
    edited = file_records(session)[-2]
    assert edited["message"]["content"] == [PNG_BLOCK, {"type": "text", "text": "Describe"}]


# -- a fan-out, streamed per answer ---------------------------------------------------------


def test_a_fan_out_from_the_panel_streams_each_answer_apart(
    session: Session, provider: Scripted, recorder: Recorder
):
    session.ask("Name a colour")
    panel = TreePanel(session, compare_models=["a", "b"], compare_temperatures=[0.0, 1.0])
    question = session.path()[0]
    recorder.clear()
    provider.enqueue("Blue ", "sky")
    provider.enqueue("Red ", "rose")

    comm_of(recorder, panel).deliver(
        {"a": "fanout", "id": question.id, "models": ["a", "b"], "req": 3}
    )

    messages = [m for m in recorder.customs() if m["t"] in ("fs", "vs", "vd", "ve", "fe")]
    assert messages[0] == {
        "t": "fs",
        "p": question.id,
        "v": [
            {"model": "a", "temperature": None, "label": "a"},
            {"model": "b", "temperature": None, "label": "b"},
        ],
    }
    streamed = {
        v: "".join(m["x"] for m in messages if m["t"] == "vd" and m["v"] == v) for v in (0, 1)
    }
    assert sorted(streamed.values()) == ["Blue sky", "Red rose"]  # each answer in its own stream
    assert all(m["t"] != "d" for m in recorder.customs())  # nothing mixed into a single stream
    answers = session.tree.children(question.id)
    assert len(answers) == 3  # the first answer, and the two of the fan-out
    assert messages[-1] == {
        "t": "fe",
        "p": question.id,
        "ids": [answers[1].id, answers[2].id],
        "errs": [None, None],
    }
    assert {a.text for a in answers[1:]} == set(streamed.values())
    done = [m for m in recorder.customs() if m["t"] == "done"][-1]
    assert done == {"t": "done", "req": 3}
    assert panel.compare_models == ["a", "b"] and panel.compare_temperatures == [0.0, 1.0]


def test_a_fan_out_the_panel_cannot_ask_for_is_one_line(session: Session, recorder: Recorder):
    session.ask("Hi")
    panel = TreePanel(session)
    comm_of(recorder, panel).deliver(
        {"a": "fanout", "id": session.leaf, "n": 13, "req": 4}
    )  # fmt: skip
    comm_of(recorder, panel).deliver(
        {"a": "fanout", "id": session.leaf, "temperatures": [-1], "req": 5}
    )  # fmt: skip
    done = [m for m in recorder.customs() if m["t"] == "done"]
    assert done[0]["err"].startswith("13 samples is 13 answers; at most 12 at once")
    assert done[1]["err"] == "temperatures start at 0; pick again"
    assert len(session.tree) == 2


def test_ask_other_models_reaches_other_endpoints_and_rows_name_them(tmp_path, recorder: Recorder):
    with FakeAnthropic() as local:
        local.enqueue("From the local server.", model="/m/SmolLM2.gguf")
        table = endpoint_table({"local": {"base_url": local.base_url}})
        session = Session.open(tmp_path / "e.chat.jsonl", Router(OfflineProvider(), table))
        session.ask("Name a colour")
        panel = TreePanel(session, compare_models=["offline-teacher", "local:smollm2"])
        question = session.path()[0]
        recorder.clear()
        comm_of(recorder, panel).deliver(
            {"a": "fanout", "id": question.id, "models": ["local:smollm2"], "n": 1, "req": 8}
        )
        assert local.last_request.body["model"] == "smollm2"
    answer = session.tree.children(question.id)[-1]
    assert (answer.meta["endpoint"], answer.meta["model"]) == ("local", "local:smollm2")
    row = next(m for m in recorder.customs() if m["t"] == "n" and m["r"][0] == answer.id)
    assert "local:smollm2 (served as SmolLM2.gguf)" in json.dumps(row, ensure_ascii=False)


def test_a_fan_out_that_thinks_streams_only_its_answers_and_keeps_each_thought(
    tmp_path, recorder: Recorder
):
    settings = ChatSettings(thinking=2048)
    session = Session.open(tmp_path / "t.chat.jsonl", OfflineProvider(), settings=settings)
    session.ask("What is 2 + 3?")
    panel = TreePanel(session)
    question = session.path()[0]
    recorder.clear()

    comm_of(recorder, panel).deliver({"a": "fanout", "id": question.id, "n": 2, "req": 6})

    kinds = [m["t"] for m in recorder.customs()]
    assert "k" not in kinds and "d" not in kinds  # no thinking mixed into a single stream
    streamed = "".join(m["x"] for m in recorder.customs() if m["t"] == "vd")
    answers = session.tree.children(question.id)[1:]
    assert streamed == "".join(a.text for a in answers)  # the columns get the answers alone
    comm_of(recorder, panel).deliver({"a": "text", "ids": [a.id for a in answers], "req": 7})
    texts = next(m for m in recorder.customs() if m["t"] == "texts")["texts"]
    for answer in answers:
        assert answer.meta["thinking"] == 2048
        assert texts[answer.id]["thinking"] == thinking_text(answer.message) != ""


# -- a question as typed ----------------------------------------------------------------------

TYPED = {
    "typed": [
        {"field": "notes.txt", "kind": "attachment", "about": "text 8 chars", "sent": [0, 5]},
        "What does ",
        {"field": "df", "kind": "variable", "about": "DataFrame 100×2", "sent": [17, 40]},
        " **show**?",
    ]
}
TYPED_SENT = "notes\n\nWhat does \n\n| x | y |\n|---|---|\n| 1 |\n\n show?"


def test_a_row_shows_a_question_as_typed_each_chip_marked(session: Session, recorder):
    turn = session.ask(TYPED_SENT, meta=TYPED)
    row = TreePanel(session).nodes[0]
    assert row[0] == turn.user.id
    assert row[3] == (
        f"{CHIP_START}[notes.txt · text 8 chars]{CHIP_END} What does "
        f"{CHIP_START}[df · DataFrame 100×2]{CHIP_END} show?"
    )
    long = {"typed": ["x" * 70 + " ", *TYPED["typed"][2:]]}
    head = typed_head(typed_pieces(long) or [])
    assert head.endswith(f"{CHIP_START}[df · DataFrame 100×2]{CHIP_END}…")  # a chip is never cut


def test_an_edit_in_the_panel_of_a_question_as_typed_fills_its_fields_in_again(
    session: Session, recorder
):
    turn = session.ask(TYPED_SENT, meta=TYPED)
    asked: list[tuple[str, str]] = []

    def refill(original: Node, text: str) -> Refilled:
        asked.append((original.id, text))
        return Refilled("new table", {"typed": ["new ", "table"]}, "Filled in again: {df}.")

    panel = TreePanel(session)
    comm = comm_of(recorder, panel)
    comm.deliver({"a": "edit", "id": turn.user.id, "text": "What does {df} say?", "req": 1})
    assert asked == []  # no kernel: nothing is filled in, and the view says so
    assert "only be filled in again by a kernel" in panel.error

    session.refill = refill
    comm.deliver({"a": "edit", "id": turn.user.id, "text": "What does {df} say?", "req": 2})
    assert asked == [(turn.user.id, "What does {df} say?")]
    edited = file_records(session)[-2]
    assert edited["message"]["content"] == "new table"
    assert edited["meta"]["typed"] == ["new ", "table"]
    assert {"t": "note", "level": "info", "x": "Filled in again: {df}."} in recorder.customs()

    comm.deliver({"a": "edit", "id": turn.user.id, "text": "as {written}", "req": 3, "raw": True})
    assert len(asked) == 1  # what was sent, edited: sent as written
    assert file_records(session)[-2]["message"]["content"] == "as {written}"
