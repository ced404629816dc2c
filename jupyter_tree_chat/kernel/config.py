"""``TreeChat``: the kernel-wide settings, as traitlets, so IPython's own tools set them.

``%config TreeChat.model = "claude-sonnet-4-5"`` in a notebook, or
``c.TreeChat.model = ...`` in ``ipython_config.py``, both land here; a ``%%chat`` option
overrides a setting for one cell. Kept apart from the magic so the panel (which has no
cell options) reads the same settings.
"""

from __future__ import annotations

from typing import Any

from traitlets import Bool, CFloat, CInt, Dict, Enum, Int, List, Unicode, Union, validate
from traitlets.config import Configurable

from .. import i18n
from ..context import Limits
from ..conversation.session import Session
from ..conversation.settings import DEFAULT_MAX_TOOL_ROUNDS, ChatSettings
from ..history.store import SESSION_SUFFIX, validate_session_name
from ..i18n import AUTO, _
from ..measures.models import CONTEXT_WINDOWS, PRICES, TAKEN, Price, with_overrides
from ..providers import PROVIDER_NAMES
from ..providers.base import ADAPTIVE
from ..providers.endpoints.config import Endpoint, endpoint_table, known_prices, known_windows

#: ``--session default`` and ``%chat use default`` mean the notebook's unnamed session
DEFAULT_SESSION = "default"


def check_language(value: str) -> str:
    """``value`` if it names a language the kernel can show (or ``auto``), else a
    ValueError that lists the choices."""
    try:
        i18n.explicit_locale(value)
    except LookupError:
        raise ValueError(
            _("there is no catalog for {value!r}; give one of {choices}").format(
                value=value, choices=", ".join(i18n.choices())
            )
        ) from None
    return value.strip()


