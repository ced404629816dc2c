"""Disk trouble: the user is told plainly, the conversation goes on, the file is not hurt.

The promise (docs/design.md, "Reliability promises"; errors.SessionNotSaved): when a
session file cannot be written (disk full, read-only, deleted, moved or replaced) the
cell says that the session is
NOT being saved, the in-memory session goes on, and nothing already on disk is damaged.

How each fault is made, honestly (see reliability_helpers):
* disk full: a real 256 KB tmpfs filled to the last byte, so ``write`` gets the
  kernel's own ENOSPC. Without mount rights: a session path that is a symlink to
  ``/dev/full`` (every write fails with ENOSPC; nothing can be "already on disk").
* read-only: a real tmpfs remounted read-only (EROFS); without mount rights
  ``chattr +i`` (root) or ``chmod`` (non-root).
* deleted / renamed / replaced: the real thing, done between two turns.

Each test checks the Session level (its ``Notice`` events and ``save_error``); the
last ones run the same faults through ``%%chat`` cells in a real kernel and read the
cell's output.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes.scripted_provider import ScriptedProvider
from helpers.kernel_harness import Kernel
from helpers.reliability_helpers import fill_disk, make_readonly, readonly_dir, small_tmpfs

from jupyter_tree_chat.conversation.events import Notice
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.errors import StoreError
from jupyter_tree_chat.history.store import FileStore, LoadResult, load_file
from jupyter_tree_chat.history.tree import SessionTree

NOT_SAVED = "NOT being saved"
BIG = "a long question " * 1500  # 24 KB: needs new pages, so a full tmpfs refuses it

DEV_FULL = "FALLBACK (no mount rights): a session path that is a symlink to /dev/full (ENOSPC)"
FSIZE = "FALLBACK (no mount rights): RLIMIT_FSIZE in the kernel (EFBIG, 'File too large')"


def report(test: str, how: str) -> None:
    """Say in the test's output what the fault was made with (run with ``-s``), fallbacks
    named as such, for docs/reliability.md."""
    print(f"\nRELIABILITY disk {test}: {how}")


def open_session(path: Path) -> tuple[Session, list[Notice]]:
    """A session over ``path`` whose notices are collected in a list.

    A path that is a symlink to ``/dev/full`` (the fallback) is not loaded: the loader
    refuses devices (reading one would never end); appends still go to it.
    """
    if path.is_symlink():
        store = FileStore(path)
        session = Session(store, ScriptedProvider(), loaded=LoadResult(SessionTree()))
    else:
        session = Session.open(path, ScriptedProvider())
    notices: list[Notice] = []
    session.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
    return session, notices


def said_not_saved(notices: list[Notice], *reasons: str) -> str:
    """The one notice that says the session is not saved; it names one of ``reasons``."""
    lines = [n.message for n in notices if NOT_SAVED in n.message]
    assert lines, f"nobody told the user: {[n.message for n in notices]}"
    assert all(n.level == "error" for n in notices if NOT_SAVED in n.message)
    assert any(reason in lines[0] for reason in reasons), lines[0]
    assert "\n" not in lines[0] and "in memory" in lines[0]
    return lines[0]


def assert_conversation_goes_on(session: Session, nodes_before: int) -> None:
    """Two more turns work in memory, each saying again that nothing is saved."""
    for question in ("still there?", "and now?"):
        notices: list[Notice] = []
        unsubscribe = session.subscribe(
            lambda e, n=notices: n.append(e) if isinstance(e, Notice) else None
        )
        turn = session.ask(question)
        unsubscribe()
        assert turn.replies and turn.replies[-1].text == f"echo: {question}"
        assert any(NOT_SAVED in n.message for n in notices), "later turns must say it too"
    assert len(session.tree) == nodes_before + 4
    assert [n.text for n in session.path()][-2:] == ["and now?", "echo: and now?"]


# -- disk full -------------------------------------------------------------------------------


def test_disk_full_mid_session() -> None:
    """ENOSPC on the second turn: told plainly, goes on, the first turn stays intact."""
    with small_tmpfs(256) as fault:
        report("disk full mid-session", DEV_FULL if fault.how == "unavailable" else fault.how)
        if fault.how == "unavailable":
            path = fault.path / "nb.chat.jsonl"
            path.symlink_to("/dev/full")
            session, notices = open_session(path)
            turn = session.ask("hello")
            said_not_saved(notices, "disk is full")
            assert turn.replies[-1].text == "echo: hello"
            assert_conversation_goes_on(session, 2)
            return
        path = fault.path / "nb.chat.jsonl"
        session, notices = open_session(path)
        session.ask("first, saved")
        saved = path.read_bytes()
        assert notices == []
        fill_disk(fault.path)

        turn = session.ask(BIG)

        said_not_saved(notices, "disk is full")
        assert session.save_error is not None
        assert turn.user is not None and turn.replies[-1].text == f"echo: {BIG}"
        after_failure = path.read_bytes()
        assert after_failure.startswith(saved), "bytes already on disk were changed"
        loaded = load_file(path)
        assert [n.text for n in loaded.tree] == ["first, saved", "echo: first, saved"]
        assert_conversation_goes_on(session, 4)
        assert path.read_bytes() == after_failure, "kept writing after the failure"


def test_new_session_on_a_full_disk() -> None:
    """The very first append fails: the user hears it at once, the chat still works."""
    with small_tmpfs(256) as fault:
        report("new session, disk full", DEV_FULL if fault.how == "unavailable" else fault.how)
        if fault.how == "unavailable":
            path = fault.path / "nb.chat.jsonl"
            path.symlink_to("/dev/full")
        else:
            fill_disk(fault.path)
            path = fault.path / "nb.chat.jsonl"
        session, notices = open_session(path)
        turn = session.ask(BIG)
        said_not_saved(notices, "disk is full")
        assert turn.replies[-1].text == f"echo: {BIG}"
        assert_conversation_goes_on(session, 2)


# -- read-only ---------------------------------------------------------------------------------


def test_read_only_folder_mid_session() -> None:
    """The folder turns read-only between turns: told, goes on, file byte-identical."""
    with readonly_dir() as fault:
        report("read-only mid-session", fault.how)
        path = fault.path / "nb.chat.jsonl"
        session, notices = open_session(path)
        session.ask("first, saved")
        saved = path.read_bytes()
        make_readonly(fault)

        turn = session.ask("second")

        said_not_saved(notices, "read-only", "permission denied")
        assert turn.replies[-1].text == "echo: second"
        assert path.read_bytes() == saved
        assert_conversation_goes_on(session, 4)
        assert path.read_bytes() == saved
        assert sorted(p.name for p in fault.path.iterdir()) == ["nb.chat.jsonl"]


def test_new_session_in_a_read_only_folder() -> None:
    with readonly_dir() as fault:
        report("new session, read-only", fault.how)
        make_readonly(fault)
        path = fault.path / "nb.chat.jsonl"
        session, notices = open_session(path)
        session.ask("hello")
        said_not_saved(notices, "read-only", "permission denied")
        assert not path.exists()
        assert_conversation_goes_on(session, 2)


# -- deleted, renamed, replaced -------------------------------------------------------------


def test_file_deleted_mid_session(tmp_path: Path) -> None:
    """No silent new, headless file: the user is told the file is gone."""
    path = tmp_path / "nb.chat.jsonl"
    session, notices = open_session(path)
    session.ask("first, saved")
    path.unlink()

    turn = session.ask("second")

    said_not_saved(notices, "deleted, moved or replaced")
    assert turn.replies[-1].text == "echo: second"
    assert not path.exists(), "a new file was started in place of the deleted one"
    assert_conversation_goes_on(session, 4)
    assert not path.exists()


def test_file_renamed_mid_session(tmp_path: Path) -> None:
    """The renamed file is not written to behind the user's back, nor a new one made."""
    path = tmp_path / "nb.chat.jsonl"
    moved = tmp_path / "moved.chat.jsonl"
    session, notices = open_session(path)
    session.ask("first, saved")
    saved = path.read_bytes()
    path.rename(moved)

    session.ask("second")

    said_not_saved(notices, "deleted, moved or replaced")
    assert moved.read_bytes() == saved
    assert not path.exists()
    assert_conversation_goes_on(session, 4)
    assert moved.read_bytes() == saved


