"""Grades in a real JupyterLab: stars in the panel's experiment grid by click and by key,
the grid sorted by a grade, 👍/👎 in the conversation, a pick in the side-by-side view,
each one record appended to the session file; the viewer and the exported page show
the grades read-only (components/grading.ts)."""

from __future__ import annotations

import json

import pytest
from lab_notebooks import open_and_run_all, records, write_notebook
from playwright.sync_api import expect
from test_share_page_e2e import export

pytestmark = pytest.mark.browser

VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"


def grades_of(path) -> list[dict]:
    return [r for r in records(path) if r.get("type") in ("grade", "preference")]


def test_stars_by_click_and_key_thumbs_and_the_grid_sorted(lab, page, page_log):
    write_notebook(
        lab.root / "graded.ipynb",
        [
            "%load_ext jupyter_tree_chat\nrows = [{'city': c} for c in ['Paris', 'Oslo', 'Lima']]",
            "%%chat --over rows\nDescribe {city}.",
            "%chat panel",
        ],
    )
    session = lab.root / "graded.chat.jsonl"
    cells = open_and_run_all(page, lab, "graded.ipynb").locator(".jp-Cell")
    panel = cells.nth(2).locator(".jtc-panel")
    question = panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")
    expect(question).to_contain_text("Describe Paris.", timeout=60_000)
    question.get_by_role("button", name="Grid").click()
    grid = panel.locator(".jtc-experiment-grid-view")
    rows = grid.locator("tbody tr.jtc-grid-row")
    expect(rows).to_have_count(3)
    ids = [rows.nth(k).locator(".jtc-grid-answer").get_attribute("data-id") for k in range(3)]

    # a click on the fourth star of Oslo's answer
    rows.nth(1).get_by_role("button", name="Grade 4 of 5").click()
    expect(rows.nth(1).locator(".jtc-star-on")).to_have_count(4)
    assert [(g["id"], g["score"], g["by"]) for g in grades_of(session)] == [(ids[1], 4, "hand")]

    # the key 2 on Lima's answer, focused
    rows.nth(2).locator(".jtc-grid-answer").focus()
    page.keyboard.press("2")
    expect(rows.nth(2).locator(".jtc-star-on")).to_have_count(2)
    assert [(g["id"], g["score"]) for g in grades_of(session)][-1] == (ids[2], 2)

    # sorted by the grade: Oslo (4), Lima (2), then Paris (none)
    grid.locator(".jtc-grid-sort").select_option("grade")
    sorted_rows = panel.locator(".jtc-experiment-grid-view tbody tr.jtc-grid-row")
    expect(sorted_rows.locator(".jtc-chip")).to_have_text(
        ["city: Oslo", "city: Lima", "city: Paris"]
    )
    # regrading appends; the view shows the latest
    sorted_rows.nth(0).get_by_role("button", name="Grade 1 of 5").click()
    expect(sorted_rows.locator(".jtc-chip")).to_have_text(
        ["city: Lima", "city: Oslo", "city: Paris"]
    )
    assert [(g["id"], g["score"]) for g in grades_of(session)] == [
        (ids[1], 4),
        (ids[2], 2),
        (ids[1], 1),
    ]

    # 👍 on the answer in the conversation
    answer = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant").last
    answer.get_by_role("button", name="Good answer").click()
    expect(answer.get_by_role("button", name="Good answer")).to_have_attribute(
        "aria-pressed", "true"
    )
    thumb = grades_of(session)[-1]
    assert thumb["score"] == 1 and thumb["scale"] == [0, 1]
    assert page_log.page_errors == []


