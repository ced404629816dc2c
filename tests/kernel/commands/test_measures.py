"""``%chat context`` and ``%chat usage`` in a shell, over Claude (the real SDK against the
fake Messages API) with scripted usage, so every figure printed can be worked out."""

from __future__ import annotations

import pytest
from fakes.fake_anthropic import FakeAnthropic
from IPython.core.error import UsageError

from jupyter_tree_chat.kernel import sessions as kernel_sessions


@pytest.fixture
def claude(ip, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    return ip


def ask(shell, text: str, line: str = "") -> None:
    shell.run_cell_magic("chat", line, text)


def test_context_reads_the_apis_usage_and_counts_a_question_when_given(
    claude, fake_anthropic, capsys
):
    usage = {"input_tokens": 150_000, "cache_read_input_tokens": 5_000, "output_tokens": 2_000}
    fake_anthropic.enqueue("A big answer.", usage=usage)
    ask(claude, "big question")
    footer = capsys.readouterr().out.splitlines()[-1]
    assert "context 16% of 1M" in footer  # 157,000 of claude-sonnet-4-6's 1M

    claude.run_line_magic("chat", "context how about this?")

    out = capsys.readouterr().out
    assert "Context of the current path (claude-sonnet-4-6): 157,000 tokens of 1M (16%)" in out
    assert "157,000 as reported in the usage of reply" in out
    counted = fake_anthropic.last_request
    assert counted.path == "/v1/messages/count_tokens"
    assert counted.body["messages"][-1]["content"][0]["text"] == "how about this?"
    assert "With the question:" in out and "(counted by the API), fits" in out
    assert "Largest messages on the path:" in out and "A big answer." in out


def test_past_80_percent_context_and_the_footer_say_compact(claude, fake_anthropic, capsys):
    claude.run_line_magic("config", "TreeChat.context_windows = {'claude-sonnet-4-6': 10_000}")
    fake_anthropic.enqueue("Nearly full.", usage={"input_tokens": 8_500, "output_tokens": 100})
    ask(claude, "fill")
    assert "context 86% of 10k: `%chat compact` makes room" in capsys.readouterr().out

    claude.run_line_magic("chat", "context")

    assert "Past 80% of the window: `%chat compact`" in capsys.readouterr().out


def test_a_question_over_the_window_is_a_one_line_usage_error(claude, fake_anthropic):
    claude.run_line_magic("config", "TreeChat.context_windows = {'claude-sonnet-4-6': 10_000}")
    fake_anthropic.enqueue("Full.", usage={"input_tokens": 9_900, "output_tokens": 90})
    ask(claude, "fill")
    sent = len(fake_anthropic.requests)

    with pytest.raises(UsageError) as refused:
        ask(claude, "one more question, longer than the ten tokens left in the window")

    assert "\n" not in str(refused.value)
    assert "would not fit" in str(refused.value) and "`%chat compact`" in str(refused.value)
    assert len(fake_anthropic.requests) == sent
    assert [n.text for n in kernel_sessions.current_session().path()] == ["fill", "Full."]


def test_usage_sums_this_branch_and_the_whole_session_per_model(claude, fake_anthropic, capsys):
    fake_anthropic.enqueue("One.", usage={"input_tokens": 1_000, "output_tokens": 100})
    ask(claude, "first")
    fake_anthropic.enqueue("Two.", usage={"input_tokens": 2_000, "output_tokens": 200})
    ask(claude, "second")
    fake_anthropic.enqueue("Two, again.", usage={"input_tokens": 2_000, "output_tokens": 300})
    claude.run_line_magic("chat", "retry")  # a sibling of "Two.": the current branch
    session = kernel_sessions.current_session()
    session.tree.get(session.leaf).meta["model"] = "claude-imaginary-9"  # a model with no price
    capsys.readouterr()

    claude.run_line_magic("chat", "usage")

    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Usage and cost (prices of 2026-12-01 from https://platform")
    rows = [line.split() for line in lines[2:7]]
    # replies, input, output, cache write, cache read, cost; "One." is $0.0045 at $3/$15
    assert rows[0] == ["this", "branch", "2", "3,000", "400", "0", "0", "$0.0045+?"]
    assert rows[1] == ["claude-sonnet-4-6", "1", "1,000", "100", "0", "0", "$0.0045"]
    assert rows[2] == ["claude-imaginary-9", "1", "2,000", "300", "0", "0", "tokens", "only"]
    assert rows[3] == ["whole", "session", "3", "5,000", "600", "0", "0", "$0.0135+?"]
    assert rows[4] == ["claude-sonnet-4-6", "2", "3,000", "300", "0", "0", "$0.0135"]
    assert "1 reply(ies) from models with no price are counted in tokens only" in lines[-1]


def test_usage_with_words_after_it_says_how_to_call_it(claude):
    with pytest.raises(UsageError, match="usage: %chat usage"):
        claude.run_line_magic("chat", "usage now")
