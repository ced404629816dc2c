"""The command line follows the locale: ``LANG=zh_CN.UTF-8 jupyter tree-chat check FILE``.

The installed console script runs in a child process with each locale, on the same
files; what it prints in Chinese holds the translation of every kernel-catalog message
it prints in English (tests/helpers/kernel_words.py), and no English sentence of the catalog.
The identifiers stay as they are: file names, ids, command and option names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.kernel_words import HAN, english_left, translation_missing
from helpers.kernel_words import shown as shown_messages

JUPYTER = Path(sys.executable).parent / "jupyter"
LOCALES = {
    "en": {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"},
    "zh": {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"},
    "zh by LC_ALL": {"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "", "LANG": "en_US.UTF-8"},
}


def run(command: list[str], locale: str) -> tuple[int, str]:
    env = {**os.environ, **LOCALES[locale]}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A session file with problems: a line that is not JSON, a node whose parent is gone."""
    lines = [
        json.dumps({"id": "a1", "parentId": None, "message": {"role": "user", "content": "hi"}}),
        "{not json",
        json.dumps({"id": "b2", "parentId": "zz", "message": {"role": "user", "content": "x"}}),
    ]
    path = tmp_path / "broken.chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: each command with what it is given, and the status it ends with
COMMANDS = {
    "check": (["tree-chat", "check", "{broken}"], 1),  # the file's problems, by line
    "missing file": (["tree-chat", "show", "{folder}/missing.chat.jsonl"], 2),
    "output is a folder": (
        ["tree-chat", "export", "{broken}", "--format", "md", "-o", "{folder}"],
        2,
    ),
    "no match": (["tree-chat", "find", "{broken}", "zzzq"], 1),
    "help": (["tree-chat", "--help"], 0),
}


@pytest.mark.parametrize("chinese", ["zh", "zh by LC_ALL"])
@pytest.mark.parametrize("name", COMMANDS)
def test_the_command_line_speaks_the_locales_language(
    broken: Path, chinese: str, name: str
) -> None:
    words, status = COMMANDS[name]
    command = [str(JUPYTER)] + [w.format(broken=broken, folder=broken.parent) for w in words]
    en_status, english = run(command, "en")
    zh_status, shown = run(command, chinese)
    assert zh_status == en_status == status, (english, shown)
    assert "Traceback" not in shown
    assert shown_messages(english), english  # it printed the catalog's messages
    assert translation_missing(english, shown) == [], shown
    assert english_left(shown) == [], shown
    assert HAN.search(shown), shown
