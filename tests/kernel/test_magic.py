"""%%chat and %chat in an in-process IPython shell: parsing, one-line usage errors, commands.

The real-kernel behaviour (cell ids, streaming display, interrupts) is in
test_magic_kernel.py; here every user mistake must be one UsageError line with its fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_tree_chat import reply_text
from jupyter_tree_chat.conversation.many.variants import Fanout
from jupyter_tree_chat.history.store import load_file
from jupyter_tree_chat.kernel import sessions as kernel_sessions
from jupyter_tree_chat.kernel.config import TreeChat
from jupyter_tree_chat.kernel.display.output import DisplayReply, footer
from jupyter_tree_chat.kernel.notebook import cell_id_from_metadata, notebook_path
from jupyter_tree_chat.kernel.options import fanout_words, parse_cell_line, parse_tool_names


def nodes(path: Path) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text().splitlines() if "type" not in json.loads(line)
    ]


def one_line_usage_error(ip, line: str, cell: str | None = None) -> str:
    with pytest.raises(UsageError) as caught:
        if cell is None:
            ip.run_line_magic("chat", line)
        else:
            ip.run_cell_magic("chat", line, cell)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- parsing ---------------------------------------------------------------------------


def test_options_parse_into_cell_options():
    options = parse_cell_line(
        '--session notes -m claude-x --system "be brief" --max-tokens 100 '
        "--temperature 0.2 --tools add,search --provider offline --raw"
    )
    assert options.session == "notes"
    assert options.model == "claude-x"
    assert options.system == "be brief"
    assert options.max_tokens == 100
    assert options.temperature == 0.2
    assert options.tools == ("add", "search")
    assert options.provider == "offline"
    assert options.raw


def test_attach_and_with_repeat_and_with_path_is_its_own_flag():
    options = parse_cell_line(
        "--attach a.txt --attach 'my data.csv' --with 3f2a --with b7 --with-path"
    )
    assert options.attach == ("a.txt", "my data.csv")
    assert options.with_refs == ("3f2a", "b7")
    assert options.with_path
    assert parse_cell_line("--with 3f2a").with_path is False
    assert parse_cell_line("").attach == () and parse_cell_line("").with_refs == ()


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ("--bogus", "`%%chat?` lists the options"),
        ("--with-path", "--with-path goes with --with ID"),
        ("--new --from abc", "use only one of them"),
        ("--new --continue", "use only one of them"),
        ("--max-tokens 0", "--max-tokens 1024"),
        ("--max-tokens lots", "`%%chat?` lists the options"),
        ("--provider gpt", "`%%chat?` lists the options"),
        ('--system "unclosed', "close the quote"),
        ("--n 0", "%%chat --n: ask for at least 1 answer, e.g. --n 3"),
        (
            "--n 5 --models a,b,c",
            "%%chat: 5 samples × 3 models is 15 answers; at most 12 at once: "
            "ask for fewer samples, models or temperatures",
        ),
        (
            "--temperatures 0,hot",
            "%%chat --temperatures: 'hot' is not a temperature (a number, 0 or more); "
            "give them comma-separated, e.g. --temperatures 0,0.5,1",
        ),
        ("--temperatures=-1", "%%chat --temperatures: '-1' is not a temperature"),
        ("--models ,", "%%chat --models: the list is empty; give it comma-separated"),
        ("--model a --models b,c", "%%chat: --model and --models contradict; put every model"),
        ("--temperature 1 --temperatures 0,1", "%%chat: --temperature and --temperatures contra"),
    ],
)
def test_bad_options_are_one_line_usage_errors_with_the_fix(line, fix):
    with pytest.raises(UsageError) as caught:
        parse_cell_line(line)
    assert fix in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("line", "thinking", "temperature", "tools"),
    [
        ("--thinking 2048", 2048, None, None),
        ("--thinking adaptive", "adaptive", None, None),
        ("--thinking OFF", "off", None, None),
        ("--thinking 4096 --temperature 0.5 --tools add", 4096, 0.5, ("add",)),
    ],
)
def test_thinking_parses_beside_the_other_options(line, thinking, temperature, tools):
    options = parse_cell_line(line)
    assert (options.thinking, options.temperature, options.tools) == (thinking, temperature, tools)


def test_a_bad_thinking_value_and_an_abbreviation_are_one_line_errors():
    with pytest.raises(UsageError, match=r"give a budget of tokens .* 'adaptive' or 'off'"):
        parse_cell_line("--thinking lots")
    for abbreviation in ("--th 4096", "--t 1"):  # abbreviations are off: not --thinking
        with pytest.raises(UsageError, match=r"unrecognized arguments: .* lists the options"):
            parse_cell_line(abbreviation)


def test_fan_out_options_are_never_read_as_an_abbreviation():
    options = parse_cell_line("--n 3 --models a,b --temperatures 0,0.5")
    assert options.fanout == Fanout(n=3, models=("a", "b"), temperatures=(0.0, 0.5))
    assert options.new is False  # --n is --n, not an abbreviated --new
    assert parse_cell_line("--new").fanout is None
    for abbreviation in ("--ne", "--tem 0.5", "--mod x", "--cont"):
        with pytest.raises(UsageError, match="unrecognized arguments"):
            parse_cell_line(abbreviation)


def test_fan_out_options_lead_a_retry_or_edit_line_and_the_text_keeps_its_own():
    assert fanout_words(["--n", "2", "abc"], "%chat retry") == (Fanout(n=2), ["abc"])
    assert fanout_words(["--n=2", "--models=a,b"], "%chat retry") == (
        Fanout(n=2, models=("a", "b")),
        [],
    )
    assert fanout_words(["1", "ask", "--n", "3"], "%chat edit") == (None, ["1", "ask", "--n", "3"])
    with pytest.raises(UsageError, match="--n needs a value"):
        fanout_words(["--n"], "%chat retry")


def test_tool_names():
    assert parse_tool_names(None) is None
    assert parse_tool_names("none") == ()
    assert parse_tool_names(" a , b ") == ("a", "b")


def test_cell_ids_from_jupyterlab_and_vscode():
    assert cell_id_from_metadata({"cellId": "a1b2c3d4"}) == "a1b2c3d4"
    uri = "vscode-notebook-cell:/home/u/nb.ipynb#W1sZmlsZQ%3D%3D"
    assert cell_id_from_metadata({"cellId": uri}) == uri
    assert cell_id_from_metadata({}) is None
    assert cell_id_from_metadata(None) is None


def test_notebook_path_sources(tmp_path):
    assert notebook_path({"__session__": str(tmp_path / "a.ipynb")}, {}) == tmp_path / "a.ipynb"
    assert notebook_path({"__vsc_ipynb_file__": "/x/b.ipynb"}, {}) == Path("/x/b.ipynb")
    assert notebook_path({}, {"JPY_SESSION_NAME": "/y/c.ipynb"}) == Path("/y/c.ipynb")
    assert notebook_path({}, {}) is None


# -- the cell magic in a shell -------------------------------------------------------------


def test_a_cell_asks_and_leaves_the_reply_for_python(ip, tmp_path, capsys):
    ip.run_cell_magic("chat", "", "hello there")
    out = capsys.readouterr().out
    assert "offline teaching model" in out  # the once-per-kernel notice
    assert "> hello there" in out
    stored = nodes(tmp_path / "nb.chat.jsonl")
    assert [n["message"]["role"] for n in stored] == ["user", "assistant"]
    assert ip.user_ns["_chat"].startswith("I was sent **1 message** on the active path: user.")
    assert "Offline teaching model" in ip.user_ns["_chat"]
    assert ip.user_ns["_chat_id"] == stored[1]["id"]
    assert reply_text(stored[1]["id"][:6]) == ip.user_ns["_chat"]
    assert ip.run_line_magic("chat", f"text {stored[0]['id'][:6]}") == "hello there"

    ip.run_cell_magic("chat", "", "again")
    assert "offline teaching model (deterministic" not in capsys.readouterr().out


def test_variables_are_substituted_unless_raw(ip, tmp_path):
    ip.user_ns["topic"] = "branching"
    ip.run_cell_magic("chat", "", "explain {topic}")
    ip.run_cell_magic("chat", "--raw", "keep {topic}")
    texts = [n["message"]["content"] for n in nodes(tmp_path / "nb.chat.jsonl")][::2]
    assert texts == ["explain branching", "keep {topic}"]


def test_config_sets_the_model_and_a_cell_option_overrides_it(ip, tmp_path):
    ip.run_line_magic("config", 'TreeChat.model = "teacher-2"')
    ip.run_cell_magic("chat", "", "one")
    ip.run_cell_magic("chat", "--model teacher-3", "two")
    metas = [n["meta"] for n in nodes(tmp_path / "nb.chat.jsonl")[1::2]]
    assert [m["asked_model"] for m in metas] == ["teacher-2", "teacher-3"]
    assert {m["model"] for m in metas} == {"offline-teacher"}  # no key: what answered
    ip.run_line_magic("chat", "model teacher-4")
    assert kernel_sessions.registry().config.model == "teacher-4"


def test_named_sessions_live_beside_the_notebook(ip, tmp_path, capsys):
    ip.run_cell_magic("chat", "--session side", "in a side session")
    ip.run_cell_magic("chat", "", "in the default one")
    assert len(nodes(tmp_path / "nb.side.chat.jsonl")) == 2
    assert len(nodes(tmp_path / "nb.chat.jsonl")) == 2
    ip.run_line_magic("chat", "use side")
    capsys.readouterr()
    ip.run_line_magic("chat", "sessions")
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].startswith("  default")
    assert listing[1].startswith("* side")


def test_without_a_notebook_path_the_file_is_named_and_announced(ip, tmp_path, capsys):
    del ip.user_ns["__session__"]
    ip.run_cell_magic("chat", "", "hi")
    out = capsys.readouterr().out
    expected = tmp_path / "jupyter-tree-chat.chat.jsonl"
    assert f"No notebook path reached this kernel; sessions are saved in {expected}" in out
    assert len(nodes(expected)) == 2


def test_edit_retry_switch_and_label_commands(ip, tmp_path, capsys):
    ip.run_cell_magic("chat", "", "first")
    ip.run_cell_magic("chat", "", "second")
    ip.run_line_magic("chat", "edit 2 second, edited")
    ip.run_line_magic("chat", "retry")
    tree = load_file(tmp_path / "nb.chat.jsonl").tree
    path = [n.text for n in tree.path_nodes(tree.leaf)]
    assert path[0] == "first" and path[2] == "second, edited"
    edited = tree.path_nodes(tree.leaf)[2]
    assert tree.sibling_position(edited.id).count == 2
    assert tree.sibling_position(tree.leaf).index == 2  # the retry's answer
    capsys.readouterr()

    old_question = next(n for n in tree if n.text == "second")
    ip.run_line_magic("chat", f"switch {old_question.id[:8]}")
    assert capsys.readouterr().out.startswith("On ")
    assert load_file(tmp_path / "nb.chat.jsonl").tree.leaf != tree.leaf
    ip.run_line_magic("chat", f"label {old_question.id[:8]} original")
    assert reply_text("original") == "second"


def test_hide_and_unhide_fold_a_branch_in_tree_and_branches_and_keep_it(ip, tmp_path, capsys):
    ip.run_cell_magic("chat", "", "first")
    ip.run_line_magic("chat", "edit 1 first, again")
    tree = load_file(tmp_path / "nb.chat.jsonl").tree
    old = next(n for n in tree if n.text == "first")
    capsys.readouterr()

    ip.run_line_magic("chat", f"hide {old.id[:8]}")
    assert capsys.readouterr().out == (
        f"Hid the branch from {old.id[:7]} (kept in the file): `%chat unhide {old.id[:7]}`.\n"
    )
    ip.run_line_magic("chat", "tree")
    out = capsys.readouterr().out
    assert old.id[:7] not in out
    assert out.splitlines()[-1] == "(1 hidden branch is not shown; `%chat tree --all` shows them)"
    ip.run_line_magic("chat", "tree --all")
    assert f"{old.id[:7]} user  first" in capsys.readouterr().out
    ip.run_line_magic("chat", "branches")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[-1].endswith("`%chat branches --all` lists them)")
    ip.run_line_magic("chat", "branches --all")
    assert len(capsys.readouterr().out.splitlines()) == 2  # both leaves

    ip.run_line_magic("chat", f"unhide {old.id[:8]}")
    ip.run_line_magic("chat", f"unhide {old.id[:8]}")
    assert capsys.readouterr().out.splitlines() == [
        f"The branch from {old.id[:7]} shows again.",
        f"{old.id[:7]} is not hidden.",
    ]
    loaded = load_file(tmp_path / "nb.chat.jsonl")
    assert loaded.hidden == set() and len(loaded.tree) == len(tree)  # nothing was deleted


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ("frobnicate", "`%chat help` lists the commands"),
        ("hide", "usage: %chat hide ID"),
        ("hide zzzz", "`%chat tree` shows the ids"),
        ("tree --svgg", "unknown option '--svgg'; usage: %chat tree [--svg] [--all]"),
        ("branches a b", "usage: %chat branches [ID] [--all]"),
        ("switch zzzz", "`%chat tree` shows the ids"),
        ("edit 9 new text", "give N from 1 to 1"),
        ("edit one new text", "give N from 1 to 1"),
        ("edit", "usage: %chat edit N [TEXT]"),
        (
            "edit 1",
            "keeps no typed text (it was asked as written, or before this version); "
            "give the new TEXT: %chat edit 1 TEXT",
        ),
        ("edit 1 --raw", "give the TEXT to send as written"),
        ("use ../evil", "path separator"),
        ("export pdf", "usage: %chat export md|html|ipynb [FILE]"),
        ("label", "usage: %chat label ID NAME"),
    ],
)
def test_command_mistakes_are_one_line_usage_errors(ip, line, fix):
    ip.run_cell_magic("chat", "", "a question")
    assert fix in one_line_usage_error(ip, line)


def test_the_current_path_cannot_be_hidden(ip, tmp_path):
    ip.run_cell_magic("chat", "", "a question")
    leaf = load_file(tmp_path / "nb.chat.jsonl").tree.leaf
    message = one_line_usage_error(ip, f"hide {leaf}")
    assert message == (
        f"%chat hide: {leaf[:7]} is on the current path, which cannot be hidden; "
        "switch to another branch first"
    )
    assert load_file(tmp_path / "nb.chat.jsonl").hidden == set()


def test_ids_resolve_by_unique_prefix_and_an_ambiguous_one_asks_for_more(ip, tmp_path, capsys):
    records = [
        {"id": "abc1", "parentId": None, "message": {"role": "user", "content": "q"}},
        {"id": "abc2", "parentId": "abc1", "message": {"role": "assistant", "content": "a1"}},
        {"id": "abd3", "parentId": "abc1", "message": {"role": "assistant", "content": "a2"}},
    ]
    (tmp_path / "nb.chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert "give more characters" in one_line_usage_error(ip, "switch ab")
    ip.run_line_magic("chat", "switch abc2")
    assert "On abc2" in capsys.readouterr().out
    assert ip.run_line_magic("chat", "text abd") == "a2"


@pytest.mark.parametrize(
    ("line", "cell", "fix"),
    [
        ("", "   \n  ", "write your question below the %%chat line"),
        ("--session ../x", "hi", "path separator"),
        ("--from nothere", "hi", "`%chat tree` shows the ids"),
        ("--tools nosuch", "hi", "no tool named 'nosuch'"),
    ],
)
def test_cell_mistakes_are_one_line_usage_errors(ip, tmp_path, line, cell, fix):
    assert fix in one_line_usage_error(ip, line, cell)
    assert not (tmp_path / "nb.chat.jsonl").exists()  # nothing was asked


def test_cell_help_lists_the_options(ip):
    doc = ip.find_cell_magic("chat").__doc__
    for option in (
        "--session",
        "--model",
        "--system",
        "--max-tokens",
        "--temperature",
        "--new",
        "--from",
        "--continue",
        "--tools",
        "--provider",
        "--raw",
    ):
        assert option in doc
    assert doc.lstrip(": \n").startswith("%%chat")


def test_settings_are_traitlets():
    config = TreeChat()
    config.max_tokens = "512"
    assert config.chat_settings().max_tokens == 512
    config.session = "default"
    assert config.session is None
    with pytest.raises(Exception, match="path separator"):
        config.session = "a/b"


def test_thinking_is_a_setting_a_cell_can_turn_off(ip, tmp_path):
    ip.run_line_magic("config", "TreeChat.thinking = 2048")
    ip.run_cell_magic("chat", "", "think first")
    ip.run_cell_magic("chat", "--thinking off", "no thinking now")
    replies = [n for n in nodes(tmp_path / "nb.chat.jsonl") if n["message"]["role"] == "assistant"]
    assert replies[0]["meta"]["thinking"] == 2048
    assert replies[0]["message"]["content"][0]["type"] == "thinking"
    assert "thinking" not in replies[1]["meta"]
    assert [b["type"] for b in replies[1]["message"]["content"]] == ["text"]
    with pytest.raises(UsageError, match="at least 1024 tokens"):
        ip.run_cell_magic("chat", "--thinking 100", "too little")


def test_prices_and_windows_from_config_reach_the_footer(ip, capsys):
    ip.run_line_magic(
        "config", "TreeChat.prices = {'offline-teacher': {'input': 1000, 'output': 1000}}"
    )
    ip.run_line_magic("config", "TreeChat.context_windows = {'offline-teacher': 1000}")
    ip.run_cell_magic("chat", "", "what does this cost?")
    footer_line = capsys.readouterr().out.strip().splitlines()[-1]
    usage = kernel_sessions.current_session().path()[-1].meta["usage"]
    cost = (usage["input_tokens"] + usage["output_tokens"]) * 1000 / 1_000_000
    assert f" · ${cost:.4f} · context " in footer_line and " of 1k" in footer_line
    config = TreeChat()
    with pytest.raises(Exception, match="must be a dict like"):
        config.prices = {"m": 3}
    with pytest.raises(Exception, match="needs at least 'input' and 'output'"):
        config.prices = {"m": {"input": 3}}


# -- output -------------------------------------------------------------------------------


def test_streamed_updates_are_throttled_with_a_final_update(monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(
        "jupyter_tree_chat.kernel.display.output.display",
        lambda *a, **k: type("H", (), {"display_id": "d1"})(),
    )
    monkeypatch.setattr(
        "jupyter_tree_chat.kernel.display.output.update_display",
        lambda bundle, **k: sent.append(bundle["text/plain"]),
    )
    now = [0.0]
    view = DisplayReply(throttle=0.1, clock=lambda: now[0])
    view.start()
    for i in range(1000):  # 1,000 deltas over 0.5 s
        now[0] = i * 0.0005
        view.delta("x")
    view.end()
    assert 5 <= len(sent) <= 8  # the first delta at once, then ~every 0.1 s, and a last one
    assert sent[0] == "x"
    assert sent[-1] == "x" * 1000


def test_footer_shows_id_model_tokens_cache_and_position():
    from fakes.scripted_provider import ScriptedProvider

    from jupyter_tree_chat.conversation.session import Session

    session = Session.in_memory(ScriptedProvider())
    turn = session.ask("hi")
    reply = turn.replies[0]
    reply.meta["usage"] = {
        "input_tokens": 12,
        "output_tokens": 3400,
        "cache_read_input_tokens": 2048,
    }
    line = footer(session, reply)
    assert line.startswith(reply.id[:7] + " · ")
    # an unknown model: no cost, and the context in tokens (12 + 2,048 in, 3,400 out)
    assert "12 in · 3,400 out · 2,048 cache read · context 5,460 tokens · reply 1/1" in line


def test_the_footer_prices_a_reply_and_suggests_compacting_past_80_percent():
    from fakes.scripted_provider import ScriptedProvider

    from jupyter_tree_chat.conversation.session import Session
    from jupyter_tree_chat.measures.models import Price

    session = Session.in_memory(ScriptedProvider())
    session.prices = {"scripted-1": Price(3, 15, 3.75, 0.30)}
    session.context_windows = {"scripted-1": 10_000}
    reply = session.ask("hi").replies[0]
    reply.meta["usage"] = {"input_tokens": 1_000, "output_tokens": 200}
    assert " · $0.0060 · context 12% of 10k · reply 1/1" in footer(session, reply)
    reply.meta["usage"] = {"input_tokens": 8_000, "output_tokens": 200}
    assert "context 82% of 10k: `%chat compact` makes room" in footer(session, reply)


def capture_display(monkeypatch) -> dict[str, list[dict[str, str]]]:
    """Each display output's bundles by display id, in the order the outputs appeared."""
    outputs: dict[str, list[dict[str, str]]] = {}

    def show(bundle, **kwargs):
        display_id = f"d{len(outputs) + 1}"
        outputs[display_id] = [bundle]
        return type("H", (), {"display_id": display_id})()

    monkeypatch.setattr("jupyter_tree_chat.kernel.display.output.display", show)
    monkeypatch.setattr(
        "jupyter_tree_chat.kernel.display.output.update_display",
        lambda bundle, display_id, **k: outputs[display_id].append(bundle),
    )
    return outputs


