"""kernel/display/columns.py: answers side by side in a cell output.

What a person sees: how many columns a row holds, each answer's header and footer, the
Markdown rendered through the safe HTML, and in ``%chat compare`` the differences inside
a closed ``<details>`` (switched off until opened), with model text escaped everywhere.
"""

from __future__ import annotations

from jupyter_tree_chat.conversation.many.variants import Answer, Fanout
from jupyter_tree_chat.conversation.settings import ChatSettings
from jupyter_tree_chat.history.tree import Node, SessionTree
from jupyter_tree_chat.kernel.display.columns import FanoutColumns, compare_html, facts, per_row
from jupyter_tree_chat.measures.compare import sibling_answers


def answer(node_id: str, text: str, **meta: object) -> Node:
    full = {
        "model": "m",
        "usage": {"input_tokens": 1200, "output_tokens": 34, "cache_read_input_tokens": 1024},
        "duration_ms": 2345,
        **meta,
    }
    return Node(node_id, "q1", {"role": "assistant", "content": text}, full)


def test_up_to_three_columns_a_row_then_even_rows():
    assert [per_row(n) for n in range(1, 13)] == [1, 2, 3, 2, 3, 3, 3, 3, 3, 3, 3, 3]


def test_a_footer_says_model_temperature_tokens_cache_reads_and_seconds():
    node = answer("a1", "Hi", temperature=0.5)
    assert facts([node]) == "m · temperature 0.5 · 1,200 in · 34 out · 1,024 cache read · 2.3 s"
    assert facts([], "Rate limited (429)") == "failed: Rate limited (429)"
    cut = answer("a2", "H", interrupted=True, error="interrupted by the user")
    assert facts([cut]).endswith("· interrupted (interrupted by the user)")


def test_a_terminal_gets_every_answer_in_turn_once_they_end(capsys):
    variants = Fanout(temperatures=(0.0, 1.0)).variants(ChatSettings(), "m")
    columns = FanoutColumns(variants, live=False)
    columns.start()
    columns.started(1)
    columns.delta(1, "second ")
    columns.started(0)
    columns.delta(0, "first")
    nodes = [answer("a1", "first", temperature=0.0), answer("a2", "second", temperature=1.0)]
    columns.ended(0, nodes[0], None)
    columns.ended(1, None, "Overloaded")
    columns.finish([Answer(variants[0], [nodes[0]]), Answer(variants[1])], ["1/2", None])

    shown = capsys.readouterr().out
    assert shown.index("── 1/2 · m · temperature 0 ──\nfirst\n(m · temperature 0 · ") == 0
    assert "── 2/2 · m · temperature 1 ──\nsecond \n(failed: Overloaded)" in shown


def test_compare_renders_escaped_markdown_and_keeps_the_differences_closed():
    tree = SessionTree()
    tree.add(Node("q1", None, {"role": "user", "content": "Say <b>hi</b>"}))
    tree.add(answer("a1", "**Hi** there <img src=x onerror=alert(1)>"))
    tree.add(answer("a2", "**Hi** friend"))
    answers = sibling_answers(tree, "q1")

    html = compare_html(tree.get("q1"), answers)["text/html"]

    assert "<img" not in html and "<b>" not in html
    assert "“Say &lt;b&gt;hi&lt;/b&gt;”" in html
    plain, differences = html.split('<details class="jtc-differences">')
    assert plain.count("<strong>Hi</strong>") == 2 and "<mark>" not in plain
    assert "<details open" not in html
    assert "<mark>there</mark> <mark>&lt;img</mark>" in differences
    assert "<mark>friend</mark>" in differences and "<strong><mark>Hi" not in differences
    assert "<script" not in html and "<style" not in html  # no script, no stylesheet
