"""The panel while a batch's results come in (conversation/many/batch_poll.py): the poller
writes them on its own thread, and the panel gets each answer as the one small message a
new node always is, the current leaf unchanged."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.widget_comm import Recorder, recording_comms

from jupyter_tree_chat.conversation.many.batch_poll import holding, look
from jupyter_tree_chat.conversation.many.experiment import Plan, RowQuestion
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.endpoints.router import Router
from jupyter_tree_chat.widget.widgets import TreePanel


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with recording_comms() as recorder:
        yield recorder


def test_the_panel_gets_each_batch_answer_written_on_the_poller_s_thread(
    tmp_path: Path, recorder: Recorder
):
    with FakeAnthropic() as fake:
        fake.batches.hold = True
        provider = AnthropicProvider(api_key="sk-panel", base_url=fake.base_url)
        session = Session.open(tmp_path / "nb.chat.jsonl", Router(provider))
        session.ask("Hello")
        leaf = session.leaf
        panel = TreePanel(session)
        plan = Plan("Row {n}", [RowQuestion(f"Row {n}", None, {"n": n}) for n in range(3)])
        session.run_experiment(plan, cell_id="c1", batch=True)
        recorder.clear()
        fake.batches.finish()
        (pending,) = session.batches.plans.values()

        def poll() -> None:  # as the poller does, on a thread of its own
            with holding(session):
                look(session, pending)

        worker = threading.Thread(target=poll)
        worker.start()
        worker.join(timeout=60)

    rows = [m["r"] for m in recorder.customs() if m["t"] == "n"]
    assert [r[2] for r in rows] == ["a", "a", "a"]
    assert all("Row" in r[3] for r in rows)  # each answer's own row's reply
    assert {n[0] for n in panel.nodes} >= {r[0] for r in rows}
    assert panel.leaf == leaf == session.leaf  # the answers did not move the branch
