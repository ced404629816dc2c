"""How many requests a fake server is answering at once, so a test can check a bound.

A fan-out or an experiment must send an endpoint no more requests at once than it takes
(``--concurrency``, ``Endpoint.concurrency``). The client cannot show that; the server
can. ``InFlight`` counts the replies a fake is answering now (``in_flight``) and the most
it ever answered at once (``most_in_flight``), counted from the moment each request
arrived until the server began the last thing a client acts on (the stream's end, its
``[DONE]``, an error event, the JSON body, a dropped connection): the server calls
``Ticket.release`` just before, so a client that starts its next request the moment the
last one ended is never counted twice. Only reply routes count (``/v1/messages``,
``/chat/completions``): a count of tokens or a model list is no reply.

    server.reset_load()
    ... run the fan-out ...
    assert server.most_in_flight <= 2
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

REPLY_ROUTES = ("/messages", "/chat/completions")


class Ticket:
    """One request's place in the count; ``release`` (once, or again: no effect) ends it."""

    def __init__(self, load: InFlight, counted: bool) -> None:
        self._load = load
        self._held = counted

    def release(self) -> None:
        with self._load._load_lock:
            if self._held:
                self._held = False
                self._load.in_flight -= 1


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
    def counting(self, path: str) -> Iterator[Ticket]:
        """Count the request to ``path`` as in flight until its ticket is released (at the
        latest when the block ends)."""
        counted = path.split("?")[0].endswith(REPLY_ROUTES)
        if counted:
            with self._load_lock:
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
        ticket = Ticket(self, counted)
        try:
            yield ticket
        finally:
            ticket.release()
