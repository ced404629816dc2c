"""Parsing for ``%%chat``: its options and their checks (``{name}`` fields: context.py).

Kept apart from the magic so each rule is testable without a shell, and so every user
mistake becomes one ``UsageError`` line that says the fix. The options are declared with
IPython's ``magic_arguments``, which is what makes ``%%chat?`` show them.

Abbreviations are off: argparse would otherwise read ``--n 3`` as ``--new`` (the only
option then starting with ``--n``) and any new option could be shadowed by an old one's
prefix, or shadow it.

The fan-out options (``--n``, ``--models``, ``--temperatures``) are also read at the
front of ``%chat retry`` and ``%chat edit`` (``fanout_words``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from ..conversation.many.variants import MAX_VARIANTS, Fanout
from ..errors import ChatError
from ..i18n import _
from ..providers import PROVIDER_NAMES
from ..providers.base import ADAPTIVE, Thinking

#: ``--thinking off``: no thinking for this cell, whatever ``TreeChat.thinking`` says
THINKING_OFF = "off"

F = TypeVar("F", bound=Callable[..., Any])


def _arguments() -> tuple[argument, ...]:
    """``%%chat``'s options, their help in the current language (``%%chat?`` shows it)."""
    return (
        argument(
            "-s", "--session", metavar="NAME", help=_("Use the named session of this notebook.")
        ),
        argument(
            "-m",
            "--model",
            help=_(
                "Model for this cell; ENDPOINT:MODEL asks another endpoint, e.g. local:smollm2 "
                "(default: TreeChat.model; `%%chat models` lists them)."
            ),
        ),
        argument("--system", metavar="TEXT", help=_("System prompt for this cell (quote it).")),
        argument("--max-tokens", type=int, metavar="N", help=_("Most tokens in the reply.")),
        argument("--temperature", type=float, metavar="T", help=_("Sampling temperature.")),
        argument(
            "--thinking",
            metavar="N",
            help=_(
                "Extended thinking: a budget of N tokens (at least 1024, below --max-tokens), "
                "'adaptive' (the model decides how much), or 'off' (default: TreeChat.thinking)."
            ),
        ),
        argument(
            "--n",
            type=int,
            metavar="N",
            help=_(
                "Ask for N answers at once, side by side (siblings; at most {count} in all with "
                "--models and --temperatures)."
            ).format(count=MAX_VARIANTS),
        ),
        argument(
            "--models",
            metavar="A,B",
            help=_(
                "Ask each of these models (comma-separated, ENDPOINT:MODEL for other endpoints); "
                "combines with --n and --temperatures."
            ),
        ),
        argument(
            "--temperatures",
            metavar="T1,T2",
            help=_(
                "Ask at each of these temperatures (comma-separated; 0 to 1 for Claude, each "
                "endpoint's own range for the others)."
            ),
        ),
        argument(
            "--over",
            metavar="NAME",
            help=_(
                "Ask the question once per row of NAME (a DataFrame or a list of dicts, or a "
                "path ending in .csv): {column} is that row's value; the rows are siblings."
            ),
        ),
        argument(
            "--same-experiment",
            action="store_true",
            help=_(
                "With --over: continue the experiment on the current path, as running its "
                "cell again does (edited text: a new version; unchanged: a sample per row)."
            ),
        ),
        argument(
            "--concurrency",
            type=int,
            metavar="N",
            help=_("With --over: how many requests run at once (default 4)."),
        ),
        argument(
            "--batch",
            action="store_true",
            help=_(
                "Send this cell's requests (--over, --n, --models, --temperatures) as the "
                "vendor's batch at half price: the cell returns at once with the batch's id and "
                "a progress bar; the answers arrive within 24 hours (`%%chat batch`)."
            ),
        ),
        argument(
            "--budget",
            metavar="N",
            help=_(
                "Tokens this cell's request may hold: the path is cut to fit, whole exchanges, "
                "newest first ('window': the model's window less --max-tokens and a margin; 'off': "
                "the whole path; default: TreeChat.context_budget)."
            ),
        ),
        argument("--new", action="store_true", help=_("Start a new root: a fresh conversation.")),
        argument(
            "--from",
            dest="from_node",
            metavar="ID",
            help=_(
                "Fork: ask under node ID (an id prefix or a label) instead of the rule's choice."
            ),
        ),
        argument(
            "--continue",
            dest="continue_leaf",
            action="store_true",
            help=_("Append under the current leaf, whatever the cell rule would do."),
        ),
        argument(
            "--tools",
            metavar="NAMES",
            help=_(
                "Comma-separated tools the model may use: registered functions, MCP tools as "
                "server:tool or server:* (from .mcp.json or TreeChat.mcp_servers); 'none' for none "
                "(default: TreeChat.tools, else every registered function)."
            ),
        ),
        argument(
            "--allow-destructive",
            action="store_true",
            help=_(
                "Let destructive MCP tools run in this cell: those not annotated read-only or "
                "not destructive (default: TreeChat.allow_destructive)."
            ),
        ),
        argument(
            "--allow-run",
            action="store_true",
            help=_(
                "Let the notebook server's run tool (notebook:run) run code in this kernel "
                "in this cell (default: TreeChat.allow_run)."
            ),
        ),
        argument("--provider", choices=PROVIDER_NAMES, help=_("Provider for this cell.")),
        argument(
            "--raw", action="store_true", help=_("Send the text as is: no {name} substitution.")
        ),
        argument(
            "--attach",
            action="append",
            metavar="PATH",
            help=_(
                "Attach a file (text, PDF or image; relative to the notebook's folder). Repeatable."
            ),
        ),
        argument(
            "--with",
            dest="with_refs",
            action="append",
            metavar="ID",
            help=_("Quote node ID (say, an answer on another branch) in the question. Repeatable."),
        ),
        argument("--with-path", action="store_true", help=_("--with brings ID's whole path.")),
    )


def chat_arguments(func: F) -> F:
    """Declare ``%%chat``'s options on ``func`` (its ``?`` help then lists them)."""
    for declare in reversed(_arguments()):
        func = declare(func)
    func = magic_arguments(name="%chat")(func)  # the usage line then reads %%chat
    func.parser.allow_abbrev = False  # type: ignore[attr-defined]  # see the module docstring
    return func


@chat_arguments
def _options(line: str) -> None:
    """Holds the parser: parsing needs no magic instance."""


def chat_help(description: str) -> str:
    """What ``%%chat?`` shows, in the current language: ``description`` and the options.

    IPython builds a magic's help once, when its module loads; this builds it again now.
    """

    def chat(line: str) -> None:
        pass

    chat.__doc__ = description
    return str(chat_arguments(chat).__doc__)


@dataclass(frozen=True)
class CellOptions:
    """A ``%%chat`` line, parsed and checked."""

    session: str | None = None
    model: str | None = None
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    thinking: Thinking = None  # None: TreeChat.thinking; THINKING_OFF: none for this cell
    budget: int | str | None = None  # None: TreeChat.context_budget
    new: bool = False
    from_node: str | None = None
    continue_leaf: bool = False
    tools: tuple[str, ...] | None = None
    allow_destructive: bool = False
    allow_run: bool = False
    provider: str | None = None
    raw: bool = False
    fanout: Fanout | None = None
    attach: tuple[str, ...] = ()
    with_refs: tuple[str, ...] = ()
    with_path: bool = False
    over: str | None = None
    same_experiment: bool = False
    concurrency: int | None = None
    batch: bool = False


def parse_cell_line(line: str) -> CellOptions:
    """Parse and check the ``%%chat`` line; ``UsageError`` (one line, with the fix) if wrong."""
    try:
        args = _options.parser.parse_args(shlex.split(line))  # type: ignore[attr-defined]
    except UsageError as error:
        raise UsageError(
            _("%%chat: {error}; `%%chat?` lists the options").format(error=error)
        ) from None
    except ValueError as error:  # an unbalanced quote
        raise UsageError(
            _("%%chat: cannot read the options ({error}); close the quote").format(error=error)
        ) from None
    chosen = [
        flag
        for flag, on in (
            ("--new", args.new),
            ("--from", args.from_node),
            ("--continue", args.continue_leaf),
            ("--same-experiment", args.same_experiment),
        )
        if on
    ]
    if len(chosen) > 1:
        raise UsageError(
            _("%%chat: {options} contradict; use only one of them").format(
                options=_(" and ").join(chosen)
            )
        )
    if args.max_tokens is not None and args.max_tokens <= 0:
        raise UsageError(
            _("%%chat: --max-tokens must be a positive number, e.g. --max-tokens 1024")
        )
    for single, many in (("model", "models"), ("temperature", "temperatures")):
        if getattr(args, single) is not None and getattr(args, many) is not None:
            raise UsageError(
                _(
                    "%%chat: --{single} and --{many} contradict; put every {single} in --{many}"
                ).format(single=single, many=many)
            )
    if args.raw and args.over is not None:
        raise UsageError(
            _("%%chat: --raw and --over contradict: --over fills each row's {column}; drop --raw")
        )
    if args.same_experiment and args.over is None:
        raise UsageError(_("%%chat: --same-experiment goes with --over NAME; add the rows"))
    if args.concurrency is not None and args.over is None:
        raise UsageError(_("%%chat: --concurrency goes with --over NAME; add the rows to ask"))
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(
            _("%%chat --concurrency: at least 1 request at once, e.g. --concurrency 4")
        )
    several = args.over is not None or (args.n or 1) > 1 or args.models or args.temperatures
    if args.batch and not several:
        raise UsageError(
            _(
                "%%chat --batch: a batch is many requests; add --over NAME, --n N, "
                "--models A,B or --temperatures T1,T2"
            )
        )
    if args.with_path and not args.with_refs:
        raise UsageError(_("%%chat: --with-path goes with --with ID; add the node to bring"))
    return CellOptions(
        session=args.session,
        model=args.model,
        system=args.system,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        thinking=parse_thinking(args.thinking),
        budget=parse_budget(args.budget, "%%chat --budget"),
        new=args.new,
        from_node=args.from_node,
        continue_leaf=args.continue_leaf,
        tools=parse_tool_names(args.tools),
        allow_destructive=args.allow_destructive,
        allow_run=args.allow_run,
        provider=args.provider,
        raw=args.raw,
        fanout=parse_fanout(args.n, args.models, args.temperatures, "%%chat", batch=args.batch),
        attach=tuple(args.attach or ()),
        with_refs=tuple(args.with_refs or ()),
        with_path=args.with_path,
        over=args.over,
        same_experiment=args.same_experiment,
        concurrency=args.concurrency,
        batch=args.batch,
    )


def parse_thinking(value: str | None) -> Thinking:
    """``"2048"`` → 2048; ``"adaptive"`` and ``"off"`` as they are; anything else a UsageError."""
    if value is None:
        return None
    word = value.strip().lower()
    if word in (ADAPTIVE, THINKING_OFF):
        return word
    if word.isdigit():
        return int(word)
    raise UsageError(
        _(
            "%%chat --thinking {value}: give a budget of tokens (e.g. --thinking 2048), "
            "'adaptive' or 'off'"
        ).format(value=value)
    )


def parse_budget(value: str | None, command: str) -> int | str | None:
    """``"3000"`` → 3000; ``"window"`` and ``"off"`` as they are; anything else a UsageError."""
    if value is None:
        return None
    word = value.strip().lower().replace(",", "").replace("_", "")
    if word in ("window", "off"):
        return word
    if word.isdigit() and int(word) > 0:
        return int(word)
    raise UsageError(
        _(
            "{command} {value}: give the tokens a request may hold (e.g. {command} 8000), "
            "'window' or 'off'"
        ).format(command=command, value=value)
    )


def parse_fanout(
    n: int | None,
    models: str | None,
    temperatures: str | None,
    command: str,
    *,
    batch: bool = False,
) -> Fanout | None:
    """The fan-out the options ask for (``None``: one answer, as without them); with
    ``batch``, sent as vendor batches."""
    if n is None and models is None and temperatures is None:
        return Fanout(batch=True) if batch else None
    if n is not None and n < 1:
        raise UsageError(
            _("{command} --n: ask for at least 1 answer, e.g. --n 3").format(command=command)
        )
    model_names = _listed(
        models, "--models", command, "--models claude-sonnet-4-6,claude-haiku-4-5"
    )
    values = _listed(temperatures, "--temperatures", command, "--temperatures 0,0.5,1")
    temps = tuple(_temperature(value, command) for value in values)
    try:
        return Fanout(n=n or 1, models=model_names, temperatures=temps, batch=batch)
    except ChatError as error:
        raise UsageError(f"{command}: {error}") from None


def _listed(value: str | None, flag: str, command: str, example: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = tuple(item.strip() for item in value.split(",") if item.strip())
    if not items:
        raise UsageError(
            _("{command} {flag}: the list is empty; give it comma-separated, {example}").format(
                command=command, flag=flag, example=example
            )
        )
    return items


def _temperature(value: str, command: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0 <= number < float("inf"):  # each endpoint's range is checked before asking
        raise UsageError(
            _(
                "{command} --temperatures: {value} is not a temperature (a number, 0 or more); "
                "give them comma-separated, e.g. --temperatures 0,0.5,1"
            ).format(command=command, value=repr(value))
        )
    return number


_FANOUT_FLAGS = ("--n", "--models", "--temperatures", "--batch")


def fanout_words(words: list[str], command: str) -> tuple[Fanout | None, list[str]]:
    """The fan-out options at the front of ``words`` (``--n 3`` or ``--n=3``), and the rest.

    Only the front is read, so a question's own text may contain ``--n``.
    """
    found: dict[str, str] = {}
    rest = list(words)
    batch = False
    while rest and rest[0].split("=", 1)[0] in _FANOUT_FLAGS:
        flag, _equals, value = rest.pop(0).partition("=")
        if flag == "--batch":
            batch = True
            continue
        if not value:
            if not rest:
                raise UsageError(
                    _("{command}: {flag} needs a value, e.g. {flag} 3").format(
                        command=command, flag=flag
                    )
                )
            value = rest.pop(0)
        found[flag] = value
    if not found:
        if batch:
            raise UsageError(
                _("{command} --batch: a batch is many requests; add --n N or --models A,B").format(
                    command=command
                )
            )
        return None, rest
    n = found.get("--n")
    try:
        count = int(n) if n is not None else None
    except ValueError:
        raise UsageError(
            _("{command} --n: {n} is not a number; e.g. --n 3").format(command=command, n=repr(n))
        ) from None

    fanout = parse_fanout(
        count, found.get("--models"), found.get("--temperatures"), command, batch=batch
    )
    return fanout, rest


def parse_tool_names(value: str | None) -> tuple[str, ...] | None:
    """``"a,b"`` → ``("a", "b")``; ``"none"`` → ``()``; nothing → ``None`` (all tools)."""
    if value is None:
        return None
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if names in ((), ("none",)):
        return ()
    return names
