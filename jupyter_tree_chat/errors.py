"""The project's error types, one hierarchy so every view can catch what it can explain.

Each message is one line a user can act on: it says what went wrong and the fix.
SDK and OS errors are translated into these at the layer that meets them (providers,
store), so nothing above sees an ``anthropic`` or ``OSError`` type.

    ChatError
    ├── TreeError                   an operation the tree refuses
    │   ├── NodeNotFound            no node has that id (or prefix)
    │   ├── AmbiguousId             a prefix names more than one node
    │   └── RoleOrderError          user under user, assistant under assistant, ...
    ├── StoreError                  the session file cannot be used
    │   ├── SessionNameError        a session name that is not a plain file name
    │   ├── SessionNotSaved         an append failed (disk full, read-only, deleted)
    │   └── FormatError             another tool's file that cannot be read or imported
    ├── SessionBusy                 another action is still running on this session
    ├── RequestRefused              a request the API would refuse, stopped before it is sent
    │   ├── SettingsError           thinking budget, max_tokens, temperature: a broken rule
    │   ├── ContextWindowFull       the path and the question would not fit the window
    │   └── EndpointRefuses         what the model's endpoint lacks (images, PDFs, thinking,
    │                               a temperature outside its range) or needs (its key)
    ├── ToolError                   a tool name that is not registered, or a bad function
    │   └── McpServerFailed         an MCP server misconfigured, or one that cannot start
    ├── ContextRefused              a value or file that cannot go into a question
    ├── FanoutTooLarge              more answers at once than a fan-out allows
    ├── MissingExtra                an optional dependency is not installed (one line)
    ├── QueryError                  a search that cannot run (empty, a bad regex, a role)
    ├── GradeError                  a grade or preference that cannot be kept (a score out
    │                               of range, a question graded, a grader not callable)
    └── ProviderError               the model call failed; a cut reply is kept
        ├── MissingApiKey           no ANTHROPIC_API_KEY where one is required
        ├── AuthenticationFailed    401: the key was refused
        ├── RateLimited             429 after every attempt (providers/retry.py)
        ├── Overloaded              529 (503 on Chat Completions) after every attempt
        ├── ServerError             other 5xx
        ├── ConnectionFailed        network unreachable, dropped or timed out
        │   └── RedirectRefused     a redirect to another host or to http: the key stays
        ├── StreamError             an ``error`` event inside the stream
        ├── BadRequest              400/404/413/422: the request itself was refused
        │   ├── FeatureMissing      an endpoint refused a feature its preset claims (once;
        │   │                       it is treated as missing from then on)
        │   └── PromptTooLong       400 "prompt is too long": the path is over the window
        ├── MaxTokensReached        the reply stopped at max_tokens
        └── Refused                 the model declined (stop_reason "refusal")
"""

from __future__ import annotations

from .i18n import _


class ChatError(Exception):
    """Base of every error this project raises on purpose."""


class GradeError(ChatError):
    """A grade or preference that cannot be kept; nothing was written."""


class TreeError(ChatError):
    """The session tree refuses an operation; the tree is unchanged."""


class NodeNotFound(TreeError, KeyError):
    """No node has this id or prefix."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else _("node not found")


class AmbiguousId(TreeError):
    """A prefix matches several nodes; the message lists some of them."""


class RoleOrderError(TreeError):
    """The new node's role cannot follow its parent's role."""


class StoreError(ChatError):
    """The session file cannot be read or written."""


class SessionNameError(StoreError, ValueError):
    """A session name that would escape the notebook's folder or is not a file name."""


class SessionNotSaved(StoreError):
    """An append failed; the in-memory session goes on, the file is left as it was."""


class FormatError(StoreError):
    """Another tool's file that none of the readers knows, or an import that cannot start."""


class ToolError(ChatError):
    """A tool the registry cannot describe or find; the message names the fix."""


class McpServerFailed(ToolError):
    """An MCP server whose configuration is wrong, or which cannot start (it exits, or
    does not speak MCP); the message ends with the last lines of its stderr."""


