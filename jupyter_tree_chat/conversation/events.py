"""What a session announces and what its actions return: the views' whole vocabulary.

A view (the magic's cell, the panel, a test) subscribes to a ``Session`` and redraws on
these events; it never reads the tree while a turn runs. An action returns a ``Turn``.
Kept apart from ``session.py`` so that a view or ``fanout.py`` can name them without
importing the session's machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ChatError
from ..history.tree import Node
from ..i18n import _

if TYPE_CHECKING:
    from .many.variants import Answer, Variant


@dataclass(frozen=True)
class NodeAdded:
    node: Node


@dataclass(frozen=True)
class LeafChanged:
    leaf: str | None


@dataclass(frozen=True)
class ReplyStarted:
    """A model call began for the user node ``parent_id``.

    ``variant`` is the answer's index in a fan-out (``None`` for a single answer): in a
    fan-out, several replies stream under one question at once."""

    parent_id: str
    variant: int | None = None


@dataclass(frozen=True)
class ReplyDelta:
    """Text arrived for the reply being written under ``parent_id``."""

    parent_id: str
    text: str
    variant: int | None = None


@dataclass(frozen=True)
class ReplyThinking:
    """The model's thinking arrived for the reply being written under ``parent_id``
    (``variant`` as in ``ReplyStarted``)."""

    parent_id: str
    text: str
    variant: int | None = None


@dataclass(frozen=True)
class ReplyEnded:
    """The call under ``parent_id`` ended; ``node`` is the reply (None if nothing came).

    In a fan-out the node is appended to the tree later, in variant order (NodeAdded)."""

    parent_id: str
    node: Node | None
    error: ChatError | None = None
    variant: int | None = None


@dataclass(frozen=True)
class FanoutStarted:
    """Several answers to the question ``parent_id`` begin, one per variant, in order."""

    parent_id: str
    variants: tuple[Variant, ...]


@dataclass(frozen=True)
class FanoutEnded:
    """Every answer of the fan-out under ``parent_id`` ended and was stored."""

    parent_id: str
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class ExperimentStarted:
    """An experiment's rows begin: every variant under each of ``question_ids`` (siblings,
    one a row), in order; its answers stream no text to the views, only progress."""

    question_ids: tuple[str, ...]
    variants: tuple[Variant, ...]


@dataclass(frozen=True)
class ExperimentProgress:
    """``done`` of ``total`` answers of the running experiment have ended (``failed`` of
    them with an error)."""

    done: int
    total: int
    failed: int = 0


@dataclass(frozen=True)
class ExperimentEnded:
    """Every answer of the experiment ended (or was cut short) and was stored."""

    question_ids: tuple[str, ...]
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class BatchProgress:
    """A vendor batch of this session moved (many/batch.py): ``key`` is its plan, ``ids``
    the vendor's batches, ``status`` ``sending``, ``in_progress``, ``canceling``,
    ``ended`` (its results being written) or ``applied``; ``done`` of ``total`` requests
    ended at the API, ``applied`` of them written into the tree."""

    key: str
    ids: tuple[str, ...]
    status: str
    total: int
    done: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0
    applied: int = 0


@dataclass(frozen=True)
class Notice:
    """One line for the user: an error, a warning or information."""

    message: str
    level: str = "info"  # "info" | "warning" | "error"


Event = (
    NodeAdded
    | LeafChanged
    | ReplyStarted
    | ReplyDelta
    | ReplyThinking
    | ReplyEnded
    | FanoutStarted
    | FanoutEnded
    | ExperimentStarted
    | ExperimentProgress
    | ExperimentEnded
    | BatchProgress
    | Notice
)
Listener = Callable[[Event], None]


@dataclass
class Turn:
    """What one action produced: the user node (if new), the replies, and what went wrong.

    A fan-out also fills ``answers`` (one per variant, in order); its ``last`` reply and
    ``text`` are then the first answer's, the one the current leaf follows."""

    user: Node | None
    replies: list[Node] = field(default_factory=list)
    error: ChatError | None = None
    notices: list[str] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    experiment: str | None = None
    """The experiment's id, for a turn that asked its rows (experiment.py)."""
    batches: list[str] = field(default_factory=list)
    """The keys of the vendor batches it sent (``--batch``: many/batch.py); its answers
    come later, into the tree, while the cell shows their progress."""

    @property
    def interrupted(self) -> bool:
        return (
            any(n.meta and n.meta.get("interrupted") for n in self.replies)
            or self.error is not None
        )

    @property
    def last(self) -> Node | None:
        return self._final or self.user

    @property
    def text(self) -> str:
        """The text of the final reply (what a person reads as "the answer")."""
        final = self._final
        return final.text if final is not None else ""

    @property
    def _final(self) -> Node | None:
        for answer in self.answers:
            if answer.final is not None:
                return answer.final
        return self.replies[-1] if self.replies else None


class TurnInterrupted(KeyboardInterrupt):
    """KeyboardInterrupt during a turn, raised after what arrived was saved."""

    def __init__(self, turn: Turn) -> None:
        super().__init__(_("interrupted; the partial reply was kept"))

        self.turn = turn
