"""A context budget on a real kernel, against the fake Messages API through the real SDK.

What a user does: ``%%chat --budget N`` cells (or ``TreeChat.context_budget``), the
footer's "saw N of M exchanges", ``%chat context``; with ``TreeChat.summarize_dropped``
the summary the model writes once, kept in the session file and reused by a restarted
kernel. What is checked is what the server received and what the file holds.
"""

from __future__ import annotations

import json

import pytest

from jupyter_tree_chat.history.store import load_file

pytestmark = pytest.mark.kernel

LONG = "tell me about the branches of a session tree " * 12  # about 135 tokens


def texts(message: dict) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b["text"] for b in content if "text" in b]


def answers(server) -> list:
    return [r for r in server.requests if r.path == "/v1/messages"]


def test_budget_cells_send_the_newest_exchanges_and_the_footer_says_so(claude, fake_anthropic):
    for k in range(8):
        fake_anthropic.enqueue(f"Answer {k}. " + LONG)
        claude.chat(f"Question {k}: " + LONG, f"c{k:07d}").check()
    assert all("left out" not in json.dumps(r.body) for r in answers(fake_anthropic))

    fake_anthropic.enqueue("A short answer.")
    run = claude.chat("And the first question?", "c0000008", "--budget 1200").check()

    sent = fake_anthropic.last_request.body["messages"]
    dropped = 9 - (len(sent) + 1) // 2
    assert texts(sent[0])[0] == f"[{dropped} earlier exchanges left out]"
    assert texts(sent[-1])[-1] == "And the first question?"
    footer = run.markdown[-1]
    assert f"saw {9 - dropped} of 9 exchanges" in footer
    leaf = load_file(claude.session_file()).tree
    context = leaf.get(leaf.leaf).meta["context"]
    assert context["dropped"] == dropped and context["budget"] == 1200
    assert len(leaf.path_nodes(leaf.leaf)) == 18  # the file keeps the whole path

    claude.run("%config TreeChat.context_budget = 1200").check()
    listing = claude.run("%chat context").check().stdout
    assert "Budget: 1,200 tokens a request may hold" in listing
    assert "left out" in listing and "✓" in listing and "✗" in listing


def test_a_bad_budget_is_one_line_that_says_the_fix(claude, fake_anthropic):
    run = claude.chat("Hello", "c0000001", "--budget lots")
    shown = run.visible_text.strip()
    assert shown.endswith(
        "%%chat --budget lots: give the tokens a request may hold (e.g. %%chat --budget 8000), "
        "'window' or 'off'"
    )
    assert "\n" not in shown and "Traceback" not in shown
    assert answers(fake_anthropic) == [] and not claude.session_file().exists()


def test_a_summary_is_written_once_and_reused_after_a_restart(claude, fake_anthropic):
    settings = "%config TreeChat.context_budget = 1500\n%config TreeChat.summarize_dropped = True"
    claude.run(settings).check()
    k = 0
    while not any(_is_summary(r.body) for r in answers(fake_anthropic)):
        fake_anthropic.enqueue(f"SUMMARY-{k} of the early exchanges.", when=_is_summary)
        fake_anthropic.enqueue(f"Answer {k}. " + LONG, when=lambda body: not _is_summary(body))
        claude.chat(f"Question {k}: " + LONG, f"c{k:07d}").check()
        k += 1
        assert k < 20, "the budget never called for a summary"
    summaries = [r for r in answers(fake_anthropic) if _is_summary(r.body)]
    assert len(summaries) == 1
    roots = load_file(claude.session_file()).tree.roots()
    written = next(n for n in roots if "compacted_from" in (n.meta or {}))
    assert "SUMMARY-" in written.text

    claude.restart()
    claude.run(settings).check()
    fake_anthropic.enqueue("After the restart.")
    claude.chat("One more: " + LONG, f"c{k:07d}").check()

    assert len([r for r in answers(fake_anthropic) if _is_summary(r.body)]) == 1  # not again
    first = texts(fake_anthropic.last_request.body["messages"][0])[0]
    assert first.startswith("Summary of our conversation so far:") and written.text in first
    tree = load_file(claude.session_file()).tree
    assert tree.get(tree.leaf).meta["context"]["summary"] == written.id


def _is_summary(body) -> bool:
    return "Summarise our conversation" in json.dumps(body["messages"][-1])
