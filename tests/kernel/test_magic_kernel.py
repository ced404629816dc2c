"""%%chat on a real kernel, driven as JupyterLab drives it (cell ids in each request).

Each test runs cells through a real ipykernel, looks at what a user would see (the
streamed Markdown, the footer, one-line errors) and then reads the session's JSONL file
to check the tree: run all; edit cell 1 then run all; re-run unchanged; --from; --new;
restart then continue; interrupt mid-stream (and mid-thinking); a provider error
mid-stream; thinking folded above the answer, the footer's cost and context. The offline
provider needs no network; the Anthropic cases use the real SDK against the local fake
Messages API server.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.import_samples import chatgpt_export, claude_code_session, jsonl, pi_session
from helpers.kernel_harness import CellRun, Kernel

from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.history.tree import SessionTree
from jupyter_tree_chat.kernel.display.output import INTERRUPTED_MARK
from jupyter_tree_chat.providers.anthropic.wire import api_tool_id

pytestmark = pytest.mark.kernel

CELLS = [
    ("c0000001", "What is a session tree?"),
    ("c0000002", "And a leaf?"),
    ("c0000003", "Why keep old branches?"),
]


def run_all(kernel: Kernel, cells: list[tuple[str, str]] = CELLS) -> list[CellRun]:
    return [kernel.chat(text, cell_id).check() for cell_id, text in cells]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def tree_of(kernel: Kernel, name: str | None = None) -> SessionTree:
    loaded = load_file(kernel.session_file(name))
    assert loaded.problems == []
    return loaded.tree


def path_texts(tree: SessionTree, leaf: str | None = None) -> list[str]:
    return [n.text for n in tree.path_nodes(leaf or tree.leaf)]


def footer_of(run: CellRun) -> str:
    return run.markdown[-1]


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Kernel]:
    with Kernel(tmp_path) as kernel:
        yield kernel


# -- the notebook-native rule -------------------------------------------------------------


def test_run_all_builds_one_branch_with_each_cell_id(offline):
    runs = run_all(offline)

    assert "offline teaching model" in runs[0].stdout  # said once, in the first cell
    assert all("offline teaching model" not in r.stdout for r in runs[1:])
    assert "I was sent **5 messages**" in runs[2].markdown[0]
    assert "> Why keep old branches?" in runs[2].markdown[0]
    assert footer_of(runs[2]).endswith("reply 1/1")
    assert runs[0].updates >= 1  # the reply was updated in place, not printed again
    tree = tree_of(offline)
    path = tree.path_nodes(tree.leaf)
    assert [n.role for n in path] == ["user", "assistant"] * 3
    assert [n.meta["cell_id"] for n in path[::2]] == [c for c, _ in CELLS]
    assert len(tree) == 6


def test_edit_cell_1_then_run_all_makes_a_new_branch_and_keeps_the_old(offline):
    run_all(offline)
    old_leaf = tree_of(offline).leaf
    edited = [(CELLS[0][0], "What is a session TREE, exactly?"), *CELLS[1:]]

    runs = run_all(offline, edited)

    assert "question 2/2" in footer_of(runs[0])
    tree = tree_of(offline)
    assert len(tree) == 12
    assert [n.text for n in tree.roots()] == [CELLS[0][1], edited[0][1]]
    assert path_texts(tree)[::2] == [text for _, text in edited]
    assert path_texts(tree, old_leaf)[::2] == [text for _, text in CELLS]  # the old branch
    assert "I was sent **5 messages**" in runs[2].markdown[0]  # not 11: one branch only


def test_rerunning_an_unchanged_cell_is_a_retry_without_a_duplicate_question(offline):
    first = offline.chat("Tell me a fact", "c0000001").check()
    again = offline.chat("Tell me a fact", "c0000001").check()

    assert footer_of(first).endswith("reply 1/1")
    assert footer_of(again).endswith("reply 2/2")
    tree = tree_of(offline)
    users = [n for n in tree if n.role == "user"]
    assert len(users) == 1
    assert [n.parent_id for n in tree if n.role == "assistant"] == [users[0].id] * 2


def test_a_cell_without_a_cell_id_appends(offline):
    offline.chat("one", None).check()
    offline.chat("one", None).check()
    assert path_texts(tree_of(offline))[::2] == ["one", "one"]


def test_from_forks_under_any_node_and_new_starts_a_root(offline):
    run_all(offline, CELLS[:2])
    first_reply = tree_of(offline).path_nodes(tree_of(offline).leaf)[1]

    forked = offline.chat("A different follow-up", "c0000009", f"--from {first_reply.id[:7]}")
    fresh = offline.chat("Start over", "c000000a", "--new")

    forked.check()
    fresh.check()
    tree = tree_of(offline)
    follow_up = next(n for n in tree if n.text == "A different follow-up")
    assert follow_up.parent_id == first_reply.id
    assert len(tree.children(first_reply.id)) == 2
    start = next(n for n in tree if n.text == "Start over")
    assert start.parent_id is None
    assert tree.path_nodes(tree.leaf)[0].id == start.id
    assert "I was sent **1 message**" in fresh.markdown[0]


def test_tree_svg_shows_the_picture_as_a_cell_output(offline):
    run_all(offline, CELLS[:2])
    offline.chat("A different second question", "c0000002").check()  # an edit: a fork
    run = offline.run("%chat tree --svg", "c00000ff").check()
    (output,) = [o for o in run.outputs if "image/svg+xml" in o.get("data", {})]
    assert output["data"]["text/plain"] == "6 of 6 messages drawn"
    root = ET.fromstring(output["data"]["image/svg+xml"])
    svg = "{http://www.w3.org/2000/svg}"
    nodes = [g for g in root.iter(f"{svg}g") if "node" in (g.get("class") or "").split()]
    edges = [p for p in root.iter(f"{svg}path") if "edge" in (p.get("class") or "").split()]
    bold = [p for p in edges if "path" in p.get("class", "").split()]
    assert (len(nodes), len(edges), len(bold)) == (6, 5, 3)


def test_after_a_restart_the_tree_and_leaf_are_the_same_and_cells_continue(offline):
    run_all(offline, CELLS[:2])
    old_leaf = tree_of(offline).get(tree_of(offline).leaf)
    offline.chat(*CELLS[0][::-1]).check()  # a retry of cell 1: the newest node is elsewhere
    offline.run(f"%chat switch {old_leaf.id[:8]}").check()  # back to the first branch
    before = offline.run("%chat branches").check().stdout
    leaf_before = offline.run("t = %chat text\nprint(t)").check().stdout

    offline.restart()
    after = offline.run("%chat branches").check().stdout
    leaf_after = offline.run("t = %chat text\nprint(t)").check().stdout
    runs = [offline.chat("Continue here", "c0000004").check()]

    notice, *listing = after.splitlines(keepends=True)  # a new kernel says it once again
    assert notice.startswith("No ANTHROPIC_API_KEY set")
    assert "".join(listing) == before
    assert f"* {old_leaf.id[:7]}" in after  # the switched-to branch is still current
    assert leaf_after == leaf_before == old_leaf.text + "\n"
    question = next(n for n in tree_of(offline) if n.text == "Continue here")
    assert question.parent_id == old_leaf.id  # under the switched-to leaf
    assert "I was sent **5 messages**" in runs[0].markdown[0]


def test_several_sessions_per_notebook(offline):
    offline.chat("default one", "c0000001").check()
    offline.chat("named one", "c0000002", "--session notes").check()
    offline.run("%chat use notes").check()
    offline.chat("named two", "c0000003").check()

    assert path_texts(tree_of(offline))[::2] == ["default one"]
    assert path_texts(tree_of(offline, "notes"))[::2] == ["named one", "named two"]


# -- interruption and errors --------------------------------------------------------------


def press_stop_mid_reply(kernel: Kernel, cell: str, delay: float) -> CellRun:
    """Run ``cell`` with the offline model slowed down, and press stop once it streams."""
    kernel.run(f"%config TreeChat.offline_delay = {delay}").check()
    msg_id = kernel.send(cell, "c0000001")
    run = kernel.collect(msg_id, until=lambda r: r.updates >= 2)
    kernel.interrupt()
    return kernel.collect(msg_id, run=run)


def test_the_stop_button_ends_the_stream_and_keeps_what_arrived(offline):
    run = press_stop_mid_reply(offline, "%%chat\nTell me a long story about trees", 0.05)

    assert run.status == "error"  # so Run All stops here
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith("Interrupted: the partial reply is kept as ")
    assert run.markdown[0].endswith(INTERRUPTED_MARK)
    tree = tree_of(offline)
    reply = tree.get(tree.leaf)
    assert reply.role == "assistant"
    assert reply.meta["interrupted"] is True
    assert reply.id[:7] in run.error_lines[0]
    assert reply.text and run.markdown[0].startswith(reply.text)

    offline.run("%config TreeChat.offline_delay = 0").check()
    nxt = offline.chat("Go on", "c0000002").check()
    assert tree_of(offline).get(tree_of(offline).leaf).parent_id is not None
    assert next(n for n in tree_of(offline) if n.text == "Go on").parent_id == reply.id
    assert nxt.error_lines == []


def test_the_stop_button_while_the_model_thinks_keeps_the_thinking_marked(offline):
    run = press_stop_mid_reply(offline, "%%chat --thinking 2048\nThink about trees", 0.1)

    assert run.status == "error" and len(run.error_lines) == 1
    assert run.error_lines[0].startswith("Interrupted: the partial reply is kept as ")
    assert "<summary>Thinking (cut short)</summary>" in run.html[0]
    reply = tree_of(offline).get(tree_of(offline).leaf)
    assert reply.meta["interrupted"] is True and reply.meta["thinking"] == 2048
    (block,) = reply.message["content"]
    assert block["type"] == "thinking" and block["signature"] == ""
    assert block["thinking"] and block["thinking"].strip() in run.html[0]
    assert reply.id[:7] in run.error_lines[0]


def test_a_provider_error_mid_stream_is_one_line_and_the_cut_reply_is_kept(claude, fake_anthropic):
    fake_anthropic.enqueue(text="Session trees keep every branch. " * 20, error_event_after=6)

    run = claude.chat("Explain session trees", "c0000001")

    assert run.status == "error"
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith("Model error: ")
    assert "(the partial reply is kept as " in run.error_lines[0]
    assert "Traceback" not in run.visible_text
    assert run.markdown[0].endswith(INTERRUPTED_MARK)
    lines = records(claude.session_file())
    user, reply = (r for r in lines if "type" not in r)
    assert user["message"]["content"] == "Explain session trees"
    assert reply["meta"]["interrupted"] is True
    assert reply["message"]["content"][0]["text"].startswith("Session trees keep")


def test_after_an_unanswered_question_the_next_cell_asks_beside_it(claude, fake_anthropic):
    claude.chat("First question", "c0000001").check()
    fake_anthropic.enqueue_error(400, message="bad things")
    failed = claude.chat("This one fails", "c0000002")
    after = claude.chat("Asked again", "c0000003").check()

    assert failed.status == "error"
    assert len(failed.error_lines) == 1 and "bad things" in failed.error_lines[0]
    assert "got no answer; this one is asked beside it" in after.stdout
    tree = tree_of(claude)
    failed_q = next(n for n in tree if n.text == "This one fails")
    again_q = next(n for n in tree if n.text == "Asked again")
    assert again_q.parent_id == failed_q.parent_id  # siblings, not stacked
    assert [m["role"] for m in fake_anthropic.requests[-1].body["messages"]] == [
        "user",
        "assistant",
        "user",
    ]


def test_a_line_printed_before_the_reply_reaches_the_page_before_it(claude, fake_anthropic):
    fake_anthropic.enqueue_error(400, message="bad things")
    claude.chat("This one fails", "c0000001")
    after = claude.chat("Asked again", "c0000002").check()

    kinds = [
        "notice"
        if m["msg_type"] == "stream" and "got no answer" in m["content"]["text"]
        else m["msg_type"]
        for m in after.messages
        if m["msg_type"] in ("stream", "display_data")
    ]
    assert kinds[:2] == ["notice", "display_data"]  # the line, then the reply's output


def test_a_dropped_connection_keeps_the_cut_reply(claude, fake_anthropic):
    fake_anthropic.enqueue(text="word " * 200, drop_after=8)
    run = claude.chat("Talk", "c0000001")
    assert run.status == "error"
    assert len(run.error_lines) == 1 and run.error_lines[0].startswith("Model error: ")
    reply = next(r for r in records(claude.session_file()) if r.get("meta", {}).get("interrupted"))
    assert reply["message"]["content"][0]["text"].startswith("word word")


# -- against the fake Anthropic server --------------------------------------------------------


def test_run_all_edit_and_retry_against_the_fake_api(claude, fake_anthropic):
    long_system = "You are a patient teacher of data structures. " * 120  # > 1024 tokens
    claude.run(f"%config TreeChat.system = {long_system!r}").check()
    runs = run_all(claude)
    retry = claude.chat(CELLS[2][1], CELLS[2][0]).check()

    assert footer_of(retry).endswith("reply 2/2")
    assert "cache read" in footer_of(retry)  # the shared prefix was a cache hit
    assert "claude-" in footer_of(runs[0])
    sent = fake_anthropic.requests[-1].body
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant"] * 2 + ["user"]
    tree = tree_of(claude)
    assert len(tree) == 7
    assert len([n for n in tree if n.role == "user"]) == 3


def test_the_reply_is_available_to_python(claude, fake_anthropic):
    fake_anthropic.enqueue(text="The answer is 42.")
    claude.chat("What is the answer?", "c0000001").check()
    shown = claude.run("print(repr(_chat)); print(_chat_id[:4])").check().stdout.splitlines()
    assert shown[0] == "'The answer is 42.'"
    node_id = shown[1]
    text = claude.run(f"x = %chat text {node_id}\nprint(x)").check().stdout
    assert text.strip() == "The answer is 42."


def test_streaming_updates_are_throttled(claude, fake_anthropic):
    fake_anthropic.enqueue(tokens=2000)
    started = time.monotonic()
    run = claude.chat("Long please", "c0000001").check()
    elapsed = time.monotonic() - started
    assert run.updates <= elapsed / 0.1 + 3  # ~one update per 0.1 s, plus the last ones
    assert run.markdown[0].count(" ") == 1999  # every piece arrived in the final text


def test_thinking_is_folded_above_the_answer_and_the_footer_has_cost_and_context(
    claude, fake_anthropic
):
    fake_anthropic.enqueue(
        text="A leaf is where a branch ends.",
        thinking="The user asks what a **leaf** is. <script>alert(1)</script>",
        usage={"input_tokens": 2_000, "output_tokens": 500},
    )

    run = claude.chat("What is a leaf?", "c0000001", options="--thinking 2048").check()

    thinking, answer = run.html[:2]  # the thinking's output, the answer's below it
    assert thinking.startswith('<details class="jtc-thinking"><summary>Thinking</summary>')
    assert thinking.endswith("</details>")
    assert "<strong>leaf</strong>" in thinking and "<script>" not in thinking
    assert answer == "<p>A leaf is where a branch ends.</p>\n"
    sent = fake_anthropic.requests[-1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    # $3 / $15 a million tokens: 2,000 in and 500 out cost $0.0135; 2,500 of 1M is <1%
    assert " · 2,000 in · 500 out · $0.0135 · context <1% of 1M · reply 1/1" in footer_of(run)
    reply = tree_of(claude).get(tree_of(claude).leaf)
    assert reply.message["content"][0]["signature"]


# -- %chat import ----------------------------------------------------------------------------


def test_an_imported_claude_code_session_is_continued_and_the_api_accepts_it(
    claude, fake_anthropic, tmp_path
):
    source = tmp_path / "5f0c1a2e.jsonl"
    source.write_bytes(jsonl(claude_code_session()))
    before = source.read_bytes()
    shown = claude.run(f"%chat import {source}").check().stdout.splitlines()
    target = claude.session_file("5f0c1a2e")
    assert shown[0].startswith(f"Imported into session '5f0c1a2e' ({target}): Claude Code")
    assert shown[1].startswith("Using it now; the next %%chat continues from a7 (assistant)")
    assert source.read_bytes() == before

    fake_anthropic.enqueue(text="It divided by zero; now it checks first.")
    claude.chat("Summarise the fix in one line", "c0000009").check()
    sent = fake_anthropic.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant"] * 3 + ["user"]
    # no tool is registered, so none is offered and Claude Code's calls go as text
    # (tools/wire.py); the unsigned thinking is not sent
    assert "tools" not in fake_anthropic.requests[-1].body
    texts = [b["text"] for b in sent[1]["content"]]
    assert texts[1:] == [
        '[tool call: Read {"file_path": "x.py"}]',
        '[tool call: Grep {"pattern": "bug"}]',
    ]
    assert [b["type"] for b in sent[2]["content"]] == ["text", "text"]
    tree = tree_of(claude, "5f0c1a2e")
    assert [n.id for n in tree.path_nodes(tree.leaf)][:6] == ["u1", "a1", "r1", "a5", "u3", "a7"]
    assert tree.get(tree.leaf).text == "It divided by zero; now it checks first."

    again = claude.run(f"%chat import {source}")
    assert again.visible_text.strip() == (
        f"UsageError: %chat import: session '5f0c1a2e' exists ({target}); "
        "choose another name with --session NAME"
    )
    missing = claude.run("%chat import nowhere.jsonl --session other")
    assert missing.visible_text.strip() == "UsageError: %chat import: nowhere.jsonl: no such file"


def test_imported_pi_and_chatgpt_sessions_send_mapped_ids_and_the_system_prompt(
    claude, fake_anthropic, tmp_path
):
    pi_file = tmp_path / "pi-session.jsonl"
    pi_file.write_bytes(jsonl(pi_session()))
    claude.run(f"%chat import {pi_file} --session notes").check()
    # a registered tool: pi's calls go as blocks, its tool defined as not callable
    claude.run("from jupyter_tree_chat import tool\n@tool\ndef grep(p: str) -> str:\n  return p")
    claude.chat("What else is in the notes?", "c0000010").check()
    sent = fake_anthropic.requests[-1].body
    tool_ids = [
        b["id"]
        for m in sent["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    assert tool_ids == [api_tool_id("call_abc|fc_123")]

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export()))
    claude.run(f"%chat import {export} --session gpt --conversation Parabola").check()
    claude.chat("And in green?", "c0000011").check()
    sent = fake_anthropic.requests[-1].body
    assert sent["system"][0]["text"] == "I am a data scientist.\n\nAnswer briefly."
    assert sent["messages"][-1]["content"][0]["text"] == "And in green?"
    assert [s.name for s in sorted(tmp_path.glob("analysis.*.chat.jsonl"))] == [
        "analysis.gpt.chat.jsonl",
        "analysis.notes.chat.jsonl",
    ]


# -- the first cell -------------------------------------------------------------------------

LOADED = "import sys, threading; print('anthropic' in sys.modules, threading.active_count())"


def test_with_a_key_load_ext_builds_the_client_in_the_background(claude, fake_anthropic):
    # the fixture's kernel ran %load_ext, which returned at once
    claude.run(
        "from jupyter_tree_chat.kernel.sessions import registry\n"
        "for thread in list(registry()._warming.values()): thread.join(60)"
    ).check()
    assert claude.run(LOADED).check().stdout.split()[0] == "True"
    assert fake_anthropic.requests == []  # no network while warming up
    claude.chat("Hello?", "c0000001").check()
    (sent,) = fake_anthropic.last_request.body["messages"]
    assert sent["content"][0]["text"] == "Hello?"  # the warmed client sent the cell


def test_without_a_key_the_sdk_is_never_imported(offline):
    assert offline.run(LOADED).check().stdout.split()[0] == "False"
    offline.chat("Hello?", "c0000001").check()  # the offline model answers
    assert offline.run(LOADED).check().stdout.split()[0] == "False"


def test_without_a_key_a_model_of_another_endpoint_warms_its_sdk_up(tmp_path: Path):
    with Kernel(tmp_path, load_extension=False) as kernel:
        kernel.run("get_ipython().config.TreeChat.model = 'local:smollm2'").check()
        kernel.run("%load_ext jupyter_tree_chat").check()
        waited = kernel.run(
            "import sys, time\n"
            "deadline = time.monotonic() + 60\n"
            "while 'anthropic.lib.streaming' not in sys.modules and time.monotonic() < deadline:\n"
            "    time.sleep(0.05)\n"
            "print('anthropic.lib.streaming' in sys.modules)"
        ).check()
        assert waited.stdout.split()[-1] == "True"  # no cell asked anything yet
