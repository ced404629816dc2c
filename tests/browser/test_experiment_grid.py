"""An experiment (``%%chat --over``) in the file viewer of a real JupyterLab and on an
exported page: its rows × versions as a grid (components/experiment.ts), hostile row
values and answers shown as text, the filter box, a cell opening its branch, and a grid
of 1,000 rows drawing only the lines in view (components/rowwindow.ts)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lab_notebooks import open_and_run_all, records, write_notebook
from playwright.sync_api import expect
from test_share_page_e2e import export

pytestmark = pytest.mark.browser

VIEW = ".jtc-document:not(.lm-mod-hidden) .jtc-viewer .jtc-view"
HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"
CITIES = ["Paris", "Oslo", HOSTILE]


def experiment_file(cities: list[str] = CITIES) -> str:
    """A row per city (three by default) × two versions under one question, one answer
    each (the second version's third row has none: it failed)."""
    lines = [
        {"type": "session", "version": 1, "created": 0},
        {"id": "hello", "parentId": None, "message": {"role": "user", "content": "Hello"}},
        {"id": "hi", "parentId": "hello", "message": {"role": "assistant", "content": "Hi."}},
    ]
    for version, template in ((1, "Describe {city}."), (2, "Describe {city} briefly.")):
        for index, city in enumerate(cities):
            question = f"q{version}{index}"
            about = {
                "id": "exp1",
                "version": version,
                "template": template,
                "row": {"city": city},
                "index": index,
            }
            text = template.replace("{city}", city)
            lines.append(
                {
                    "id": question,
                    "parentId": "hi",
                    "message": {"role": "user", "content": text},
                    "meta": {"experiment": about},
                }
            )
            if (version, index) == (2, 2):
                continue
            answer = f"{city} <b>v{version}</b> answer\nsecond line"
            lines.append(
                {
                    "id": f"a{version}{index}",
                    "parentId": question,
                    "message": {"role": "assistant", "content": answer},
                    "meta": {"model": "claude-sonnet-4-6", "usage": {"output_tokens": 7}},
                }
            )
    lines.append({"type": "leaf", "id": "a10"})
    return "".join(json.dumps(line) + "\n" for line in lines)


def exported_page(folder: Path, session: str) -> Path:
    """``session`` (a file's text) exported as a page by the command line."""
    source = folder / "exp.chat.jsonl"
    source.write_text(session)
    return export(source, folder / "exp.html")


def test_the_viewer_shows_an_experiment_as_a_grid(lab, page, page_log):
    (lab.root / "exp.chat.jsonl").write_text(experiment_file())
    page.goto(f"{lab.url}/lab/tree/exp.chat.jsonl?reset")
    view = page.locator(VIEW)
    expect(view).to_be_visible(timeout=60_000)

    # the file's leaf answers an experiment row: the grid is shown above the conversation
    grid = view.locator(".jtc-experiment-grid-view")
    expect(grid).to_be_visible()
    expect(grid.locator("thead th")).to_have_text(["#", "inputs", "version 1", "version 2"])
    rows = grid.locator("tbody tr.jtc-grid-row")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator(".jtc-chip")).to_have_text("city: Paris")
    expect(rows.nth(0).locator(".jtc-grid-answer")).to_have_text(
        ["Paris <b>v1</b> answer", "Paris <b>v2</b> answer"]
    )  # the first line, as text: the markup is not rendered
    expect(rows.nth(2).locator(".jtc-chip")).to_have_text(f"city: {HOSTILE}")
    expect(rows.nth(2).locator(".jtc-grid-empty")).to_have_text("no answer")
    assert grid.locator("img, b").count() == 0
    assert page.title() != "pwned"
    expect(grid.locator(".jtc-grid-numbers").first).to_contain_text("claude-sonnet-4-6")
    expect(grid.locator(".jtc-grid-numbers").first).to_contain_text("7 out")

    # the filter hides the rows that do not contain what is typed
    grid.locator(".jtc-grid-filter").fill("oslo")
    expect(rows).to_have_count(1)
    expect(rows.nth(0).locator(".jtc-chip")).to_have_text("city: Oslo")
    expect(grid.locator(".jtc-grid-count")).to_have_text("1 of 3 rows")
    grid.locator(".jtc-grid-filter").fill("")
    expect(grid.locator(".jtc-grid-count")).to_have_text("3 of 3 rows")

    # a cell opens its branch: the conversation shows the path to that answer
    rows.nth(1).locator(".jtc-grid-answer").nth(1).click()
    messages = view.locator(".jtc-conversation .jtc-msg")
    expect(messages).to_have_count(4)
    assert messages.evaluate_all("ms => ms.map(m => m.dataset.id)") == [
        "hello",
        "hi",
        "q21",
        "a21",
    ]
    expect(view.locator(".jtc-experiment-grid-view")).to_be_visible()  # still its grid

    # a row's versions side by side: the compare view over that one line of the grid
    expect(rows.nth(2).locator(".jtc-grid-compare")).to_have_count(0)  # one answer only
    rows.nth(1).locator(".jtc-grid-compare").click()
    compare = view.locator(".jtc-compare")
    columns = compare.locator(".jtc-compare-column")
    expect(columns).to_have_count(2)
    # by version (neither is on the file's current branch), each rendered, with its numbers
    assert columns.evaluate_all("cs => cs.map(c => c.dataset.id)") == ["a11", "a21"]
    expect(compare.locator(".jtc-section-title")).to_have_text("2 answers side by side")
    expect(columns.nth(0).locator(".jtc-compare-text")).to_contain_text(re.compile("Oslo.*v1"))
    expect(columns.nth(1).locator(".jtc-compare-text")).to_contain_text(re.compile("Oslo.*v2"))
    expect(columns.nth(1).locator(".jtc-model")).to_have_text("claude-sonnet-4-6")
    assert compare.locator("img, script").count() == 0  # through the sanitizer
    compare.get_by_role("button", name="Differences").click()
    expect(columns.nth(0).locator("mark.jtc-diff").first).to_be_visible()
    compare.get_by_role("button", name="Close").click()  # back to the grid
    expect(view.locator(".jtc-experiment-grid-view")).to_be_visible()
    expect(view.locator(".jtc-compare")).to_have_count(0)
    assert page_log.page_errors == []


def test_the_exported_page_shows_the_experiment_grid_offline(page, page_log, tmp_path):
    target = exported_page(tmp_path, experiment_file())
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    page.goto(target.as_uri())

    grid = page.locator("#jtc-page .jtc-view .jtc-experiment-grid-view")
    expect(grid).to_be_visible()
    rows = grid.locator("tbody tr.jtc-grid-row")
    expect(rows).to_have_count(3)
    expect(rows.nth(2).locator(".jtc-chip")).to_have_text(f"city: {HOSTILE}")
    assert grid.locator("img, b").count() == 0
    rows.nth(0).locator(".jtc-grid-answer").nth(1).click()
    messages = page.locator("#jtc-page .jtc-conversation .jtc-msg")
    expect(messages).to_have_count(4)
    assert messages.evaluate_all("ms => ms.map(m => m.dataset.id)")[-1] == "a20"
    assert requests == [target.as_uri()]  # the page loads nothing else
    assert page_log.page_errors == []


def test_a_grid_of_a_thousand_rows_draws_the_lines_in_view(page, page_log, tmp_path):
    """1,000 rows × 2 versions on an exported page: only the lines in view are drawn
    (components/rowwindow.ts, what keeps a keystroke in the filter fast), and scrolling,
    the filter, a cell and Side by side reach every row, a hostile one far down too."""
    cities = [f"City {n}" for n in range(1000)]
    cities[900] = HOSTILE
    target = exported_page(tmp_path, experiment_file(cities))
    page.goto(target.as_uri())
    view = page.locator("#jtc-page .jtc-view")
    grid = view.locator(".jtc-experiment-grid-view")
    rows = grid.locator("tbody tr.jtc-grid-row")
    expect(grid.locator(".jtc-grid-count")).to_have_text("1000 of 1000 rows")
    expect(rows.first.locator(".jtc-chip")).to_have_text("city: City 0")
    assert 5 < rows.count() < 100  # the lines in view and around them, not 1,000

    # scrolled to its end, the grid shows the last rows
    grid.evaluate("g => { g.scrollTop = g.scrollHeight; }")
    last = grid.locator("tr.jtc-grid-row[data-row='999']")
    expect(last).to_be_in_viewport()
    expect(last.locator(".jtc-chip")).to_have_text("city: City 999")
    assert rows.count() < 100

    # the filter finds a row far down, whose hostile value is text
    grid.locator(".jtc-grid-filter").fill("onerror")
    expect(grid.locator(".jtc-grid-count")).to_have_text("1 of 1000 rows")
    expect(rows).to_have_count(1)
    expect(rows.nth(0).locator(".jtc-chip")).to_have_text(f"city: {HOSTILE}")
    assert grid.locator("img, b").count() == 0
    assert page.title() != "pwned"

    # back to every row, in the middle: a cell opens its branch, Side by side its versions
    grid.locator(".jtc-grid-filter").fill("")
    expect(grid.locator(".jtc-grid-count")).to_have_text("1000 of 1000 rows")
    grid.evaluate("g => { g.scrollTop = g.scrollHeight / 2; }")
    middle = grid.locator("tr.jtc-grid-row[data-row='500']")
    expect(middle).to_be_visible()
    middle.locator(".jtc-grid-answer").nth(1).click()
    messages = view.locator(".jtc-conversation .jtc-msg")
    expect(messages).to_have_count(4)
    assert messages.evaluate_all("ms => ms.map(m => m.dataset.id)")[-1] == "a2500"
    grid.locator("tr.jtc-grid-row[data-row='500'] .jtc-grid-compare").click()
    columns = view.locator(".jtc-compare .jtc-compare-column")
    assert columns.evaluate_all("cs => cs.map(c => c.dataset.id)") == ["a1500", "a2500"]
    assert page_log.page_errors == []


