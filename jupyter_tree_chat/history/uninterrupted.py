"""A Ctrl-C never tears a write: it is held until the write is whole, then raised.

The stop button sends the kernel SIGINT, which Python raises as ``KeyboardInterrupt``
wherever the main thread happens to be. Inside an append (store.py) that could leave
half of a turn's records on disk, or the store's own account of what it wrote behind
the file. So an append runs under ``interrupts_held``: a SIGINT that arrives meanwhile is
noted, the write finishes, the previous handler comes back and the interrupt is raised
as it would have been, just after the write. A second SIGINT meanwhile changes nothing
(one interrupt is one interrupt).

Only the main thread receives signals, and only it may set a handler; elsewhere the
block runs as it is.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block whole; a SIGINT meanwhile is raised once it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:  # a handler set outside Python: not ours to put back
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, frame: object) -> None:
        arrived.append(signum)

    try:
        signal.signal(signal.SIGINT, hold)
    except ValueError:  # an embedding that does not let Python own signals
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if arrived:
            if callable(previous):
                previous(signal.SIGINT, None)  # Python's: raises KeyboardInterrupt
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt
