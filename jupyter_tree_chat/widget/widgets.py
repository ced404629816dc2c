"""The anywidget views of a ``Session``: a per-turn control and the full tree panel.

Both are thin: they render ``Session`` events and turn clicks into ``Session`` calls,
and never touch the tree themselves, so any number of views of one session (and the
``%%chat`` magic) stay in step without re-running cells. Costs are kept flat in the
size of the session: the tree summary is sent once, then only small custom messages
(see ``protocol``), and a node's full text travels only when it is opened.

A kernel may handle comm messages only between cells, so a click then waits; the
browser says so after a moment (it gets an ``ack`` as soon as the kernel picks an
action up). With JupyterLab's comms over subshells, ipykernel 7 handles them *during* a
cell, on another thread (see ``_take_clicks_where_sent``): a click while a ``%%chat``
cell streams then meets ``SessionBusy``, and the widget says plainly that a reply is
being written (``BUSY_TEXT``) instead of interleaving with it; the message goes away
when that reply ends. An action from the widget runs inside the comm handler, and
what it streams reaches the browser from there.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .. import i18n
from ..context import with_text
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
from ..conversation.variants import Fanout
from ..errors import ChatError, SessionBusy, TreeError
from ..history.tree import Node, compaction_links, is_real_user_message
from ..i18n import _
from ..textview import question_as_typed, typed_source
from .grading import GRADE_ACTIONS, grade_action, grades_payload
from .protocol import (
    DeltaCoalescer,
    RowIndex,
    context_reading,
    display_text,
    head,
    meta_summary,
    summary,
    text_payload,
)
from .sharing import find_answer, write_page

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
MAX_TEXTS_PER_REQUEST = 200
BUSY_TEXT = (
    "Busy: a reply is being written in this session (a %%chat cell or another view); "
    "wait for it to finish, then try again."
)
"""What a view shows when its action meets ``SessionBusy`` (kept in step with model.ts)."""

_NOT_BUILT = """
export function render({ el }) {
  el.textContent = "jupyter-tree-chat: the widget front end is not built; "
    + "run `npm run build:widget` in labextension/ "
    + "(it writes jupyter_tree_chat/widget/static/widget.js).";
}
"""


def _esm() -> Path | str:
    built = STATIC / "widget.js"
    return built if built.is_file() else _NOT_BUILT


def _stylesheet() -> Path | str:
    """The widget's stylesheet: a build product too (labextension/style/base.css, copied)."""
    built = STATIC / "widget.css"
    return built if built.is_file() else ""


class _SessionWidget(anywidget.AnyWidget):
    """What both views share: the subscription, streaming, and actions from the browser."""

    _esm = _esm()
    _css = _stylesheet()

    uid = traitlets.Unicode().tag(sync=True)  # the browser keys its per-widget store by it
    mode = traitlets.Unicode("panel").tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self, session: Session, *, clock: Callable[[], float] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(uid=uuid.uuid4().hex, **kwargs)
        self.session = session
        self._stream_parent: str | None = None
        self._clock = clock or time.monotonic
        self._coalescer = DeltaCoalescer(self._send_delta, clock=self._clock)
        self._thinking = DeltaCoalescer(self._send_thinking, clock=self._clock)
        self._variant_streams: list[DeltaCoalescer] = []
        self._unsubscribe: Callable[[], None] | None = session.subscribe(self._on_event)
        self.on_msg(self._on_browser_message)
        _take_clicks_where_sent(self.comm)

    def close(self) -> None:
        """Stop listening to the session (a closed view must not keep streaming)."""
        unsubscribe = getattr(self, "_unsubscribe", None)
        if unsubscribe is not None:
            unsubscribe()
            self._unsubscribe = None
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
            self.busy = True
            self.error = ""
            if self._streams(event.parent_id):
                self._stream_parent = event.parent_id
                self._coalescer.start()
                self._thinking.start()
                self.send({"t": "s", "p": event.parent_id})
        elif isinstance(event, ReplyEnded):
            self.busy = False
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
            self.busy, self.error = True, ""
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
            self.busy = False
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
        if content["a"] == "language":  # JupyterLab's language, as the view rendered in it
            i18n.front_end_said(str(content.get("code", "")))
            return
        req = content.get("req")
        self.send({"t": "ack", "req": req})
        error: str | None = None
        busy = False
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
            question = _question_of(self.session, node)
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


class TreePanel(_SessionWidget):
    """The whole session: tree, active path, inline edit, retry, switch, compare.

    ``nodes`` is the compact summary (see ``protocol``). It is sent once and then
    kept current *in place* on this side, so a page reload gets the current tree while
    each change travels only as a small message.
    """

    nodes: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    labels = traitlets.Dict().tag(sync=True)
    #: ids whose branch is hidden (``hidden`` records): the views fold them away
    hidden: traitlets.List[str] = traitlets.List().tag(sync=True)
    #: each answer's latest grades and every preference (grading.grades_payload)
    grades = traitlets.Dict().tag(sync=True)
    #: compaction root id -> the leaf it summarised, for the picture's dashed links
    links = traitlets.Dict().tag(sync=True)
    leaf = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    context = traitlets.Dict().tag(sync=True)  # protocol.context_reading: the window's use
    compare_models: traitlets.List[str] = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The models "Ask other models…" offers (``TreeChat.compare_models``)."""
    compare_temperatures: traitlets.List[float] = traitlets.List(traitlets.Float()).tag(sync=True)

    def __init__(self, session: Session, **kwargs: Any) -> None:
        rows = RowIndex(session.prices)
        for node in session.tree:
            rows.add(node)
        self._rows = rows
        super().__init__(
            session,
            mode="panel",
            nodes=rows.rows,
            labels=dict(session.labels),
            hidden=sorted(session.hidden),
            grades=grades_payload(session.grades),
            links=compaction_links(session.tree.roots()),
            leaf=session.leaf,
            title=Path(session.location).name if session.location else "",
            context=context_reading(session),
            **kwargs,
        )
        self._rows.rows = self.nodes  # the trait's own list, so in-place appends stay current

    def _streams(self, parent_id: str) -> bool:
        return True

    def _send_rows(self, start: Any) -> None:
        rows = self._rows.rows
        begin = start if isinstance(start, int) and 0 <= start <= len(rows) else len(rows)
        self.send({"t": "rows", "from": begin, "rows": rows[begin:]})

    def _row_positions(self) -> Mapping[str, int]:
        return self._rows.index

    def _add_node(self, node: Node) -> None:
        row = self._rows.add(node)
        if row is None:
            return
        message: dict[str, Any] = {"t": "n", "r": row, "i": self._rows.index[node.id]}
        if self._streamed_text_matches(node):
            message["s"] = 1
        self.send(message)
        if node.parent_id is None and (link := compaction_links([node])):
            self.links = {**self.links, **link}

    def _follow_leaf(self, leaf: str | None) -> None:
        self.leaf = leaf
        if self.labels != self.session.labels:
            self.labels = dict(self.session.labels)
        self.context = context_reading(self.session)
        if set(self.hidden) != self.session.hidden:
            self.hidden = sorted(self.session.hidden)
        grades = grades_payload(self.session.grades)
        if grades != self.grades:
            self.grades = grades


class TurnControl(_SessionWidget):
    """The compact control under one ``%%chat`` turn: ``‹ 2/3 ›``, retry, edit.

    It follows its turn as the session changes: when the active path goes through
    another answer (or another version of the question) at this turn's place, the
    control shows that one, and the browser shows its text below the cell's own.
    """

    turn = traitlets.Dict().tag(sync=True)

    def __init__(self, session: Session, reply_id: str, **kwargs: Any) -> None:
        reply = session.tree.get(reply_id)
        question = _question_of(session, reply)
        self._question: Node = question
        self._depth = len(session.path(question.id)) - 1
        self._reply: Node | None = reply if reply.role == "assistant" else None
        self._shown = self._reply.id if self._reply is not None else None
        super().__init__(session, mode="turn", **kwargs)
        self.turn = self._describe()

    @classmethod
    def for_turn(cls, session: Session, turn: Turn) -> TurnControl | None:
        """The control for what a ``%%chat`` run produced (``None`` if nothing was stored)."""
        last = turn.last
        return None if last is None else cls(session, last.id)

    def _describe(self) -> dict[str, Any]:
        tree = self.session.tree
        question, reply = self._question, self._reply
        qpos = tree.sibling_position(question.id)
        described: dict[str, Any] = {
            "q": {
                "id": question.id,
                "pos": qpos.index,
                "count": qpos.count,
                "sibs": [n.id for n in tree.siblings(question.id)],
                "head": head(question_as_typed(question.message, question.meta)),
            },
            "r": None,
            "shown": self._shown,
            "onPath": False,
        }
        if reply is not None:
            rpos = tree.sibling_position(reply.id)
            described["r"] = {
                "id": reply.id,
                "pos": rpos.index,
                "count": rpos.count,
                "sibs": [n.id for n in tree.siblings(reply.id)],
                "parent": reply.parent_id,
                "meta": meta_summary(reply, self.session.prices),
            }
        leaf = tree.leaf
        focus = reply or question
        described["onPath"] = leaf is not None and _on_path(self.session, focus.id, leaf)
        return described

    def _refresh(self) -> None:
        described = self._describe()
        if described != self.turn:
            self.turn = described

    def _follow(self, leaf: str | None) -> None:
        """Move to the question/answer the active path now takes at this turn's place."""
        if leaf is None:
            return
        path = self.session.path(leaf)
        depth = self._depth
        if len(path) <= depth:
            return
        at = path[depth]
        if at.parent_id != self._question.parent_id or not is_real_user_message(at.message):
            return
        changed_question = at.id != self._question.id
        self._question = at
        found = None
        for node in path[depth + 1 :]:
            if is_real_user_message(node.message):
                break
            if node.role == "assistant":
                found = node
        if found is not None:
            self._reply = found
        elif changed_question:
            self._reply = None

    def _streams(self, parent_id: str) -> bool:
        self._follow(self.session.leaf)
        if parent_id == self._question.id:
            return True
        return self._reply is not None and parent_id == self._reply.parent_id

    def _add_node(self, node: Node) -> None:
        streamed = self._streamed_text_matches(node)
        self._follow(self.session.leaf)
        if streamed:
            self.send(
                {
                    "t": "n",
                    "r": [
                        node.id,
                        -1,
                        "a",
                        summary(display_text(node.message, node.meta)),
                        meta_summary(node, self.session.prices),
                    ],
                    "s": 1,
                }
            )
        self._refresh()

    def _follow_leaf(self, leaf: str | None) -> None:
        self._follow(leaf)
        self._refresh()


def edit_question(session: Session, original: Node, text: str, raw: bool) -> Turn:
    """An edit from a view: of what was typed (its ``{fields}`` filled in again from the
    kernel, a notice saying which), or with ``raw`` (or a question kept as sent) of the
    text that was sent, the question's images staying."""
    if raw or typed_source(original.meta) is None:
        return session.edit(original.id, with_text(original.message, text))
    if session.refill is None:
        raise TreeError(
            _(
                "this question's fields can only be filled in again by a kernel; "
                "edit what was sent instead"
            )
        )
    question = session.refill(original, text)
    if question.note:
        session.notice(question.note)
    return session.edit(original.id, question.content, meta=question.meta)


def fanout_of(content: dict[str, Any]) -> Fanout:
    """The fan-out a browser asked for (``n``, ``models``, ``temperatures``), checked."""
    try:
        n = int(content.get("n", 1))
        models = tuple(str(m) for m in content.get("models") or () if str(m).strip())
        temperatures = tuple(float(t) for t in content.get("temperatures") or ())
    except (TypeError, ValueError):
        raise TreeError(_("the fan-out asked for is not numbers and names; pick again")) from None
    if any(not 0 <= t < float("inf") for t in temperatures):  # each endpoint's range: later
        raise TreeError(_("temperatures start at 0; pick again"))
    return Fanout(n=n, models=models, temperatures=temperatures)


def _take_clicks_where_sent(comm: Any) -> None:
    """Let the browser's messages run on the subshell it sent them to, even during a cell.

    JupyterLab 4.4+ sends comm messages to a kernel subshell ("comms over subshells"),
    which ipykernel 7 runs on its own thread while a cell runs. But ipykernel routes a
    comm's messages back to the subshell the comm last *published* from, so that a cell
    waiting for a widget's reply gets it; a widget made and updated by cells publishes
    from the main shell, so every click would wait behind the running cell. Nothing here
    waits for the browser, and ``Session`` refuses a second action (``SessionBusy``), so
    the message is taken where the browser sent it: a click during a long cell lands at
    once, and one during a streaming reply is told the session is busy.
    """
    if comm is not None and callable(getattr(comm, "_reply_subshell_for", None)):
        comm._reply_subshell_for = lambda _data, default: default


def _question_of(session: Session, node: Node) -> Node:
    """The real user message a reply answers (above any tool rounds)."""
    for above in reversed(session.path(node.id)):
        if is_real_user_message(above.message):
            return above
    raise TreeError(_("node {id} has no user message above it").format(id=node.id[:7]))


def _on_path(session: Session, node_id: str, leaf: str) -> bool:
    current: str | None = leaf
    tree = session.tree
    while current is not None:
        if current == node_id:
            return True
        current = tree.get(current).parent_id
    return False


_controls_by_cell: dict[tuple[int, str], TurnControl] = {}


def show_turn_control(
    session: Session, turn: Turn, *, cell_id: str | None = None
) -> TurnControl | None:
    """Display the control for ``turn``; the cell's previous control (a re-run) is closed.

    A re-run replaces the cell's output, but the old widget would live on in the kernel,
    subscribed to the session, so it is closed here.
    """
    from IPython.display import display

    control = TurnControl.for_turn(session, turn)
    if control is None:
        return None
    if cell_id:
        key = (id(session), cell_id)
        previous = _controls_by_cell.pop(key, None)
        if previous is not None:
            previous.close()
        _controls_by_cell[key] = control
    display(control)
    return control
