"""How many requests a fake server is answering at once, so a test can check a bound.

A fan-out or an experiment must send an endpoint no more requests at once than it takes
(``--concurrency``, ``Endpoint.concurrency``). The client cannot show that; the server
can. ``InFlight`` counts the replies a fake is answering now (``in_flight``) and the most
it ever answered at once (``most_in_flight``), counted from the moment each request
arrived until its answer ended (a stream's last byte). Only reply routes count
(``/v1/messages``, ``/chat/completions``): a count of tokens or a model list is no reply.

    server.reset_load()
    ... run the fan-out ...
    assert server.most_in_flight <= 2
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

REPLY_ROUTES = ("/messages", "/chat/completions")


class InFlight:
    """The load count a fake server mixes in (see the module docstring)."""

    def __init__(self) -> None:
        self._load_lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def reset_load(self) -> None:
        """Count the most at once from now on."""
        with self._load_lock:
            self.most_in_flight = self.in_flight

    @contextlib.contextmanager
    def counting(self, path: str) -> Iterator[None]:
        """Count the request to ``path`` as in flight while the block runs."""
        if not path.split("?")[0].endswith(REPLY_ROUTES):
            yield
            return
        with self._load_lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._load_lock:
                self.in_flight -= 1