class ContextRefused(ChatError):
    """A ``{name}``, ``--attach`` file or ``--with`` node that cannot go into a question as
    it is (an SVG, an image by URL, too large without Pillow, not text): nothing is sent."""


class FanoutTooLarge(ChatError):
    """More combinations of samples, models and temperatures than one fan-out asks for."""


class MissingExtra(ChatError, ImportError):
    """An optional dependency is missing; IPython shows the one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class QueryError(ChatError, ValueError):
    """A search that cannot run: nothing to find, a regular expression that does not
    compile, an unknown role; nothing was searched."""


class SessionBusy(ChatError):
    """An action arrived (say, from the panel) while another turn was still running."""


class RequestRefused(ChatError):
    """A request the Messages API would refuse, refused here before anything is sent or
    stored; the message says the fix."""


class SettingsError(RequestRefused):
    """Settings that break one of the API's rules (the thinking budget, temperature with
    thinking, one thinking setting per tool turn)."""


class ContextWindowFull(RequestRefused):
    """The active path and the new question would not fit the model's context window."""


class EndpointRefuses(RequestRefused):
    """A request the model's endpoint would refuse (an image to a server that reads no
    images, a temperature outside its range, thinking it lacks) or cannot be sent at all
    (its key is not set): refused before anything is stored or sent."""


class ProviderError(ChatError):
    """The model call failed. ``partial`` is set by the session when a reply was cut."""

    #: short machine-readable kind, stored in ``meta.error`` of an interrupted node
    kind = "provider_error"
    #: the HTTP status the server answered, where there was one
    status: int | None = None
    #: seconds the server said to wait before asking again (``retry-after-ms`` or
    #: ``retry-after``), where it said; providers/retry.py waits that long
    retry_after: float | None = None
    #: whether asking again may succeed (a limit, an overload, a 5xx, a network blip
    #: before the reply began); providers/retry.py asks again only then
    retryable: bool = False


class MissingApiKey(ProviderError):
    kind = "missing_api_key"


class AuthenticationFailed(ProviderError):
    kind = "authentication_failed"


class RateLimited(ProviderError):
    kind = "rate_limited"
    retryable = True


class Overloaded(ProviderError):
    """529 (503 on Chat Completions), or an ``overloaded_error`` event mid-stream (the fix
    is the same either way: wait and retry)."""

    kind = "overloaded"
    retryable = True


class ServerError(ProviderError):
    kind = "server_error"
    retryable = True


class ConnectionFailed(ProviderError):
    kind = "connection_failed"


class RedirectRefused(ConnectionFailed):
    """The endpoint answered a redirect to another host, or from https to http: a request
    that carries a key does not follow it (providers/redirects.py)."""

    kind = "redirect_refused"


class StreamError(ProviderError):
    """An ``error`` event of another type inside the stream, or an event that is not JSON."""

    kind = "stream_error"


class BadRequest(ProviderError):
    kind = "bad_request"
    #: what the server said of the request (its error message), for telling which feature
    detail: str = ""


class FeatureMissing(BadRequest):
    """An endpoint answered 404 or 400 for a feature its preset says it has (count_tokens,
    cache_control, ...). Said once, in one line naming the endpoint and the feature; the
    feature is treated as missing from then on and the session keeps working."""

    kind = "feature_missing"


class PromptTooLong(BadRequest):
    """The server counted more tokens than the model's window ("prompt is too long: N
    tokens > M maximum"); ``api_message`` is its words. The session rewords it with the
    path's size, since that is what a user can change."""

    kind = "prompt_too_long"

    def __init__(self, message: str, api_message: str = "") -> None:
        super().__init__(message)
        self.api_message = api_message or message


class MaxTokensReached(ProviderError):
    """Providers do not raise this: they report ``Finished.stop_reason == "max_tokens"``
    and the session decides whether it becomes a notice or this error."""

    kind = "max_tokens"


class Refused(ProviderError):
    """Like ``MaxTokensReached``: a stop_reason ("refusal") that the session turns into this."""

    kind = "refusal"
