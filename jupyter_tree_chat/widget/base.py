"""What the anywidget views of a ``Session`` share (the panel in ``widgets``, the
per-turn control in ``turn``). Both are thin: they render ``Session`` events and turn
clicks into ``Session`` calls, and never touch the tree themselves, so any number of
views of one session (and the ``%%chat`` magic) stay in step without re-running cells.
Costs are kept flat in the size of the session: the tree summary is sent once, then only
small custom messages (see ``protocol``), and a node's full text travels only when it is
opened. Their front end is ``loader``'s few lines, the code coming once per page. Whether a
reply is being written is one ``SessionState`` per session that every view reads, so a
reply's start and end are one message each, however many controls the notebook has.

A kernel may handle comm messages only between cells, so a click then waits; the
browser says so after a moment (it gets an ``ack`` as soon as the kernel picks an
action up). With JupyterLab's comms over subshells, ipykernel 7 handles them *during* a
cell, on another thread (see ``actions.take_clicks_where_sent``): a click while a ``%%chat``
cell streams then meets ``SessionBusy``, and the widget says plainly that a reply is
being written (``BUSY_TEXT``) instead of interleaving with it; the message goes away
when that reply ends. An action from the widget runs inside the comm handler, and
what it streams reaches the browser from there.
"""

from __future__ import annotations

import logging
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import ipywidgets
import traitlets

from ..conversation.events import (
    Event,
    FanoutEnded,
    FanoutStarted,
    LeafChanged,
    NodeAdded,
    Notice,
    ReplyDelta,
    ReplyEnded,
    ReplyStarted,
    ReplyThinking,
    Turn,
    TurnInterrupted,
)
from ..conversation.session import Session
from ..errors import ChatError, SessionBusy, TreeError
from ..history.tree import Node
from ..i18n import _
from . import speaking
from .actions import (
    BUSY_TEXT,
    MAX_TEXTS_PER_REQUEST,
    edit_question,
    fanout_of,
    question_of,
    take_clicks_where_sent,
)
from .grading import GRADE_ACTIONS, grade_action
from .loader import LOADER, code_message
from .protocol import DeltaCoalescer, display_text, meta_summary, text_payload
from .sharing import find_answer, write_page

log = logging.getLogger(__name__)


class SessionState(ipywidgets.Widget):
    """What every view of one session on the page reads from one model (no view), not
    from a trait of each view, which cost each cell a message per earlier control:

    - ``busy``: a reply is being written (every view greys Retry and Edit meanwhile);
    - ``places``: what the turn controls at one place of the tree show, where several
      do. Controls whose questions are siblings (a ``--new`` cell's among the roots) all
      follow the question the active path takes there, so they show the same: the
      place's ``{q, r, onPath}`` is kept once, under the questions' parent (``""`` for
      the roots), and each of those controls' ``turn`` names it (``{place, shown}``).
      A cell then updates one place, not every earlier control (turn.py)."""

    busy = traitlets.Bool(False).tag(sync=True)
    places = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: the live turn controls at each place (kernel side only): the first keeps it
        self.members: dict[str, list[Any]] = {}

    def show_place(self, key: str, described: dict[str, Any]) -> None:
        """Say what the controls at ``key`` show (one message, if it changed)."""
        if self.places.get(key) != described:
            self.places = {**self.places, key: described}

    def forget_place(self, key: str) -> None:
        if key in self.places:
            self.places = {k: v for k, v in self.places.items() if k != key}

    def follow(self, event: Event) -> None:
        """A reply (or a fan-out's answers) starts or ends; a fan-out's own answers
        (``variant``) are inside its start and end."""
        if isinstance(event, (ReplyStarted, ReplyEnded)) and event.variant is None:
            self.busy = isinstance(event, ReplyStarted)
        elif isinstance(event, (FanoutStarted, FanoutEnded)):
            self.busy = isinstance(event, FanoutStarted)


class _Held:
    """A session's ``SessionState``, its subscription, and how many views hold it."""

    def __init__(self, session: Session) -> None:
        self.state = SessionState()
        self.unsubscribe = session.subscribe(self.state.follow)
        self.views = 0


_states: weakref.WeakKeyDictionary[Session, _Held] = weakref.WeakKeyDictionary()


def hold_state(session: Session) -> SessionState:
    """The session's ``SessionState`` for one more view: made (its comm opened) with the
    first, so it reaches the page before any view that refers to it."""
    held = _states.get(session)
    if held is None or held.state.comm is None:  # none, or closed (``Widget.close_all``)
        if held is not None:
            held.unsubscribe()
        held = _states[session] = _Held(session)
    held.views += 1
    return held.state


def peek_state(session: Session) -> SessionState | None:
    """The session's ``SessionState`` if a view holds it (none is made)."""
    held = _states.get(session)
    return held.state if held is not None and held.state.comm is not None else None


def release_state(session: Session, state: SessionState) -> None:
    """One view fewer: the last one closes the state (no view left to tell)."""
    held = _states.get(session)
    if held is None or held.state is not state:
        return
    held.views -= 1
    if held.views <= 0:
        held.unsubscribe()
        held.state.close()
        del _states[session]


_layout: ipywidgets.Layout | None = None


def shared_layout() -> ipywidgets.Layout:
    """One ``Layout`` for every view: none sets its own, and ipywidgets would otherwise
    make one per view, a second ``comm_open`` in every cell and a second model saved with
    every control."""
    global _layout
    if _layout is None or _layout.comm is None:  # none yet, or closed (``close_all``)
        _layout = ipywidgets.Layout()
    return _layout


class SessionWidget(anywidget.AnyWidget):
    """What both views share: the subscription, streaming, and actions from the browser."""

    _esm = LOADER  # a few lines; the code itself comes once per page (``loader``)

    uid = traitlets.Unicode().tag(sync=True)  # the browser keys its per-widget store by it
    mode = traitlets.Unicode("panel").tag(sync=True)
    #: the session's busy state, shared by its views (a saved notebook's older views have
    #: a ``busy`` trait of their own instead: the front end reads that where this is absent)
    session_state = traitlets.Instance(SessionState).tag(
        sync=True, **ipywidgets.widget_serialization
    )
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self, session: Session, *, clock: Callable[[], float] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(
            uid=uuid.uuid4().hex,
            session_state=hold_state(session),
            layout=shared_layout(),
            **kwargs,
        )
        self.session = session
        self._stream_parent: str | None = None
        self._clock = clock or time.monotonic
        self._coalescer = DeltaCoalescer(self._send_delta, clock=self._clock)
        self._thinking = DeltaCoalescer(self._send_thinking, clock=self._clock)
        self._variant_streams: list[DeltaCoalescer] = []
        #: an action from this view is being carried out (a reply it started is its own)
        self.acting = False
        self._unsubscribe: Callable[[], None] | None = session.subscribe(self._on_event)
        self.on_msg(self._on_browser_message)
        take_clicks_where_sent(self.comm)
        speaking.follow(self)

    @property
    def busy(self) -> bool:
        """A reply is being written in the session (the views grey Retry and Edit)."""
        return self.session_state.busy

    def close(self) -> None:
        """Stop listening to the session (a closed view must not keep streaming)."""
        unsubscribe = getattr(self, "_unsubscribe", None)
        if unsubscribe is not None:
            unsubscribe()
            self._unsubscribe = None
            release_state(self.session, self.session_state)
        super().close()

    # -- session events -> browser ------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if getattr(event, "variant", None) is not None or isinstance(
            event, (FanoutStarted, FanoutEnded)
        ):
            self._on_fanout_event(event)
        elif isinstance(event, ReplyDelta):
            if event.parent_id == self._stream_parent:
                self._thinking.flush()  # the thinking arrives whole before the answer
                self._coalescer.add(event.text)
        elif isinstance(event, ReplyThinking):
            if event.parent_id == self._stream_parent:
                self._thinking.add(event.text)
        elif isinstance(event, NodeAdded):
            self._add_node(event.node)
        elif isinstance(event, LeafChanged):
            self._follow_leaf(event.leaf)
        elif isinstance(event, ReplyStarted):
            self.error = ""
            if self._streams(event.parent_id):
                self._stream_parent = event.parent_id
                self._coalescer.start()
                self._thinking.start()
                self.send({"t": "s", "p": event.parent_id})
        elif isinstance(event, ReplyEnded):
            if self.error == BUSY_TEXT:
                self.error = ""  # the reply it waited for is done: try again now
            if event.parent_id == self._stream_parent:
                self._thinking.flush()
                self._coalescer.flush()
                ended: dict[str, Any] = {"t": "e", "p": event.parent_id}
                if event.error is not None:
                    ended["err"] = str(event.error)
                self.send(ended)
                self._stream_parent = None
        elif isinstance(event, Notice):
            if event.level == "error":
                self.error = event.message
            self.send({"t": "note", "level": event.level, "x": event.message})

    def _send_delta(self, text: str) -> None:
        self.send({"t": "d", "x": text})

    def _send_thinking(self, text: str) -> None:
        self.send({"t": "k", "x": text})

    def _on_fanout_event(self, event: Event) -> None:
        """A fan-out's answers stream side by side: ``fs``, ``vs``/``vd``/``ve``, ``fe``
        (to the views that show its question: the panel, that question's control)."""
        if isinstance(event, FanoutStarted):
            self.error = ""
            if not self._streams(event.parent_id):
                self._variant_streams = []
                return
            self._variant_streams = [
                DeltaCoalescer(self._variant_sender(i), clock=self._clock)
                for i in range(len(event.variants))
            ]
            labels = [
                {"model": v.model, "temperature": v.temperature, "label": v.label}
                for v in event.variants
            ]
            self.send({"t": "fs", "p": event.parent_id, "v": labels})
        elif isinstance(event, FanoutEnded):
            if self.error == BUSY_TEXT:
                self.error = ""
            if not self._variant_streams:
                return
            self._variant_streams = []
            heads = [a.head.id if a.head is not None else None for a in event.answers]
            errors = [str(a.error) if a.error is not None else None for a in event.answers]
            self.send({"t": "fe", "p": event.parent_id, "ids": heads, "errs": errors})
        elif not self._variant_streams or getattr(event, "variant", None) is None:
            return
        elif isinstance(event, ReplyStarted) and event.variant is not None:
            self._variant_streams[event.variant].start()
            self.send({"t": "vs", "v": event.variant})
        elif isinstance(event, ReplyDelta) and event.variant is not None:
            self._variant_streams[event.variant].add(event.text)
        elif isinstance(event, ReplyEnded) and event.variant is not None:
            self._variant_streams[event.variant].flush()
            ended: dict[str, Any] = {"t": "ve", "v": event.variant}
            if event.error is not None:
                ended["err"] = str(event.error)
            if event.node is not None:
                ended["meta"] = meta_summary(event.node, self.session.prices)
            self.send(ended)

    def _variant_sender(self, variant: int) -> Callable[[str], None]:
        return lambda text: self.send({"t": "vd", "v": variant, "x": text})

    def _streamed_text_matches(self, node: Node) -> bool:
        """True if ``node`` is the reply just streamed here, with exactly that text."""
        if node.role != "assistant" or node.parent_id != self._stream_parent:
            return False
        self._coalescer.flush()
        return self._coalescer.streamed == display_text(node.message, node.meta)

    def _streams(self, parent_id: str) -> bool:
        """Whether this view shows the reply being written under ``parent_id``."""
        raise NotImplementedError

    def _add_node(self, node: Node) -> None:
        raise NotImplementedError

    def _follow_leaf(self, leaf: str | None) -> None:
        raise NotImplementedError

    # -- browser -> session -------------------------------------------------------------

    def _on_browser_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or "a" not in content:
            return
        if content["a"] == "find":  # a question, not an action: one answer, no ack or done
            self.send(find_answer(self.session, content, self._row_positions()))
            return
        if content["a"] == "code":  # a loader on a page without the lab extension
            self.send(code_message())
            return
        if content["a"] == "language":  # JupyterLab's language, as the view rendered in it
            speaking.lab_said(content)
            return speaking.heard(self, str(content.get("code", "")))
        req = content.get("req")
        self.send({"t": "ack", "req": req})
        error: str | None = None
        busy = False
        self.acting = True
        try:
            turn = self._act(str(content["a"]), content)
            if turn is not None and turn.error is not None:
                error = str(turn.error)
        except SessionBusy:
            error, busy = BUSY_TEXT, True
        except ChatError as exc:
            error = str(exc)
        except TurnInterrupted:
            error = _("Interrupted; the partial reply was kept.")

        except Exception as exc:  # a view must report, not crash the comm
            log.exception("widget action %r failed", content.get("a"))
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self.acting = False
        if error:
            self.error = error
        done: dict[str, Any] = {"t": "done", "req": req}
        if error:
            done["err"] = error
        if busy:
            done["busy"] = 1
        self.send(done)

    def _send_rows(self, start: Any) -> None:
        """Only the panel keeps rows."""

    def _row_positions(self) -> Mapping[str, int]:
        """Node id → its row in the browser (only the panel keeps rows)."""
        return {}

    def _text_of(self, node: Node) -> dict[str, Any]:
        asked_in = None
        if node.role == "assistant":
            question = question_of(self.session, node)
            asked_in = (question.meta or {}).get("cell_id")
        return text_payload(node, asked_in if isinstance(asked_in, str) else None)

    def _act(self, action: str, content: dict[str, Any]) -> Turn | None:
        """Carry out one browser action as a ``Session`` call."""
        session = self.session
        node_id = str(content.get("id", ""))
        if action == "text":
            ids = [str(i) for i in content.get("ids", [])][:MAX_TEXTS_PER_REQUEST]
            texts = {i: self._text_of(session.tree.get(i)) for i in ids if i in session.tree}
            self.send({"t": "texts", "req": content.get("req"), "texts": texts})
            return None
        if action == "rows":
            self._send_rows(content.get("from"))
            return None
        if action == "export":
            written = write_page(session)
            message = _("Wrote {target}: the session as one page that opens anywhere.")
            self.send({"t": "note", "level": "info", "x": message.format(target=written)})
            return None
        self.error = ""
        if action == "retry":
            return session.retry(node_id)
        if action == "fanout":
            return session.retry(node_id, fanout=fanout_of(content))
        if action == "edit":
            text = content.get("text")
            if not isinstance(text, str) or not text.strip():
                raise TreeError(_("the edited message is empty; type something or press Escape"))
            raw = content.get("raw") is True  # the text that was sent, not as typed
            return edit_question(session, session.resolve(node_id), text, raw)
        if action == "switch":
            session.switch(node_id, deepest=bool(content.get("deepest", True)))
            return None
        if action == "label":
            session.label(node_id, str(content.get("label", "")))
            return None
        if action == "hide":
            session.hide(node_id, content.get("hidden", True) is not False)
            return None
        if action in GRADE_ACTIONS:
            grade_action(session, action, content)
            self._follow_leaf(session.leaf)  # the panel's grades trait follows
            return None
        raise TreeError(_("unknown widget action {action}").format(action=repr(action)))
