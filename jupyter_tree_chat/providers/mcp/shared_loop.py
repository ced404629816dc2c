"""The MCP servers' one event loop, run by the thread that waits on it.

A call handed to a loop that a background thread runs costs two thread wake-ups, which
a busy shared CPU makes dear. So a thread waiting for a call (``wait``) runs the loop
itself until the call is done, the kernel's own running loop set aside meanwhile; the
background thread runs it only when nobody waits (a server's notifications and pings, a
fan-out's calls, closing). Exactly one thread runs the loop at any time (``_owner``,
under ``_cond``): a waiter that finds the background thread running it asks it to stop
and takes over once it has. The background thread takes the loop back ``GRACE_S`` after
the last waiter, or at once when asked (``wake``), so calls in a row never wait for it.

Ctrl-C while the main thread runs the loop must not land inside the SDK's tasks (that
would break the connection): SIGINT then only stops the loop, and ``KeyboardInterrupt``
is raised once the loop has been left, with the loop intact.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
import time
from collections.abc import Coroutine
from typing import Any

from ...i18n import _

GRACE_S = 0.005
#: how often the background thread looks while another thread runs the loop
_IDLE_S = 0.05
_BACKGROUND = -1


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
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Schedule ``coroutine`` on the loop; whoever runs the loop next runs it.

        When nobody runs the loop, its task is made at once (no wake-up of the loop's
        selector: the caller is about to run it, or the background thread soon will)."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._cond:
            if self._owner is None:
                self._start(coroutine, future)
                return future
        self.loop.call_soon_threadsafe(self._start, coroutine, future)
        return future

    def _start(
        self, coroutine: Coroutine[Any, Any, Any], future: concurrent.futures.Future[Any]
    ) -> None:
        """The task for ``coroutine``; it sets ``future`` itself as it ends (a chained
        future would take one more turn of the loop), and cancelling ``future`` cancels it."""
        if future.cancelled():
            coroutine.close()
            return

        async def run() -> None:
            try:
                result = await coroutine
            except asyncio.CancelledError:
                future.cancel()
                raise
            except BaseException as error:
                _settle(future, error)
                if not isinstance(error, Exception):
                    raise
            else:
                _settle(future, None, result)

        task = self.loop.create_task(run())
        loop = self.loop
        future.add_done_callback(lambda _f: None if task.done() else _cancel(loop, task))

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
        if future.done():
            return future.result()
        deadline = None if timeout is None else time.monotonic() + timeout
        me = threading.get_ident()
        if self._owner == me:
            # a task of the loop waiting for the loop would wait forever
            raise RuntimeError(_("an MCP call cannot be waited for from inside the MCP loop"))
        interrupted: list[Any] = []
        swapped, previous = False, None
        try:
            with self._cond:
                self._wanted += 1
                self._take(future, deadline, me)
            if self._owner == me:
                if threading.current_thread() is threading.main_thread():
                    previous = signal.getsignal(signal.SIGINT)
                    if callable(previous):

                        def on_sigint(signum: int, frame: Any) -> None:
                            interrupted.append(frame)
                            self.loop.call_soon_threadsafe(self.loop.stop)

                        signal.signal(signal.SIGINT, on_sigint)
                        swapped = True
                self._run(future, deadline, me, interrupted)
        finally:
            if swapped:
                signal.signal(signal.SIGINT, previous)
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
        if not future.done():
            raise concurrent.futures.TimeoutError
        return future.result()

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
    ) -> None:
        loop = self.loop

        def stop(_future: Any) -> None:
            if threading.get_ident() == me:
                loop.stop()
            else:
                loop.call_soon_threadsafe(loop.stop)

        future.add_done_callback(stop)
        timer = (
            None
            if deadline is None
            else loop.call_at(loop.time() + max(0.0, deadline - time.monotonic()), loop.stop)
        )
        kernel_loop = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(None)
        try:
            while not future.done() and not interrupted:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                loop.run_forever()  # stopped by ``stop``, the timer, Ctrl-C, a stale stop
        finally:
            if timer is not None:
                timer.cancel()
            asyncio.events._set_running_loop(kernel_loop)

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


def _cancel(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    loop.call_soon_threadsafe(task.cancel)


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
