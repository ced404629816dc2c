"""What a ``--batch`` cell shows: the batch's id and a progress bar that lives on.

The cell returns as soon as the batch is sent; its answers come minutes or hours later,
found by the session's poller (conversation/many/batch_poll.py) on a thread of its own.
The bar is the experiment's (``experiment_view.progress_bundle``: one display output,
replaced in place) with the batch's words: ``n of N`` ended, how many succeeded, errored,
expired, canceled, and how many are written into the tree. It stays subscribed to the
session after the cell has ended and updates its display from the poller's thread,
sent as an update of the batch cell's own output (the cell's parent header), until
every request is applied.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from html import escape
from typing import Any

from IPython.display import display, update_display

from ...conversation.events import BatchProgress, Event
from ...conversation.many.batch import progress
from ...i18n import _
from .experiment_view import progress_bundle


def batch_words(event: BatchProgress) -> str:
    """``batch msgbatch_01… · 40 of 100 ended · 38 succeeded · 2 errored · 40 written``."""
    ids = ", ".join(event.ids) if event.ids else event.key
    parts = [
        _("batch {ids}").format(ids=ids),
        _("{done} of {total} ended").format(done=event.done, total=event.total),
        _("{count} succeeded").format(count=event.succeeded),
    ]
    for count, word in (
        (event.errored, _("{count} errored")),
        (event.expired, _("{count} expired")),
        (event.canceled, _("{count} canceled")),
    ):
        if count:
            parts.append(word.format(count=count))
    if event.applied:
        parts.append(_("{count} stored").format(count=event.applied))
    if event.status == "applied":
        parts.append(_("done"))
    elif event.status == "sending":
        parts.append(_("not sent"))
    else:
        parts.append(_("the answers arrive within 24 hours; `%chat batch` lists them"))
    return " · ".join(parts)


def batch_bundle(event: BatchProgress) -> dict[str, str]:
    """The experiment's ``<progress>`` bar, with the batch's words."""
    failed = event.errored + event.expired + event.canceled
    bundle = progress_bundle(event.done, event.total, failed)
    words = batch_words(event)
    html = bundle["text/html"].replace(
        'class="jtc-experiment-progress"', 'class="jtc-experiment-progress jtc-batch-progress"'
    )
    cut = html.rfind("<span")
    html = html[:cut] + f'<span style="font-size:85%">{escape(words)}</span></div>'
    return {"text/html": html, "text/plain": f"[{event.done}/{event.total}] {words}"}


class BatchView:
    """A batch cell's bar (module docstring): shown at once, updated from any thread."""

    def __init__(
        self,
        keys: Iterable[str],
        *,
        shell: Any,
        throttle: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keys = set(keys)
        self.live = getattr(shell, "kernel", None) is not None
        self.throttle = throttle
        self._clock = clock
        self._last = float("-inf")
        self._display_id: str | None = None
        self.unsubscribe: Callable[[], None] | None = None
        publisher = getattr(shell, "display_pub", None)
        self._publisher = publisher if hasattr(publisher, "set_thread_parent") else None
        self._parent = dict(getattr(publisher, "parent_header", {}) or {})
        self.ended: set[str] = set()

    def show(self, event: BatchProgress) -> None:
        """The first look, in the cell."""
        bundle = batch_bundle(event)
        if self.live:
            handle = display(bundle, raw=True, display_id=True)
            self._display_id = handle.display_id if handle is not None else None
        else:
            print(bundle["text/plain"])

    def on_event(self, event: Event) -> None:
        if not isinstance(event, BatchProgress) or event.key not in self.keys:
            return
        final = event.status == "applied"
        now = self._clock()
        if not final and now - self._last < self.throttle:
            return
        self._last = now
        if final:
            self.ended.add(event.key)
            if self.ended >= self.keys and self.unsubscribe is not None:
                self.unsubscribe()
        self._update(batch_bundle(event))

    def _update(self, bundle: dict[str, str]) -> None:
        if self._display_id is None:
            return
        publisher = self._publisher if self._parent else None
        token = None
        if publisher is not None:  # sent as the batch cell's own output, from any thread
            token = publisher.set_thread_parent(self._parent)
        try:
            update_display(bundle, raw=True, display_id=self._display_id)
        finally:
            if publisher is not None:
                publisher.reset_thread_parent(token)


def show_batches(session: Any, keys: Iterable[str], shell: Any, throttle: float = 0.2) -> None:
    """A bar for each batch a cell sent (its plan's ``key``), live until it is applied."""
    for key in keys:
        plan = session.batches.plans.get(key)
        if plan is None:
            continue
        view = BatchView([key], shell=shell, throttle=throttle)
        first: list[BatchProgress] = []
        unsubscribe = session.subscribe(first.append)
        progress(session, plan)  # where it stands now, whatever the poller said before
        unsubscribe()
        view.show(next(e for e in first if isinstance(e, BatchProgress) and e.key == key))
        if plan.pending:
            view.unsubscribe = session.subscribe(view.on_event)
