"""The MCP event loop run by whoever waits on it (providers/mcp/shared_loop.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from jupyter_tree_chat.providers.mcp.shared_loop import SharedLoop


@pytest.fixture
def shared():
    loop = SharedLoop("test shared loop")
    yield loop
    loop.close(5)


async def _ran_on(delay: float = 0.0) -> str:
    await asyncio.sleep(delay)
    return threading.current_thread().name


def _in_a_thread_of_its_own(body):
    """``body()`` on a new thread, where no event loop runs: the waiting thread runs the
    loop only then (one inside a running loop leaves it to the background thread), and
    a test process's main thread may be inside one that an earlier test left running."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, body()))
        except BaseException as error:  # raised again on the test's thread
            outcome.append((False, error))

    thread = threading.Thread(target=run, name="waiter")
    thread.start()
    thread.join(30)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def test_the_waiting_thread_runs_its_own_call(shared):
    ran_on = _in_a_thread_of_its_own(lambda: shared.wait(shared.submit(_ran_on(0.01))))
    assert ran_on == "waiter"


def test_a_call_nobody_waits_for_is_run_by_the_background_thread(shared):
    future = shared.submit(_ran_on())
    shared.wake()
    assert future.result(5) == "test shared loop"


def test_threads_waiting_at_once_each_get_their_own_answer(shared):
    calls = 8
    started: list[int] = []
    all_started = asyncio.Event()

    async def answer(i: int) -> tuple[str, str]:
        started.append(i)
        if len(started) == calls:
            all_started.set()
        await all_started.wait()  # no call answers before every call is under way
        return f"answer {i}", threading.current_thread().name

    def one(i: int) -> tuple[str, str]:
        return shared.wait(shared.submit(answer(i)), timeout=30)

    with concurrent.futures.ThreadPoolExecutor(calls) as pool:
        waiters = [pool.submit(one, i) for i in range(calls)]
        answers = [waiter.result(60) for waiter in waiters]

    assert sorted(started) == list(range(calls))  # every call ran, once, all at once
    assert [text for text, _thread in answers] == [f"answer {i}" for i in range(calls)]
    assert all(thread for _text, thread in answers)


def test_a_wait_past_its_timeout_leaves_the_call_going_and_the_loop_usable(shared):
    _in_a_thread_of_its_own(lambda: _wait_past_its_timeout(shared))


def _wait_past_its_timeout(shared) -> None:
    slow = shared.submit(_ran_on(0.5))
    with pytest.raises(concurrent.futures.TimeoutError):
        shared.wait(slow, timeout=0.05)
    assert not slow.done()
    assert shared.wait(shared.submit(_ran_on())) == threading.current_thread().name
    assert slow.result(5)  # the background thread finished it


def test_cancelling_a_call_cancels_its_task(shared):
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    future = shared.submit(forever())
    with pytest.raises(concurrent.futures.TimeoutError):
        shared.wait(future, timeout=0.05)
    assert future.cancel()
    shared.wake()
    assert cancelled.wait(5)


def test_a_call_cancelled_from_another_thread_ends_the_wait_at_once(shared):
    _in_a_thread_of_its_own(lambda: _cancelled_from_another_thread(shared))


def _cancelled_from_another_thread(shared) -> None:
    future = shared.submit(_ran_on(60))
    threading.Timer(0.05, future.cancel).start()
    with pytest.raises(concurrent.futures.CancelledError):
        shared.wait(future, timeout=30)
    assert shared.wait(shared.submit(_ran_on())) == threading.current_thread().name


def test_a_plain_future_set_by_a_task_of_the_loop_is_waited_for(shared):
    plain: concurrent.futures.Future[str] = concurrent.futures.Future()

    async def settle() -> None:
        await asyncio.sleep(0.01)
        plain.set_result("set")

    shared.submit(settle())
    assert shared.wait(plain, timeout=30) == "set"