class TreeChat(Configurable):
    """Settings for ``%%chat`` and the panel. Set with ``%config TreeChat.NAME = value``."""

    model = Unicode(
        None,
        allow_none=True,
        help="Model name (ENDPOINT:MODEL for another endpoint, e.g. 'local:smollm2'); None "
        "uses the provider's default.",
    ).tag(config=True)
    max_tokens = CInt(4096, help="Most tokens a reply may have.").tag(config=True)
    system = Unicode(None, allow_none=True, help="System prompt sent with each request.").tag(
        config=True
    )
    temperature = CFloat(
        None, allow_none=True, help="Sampling temperature; None uses the API's default."
    ).tag(config=True)
    provider = Enum(
        PROVIDER_NAMES,
        default_value=None,
        allow_none=True,
        help="'anthropic' or 'offline'; None picks anthropic when ANTHROPIC_API_KEY is set.",
    ).tag(config=True)
    session = Unicode(
        None,
        allow_none=True,
        help="Session name (NAME in NOTEBOOK.NAME.chat.jsonl); None or 'default' is the "
        "notebook's unnamed session. `%chat use NAME` sets it.",
    ).tag(config=True)
    session_file = Unicode(
        None,
        allow_none=True,
        help="A *.chat.jsonl file to use instead of the notebook's own sessions (relative "
        "to the notebook's folder); a branch exported as a notebook sets it. None: the "
        "notebook's session (`session`). `%chat use NAME` clears it.",
    ).tag(config=True)
    substitute_variables = Bool(
        True, help="Replace {name} in a %%chat cell with the value of the Python variable."
    ).tag(config=True)
    max_rows = CInt(40, help="Most rows of a DataFrame in a question (its first and last).").tag(
        config=True
    )
    max_columns = CInt(20, help="Most columns of a DataFrame in a question.").tag(config=True)
    max_chars = CInt(
        20_000, help="Most characters of a value's text (repr, file, quote) in a question."
    ).tag(config=True)
    max_tool_rounds = CInt(DEFAULT_MAX_TOOL_ROUNDS, help="Most tool call rounds in one turn.").tag(
        config=True
    )
    thinking = Union(
        [Int(), Enum([ADAPTIVE])],
        default_value=None,
        allow_none=True,
        help="Extended thinking for every request: a budget of tokens (at least 1024, below "
        "max_tokens), 'adaptive', or None for none. `%%chat --thinking` overrides it.",
    ).tag(config=True)
    context_budget = Union(
        [Int(), Enum(["window", "off"])],
        default_value="window",
        help="Tokens a request may hold (system, tools, messages): past it, whole exchanges "
        "are kept newest first and a note stands for the rest; 'window' is the model's "
        "window less max_tokens and a 10% margin; 'off' sends the whole path. "
        "`%%chat --budget` overrides it.",
    ).tag(config=True)
    summarize_dropped = Bool(
        False,
        help="What the budget leaves out is summarised once by the model (stored as a "
        "compaction, reused by later requests) instead of noted.",
    ).tag(config=True)
    context_windows = Dict(
        value_trait=Int(),
        help="Context windows in tokens by model name, added to or replacing the built-in "
        f"table (models.py, taken {TAKEN}), e.g. {{'claude-sonnet-4-6': 200000}}.",
    ).tag(config=True)
    prices = Dict(
        help="Prices in US dollars per million tokens by model name, added to or replacing "
        f"the built-in table (models.py, taken {TAKEN}), e.g. {{'my-model': {{'input': 3, "
        "'output': 15}} (cache_write and cache_read default to 1.25x and 0.1x input).",
    ).tag(config=True)
    endpoints = Dict(
        help="Model endpoints by name, added to or overriding the presets (local, ollama, "
        "vllm, lmstudio, litellm, openrouter, deepseek, moonshot, zhipu, dashscope, "
        "minimax) field by field: {'lab': {'base_url': 'http://127.0.0.1:8081', "
        "'key_env': 'LAB_API_KEY', 'supports': {'images': False}}}. A model is then named "
        "'lab:MODEL'. See docs/endpoints.md.",
    ).tag(config=True)
    throttle = CFloat(
        0.1, help="Least seconds between two updates of a streaming reply's output."
    ).tag(config=True)
    compare_models = List(
        Unicode(),
        default_value=["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"],
        help='The models the panel\'s "Ask other models…" offers for a fan-out '
        "(ENDPOINT:MODEL for other endpoints, e.g. 'local:smollm2').",
    ).tag(config=True)
    compare_temperatures = List(
        CFloat(),
        default_value=[0.0, 0.5, 1.0],
        help='The temperatures the panel\'s "Ask other models…" offers for a fan-out.',
    ).tag(config=True)
    warm_up = Bool(
        True,
        help="Import the Anthropic SDK and build its client in the background when the "
        "extension loads (no network), so the first cell need not wait for it.",
    ).tag(config=True)
    tools = List(
        Unicode(),
        default_value=None,
        allow_none=True,
        help="The tools a cell offers when it gives no --tools: registered functions by name, "
        "MCP tools as server:tool or server:* (e.g. ['add', 'git:*']); None offers every "
        "registered function and no MCP tool.",
    ).tag(config=True)
    mcp_servers = Dict(
        help="MCP servers by name, in .mcp.json's shape: {'git': {'command': 'mcp-server-git', "
        "'args': ['--repository', '.']}} or {'docs': {'type': 'http', 'url': '...', "
        "'headers': {...}}}; ${VAR} is taken from the environment when a server starts. "
        "'allowed_tools': ['write_note'] names tools you trust to run without "
        "--allow-destructive. Added to the servers of .mcp.json beside the notebook (these "
        "win on a name).",
    ).tag(config=True)
    allow_destructive = Bool(
        False,
        help="Let destructive MCP tools run. As the MCP spec says, a tool is destructive "
        "unless its server annotates it readOnlyHint: true or destructiveHint: false, so a "
        "tool that says nothing counts as destructive; otherwise the model is told the tool "
        "was not run. --allow-destructive on a cell allows them for that cell; a server's "
        "'allowed_tools' lets the tools it names run always.",
    ).tag(config=True)
    allow_run = Bool(
        False,
        help="Let the model run Python in this kernel with the notebook server's run tool "
        "(--tools notebook:run); otherwise it is told the code was not run. --allow-run on a "
        "cell allows it for that cell; allow_destructive does not.",
    ).tag(config=True)
    tool_timeout = CFloat(
        120.0,
        allow_none=True,
        help="Seconds an MCP tool call, or code the notebook server runs, may take before it "
        "is stopped (None: no limit).",
    ).tag(config=True)
    language = Unicode(
        AUTO,
        help="The language of the kernel's texts (footers, notices, errors, %chat output): "
        "'auto' follows the language JupyterLab shows (the panel and the turn controls tell "
        "the kernel when they render), else the kernel's locale (LC_ALL, LC_MESSAGES, "
        "LANG), else English; or a locale with a catalog ('zh_CN', 'en'). "
        "`%chat language` shows where it comes from.",
    ).tag(config=True)
    offline_delay = CFloat(
        0.0, help="Seconds the offline provider waits between pieces (demos, tests)."
    ).tag(config=True)
    batch_poll = CFloat(
        5.0,
        help="Seconds between two looks at a pending --batch at first (then less often, "
        "up to a minute, while nothing changes).",
    ).tag(config=True)

    @validate("session")
    def _valid_session(self, proposal: Any) -> str | None:
        value = proposal["value"]
        if value is None or value == DEFAULT_SESSION:
            return None
        return validate_session_name(value)

    @validate("language")
    def _valid_language(self, proposal: Any) -> str:
        return check_language(str(proposal["value"]))

    @validate("session_file")
    def _valid_session_file(self, proposal: Any) -> str | None:
        value = proposal["value"]
        if value and not str(value).endswith(SESSION_SUFFIX):
            raise ValueError(
                _("TreeChat.session_file must name a *{suffix} file, not {value}").format(
                    suffix=SESSION_SUFFIX, value=repr(value)
                )
            )
        return value or None

    @validate("prices")
    def _valid_prices(self, proposal: Any) -> dict[str, Any]:
        value = proposal["value"]
        for model, price in value.items():
            if not isinstance(price, (dict, Price)):
                raise ValueError(
                    _(
                        "the price of {model} must be a dict like {{'input': 3, 'output': 15}}"
                    ).format(model=repr(model))
                )
            if isinstance(price, dict):
                Price.from_mapping(price)  # raises with the fix
        return dict(value)

    @validate("endpoints")
    def _valid_endpoints(self, proposal: Any) -> dict[str, Any]:
        value = dict(proposal["value"])
        endpoint_table(value)  # raises with the fix
        return value

    @validate("context_budget")
    def _valid_budget(self, proposal: Any) -> int | str:
        value = proposal["value"]
        if isinstance(value, int) and value <= 0:
            raise ValueError(
                _("context_budget must be a positive number of tokens, not {value}").format(
                    value=value
                )
            )
        return value

    @validate("max_tokens", "max_tool_rounds", "max_rows", "max_columns", "max_chars")
    def _positive(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if value < 0 or (value == 0 and proposal["trait"].name != "max_tool_rounds"):
            raise ValueError(
                _("{name} must be a positive number, not {value}").format(
                    name=proposal["trait"].name, value=value
                )
            )

        return value

    def limits(self) -> Limits:
        """How much of a value goes into a question."""
        return Limits(self.max_rows, self.max_columns, self.max_chars)

    def compare_choices(self) -> dict[str, list[Any]]:
        """What the panel offers for a fan-out: ``models`` and ``temperatures``."""
        return {
            "models": list(self.compare_models),
            "temperatures": list(self.compare_temperatures),
        }

    def chat_settings(self) -> ChatSettings:
        """These settings as the session's ``ChatSettings``."""
        return ChatSettings(
            model=self.model or None,
            max_tokens=self.max_tokens,
            system=self.system or None,
            temperature=self.temperature,
            max_tool_rounds=self.max_tool_rounds,
            thinking=self.thinking,
            tools=tuple(self.tools) if self.tools is not None else None,
            allow_destructive=self.allow_destructive,
            allow_run=self.allow_run,
            context_budget=self.context_budget,
            summarize_dropped=self.summarize_dropped,
        )

    def endpoint_table(self) -> dict[str, Endpoint]:
        """The presets with this config's ``endpoints`` on top."""
        return endpoint_table(self.endpoints)

    def apply_tables(self, session: Session) -> None:
        """Give ``session`` the model tables (with what the endpoints know of their models)
        with this config's entries on top."""
        table = self.endpoint_table()
        windows = {**CONTEXT_WINDOWS, **known_windows(table)}
        session.context_windows = with_overrides(windows, self.context_windows)
        prices = {
            model: price if isinstance(price, Price) else Price.from_mapping(price)
            for model, price in self.prices.items()
        }
        session.prices = with_overrides({**PRICES, **known_prices(table)}, prices)
