"""The README and docs/ hold together: every relative link resolves, every page of docs/ is
named in its index (docs/README.md), the README stays a page read in two minutes, and the
commands it gives name scripts that exist.

A reader who follows a link to a page that was moved, or who cannot find a page because
the index forgot it, is the failure these tests catch.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
INDEX = DOCS / "README.md"
README_MOST_LINES = 250
#: the pictures live in the repository: a few hundred KB at most in all
IMAGES_MOST_BYTES = 400_000

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def links(path: Path) -> list[str]:
    """The link targets of a Markdown file, code blocks and code spans left out."""
    text = CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return LINK.findall(text)


def is_relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) and not target.startswith("#")


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if not is_relative(target):
            continue
        path = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if path and not (page.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)} links to what does not exist: {broken}"


def test_the_link_finder_sees_links_and_skips_code(tmp_path: Path) -> None:
    sample = tmp_path / "sample.md"
    text = (
        "See [the format](format.md#lines) and ![a picture](images/x.png).\n"
        "`[not a link](nowhere.md)`\n```\n[nor this](nowhere.md)\n```\n"
        "[`code` in a label](cli.md) and [web](https://example.org).\n"
    )
    sample.write_text(text, encoding="utf-8")
    assert links(sample) == ["format.md#lines", "images/x.png", "cli.md", "https://example.org"]


def test_every_page_of_docs_is_named_in_the_index() -> None:
    named = {
        (INDEX.parent / unquote(t.split("#", 1)[0])).resolve()
        for t in links(INDEX)
        if is_relative(t)
    }
    pages = [p for p in DOCS.rglob("*.md") if p != INDEX]
    missing = sorted(str(p.relative_to(DOCS)) for p in pages if p.resolve() not in named)
    assert pages, "docs/ has no pages"
    assert missing == [], f"docs/README.md does not name: {missing}"


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MOST_LINES}: move detail to docs/"
    )


def test_the_readme_shows_a_picture_made_by_the_screenshot_script() -> None:
    pictures = [t for t in links(README) if t.startswith("docs/images/")]
    assert pictures, "the README shows no picture from docs/images/"
    assert (REPO / "scripts" / "screenshots.sh").exists()
    made = sorted(p.name for p in (DOCS / "images").glob("*.png"))
    assert [Path(t).name for t in pictures if Path(t).name not in made] == []
    total = sum(p.stat().st_size for p in (DOCS / "images").iterdir())
    assert total <= IMAGES_MOST_BYTES, f"docs/images/ weighs {total} bytes"


def test_the_readme_commands_name_scripts_that_exist() -> None:
    """``bash scripts/demo.sh`` and ``bash .ci/run`` (the test command CI runs)."""
    text = README.read_text(encoding="utf-8")
    scripts = re.findall(r"^bash (\S+)", text, re.M)
    assert "scripts/demo.sh" in scripts and ".ci/run" in scripts
    assert [s for s in scripts if not (REPO / s).is_file()] == []


def test_the_screenshot_script_finds_the_browser_suites_helpers() -> None:
    """scripts/screenshots.py starts JupyterLab and Chromium with the browser suite's own
    helpers; if they move, the pictures can no longer be remade, and this says so."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "screenshots", REPO / "scripts" / "screenshots.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved_path
    assert callable(module.running_lab) and callable(module.take_pictures)
    assert module.IMAGES == DOCS / "images"