def test_the_cell_shows_its_grid_and_the_panel_opens_a_rows_branch(lab, page, page_log):
    """Offline: a ``--over`` cell ends with its grid; in the panel, the row's question has
    Grid, whose cells switch the session to that row's answer."""
    write_notebook(
        lab.root / "experiment.ipynb",
        [
            "%load_ext jupyter_tree_chat\n"
            f"rows = [{{'city': c}} for c in ['Paris', 'Oslo', {HOSTILE!r}]]",
            "%%chat --over rows\nDescribe {city}.",
            "%chat panel",
        ],
    )
    cells = open_and_run_all(page, lab, "experiment.ipynb").locator(".jp-Cell")
    # the cell ends with its grid as a widget (the static grid is its fallback)
    in_cell = cells.nth(1).locator(".jtc-grid-control tbody tr.jtc-grid-row")
    expect(in_cell).to_have_count(3, timeout=60_000)
    expect(in_cell.nth(2).locator(".jtc-chip")).to_have_text(f"city: {HOSTILE}")  # as text
    assert cells.nth(1).locator("table img").count() == 0
    assert cells.nth(1).locator("table.jtc-experiment-grid").count() == 1  # not twice

    panel = cells.nth(2).locator(".jtc-panel")
    question = panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")
    expect(question).to_contain_text("Describe Paris.")
    question.get_by_role("button", name="Grid").click()
    grid = panel.locator(".jtc-experiment-grid-view")
    rows = grid.locator("tbody tr.jtc-grid-row")
    expect(rows).to_have_count(3)
    expect(grid.locator("thead th")).to_have_text(["#", "inputs", "version 1"])
    chosen = rows.nth(1).locator(".jtc-grid-answer").get_attribute("data-id")
    rows.nth(1).locator(".jtc-grid-answer").click()
    expect(panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")).to_contain_text(
        "Describe Oslo."
    )
    leaf = [r for r in records(lab.root / "experiment.chat.jsonl") if r.get("type") == "leaf"]
    assert leaf[-1]["id"] == chosen

    # the cell's own grid: a click switches the session to that row and opens its answer
    third = in_cell.nth(2).locator(".jtc-grid-answer")
    picked = third.get_attribute("data-id")
    third.click()
    opened = cells.nth(1).locator(".jtc-grid-control .jtc-turn-body")
    expect(opened).to_contain_text("I was sent **1 message**".replace("**", ""))
    assert opened.locator("img").count() == 0
    expect(panel.locator(".jtc-conversation .jtc-msg.jtc-role-user")).to_contain_text(
        "onerror"
    )  # the panel follows: that row's branch is current
    leaf = [r for r in records(lab.root / "experiment.chat.jsonl") if r.get("type") == "leaf"]
    assert leaf[-1]["id"] == picked
    assert page_log.page_errors == []
