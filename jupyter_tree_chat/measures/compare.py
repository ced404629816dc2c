"""The sibling answers of one question, as facts a person compares: what each cost, said.

``%chat compare``, ``compare_frame()`` and the views need the same thing: for a question
(or one of its answers), every answer under it in sibling order, each with its position
("2/3"), endpoint, model (and the name the server reported, where it differs),
temperature, tokens, cost, time and text. An answer can be several nodes
(a reply asking for a tool, the tool results, the reply after them): its tokens, cost and
time add up over them, its text is the last reply's. Pure: it reads a tree (and a price
table: the session's, so ``%config TreeChat.prices`` counts here too).

``COLUMNS`` is what a row holds, one line a column: another column is one more line
(``"words": lambda a: ...``), and ``compare_frame`` picks it up.

An experiment (``%%chat --over``) is the same answers over many questions: its frame
(``experiment_rows``) is these rows with the question's experiment, version and row in
front; a fan-out is an experiment of one row, so both frames come from this code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TreeError
from ..history.experiment_record import experiment_of
from ..history.tree import Node, SessionTree, is_real_user_message
from ..i18n import _
from .models import Price
from .usage import nodes_cost

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


@dataclass(frozen=True)
class ComparedAnswer:
    """One sibling answer: its first node (``head``), its nodes down to its last reply."""

    head: Node
    nodes: tuple[Node, ...]
    index: int
    count: int
    prices: Mapping[str, Price] | None = None
    """The price table its cost is reckoned with (None: models.PRICES)."""

    @property
    def final(self) -> Node:
        """The answer's last reply (after any tool rounds)."""
        return next((n for n in reversed(self.nodes) if n.role == "assistant"), self.head)

    @property
    def meta(self) -> dict[str, Any]:
        return self.final.meta or {}

    @property
    def position(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def text(self) -> str:
        return self.final.text

    def usage(self, key: str) -> int | None:
        """A token count added up over the answer's replies (None if none reported it)."""
        values = [
            (n.meta or {}).get("usage", {}).get(key) for n in self.nodes if n.role == "assistant"
        ]
        numbers = [v for v in values if isinstance(v, int)]
        return sum(numbers) if numbers else None

    @property
    def seconds(self) -> float | None:
        times = [(n.meta or {}).get("duration_ms") for n in self.nodes if n.role == "assistant"]
        numbers = [t for t in times if isinstance(t, (int, float))]
        return round(sum(numbers) / 1000, 3) if numbers else None

    @property
    def cost(self) -> float | None:
        """US dollars for the answer's replies together; None if a reply has no price
        or none reported usage (never a partial sum)."""
        return nodes_cost(self.nodes, self.prices)

    @property
    def interrupted(self) -> bool:
        return any((n.meta or {}).get("interrupted") for n in self.nodes)


COLUMNS: dict[str, Callable[[ComparedAnswer], Any]] = {
    "id": lambda a: a.head.id,
    "position": lambda a: a.position,
    "endpoint": lambda a: a.meta.get("endpoint") or a.meta.get("provider"),
    "model": lambda a: a.meta.get("model"),
    "served_model": lambda a: a.meta.get("served_model"),
    "temperature": lambda a: a.meta.get("temperature"),
    "input_tokens": lambda a: a.usage("input_tokens"),
    "output_tokens": lambda a: a.usage("output_tokens"),
    "cache_read_input_tokens": lambda a: a.usage("cache_read_input_tokens"),
    "cost": lambda a: a.cost,
    "seconds": lambda a: a.seconds,
    "stop_reason": lambda a: a.meta.get("stop_reason"),
    "interrupted": lambda a: a.interrupted,
    "text": lambda a: a.text,
}
"""A frame's columns, in order: name → the value for one answer."""


def model_label(meta: Mapping[str, Any]) -> str:
    """``local:smollm2``, with the name the server reported beside it where it differs
    (``local:smollm2 (served as SmolLM2-135M-Instruct.Q4_1.gguf)``: a path by its file), or
    the name the request asked for where another answered (``offline-teacher (asked for
    claude-sonnet-4-6)``: no key was set)."""
    model = str(meta.get("model") or "?")
    asked = meta.get("asked_model")
    if isinstance(asked, str) and asked:
        return _("{model} (asked for {asked})").format(model=model, asked=asked)
    served = meta.get("served_model")
    if not isinstance(served, str) or not served:
        return model
    shown = served.replace("\\", "/").rsplit("/", 1)[-1] or served
    return _("{model} (served as {served})").format(model=model, served=shown)


def question_of(tree: SessionTree, ref: str | None) -> Node:
    """The question whose answers are compared: ``ref`` itself if it is a question, the
    one ``ref`` answers, or (``None``) the last question on the current path."""
    start = ref if ref is not None else tree.leaf
    if start is None:
        raise TreeError(_("the session is empty; ask something first"))
    for node in reversed(tree.path_nodes(start)):
        if is_real_user_message(node.message):
            return node
    raise TreeError(_("node {node} has no question above it").format(node=start[:7]))


def sibling_answers(
    tree: SessionTree, ref: str | None = None, prices: Mapping[str, Price] | None = None
) -> list[ComparedAnswer]:
    """Every answer to the question of ``ref`` (see ``question_of``), in sibling order,
    costed at ``prices`` (default: models.PRICES)."""
    question = question_of(tree, ref)
    heads = [n for n in tree.children(question.id) if n.role == "assistant"]
    return [
        ComparedAnswer(head, tuple(_answer_nodes(tree, head)), number, len(heads), prices)
        for number, head in enumerate(heads, 1)
    ]


def rows(answers: list[ComparedAnswer]) -> list[dict[str, Any]]:
    """One dict a row, ``COLUMNS`` in order."""
    return [{name: column(answer) for name, column in COLUMNS.items()} for answer in answers]


def _answer_nodes(tree: SessionTree, head: Node) -> list[Node]:
    """``head`` and the tool rounds under it, down to the reply before the next question."""
    nodes = [head]
    while True:
        below = [n for n in tree.children(nodes[-1].id) if not is_real_user_message(n.message)]
        if not below:
            return nodes
        nodes.append(below[0])


# -- experiments: the same answers, over rows and versions ------------------------------


def experiment_questions(tree: SessionTree, ref: str | None = None) -> list[Node]:
    """The questions of the experiment ``ref``'s question belongs to: every row of every
    version, in the order they were asked. A question of no experiment (a fan-out, a
    plain question) is an experiment of one row: it alone."""
    question = question_of(tree, ref)
    about = experiment_of(question)
    if about is None:
        return [question]
    return [
        node
        for node in tree.children(question.parent_id)
        if (found := experiment_of(node)) is not None and found["id"] == about["id"]
    ]


def find_experiment(tree: SessionTree, prefix: str) -> Node | None:
    """The first question of the experiment whose id starts with ``prefix``, if any."""
    for node in tree:
        about = experiment_of(node) if node.role == "user" else None
        if about is not None and str(about["id"]).startswith(prefix):
            return node
    return None


EXPERIMENT_COLUMNS = ("id", "question", "experiment", "version", "row", "template")
"""An experiment frame's first columns; the row's inputs follow, then ``COLUMNS`` but
``id`` (``experiment_rows``)."""


def experiment_rows(
    tree: SessionTree,
    questions: list[Node],
    prices: Mapping[str, Price] | None = None,
    failed: Mapping[str, list[tuple[str, str]]] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """One dict per answer to ``questions`` (each question's answers in sibling order),
    and the frame's columns: ``EXPERIMENT_COLUMNS``, the rows' inputs (a name that is
    already a column gets ``row.`` before it), then ``COLUMNS``. ``failed`` (question →
    ``(outcome, why)`` of each batch request that got no answer: errored, expired,
    canceled) adds a line for each, with no ``id``, the outcome as its ``stop_reason``
    and the API's line as its ``text``: kept, never dropped."""
    inputs: dict[str, str] = {}
    taken = {*EXPERIMENT_COLUMNS, *COLUMNS}
    for question in questions:
        for name in (experiment_of(question) or {}).get("row") or {}:
            inputs.setdefault(name, f"row.{name}" if name in taken else name)
    found = []
    for question in questions:
        about = experiment_of(question) or {}
        row = about.get("row") or {}
        for answer, values in zip(
            answers := sibling_answers(tree, question.id, prices), rows(answers), strict=True
        ):
            line = {
                "id": answer.head.id,
                "question": question.id,
                "experiment": about.get("id"),
                "version": about.get("version"),
                "row": about.get("index"),
                "template": about.get("template"),
            }
            line.update({column: row.get(name) for name, column in inputs.items()})
            line.update((k, v) for k, v in values.items() if k != "id")
            found.append(line)
        for outcome, why in (failed or {}).get(question.id, ()):
            line = {"id": None, "question": question.id, "experiment": about.get("id")}
            line.update(version=about.get("version"), row=about.get("index"))
            line.update({"template": about.get("template"), "stop_reason": outcome, "text": why})
            line.update({column: row.get(name) for name, column in inputs.items()})
            found.append(line)
    columns = [*EXPERIMENT_COLUMNS, *inputs.values(), *(c for c in COLUMNS if c != "id")]
    return found, columns
