"""What a fan-out asks for and what it gets: plain values, no threads, no session.

``Fanout`` (samples × models × temperatures, checked on creation so a view can refuse a
bad one before anything is written), each ``Variant`` it expands into, and the
``Answer`` each variant produced. The events name these (``FanoutStarted``,
``FanoutEnded``), the views show them, and ``fanout.py`` runs them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...errors import ChatError, FanoutTooLarge
from ...history.tree import Node
from ...i18n import _, ngettext
from ..settings import ChatSettings

MAX_VARIANTS = 12
"""The most answers one fan-out asks for (each is a full request, billed as one)."""

_POLL_S = 0.1
"""How often a waiting thread looks at the cancel flag."""


@dataclass(frozen=True)
class Fanout:
    """What to ask for: ``n`` samples of each model × temperature combination.

    ``models``/``temperatures`` empty means "the settings' own one". The checks run
    here, so a view can refuse a bad fan-out before anything is written.
    """

    n: int = 1
    models: tuple[str, ...] = ()
    temperatures: tuple[float, ...] = ()
    batch: bool = False
    """Sent as vendor batches, answered later (batch.py), not streamed now."""

    def __post_init__(self) -> None:
        if self.n < 1:
            why = _("the number of answers must be at least 1, not {n}")
            raise ChatError(why.format(n=self.n))
        if self.count > MAX_VARIANTS:
            raise FanoutTooLarge(
                _(
                    "{asked} is {count} answers; at most {most} at once: "
                    "ask for fewer samples, models or temperatures"
                ).format(asked=self.describe(), count=self.count, most=MAX_VARIANTS)
            )

    @property
    def count(self) -> int:
        return self.n * max(len(self.models), 1) * max(len(self.temperatures), 1)

    def describe(self) -> str:
        parts = [ngettext("{n} sample", "{n} samples", self.n).format(n=self.n)]
        if self.models:
            count = len(self.models)
            parts.append(ngettext("{n} models", "{n} models", count).format(n=count))
        if self.temperatures:
            count = len(self.temperatures)
            parts.append(ngettext("{n} temperatures", "{n} temperatures", count).format(n=count))
        return " × ".join(parts)

    def variants(self, base: ChatSettings, default_model: str) -> list[Variant]:
        """Every combination, in variant order: model, then temperature, then sample."""
        models: Sequence[str | None] = self.models or (base.model,)
        temperatures: Sequence[float | None] = self.temperatures or (base.temperature,)
        found = []
        for model, temperature in itertools.product(models, temperatures):
            settings = base.merged(model=model, temperature=temperature)
            for sample in range(1, self.n + 1):
                found.append(Variant(settings, settings.model or default_model, sample, self.n))
        return found


@dataclass(frozen=True)
class Variant:
    """One of the answers a fan-out asks for: its settings and where it stands."""

    settings: ChatSettings
    model: str
    sample: int = 1
    samples: int = 1

    @property
    def temperature(self) -> float | None:
        return self.settings.temperature

    @property
    def label(self) -> str:
        """``claude-sonnet-4-6 · temperature 0.7 · sample 2/3`` (the parts that vary)."""
        parts = [self.model]
        if self.temperature is not None:
            parts.append(_("temperature {temperature}").format(temperature=f"{self.temperature:g}"))
        if self.samples > 1:
            parts.append(
                _("sample {sample}/{samples}").format(sample=self.sample, samples=self.samples)
            )

        return " · ".join(parts)


@dataclass
class Answer:
    """What one variant produced: its nodes (reply, tool results, reply, ...) and faults."""

    variant: Variant
    nodes: list[Node] = field(default_factory=list)
    error: ChatError | None = None
    interrupted: bool = False
    done: bool = False
    question_id: str | None = None
    """The question it answers (in an experiment, its row's)."""

    @property
    def head(self) -> Node | None:
        """The sibling under the question (the node a switch or a compare names)."""
        return self.nodes[0] if self.nodes else None

    @property
    def final(self) -> Node | None:
        """The last reply of this answer (after any tool rounds)."""
        return next((n for n in reversed(self.nodes) if n.role == "assistant"), None)
