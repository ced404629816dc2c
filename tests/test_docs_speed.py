"""docs/speed.md keeps every benchmark figure with its date, run count and load, and every
benchmark script turns its cases' order through ``benchmarks/alternating.py``.

A figure without the day, the number of runs and the machine's load it was taken at
cannot be weighed (on the shared 2-core machine a load of 2 or 14 changes a wall time
severalfold), and a case always timed right after another pays for what that one left
behind. So each ``## benchmarks/bench_NAME.py`` section of the page must name all three
(and none may say "not recorded"), there is one section a script and a script a
section, and each script imports ``alternate`` from the one helper.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO

PAGE = REPO / "docs" / "speed.md"
SCRIPTS = sorted((REPO / "benchmarks").glob("bench_*.py"))
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DATE = re.compile(rf"\b\d{{1,2}}\s+(?:{MONTHS})\s+\d{{4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b")
RUNS = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:\w+\s+)?runs?\b"
    r"|\bbest\s+of\s+\d+|\bmedians?\s+of\s+\d+",
    re.IGNORECASE,
)
LOAD = re.compile(r"\bload(?:\s+average)?(?:\s+of|\s+at)?\s+\d+(?:\.\d+)?", re.IGNORECASE)
USES = re.compile(r"^from alternating import [^\n]*\balternate\b", re.MULTILINE)
#: scripts written on other branches this round (gridspeed's for issue 39, batch's and
#: batchwire's for issue 41), which turn their order by hand; each leaves this set once it
#: imports the helper (the test below says so)
CONVERTED_ELSEWHERE = {
    "bench_experiment.py",
    "bench_experiment_grid.py",
    "bench_batch.py",
    "bench_openai_batch.py",
}


def sections() -> dict[str, str]:
    """Each ``## benchmarks/bench_NAME.py`` heading's script name → its section's text."""
    parts = re.split(r"^## ", PAGE.read_text(), flags=re.MULTILINE)
    found = {}
    for part in parts[1:]:
        heading, _, body = part.partition("\n")
        match = re.fullmatch(r"benchmarks/(bench_\w+\.py)", heading.strip())
        assert match, f"docs/speed.md: a section that names no script: ## {heading}"
        assert match.group(1) not in found, f"two sections for {match.group(1)}"
        found[match.group(1)] = body
    return found


def test_one_section_a_script_and_a_script_a_section() -> None:
    assert sorted(sections()) == [script.name for script in SCRIPTS]


def test_every_section_names_its_date_runs_and_load() -> None:
    missing = []
    for name, body in sections().items():
        for what, pattern in (("date", DATE), ("run count", RUNS), ("load", LOAD)):
            if not pattern.search(body):
                missing.append(f"{name}: names no {what}")
        if "not recorded" in body:
            missing.append(f"{name}: says 'not recorded'")
    assert not missing, "\n".join(missing)


def test_every_script_alternates_through_the_helper() -> None:
    plain = [s.name for s in SCRIPTS if s.name not in CONVERTED_ELSEWHERE]
    assert [
        name for name in plain if not USES.search((REPO / "benchmarks" / name).read_text())
    ] == []


def test_the_scripts_converted_elsewhere_still_turn_their_order() -> None:
    """Until their branches convert them: each turns its cases' order by hand (a reversed
    order every other run); once one imports the helper it must leave the set."""
    for name in [s.name for s in SCRIPTS if s.name in CONVERTED_ELSEWHERE]:
        text = (REPO / "benchmarks" / name).read_text()
        assert not USES.search(text), f"{name} uses alternating.py now: drop it from the set"
        assert re.search(r"% 2|reversed\(|\[::-1\]|\.reverse\(\)", text), name


def test_the_helper_turns_the_order_each_run() -> None:
    import sys

    sys.path.insert(0, str(Path(REPO / "benchmarks")))
    from alternating import alternate

    seen: list[str] = []
    cases = {name: (lambda name=name: seen.append(name) or name) for name in "abc"}
    times = alternate(cases, 6)
    assert [seen[i : i + 3] for i in range(0, 18, 3)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"],
        ["c", "b", "a"], ["a", "c", "b"], ["b", "a", "c"],
    ]  # fmt: skip
    assert times == {name: [name] * 6 for name in "abc"}
