"""A Ctrl-C held until a write is whole (history/uninterrupted.py), in this process;
the kernel's side (a stop while an append waits) is in test_interrupts_kernel.py."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from jupyter_tree_chat.history.uninterrupted import interrupts_held


def test_a_sigint_inside_the_block_is_raised_once_the_block_is_done():
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_held():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)  # a second one is the same interrupt
        done.append("the rest of the block")

    assert done == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_other_threads_run_the_block_as_it_is():
    seen = []

    def run() -> None:
        with interrupts_held():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]