def test_file_replaced_mid_session(tmp_path: Path) -> None:
    """Another file now sits at the path (git checkout, a sync tool): it is left alone."""
    path = tmp_path / "nb.chat.jsonl"
    session, notices = open_session(path)
    session.ask("first, saved")
    other = b'{"id":"x","parentId":null,"message":{"role":"user","content":"theirs"}}\n'
    replacement = tmp_path / "tmp-replacement"
    replacement.write_bytes(other)
    os.replace(replacement, path)

    session.ask("second")

    said_not_saved(notices, "deleted, moved or replaced")
    assert path.read_bytes() == other
    assert_conversation_goes_on(session, 4)
    assert path.read_bytes() == other


def test_a_pipe_or_device_at_the_session_path_is_refused_not_read(tmp_path: Path) -> None:
    """Found by the /dev/full fallback: the loader read a device until memory ran out
    (and would block forever on a FIFO, hanging the kernel). It now refuses them."""
    fifo = tmp_path / "fifo.chat.jsonl"
    os.mkfifo(fifo)
    device = tmp_path / "dev.chat.jsonl"
    device.symlink_to("/dev/zero")
    for path in (fifo, device):
        with pytest.raises(StoreError, match="not a session file"):
            load_file(path)


# -- the same faults through %%chat cells in a real kernel -----------------------------------


