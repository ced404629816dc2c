"""What a chat cell weighs (issue 35): every control and panel carries a few lines of
loader as its ``_esm``, not the front end; a page without the lab extension gets the
code from its kernel when it asks; a notebook saved with widget state stays small; the
footer marks the figures a live control shows too."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from helpers.widget_comm import Recorder, recording_comms

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.kernel.display.output import footer, footer_html
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.widget import loader
from jupyter_tree_chat.widget.widgets import TreePanel, TurnControl

REPO = Path(__file__).resolve().parents[2]
LOADER_JS = REPO / "jupyter_tree_chat" / "widget" / "loader.js"
REGISTRY_TS = REPO / "labextension" / "src" / "panel" / "registry.ts"
BUNDLE = REPO / "jupyter_tree_chat" / "widget" / "static" / "widget.js"


@pytest.fixture
def recorder():
    with recording_comms() as recorder:
        yield recorder


@pytest.fixture
def session(tmp_path: Path) -> Session:
    session = Session.open(tmp_path / "nb.chat.jsonl", OfflineProvider())
    session.ask("What is a session tree?")
    return session


def opened(recorder: Recorder) -> list[dict]:
    return [s.data for s in recorder.sent if s.msg_type == "comm_open"]


def test_a_control_and_a_panel_open_with_the_loader_not_the_front_end(session, recorder):
    leaf = session.leaf
    assert leaf is not None
    TurnControl(session, leaf)
    TreePanel(session)
    states = [data["state"] for data in opened(recorder)]
    esms = [state["_esm"] for state in states if "_esm" in state]
    assert esms == [LOADER_JS.read_text(), LOADER_JS.read_text()]
    assert len(esms[0]) < 4_000 and "jtc-turn" not in esms[0]  # no view code in it
    assert all(not state.get("_css") for state in states)  # the stylesheet comes once too
    assert max(s.wire_bytes for s in recorder.sent if s.msg_type == "comm_open") < 10_000


def test_a_later_control_opens_one_comm_its_busy_state_and_layout_shared(session, recorder):
    """The session's busy state and the views' layout come with the first view; each
    later control is one ``comm_open`` (ipywidgets would make a ``Layout`` per view).
    The second at one place says the place once and points the first at it."""
    leaf = session.leaf
    assert leaf is not None
    first = TurnControl(session, leaf)
    recorder.clear()
    TurnControl(session, leaf)
    changed = [key for s in recorder.sent if s.msg_type == "comm_msg" for key in s.data["state"]]
    assert sorted(changed) == ["places", "turn"]
    recorder.clear()
    second = TurnControl(session, leaf)
    assert [s.msg_type for s in recorder.sent] == ["comm_open"]
    assert second.session_state is first.session_state and second.layout is first.layout
    state = recorder.sent[0].data["state"]
    assert state["session_state"] == f"IPY_MODEL_{first.session_state.model_id}"
    assert state["layout"] == f"IPY_MODEL_{first.layout.model_id}"


def test_a_new_root_question_is_one_update_of_its_place_however_many_controls_are_there(
    session, recorder
):
    """Every root question's control follows the question the path takes among the roots,
    so a ``--new`` cell changed what each earlier one showed: one update per control and
    cell, the roots' ids in each. They share their place now: one update a cell."""
    controls = [TurnControl(session, session.ask(f"root {n}", new_root=True).last.id)
                for n in range(10)]  # fmt: skip
    recorder.clear()
    turn = session.run_cell("one more root", cell_id=None, new_root=True)
    updates = [s for s in recorder.sent if s.msg_type == "comm_msg" and "state" in s.data]
    changed = [key for s in updates for key in s.data["state"] if key != "busy"]
    assert changed == ["places"]  # not a ``turn`` of each control
    new = TurnControl.for_turn(session, turn)
    assert new is not None
    for control in [*controls, new]:  # each shows the newest root, and the answer it printed
        shown = control.shown_turn
        assert (shown["q"]["pos"], shown["q"]["count"]) == (12, 12)
        assert shown["r"]["id"] == session.leaf and shown["onPath"] is True
    assert controls[3].shown_turn["shown"] != new.shown_turn["shown"] == session.leaf
    controls[0].close()  # the place's keeper (its cell run again): the next one keeps it
    session.run_cell("and another", cell_id=None, new_root=True)
    assert controls[1].shown_turn["q"]["count"] == new.shown_turn["q"]["count"] == 13
    for control in [*controls[1:], new]:
        control.close()
    assert new.session_state.places == {}  # no control left there: the place is forgotten


def test_the_loader_s_question_is_answered_with_the_bundle_and_its_stylesheet(session, recorder):
    leaf = session.leaf
    assert leaf is not None
    control = TurnControl(session, leaf)
    recorder.clear()
    next(c for c in recorder.comms if c.comm_id == control.comm.comm_id).deliver(
        {"a": "code", "protocol": loader.PROTOCOL}
    )
    [answer] = recorder.customs()
    assert answer["t"] == "code" and answer["protocol"] == loader.PROTOCOL
    assert answer["js"] == BUNDLE.read_text()
    assert ".jtc-turn" in answer["css"]
    assert [s.msg_type for s in recorder.sent] == ["comm_msg"]  # no ack, no state change


def test_the_three_sides_speak_one_protocol():
    said_by_loader = re.search(r"const PROTOCOL = (\d+);", LOADER_JS.read_text())
    said_by_lab = re.search(r"export const WIDGET_PROTOCOL = (\d+);", REGISTRY_TS.read_text())
    assert said_by_loader and said_by_lab
    assert int(said_by_loader.group(1)) == int(said_by_lab.group(1)) == loader.PROTOCOL
    for key in ("jupyter-tree-chat:widget",):
        assert f'Symbol.for("{key}")' in LOADER_JS.read_text()
        assert f"Symbol.for('{key}')" in REGISTRY_TS.read_text()


def test_the_footer_marks_what_the_control_shows_and_reads_the_same(session):
    session.retry(session.leaf)
    reply = session.tree.get(session.leaf)
    session.label(reply.id, "<b>best</b>")
    html = footer_html(session, reply)
    assert html.startswith(f'<sub class="jtc-footer" data-node="{reply.id}">')
    assert "<b>" not in html and "&lt;b&gt;best&lt;/b&gt;" in html
    visible = re.sub(r"<[^>]+>", "", html).replace("&#x27;", "'").replace("&lt;", "<")
    assert visible.replace("&gt;", ">") == footer(session, reply)  # same words, same order
    folded = re.findall(r'<span class="jtc-in-control">([^<]*)</span>', html)
    assert folded[-1] == " · reply 2/2"  # the control shows the position: once in a live page
    assert not any(reply.id[:7] in part or "label" in part for part in folded)


def run_chat_notebook(folder: Path, chat_cells: int) -> Path:
    """``chat_cells`` offline ``%%chat`` cells run by nbclient with widget state saved."""
    from nbclient import NotebookClient

    folder.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_code_cell("%load_ext jupyter_tree_chat")] + [
        nbformat.v4.new_code_cell(f"%%chat\nQuestion {k}: what is a session tree?")
        for k in range(chat_cells)
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    path = folder / "chats.ipynb"
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        store_widget_state=True,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute(env=env)
    nbformat.write(notebook, path)
    return path


def test_twenty_chat_cells_saved_with_widget_state_stay_small(tmp_path):
    one = run_chat_notebook(tmp_path / "one", 1)
    twenty = run_chat_notebook(tmp_path / "twenty", 20)
    saved = json.loads(twenty.read_text())
    state = saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    controls = [m for m in state.values() if m["state"].get("mode") == "turn"]
    assert len(controls) == 20  # every control's state is saved...
    # ...naming the session's one busy state, saved once, as the views' one layout is
    shared = [k for k, m in state.items() if m["model_name"] == "WidgetModel"]
    assert len(shared) == 1 and state[shared[0]]["state"]["busy"] is False
    assert {c["state"]["session_state"] for c in controls} == {f"IPY_MODEL_{shared[0]}"}
    assert sum(m["model_name"] == "LayoutModel" for m in state.values()) == 1
    size = twenty.stat().st_size
    per_cell = (size - one.stat().st_size) / 19
    assert size <= 1_500_000, f"{size:,} bytes for 20 chat cells"
    assert per_cell <= 30_000, f"{per_cell:,.0f} bytes more per chat cell"
    # ...and each answer and its whole footer are in the outputs, for renderers without
    # widgets (nbconvert, GitHub, nbviewer)
    for k, cell in enumerate(saved["cells"][1:]):
        html = "".join("".join(o.get("data", {}).get("text/html", "")) for o in cell["outputs"])
        assert f"Question {k}: what is a session tree?" in html
        assert 'class="jtc-footer"' in html and "reply 1/1" in html
