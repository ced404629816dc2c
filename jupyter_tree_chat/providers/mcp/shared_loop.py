"""The MCP servers' one event loop, run by the thread that waits on it.

A call handed to a loop that a background thread runs costs two thread wake-ups, which
a busy shared CPU makes dear. So a thread waiting for a call (``wait``) runs the loop
itself until the call is done; the background thread runs it when nobody waits (a
server's notifications and pings, a fan-out's calls, closing), and for a thread that
already runs an event loop of its own (the kernel's main thread runs ipykernel's): only
CPython's private ``asyncio.events._set_running_loop`` could set that loop aside, and
this module uses public APIs only, so such a thread waits on the future instead.
Exactly one thread runs the loop at any time (``_owner``,
under ``_cond``): a waiter that finds the background thread running it asks it to stop
and takes over once it has. The background thread takes the loop back ``GRACE_S`` after
the last waiter, or at once when asked (``wake``), so calls in a row never wait for it.

A call's own cost is kept to what it must pay: one task (it sets its ``LoopFuture`` and
stops the loop itself when its thread waits for it), one entry into the loop, the
SIGINT swap (below), and sniffio told the task runs on asyncio as ``anyio.run`` tells it
(benchmarks/bench_mcp.py measures the rest).

Ctrl-C while the main thread runs the loop must not land inside the SDK's tasks (that
would break the connection): SIGINT then only stops the loop, and ``KeyboardInterrupt``
is raised once the loop has been left, with the loop intact. A thread waiting on the
future while the background thread runs the loop gets ``KeyboardInterrupt`` in its wait,
the loop untouched.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
import time
from collections.abc import Coroutine
from contextvars import ContextVar
from typing import Any

from ...i18n import _

_SNIFFIO_CVAR: ContextVar[str | None] | None
try:
    from sniffio import current_async_library_cvar as _SNIFFIO_CVAR
except ImportError:  # anyio works without sniffio; then there is nothing to tell
    _SNIFFIO_CVAR = None

GRACE_S = 0.005
#: how often the background thread looks while another thread runs the loop
_IDLE_S = 0.05
_BACKGROUND = -1


class LoopFuture(concurrent.futures.Future[Any]):
    """The future of a coroutine run on a ``SharedLoop``: cancelling it cancels the task.

    The task sets it as it ends and, when the thread running the loop waits for it,
    stops the loop itself: no done-callbacks on the way of every call."""

    def __init__(self, shared: SharedLoop) -> None:
        super().__init__()
        self.shared = shared
        self.task: asyncio.Task[Any] | None = None

    def cancel(self) -> bool:
        if not super().cancel():
            return False
        self.shared.loop.call_soon_threadsafe(self.shared.cancel_task, self)
        return True


class SharedLoop:
    """An asyncio loop and its background thread (started at once)."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._cond = threading.Condition()
        self._owner: int | None = None
        self._wanted = 0  # threads waiting to run the loop, or running it
        self._turns = 0  # loop runs by waiters, so far
        self._woken = False
        self._closing = False
        self._waited: concurrent.futures.Future[Any] | None = None  # by the loop's owner
        self._main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> LoopFuture:
        """Schedule ``coroutine`` on the loop; whoever runs the loop next runs it.

        When nobody runs the loop, its task is made at once (no wake-up of the loop's
        selector: the caller is about to run it, or the background thread soon will)."""
        future = LoopFuture(self)
        with self._cond:
            if self._owner is None:
                self._start(coroutine, future)
                return future
        self.loop.call_soon_threadsafe(self._start_unless_cancelled, coroutine, future)
        return future

    def _start_unless_cancelled(
        self, coroutine: Coroutine[Any, Any, Any], future: LoopFuture
    ) -> None:
        if future.cancelled():
            coroutine.close()
        else:
            self._start(coroutine, future)

    def _start(self, coroutine: Coroutine[Any, Any, Any], future: LoopFuture) -> None:
        """The task for ``coroutine``; it sets ``future`` itself as it ends (a chained
        future would take one more turn of the loop)."""
        loop = self.loop

        async def run() -> None:
            _declare_asyncio()
            try:
                result = await coroutine
            except asyncio.CancelledError:
                concurrent.futures.Future.cancel(future)  # not LoopFuture's: the task ends
                raise
            except BaseException as error:
                _settle(future, error)
                if not isinstance(error, Exception):
                    raise
            else:
                _settle(future, None, result)
            finally:
                if self._waited is future:
                    loop.stop()

        future.task = loop.create_task(run())

    def cancel_task(self, future: LoopFuture) -> None:
        """On the loop, after ``future`` was cancelled (from any thread)."""
        if future.task is not None and not future.task.done():
            future.task.cancel()
        if self._waited is future:
            self.loop.stop()

    def wake(self) -> None:
        """Have the background thread run the loop now: something waits without
        running it (a callback on a future, not ``wait``)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def wait(self, future: concurrent.futures.Future[Any], timeout: float | None = None) -> Any:
        """``future``'s result, the calling thread running the loop until it is done.

        ``concurrent.futures.TimeoutError`` past ``timeout``; Ctrl-C raises
        ``KeyboardInterrupt`` with the loop left usable (the call goes on until cancelled).
        """
        if future.done():  # nothing to run the loop for: no SIGINT swap, no stale stop
            return future.result()
        me = threading.get_ident()
        if self._owner == me:
            # a task of the loop waiting for the loop would wait forever
            raise RuntimeError(_("an MCP call cannot be waited for from inside the MCP loop"))
        if _runs_a_loop():  # its own loop cannot be set aside: the background thread runs it
            self.wake()
            return future.result(timeout)  # Ctrl-C: KeyboardInterrupt here, the loop intact
        deadline = None if timeout is None else time.monotonic() + timeout
        interrupted: list[Any] = []
        previous: Any = None
        with self._cond:
            self._wanted += 1
            if self._owner is None:
                self._owner = me
            else:
                self._take(future, deadline, me)
        try:
            if self._owner == me:
                previous = self._run(future, deadline, me, interrupted)
        finally:
            with self._cond:
                self._wanted -= 1
                if self._owner == me:
                    self._owner = None
                    self._turns += 1
                if self._wanted or self._woken:
                    self._cond.notify_all()
        if interrupted:
            if previous is signal.default_int_handler:
                raise KeyboardInterrupt
            if callable(previous):
                previous(signal.SIGINT, interrupted[0])
        return future.result(0)  # concurrent.futures.TimeoutError if it is not done

    def close(self, timeout: float) -> None:
        """Stop the background thread (the loop is left as it is)."""
        with self._cond:
            self._closing = True
            if self._owner == _BACKGROUND:
                self.loop.call_soon_threadsafe(self.loop.stop)
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    # -- who runs the loop -------------------------------------------------------------

    def _take(
        self, future: concurrent.futures.Future[Any], deadline: float | None, me: int
    ) -> None:
        """Become the loop's owner (under ``_cond``), unless ``future`` is done first."""
        asked = notified = False
        while self._owner is not None and not future.done():
            if self._owner == _BACKGROUND and not asked:
                self.loop.call_soon_threadsafe(self.loop.stop)
                asked = True
            elif self._owner != _BACKGROUND and not notified:  # another waiter runs it
                future.add_done_callback(lambda _f: self._notify())
                notified = True
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return
            self._cond.wait(remaining)
        if not future.done():
            self._owner = me

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _run(
        self,
        future: concurrent.futures.Future[Any],
        deadline: float | None,
        me: int,
        interrupted: list[Any],
    ) -> Any:
        """Run the loop until ``future`` is done, ``deadline`` or Ctrl-C; the SIGINT
        handler it set aside, if any."""
        loop = self.loop
        if not (isinstance(future, LoopFuture) and future.shared is self):
            future.add_done_callback(lambda _f: self._stop_from(me))
        timer = (
            None
            if deadline is None
            else loop.call_at(loop.time() + max(0.0, deadline - time.monotonic()), loop.stop)
        )
        previous: Any = None
        if me == self._main:
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):

                def on_sigint(signum: int, frame: Any) -> None:
                    interrupted.append(frame)
                    loop.call_soon_threadsafe(loop.stop)

                signal.signal(signal.SIGINT, on_sigint)
            else:
                previous = None
        self._waited = future
        try:
            while not future.done() and not interrupted:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                loop.run_forever()  # stopped by the task, the timer, Ctrl-C, a stale stop
        finally:
            self._waited = None
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
            if timer is not None:
                timer.cancel()
        return previous

    def _stop_from(self, me: int) -> None:
        """Stop the loop (a waited future that is not a ``LoopFuture`` is done)."""
        if threading.get_ident() == me:
            self.loop.stop()
        else:
            self.loop.call_soon_threadsafe(self.loop.stop)

    def _serve(self) -> None:
        """The background thread: run the loop whenever nobody waits on it."""
        while True:
            with self._cond:
                while True:
                    if self._closing:
                        return
                    if self._owner is None and self._wanted == 0:
                        if self._woken:
                            break
                        turns = self._turns
                        self._cond.wait(GRACE_S)
                        idle = self._owner is None and self._wanted == 0
                        if idle and not self._closing and (self._turns == turns or self._woken):
                            break
                    else:
                        self._cond.wait(_IDLE_S)
                self._woken = False
                self._owner = _BACKGROUND
            try:
                while True:
                    self.loop.run_forever()
                    with self._cond:
                        if self._wanted or self._closing:
                            break
            finally:
                with self._cond:
                    self._owner = None
                    self._cond.notify_all()


def _runs_a_loop() -> bool:
    """Whether the calling thread is inside a running event loop (public API only)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _declare_asyncio() -> None:
    """Tell sniffio that this task runs on asyncio, as ``anyio.run`` does for its own
    tasks: the SDK's anyio code asks which library runs it at every step, and without
    this each answer is sniffed from the running task."""
    if _SNIFFIO_CVAR is not None:
        _SNIFFIO_CVAR.set("asyncio")


def _settle(
    future: concurrent.futures.Future[Any], error: BaseException | None, result: Any = None
) -> None:
    """Set ``future`` unless it was cancelled meanwhile (from another thread, too)."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass
