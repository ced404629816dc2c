"""The checks a request passes before it leaves: what the Messages API would refuse.

A request the API would refuse with a 400 costs a round trip and, worse, a question
stored with no answer. So the session asks these first, before it stores or sends
anything, and a user sees one line that says the fix:

- the thinking budget is at least ``MIN_THINKING_BUDGET`` tokens and below max_tokens
  (thinking counts toward max_tokens);
- with thinking on, temperature may only be 1 (the API's rule; top_k and top_p, which
  this project never sets, have rules of their own), so a fan-out over temperatures
  cannot think (each variant is checked like a single request, too);
- a tool turn keeps one thinking setting: a turn whose model call used tools goes on
  with thinking as it began (the API requires it of an assistant turn, and a tool loop
  is one turn);
- the path and the new question fit the model's context window (``usage.meter``).

All pure: settings come in as plain values, so the rules are testable on their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ContextWindowFull, SettingsError
from ..history.tree import Node, is_real_user_message, is_tool_result
from ..i18n import _
from ..providers.base import ADAPTIVE, Thinking
from .usage import Meter, window_label

MIN_THINKING_BUDGET = 1024


def thinking_problem(
    thinking: Thinking, *, max_tokens: int, temperature: float | None
) -> str | None:
    """Why the API would refuse these thinking settings, with the fix; None if it would not."""
    if thinking is None:
        return None
    if thinking != ADAPTIVE:
        if isinstance(thinking, bool) or not isinstance(thinking, int):
            return _(
                "thinking must be a number of tokens or 'adaptive', not {thinking}: "
                "e.g. --thinking 2048"
            ).format(thinking=repr(thinking))
        if thinking < MIN_THINKING_BUDGET:
            return _(
                "a thinking budget must be at least {least} tokens, "
                "not {thinking}: use --thinking {least} or more"
            ).format(least=MIN_THINKING_BUDGET, thinking=thinking)
        if thinking >= max_tokens:
            return _(
                "the thinking budget ({thinking}) must be below max_tokens ({max_tokens}), "
                "since thinking counts toward it: raise --max-tokens (e.g. "
                "--max-tokens {enough}) or lower --thinking"
            ).format(thinking=f"{thinking:,}", max_tokens=f"{max_tokens:,}", enough=2 * thinking)
    if temperature is not None and temperature != 1:
        return _(
            "temperature {temperature} cannot be used with thinking (the API accepts only 1 "
            "there): drop --temperature, or turn thinking off with --thinking off"
        ).format(temperature=f"{temperature:g}")
    return None


def check_thinking(thinking: Thinking, *, max_tokens: int, temperature: float | None) -> None:
    problem = thinking_problem(thinking, max_tokens=max_tokens, temperature=temperature)
    if problem:
        raise SettingsError(problem)


def fanout_thinking_problem(thinking: Thinking, temperatures: Sequence[float]) -> str | None:
    """A fan-out over temperatures with thinking on: the API takes no temperature there."""
    if thinking is None or not temperatures:
        return None
    return _(
        "--temperatures cannot be used with thinking (the API accepts no temperature but 1 "
        "there): drop --temperatures (compare --n samples or --models instead), or turn "
        "thinking off with --thinking off"
    )


def check_fanout_thinking(thinking: Thinking, temperatures: Sequence[float]) -> None:
    problem = fanout_thinking_problem(thinking, temperatures)
    if problem:
        raise SettingsError(problem)


def tool_turn_problem(path: Sequence[Node], thinking: Thinking) -> str | None:
    """A request that would continue a tool turn with thinking switched on or off.

    The turn is the replies since the last question a person asked; it goes on when the
    path ends with tool results. Its first reply's ``meta.thinking`` says how it began.
    """
    if not path or not is_tool_result(path[-1].message):
        return None
    began: Thinking = None
    for node in reversed(path):
        if is_real_user_message(node.message):
            break
        if node.role == "assistant":
            began = (node.meta or {}).get("thinking")
    if (began is None) == (thinking is None):
        return None
    if began is None:
        return _(
            "this tool turn began without thinking, and the API keeps one thinking setting "
            "for a whole turn: continue it with --thinking off, or ask the question again "
            "(`%chat fork-before-tool`)"
        )
    return _(
        "this tool turn began with thinking ({began}), and the API keeps one thinking "
        "setting for a whole turn: continue it with --thinking {began}, or ask the question "
        "again (`%chat fork-before-tool`)"
    ).format(began=began)


def check_tool_turn(path: Sequence[Node], thinking: Thinking) -> None:
    problem = tool_turn_problem(path, thinking)
    if problem:
        raise SettingsError(problem)


def check_fits(reading: Meter, *, model: str | None) -> None:
    """Refuse a question that would not fit, saying by how much and how to make room."""
    if reading.fits or reading.window is None:
        return
    if reading.exact:
        why = _(
            "this question would not fit: the path and the question hold {tokens} tokens, "
            "over {model}'s {window} window; run `%chat compact` to summarise the path "
            "into a new root, or start afresh with `%%chat --new`"
        )
    else:
        why = _(
            "this question would not fit: the path and the question hold about {tokens} "
            "tokens, over {model}'s {window} window; run `%chat compact` to summarise the "
            "path into a new root, or start afresh with `%%chat --new`"
        )
    raise ContextWindowFull(
        why.format(
            tokens=f"{reading.tokens:,}",
            model=model or _("the model"),
            window=window_label(reading.window),
        )
    )