@pytest.mark.kernel
def test_cell_says_plainly_when_the_file_is_deleted(tmp_path: Path) -> None:
    """What the user sees in the cell: a plain line, and the reply still streamed."""
    with Kernel(tmp_path) as kernel:
        kernel.chat("first question", "c0000001").check()
        session_file = kernel.session_file()
        assert session_file.exists()
        session_file.unlink()
        run = kernel.chat("second question", "c0000002")
        assert run.status == "ok", run.visible_text
        assert NOT_SAVED in run.visible_text
        assert "deleted, moved or replaced" in run.visible_text
        assert "Traceback" not in run.visible_text
        assert "second question" in run.markdown[0]  # the offline model's reply is shown
        again = kernel.chat("third question", "c0000003")
        assert NOT_SAVED in again.visible_text
        assert not session_file.exists()


@pytest.mark.kernel
def test_cell_says_plainly_when_the_disk_is_full() -> None:
    """A notebook folder on a full file system: the cell says so, nothing on disk changes."""
    with small_tmpfs(512) as fault:
        folder = fault.path
        with Kernel(folder) as kernel:
            kernel.chat("first question", "c0000001").check()
            session_file = kernel.session_file()
            saved = session_file.read_bytes()
            report("%%chat cell, disk full", FSIZE if fault.how == "unavailable" else fault.how)
            if fault.how == "unavailable":
                # no mount rights: the kernel may not grow any file past this size, so
                # its write fails with EFBIG ("File too large"), the nearest honest fault
                limit = os.path.getsize(session_file) + 100
                kernel.run(
                    "import resource, signal\n"
                    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                    f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY))"
                ).check()
            else:
                fill_disk(folder)
            run = kernel.chat(BIG, "c0000002")
            assert run.status == "ok", run.visible_text
            assert NOT_SAVED in run.visible_text
            assert "disk is full" in run.visible_text or "File too large" in run.visible_text
            assert "Traceback" not in run.visible_text
            assert session_file.read_bytes().startswith(saved)
            assert len(load_file(session_file).tree) == 2