def test_a_pick_in_the_side_by_side_view_is_a_preference(lab, page, page_log):
    write_notebook(
        lab.root / "pick.ipynb",
        ["%load_ext jupyter_tree_chat", "%%chat --n 2\nName a colour.", "%chat panel"],
    )
    session = lab.root / "pick.chat.jsonl"
    cells = open_and_run_all(page, lab, "pick.ipynb").locator(".jp-Cell")
    panel = cells.nth(2).locator(".jtc-panel")
    answer = panel.locator(".jtc-conversation .jtc-msg.jtc-role-assistant")
    expect(answer).to_have_count(1, timeout=60_000)
    answer.get_by_role("button", name="Compare 2").click()
    columns = panel.locator(".jtc-compare .jtc-compare-column")
    expect(columns).to_have_count(2)
    shown, other = (columns.nth(k).get_attribute("data-id") for k in range(2))
    columns.nth(1).get_by_role("button", name="Better").click()
    expect(columns.nth(1).locator(".jtc-grade-wins")).to_have_text("won 1 of 1")
    assert [(p["better"], p["worse"]) for p in grades_of(session)] == [(other, shown)]
    columns.nth(1).get_by_role("button", name="Tie").click()
    expect(columns.nth(0).locator(".jtc-grade-wins")).to_have_text("won 0.5 of 1")
    assert grades_of(session)[-1].get("tie") is True
    assert page_log.page_errors == []


def graded_file() -> str:
    """Two rows of one experiment, graded by hand (Oslo regraded), by code and a thumb."""
    lines: list[dict] = [{"type": "session", "version": 1, "created": 0}]
    for index, city in enumerate(["Paris", "Oslo"]):
        about = {
            "id": "exp1",
            "version": 1,
            "template": "Describe {city}.",
            "row": {"city": city},
            "index": index,
        }
        lines.append(
            {
                "id": f"q{index}",
                "parentId": None,
                "message": {"role": "user", "content": f"Describe {city}."},
                "meta": {"experiment": about},
            }
        )
        lines.append(
            {
                "id": f"a{index}",
                "parentId": f"q{index}",
                "message": {"role": "assistant", "content": f"{city} is nice."},
            }
        )
    lines += [
        {"type": "grade", "id": "a1", "grader": "grade", "by": "hand", "score": 5},
        {"type": "grade", "id": "a1", "grader": "grade", "score": 3, "note": "<b>meh</b>"},
        {"type": "grade", "id": "a0", "grader": "grade", "by": "hand", "score": 4},
        {"type": "grade", "id": "a0", "grader": "short", "by": "code", "score": True},
        {"type": "leaf", "id": "a0"},
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_the_viewer_and_the_exported_page_show_grades_read_only(lab, page, page_log, tmp_path):
    (lab.root / "graded.chat.jsonl").write_text(graded_file())
    page.goto(f"{lab.url}/lab/tree/graded.chat.jsonl?reset")
    view = page.locator(VIEW)
    grid = view.locator(".jtc-experiment-grid-view")
    expect(grid).to_be_visible(timeout=60_000)
    rows = grid.locator("tbody tr.jtc-grid-row")
    expect(rows.locator(".jtc-grade-hand")).to_have_text(["★★★★☆", "★★★☆☆"])  # the latest
    expect(rows.nth(1).locator(".jtc-grade-note")).to_have_text("<b>meh</b>")  # as text
    expect(rows.nth(0).locator(".jtc-grade-other")).to_have_text("short: ✓")
    assert grid.locator(".jtc-star, b").count() == 0  # read-only, nothing rendered
    grid.locator(".jtc-grid-sort").select_option("grade")
    expect(view.locator(".jtc-experiment-grid-view tbody .jtc-chip")).to_have_text(
        ["city: Paris", "city: Oslo"]
    )
    assert page_log.page_errors == []

    source = tmp_path / "graded.chat.jsonl"
    source.write_text(graded_file())
    page.goto(export(source, tmp_path / "graded.html").as_uri())
    exported = page.locator("#jtc-page .jtc-view .jtc-experiment-grid-view")
    expect(exported.locator(".jtc-grade-hand")).to_have_text(["★★★★☆", "★★★☆☆"])
    assert exported.locator(".jtc-star").count() == 0
    assert page_log.page_errors == []
