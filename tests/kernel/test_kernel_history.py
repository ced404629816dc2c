"""The kernel's ``Err`` (kernel/history.py): each cell's error kept as text, like ``Out``.

An in-process IPython shell runs real cells; the real-kernel use (``{Err}`` in a
question) is in test_kernel_context.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

from jupyter_tree_chat import load_ipython_extension, unload_ipython_extension
from jupyter_tree_chat.kernel.history import MAX_FRAMES, CellErrors


@pytest.fixture
def ip(tmp_path, monkeypatch) -> Iterator:
    monkeypatch.chdir(tmp_path)
    shell = start_ipython() or get_ipython()
    shell.user_ns.pop("Err", None)
    load_ipython_extension(shell)
    yield shell
    unload_ipython_extension(shell)


def run(ip, code: str):
    return ip.run_cell(code, store_history=True)


def test_a_failing_cell_leaves_its_error_in_err(ip):
    run(ip, "def halve(x):\n    return x / 0\n")
    failed = run(ip, "halve(3)")
    error = ip.user_ns["Err"][failed.execution_count]
    assert error.headline == "ZeroDivisionError: division by zero"
    assert error.traceback.splitlines()[0] == "Traceback (most recent call last):"
    assert f'  File "Cell In[{failed.execution_count}]", line 1, in <module>' in error.traceback
    assert "    return x / 0" in error.traceback
    assert "IPython" not in error.traceback
    assert (
        repr(error)
        == f"<CellError In[{failed.execution_count}]: ZeroDivisionError: division by zero>"
    )
    assert run(ip, "1 + 1").success and max(ip.user_ns["Err"]) == failed.execution_count


def test_a_syntax_error_is_kept_with_its_cell_named(ip):
    failed = run(ip, "x = (")
    error = ip.user_ns["Err"][failed.execution_count]
    assert error.type == "SyntaxError"
    assert f'File "Cell In[{failed.execution_count}]", line 1' in error.traceback


def test_a_deep_traceback_keeps_the_frames_nearest_the_error(ip):
    chain = "".join(f"def f{n}():\n    return f{n + 1}()\n" for n in range(10))
    run(ip, chain + "def f10():\n    return 1 / 0\n")
    failed = run(ip, "f0()")
    text = ip.user_ns["Err"][failed.execution_count].traceback
    assert f"... {12 - MAX_FRAMES} earlier frames left out" in text  # the cell and f0..f10
    assert text.count('File "Cell In[') == MAX_FRAMES
    assert "in f10\n    return 1 / 0" in text


def test_errors_show_exactly_as_without_the_extension(ip, capsys):
    run(ip, "raise ValueError('same as ever')")
    with_extension = capsys.readouterr()
    unload_ipython_extension(ip)
    run(ip, "raise ValueError('same as ever')")
    without = capsys.readouterr()
    load_ipython_extension(ip)

    def normalised(text: str) -> str:  # the cell number differs, nothing else may
        return "\n".join(line for line in text.splitlines() if "Cell In[" not in line)

    assert normalised(with_extension.out) == normalised(without.out)
    assert "ValueError: same as ever" in without.out


def test_the_error_is_kept_as_text_not_as_the_exception_and_its_frames(ip):
    run(ip, "def fail():\n    big = list(range(10**6))\n    1 / 0\n")
    failed = run(ip, "fail()")
    error = ip.user_ns["Err"][failed.execution_count]
    kept = {f.name: type(getattr(error, f.name)) for f in fields(error)}
    assert kept == {"count": int, "type": str, "message": str, "traceback": str}


def test_a_user_variable_named_err_is_left_alone(ip):
    unload_ipython_extension(ip)
    ip.user_ns["Err"] = "my own"
    load_ipython_extension(ip)
    run(ip, "1 / 0")
    assert ip.user_ns["Err"] == "my own"
    del ip.user_ns["Err"]


def test_loading_twice_listens_once_and_unloading_stops_listening(ip):
    load_ipython_extension(ip)
    listeners = [cb for cb in ip.events.callbacks["post_run_cell"] if _is_ours(cb)]
    assert len(listeners) == 1
    unload_ipython_extension(ip)
    assert [cb for cb in ip.events.callbacks["post_run_cell"] if _is_ours(cb)] == []
    assert "Err" not in ip.user_ns
    load_ipython_extension(ip)


def _is_ours(callback) -> bool:
    return isinstance(getattr(callback, "__self__", None), CellErrors)
