"""Watching a session's pending batches: one quiet thread that asks, backs off, applies.

A batch ends minutes or hours after its cell did, maybe after the kernel that sent it
is gone; the file says which batches are pending (``Session.batches``), so whichever
kernel opens the session picks them up (``watch``). Its poller asks each pending
batch's state every ``Session.batch_poll`` seconds at first, half as often again after
each look that found nothing new, up to ``MOST_S``; it never spins. Each look is
announced (``BatchProgress``) for the views' progress bars; an ended batch's results
are written into the tree (batch.py's ``collect``) with the session's lock held, so a
cell never sees half a chunk. The thread ends when nothing is pending and starts again
with the next batch.

The lock: the poller waits for it (a cell may be running); while it holds it (a chunk,
well under a second), an action that finds the session busy waits for it too rather
than refusing (``SessionHost.background``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from ...errors import ChatError
from ...history.batch_record import BatchPlan
from ...i18n import _
from ...providers.batches import BatchWire, batch_wire
from .batch import BatchHost, collect, progress

log = logging.getLogger(__name__)

MOST_S = 60.0
"""The longest wait between two looks at a pending batch."""
BACKOFF = 1.5

_pollers: weakref.WeakKeyDictionary[Any, BatchPoller] = weakref.WeakKeyDictionary()
_made = threading.Lock()


@contextlib.contextmanager
def holding(session: Any) -> Iterator[None]:
    """The session's lock, waited for; actions that find it held meanwhile wait too."""
    session.background += 1
    try:
        with session._lock:
            yield
    finally:
        session.background -= 1


def wire_of(session: BatchHost, plan: BatchPlan) -> BatchWire:
    """The batch API that answers ``plan`` (asked again through the session's provider)."""
    return batch_wire(session.provider, plan.model)


def look(session: BatchHost, plan: BatchPlan, wire: BatchWire | None = None) -> bool:
    """Ask where each of ``plan``'s sent batches stands and write the results of those
    that ended; True if anything changed."""
    wire = wire or wire_of(session, plan)
    changed = False
    for batch_id in list(plan.sent):
        if all(plan.is_applied(cid) for cid in plan.custom_ids(batch_id)):
            continue
        state = wire.state(batch_id)
        progress(session, plan, "ended" if state.ended else state.status, state.counts)
        if state.ended:
            with holding(session):  # another thread may have written them meanwhile
                if not all(plan.is_applied(cid) for cid in plan.custom_ids(batch_id)):
                    changed = collect(session, plan, batch_id, wire) > 0 or changed
        elif state.counts.done:
            changed = True
    return changed


class BatchPoller:
    """The one thread that watches a session's pending batches (module docstring)."""

    def __init__(self, session: BatchHost) -> None:
        self.session = session
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._said: set[str] = set()

    def wake(self) -> None:
        """Look now (``%chat batch cancel`` asked), starting the thread if it is not
        running."""
        self._wake.set()
        self.ensure()

    def ensure(self) -> None:
        """Start the thread if it is not running (its first look is at once); a running
        one keeps its pace."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="tree-chat batches", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        session = self.session
        delay = session.batch_poll
        while True:
            self._wake.clear()
            with self._lock:
                pending = [plan for plan in session.batches.pending() if plan.sent]
                if not pending:
                    self._thread = None
                    return
            changed = False
            for plan in pending:
                try:
                    changed = look(session, plan) or changed
                except ChatError as error:  # the API unreachable for now: said once, asked later
                    self._say(plan, error)
                except Exception:  # a bug must not kill the watch of other batches
                    log.exception("looking at batch %s failed", plan.key)
            delay = session.batch_poll if changed else min(delay * BACKOFF, MOST_S)
            self._wake.wait(delay)

    def _say(self, plan: BatchPlan, error: ChatError) -> None:
        line = str(error)
        if line not in self._said:
            self._said.add(line)
            self.session.notice(
                _("Batch {key}: {error} (asked again later)").format(key=plan.key[:7], error=line),
                "warning",
            )


def poller(session: BatchHost) -> BatchPoller:
    with _made:
        found = _pollers.get(session)
        if found is None:
            found = _pollers[session] = BatchPoller(session)
        return found


def watch(session: BatchHost) -> bool:
    """Watch ``session``'s pending batches, if it has any (a kernel opening the file);
    True if it has."""
    if not any(plan.sent for plan in session.batches.pending()):
        return False
    poller(session).ensure()
    return True