def test_thinking_streams_into_a_folded_section_above_the_answer(monkeypatch):
    outputs = capture_display(monkeypatch)
    view = DisplayReply(throttle=0)
    view.start()
    view.think("Two and *two*.")
    view.think(' <img src=x onerror="alert(1)">')
    assert list(outputs) == ["d1"]  # the output shown at the start holds the thinking
    assert outputs["d1"][-1]["text/html"].startswith(
        '<details class="jtc-thinking"><summary>Thinking…</summary>'
    )
    view.delta("Four")
    view.delta(".")
    thinking_updates = len(outputs["d1"])
    view.end(redacted=1)

    assert list(outputs) == ["d1", "d2"]  # the answer below, in an output of its own
    html = outputs["d1"][-1]["text/html"]
    assert html.startswith('<details class="jtc-thinking"><summary>Thinking (1 block')
    assert "encrypted by the API" in html and "<em>two</em>" in html
    assert "<img" not in html and "&lt;img" in html  # thinking is model output: escaped
    assert len(outputs["d1"]) == thinking_updates + 1  # unchanged while the answer streamed
    assert outputs["d2"][-1] == {"text/html": "<p>Four.</p>\n", "text/plain": "Four."}


def test_thinking_cut_short_says_so_and_no_thinking_shows_no_section(monkeypatch):
    outputs = capture_display(monkeypatch)
    cut = DisplayReply(throttle=0)
    cut.start()
    cut.think("I was about to")
    cut.end(interrupted=True)
    html = outputs["d1"][-1]["text/html"]
    assert "<summary>Thinking (cut short)</summary>" in html and "cut short: what arrived" in html
    plain = DisplayReply(throttle=0)
    plain.start()
    plain.delta("Hi")
    plain.end()
    assert "details" not in outputs["d2"][-1]["text/html"]


def test_tree_and_export_show_what_the_user_built(ip, tmp_path, capsys):
    ip.run_cell_magic("chat", "", "first question")
    ip.run_line_magic("chat", "retry")
    capsys.readouterr()

    ip.run_line_magic("chat", "tree")
    drawn = capsys.readouterr().out
    assert "first question" in drawn and "[2 replies]" in drawn and "← current" in drawn

    target = tmp_path / "path.md"
    ip.run_line_magic("chat", f"export md {target}")
    exported = target.read_text()
    assert "first question" in exported and "Offline teaching model" in exported
    assert "Wrote the current path (2 messages)" in capsys.readouterr().out


def test_export_never_overwrites_a_session_file(ip, tmp_path):
    ip.run_cell_magic("chat", "", "keep me")
    session_file = tmp_path / "nb.chat.jsonl"
    before = session_file.read_bytes()
    message = one_line_usage_error(ip, f"export md {session_file}")
    assert "never overwritten" in message
    assert session_file.read_bytes() == before


def test_the_panel_from_python_is_over_the_magics_own_session(ip, tmp_path):
    from jupyter_tree_chat import panel
    from jupyter_tree_chat.widget import TreePanel

    ip.run_cell_magic("chat", "", "hello panel")
    view = panel()
    assert isinstance(view, TreePanel)
    assert view.session is kernel_sessions.current_session()
    ip.run_cell_magic("chat", "", "and again")
    assert view.session.leaf == kernel_sessions.current_session().leaf
    view.close()


def test_budget_takes_tokens_window_or_off_and_no_abbreviation_reaches_it():
    assert parse_cell_line("--budget 8000").budget == 8000
    assert parse_cell_line("--budget 8,000").budget == 8000
    assert parse_cell_line("--budget window").budget == "window"
    assert parse_cell_line("--budget off").budget == "off"
    assert parse_cell_line("").budget is None  # TreeChat.context_budget decides
    for bad in ("--budget 0", "--budget lots", "--budget -5"):
        with pytest.raises(UsageError, match="give the tokens a request may hold"):
            parse_cell_line(bad)
    with pytest.raises(UsageError, match="unrecognized arguments: --bud"):
        parse_cell_line("--bud 100")
