"""A time limit on code run in the kernel's own thread: ``TreeChat.tool_timeout``.

The notebook tools run the user's Python (``run``) and the user's values' own methods
(a ``__repr__``, a ``__len__``) where the kernel runs everything: on the main thread, in
the cell that asked. An endless loop there would hold the kernel; a thread of its own
would not share the cell's state. So the limit interrupts the running code itself: on
the main thread with ``SIGALRM`` (which also wakes ``time.sleep`` and most blocking
calls), elsewhere by raising ``TimedOut`` asynchronously in that thread (pure Python only).
``TimedOut`` is a ``BaseException``: code that catches ``Exception`` does not swallow it.
Ctrl-C is left as it is: it stops the code and the turn.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
from collections.abc import Iterator


class TimedOut(BaseException):
    """The code ran past its time limit and was stopped."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Stop the code inside with ``TimedOut`` after ``seconds`` (None or 0: no limit)."""
    if not seconds or seconds <= 0:
        yield
        return
    on_main = threading.current_thread() is threading.main_thread()
    if on_main and hasattr(signal, "setitimer"):
        with _alarm(seconds):
            yield
        return
    with _async_raise(seconds):
        yield


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def stop(_signum: int, _frame: object) -> None:
        raise TimedOut

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _async_raise(seconds: float) -> Iterator[None]:
    target = threading.get_ident()
    done = threading.Event()

    def stop() -> None:
        if not done.wait(seconds):
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(target), ctypes.py_object(TimedOut)
            )

    watcher = threading.Thread(target=stop, name="jupyter-tree-chat time limit", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
