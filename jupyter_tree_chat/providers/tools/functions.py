"""Tools: plain Python functions the user registers, described to the model and run here.

The model never runs code. It asks for a tool by name with JSON input (a ``tool_use``
block); the session runs the function in the kernel and stores the answer as a
``tool_result`` user node. This module owns both halves of that contract:

- ``ToolRegistry.register`` turns a function into a ``ToolSpec``: the JSON schema comes
  from the signature and type hints, the descriptions from the docstring, so a user
  writes an ordinary documented function and nothing else.
- ``ToolRegistry.run`` answers a ``tool_use`` block with a ``tool_result`` block, always:
  an unknown name, bad arguments or an exception become an ``is_error`` result the model
  can read and recover from, never a crash of the session.

    registry = ToolRegistry()

    @registry.register
    def add(a: int, b: int = 0) -> int:
        '''Add two integers.'''
        return a + b

    registry.run({"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2}})
    # {"type": "tool_result", "tool_use_id": "t1", "content": "2"}
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ...errors import ToolError
from ...i18n import _
from ..base import ToolSpec

F = TypeVar("F", bound=Callable[..., Any])

#: the names the Messages API accepts for a tool
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Tool:
    """A registered function and the spec the model sees for it."""

    function: Callable[..., Any]
    spec: ToolSpec
    signature: inspect.Signature

    @property
    def name(self) -> str:
        return self.spec.name

    def bind(self, arguments: Mapping[str, Any]) -> inspect.BoundArguments:
        """Map the model's JSON input onto the signature; ``TypeError`` if it does not fit."""
        positional_only = [
            p.name
            for p in self.signature.parameters.values()
            if p.kind is inspect.Parameter.POSITIONAL_ONLY
        ]
        args: list[Any] = []
        for name in positional_only:
            if name not in arguments:
                break
            args.append(arguments[name])
        kwargs = {k: v for k, v in arguments.items() if k not in positional_only[: len(args)]}
        return self.signature.bind(*args, **kwargs)


class ToolRegistry:
    """The tools a session may offer the model, by name, in registration order.

    Registering a function under a name already taken replaces the old one: re-running
    a notebook cell that defines a tool must not fail.
    """

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    @overload
    def register(self, fn: F, *, name: str | None = None, description: str | None = None) -> F: ...

    @overload
    def register(
        self, fn: None = None, *, name: str | None = None, description: str | None = None
    ) -> Callable[[F], F]: ...

    def register(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> Any:
        """Register ``fn`` as a tool; usable as ``@register`` or ``@register(name=...)``.

        The function is returned unchanged, so it stays callable as before.
        """

        def decorate(function: F) -> F:
            tool = make_tool(function, name=name, description=description)
            self._tools[tool.name] = tool
            return function

        if fn is None:
            return decorate
        return decorate(fn)

    def unregister(self, name: str) -> None:
        """Forget a tool; ``ToolError`` if no tool has that name."""
        self.get(name)
        del self._tools[name]

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            if self._tools:
                why = _(
                    "No tool named {name}; registered tools: {tools}. Register it with @tool first."
                )
            else:
                why = _("No tool named {name}; none registered. Register it with @tool first.")
            raise ToolError(why.format(name=repr(name), tools=", ".join(self._tools))) from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def specs(self, names: Iterable[str] | None = None) -> tuple[ToolSpec, ...]:
        """The specs to send with a request: all tools, or the named ones in that order."""
        if names is None:
            return tuple(tool.spec for tool in self._tools.values())
        if isinstance(names, str):  # one name, not its characters
            names = (names,)
        return tuple(self.get(n).spec for n in dict.fromkeys(names))

    def run(
        self, block: Mapping[str, Any], offered: Collection[str] | None = None
    ) -> dict[str, Any]:
        """Answer a ``tool_use`` block with a ``tool_result`` block. Never raises for the
        tool's own failures: they come back as ``is_error`` results for the model.

        ``offered`` names the tools the request offered: a call to any other (one the
        request defined as not callable, see tools/wire.py, or one it never offered) is
        answered with an error and nothing runs."""
        tool_use_id = str(block.get("id", ""))
        name = block.get("name")
        if offered is not None and name not in offered:
            allowed = ", ".join(sorted(offered)) or "none"
            return _error_result(
                tool_use_id,
                f"The tool {name!r} is not callable in this request: it was only used "
                f"earlier in the conversation. Tools you may call: {allowed}.",
            )
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return _error_result(tool_use_id, f"Unknown tool {name!r}; {self._known()}.")
        arguments = block.get("input")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return _error_result(
                tool_use_id,
                f"Bad arguments for {tool.name}: input must be a JSON object, "
                f"got {type(arguments).__name__}.",
            )
        try:
            bound = tool.bind(arguments)
        except TypeError as exc:
            return _error_result(tool_use_id, f"Bad arguments for {tool.name}: {exc}.")
        try:
            value = tool.function(*bound.args, **bound.kwargs)
        except Exception as exc:  # the model reads it and may recover; Ctrl-C still stops
            return _error_result(tool_use_id, f"{type(exc).__name__}: {exc}")
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": result_text(value)}

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._tools)!r})"

    def _known(self) -> str:
        return f"registered tools: {', '.join(self._tools)}" if self._tools else "none registered"


#: the registry ``@tool`` fills; a session uses it unless given another
default_registry = ToolRegistry()

#: the meta key of a tool round's node: the definitions the model was offered for the
#: tools it called in that round, as they were then (tools/wire.py sends them later)
KEPT_DEFINITIONS = "tool_definitions"


def definitions_called(
    specs: Iterable[ToolSpec], uses: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The offered definitions of the tools ``uses`` called, to keep with their round."""
    called = {use.get("name") for use in uses}
    return [spec.to_api() for spec in specs if spec.name in called]


def kept_definitions(metas: Iterable[Mapping[str, Any] | None]) -> tuple[ToolSpec, ...]:
    """The definitions kept in a path's tool rounds (``KEPT_DEFINITIONS``), newest first."""
    found: list[ToolSpec] = []
    for meta in metas:
        kept = meta.get(KEPT_DEFINITIONS) if meta else None
        for raw in kept if isinstance(kept, list) else []:
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                schema = raw.get("input_schema")
                found.append(
                    ToolSpec(
                        name=raw["name"],
                        description=str(raw.get("description") or ""),
                        input_schema=schema if isinstance(schema, dict) else {"type": "object"},
                    )
                )
    return tuple(reversed(found))


@overload
def tool(fn: F, *, name: str | None = None, description: str | None = None) -> F: ...


@overload
def tool(
    fn: None = None, *, name: str | None = None, description: str | None = None
) -> Callable[[F], F]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Any:
    """Register a function in the default registry: ``@tool`` or ``@tool(name=...)``."""
    return default_registry.register(fn, name=name, description=description)


# --- describing a function -------------------------------------------------------------


def make_tool(
    function: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> Tool:
    """Describe ``function`` as a tool; ``ToolError`` if it cannot be offered to a model."""
    if not callable(function):
        why = _("A tool must be a function, got {kind}.")
        raise ToolError(why.format(kind=type(function).__name__))
    tool_name = str(name or getattr(function, "__name__", ""))
    if not _TOOL_NAME.match(tool_name):
        raise ToolError(
            _(
                "{name} is not a valid tool name (letters, digits, _ or -, at most 64); "
                "pass name=... when registering."
            ).format(name=repr(tool_name))
        )
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        why = _("Cannot read the signature of {name}: {error}.")
        raise ToolError(why.format(name=tool_name, error=exc)) from None

    summary, param_docs = parse_docstring(inspect.getdoc(function) or "")
    shown = resolved_signature(function, signature)
    spec = ToolSpec(
        name=tool_name,
        description=description or summary or f"The Python function {tool_name}{shown}.",
        input_schema=input_schema(function, shown, param_docs),
    )
    return Tool(function=function, spec=spec, signature=signature)


def resolved_signature(
    function: Callable[..., Any], signature: inspect.Signature | None = None
) -> inspect.Signature:
    """The signature with string annotations (``from __future__ import annotations``)
    evaluated where possible, one by one, so one unresolvable hint spoils only itself."""
    signature = signature or inspect.signature(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:  # a hint naming something not visible from the function's module
        hints = {}
    namespace = getattr(function, "__globals__", {})

    def resolve(annotation: Any, name: str) -> Any:
        if name in hints:
            return hints[name]
        if isinstance(annotation, str):
            try:
                return eval(annotation, dict(namespace))
            except Exception:
                return annotation
        return annotation

    parameters = [
        p.replace(annotation=resolve(p.annotation, p.name)) for p in signature.parameters.values()
    ]
    return signature.replace(
        parameters=parameters,
        return_annotation=resolve(signature.return_annotation, "return"),
    )


def input_schema(
    function: Callable[..., Any],
    signature: inspect.Signature | None = None,
    param_docs: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON schema of a function's parameters (``*args``/``**kwargs`` are left out)."""
    signature = resolved_signature(function, signature)
    param_docs = param_docs or {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        schema = type_schema(param.annotation)
        if param.name in param_docs and "description" not in schema:
            schema["description"] = param_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif _is_json(param.default):
            schema["default"] = param.default
        properties[param.name] = schema
    return {"type": "object", "properties": properties, "required": required}


_SIMPLE_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "array",
    tuple: "array",
    set: "array",
    frozenset: "array",
    dict: "object",
}


def type_schema(annotation: Any) -> dict[str, Any]:
    """The JSON schema of one type hint; ``{}`` (any value) for what JSON cannot say."""
    if annotation is inspect.Parameter.empty or annotation is Any or isinstance(annotation, str):
        return {}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = type_schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            schema["description"] = " ".join(notes)
        return schema
    if origin is typing.Literal:
        return _enum_schema(list(args))
    if origin is typing.Union or origin is types.UnionType:
        return _union_schema(args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema([member.value for member in annotation])
    if annotation in _SIMPLE_TYPES:
        return {"type": _SIMPLE_TYPES[annotation]}
    if origin in (list, set, frozenset) or (origin is tuple and len(args) == 2 and args[1] is ...):
        return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        return {"type": "array", "prefixItems": [type_schema(a) for a in args]}
    if origin is dict:
        if len(args) == 2 and type_schema(args[1]):
            return {"type": "object", "additionalProperties": type_schema(args[1])}
        return {"type": "object"}
    if isinstance(origin, type) and origin in _SIMPLE_TYPES:  # e.g. collections.abc generics
        return {"type": _SIMPLE_TYPES[origin]}
    return {}


def _union_schema(args: tuple[Any, ...]) -> dict[str, Any]:
    members = [type_schema(a) for a in args if a is not type(None)]
    nullable = len(members) < len(args)
    if any(not m for m in members):  # one member is "anything"
        return {}
    if len(members) == 1 and nullable:
        only = members[0]
        if isinstance(only.get("type"), str) and set(only) <= {"type", "items"}:
            return {**only, "type": [only["type"], "null"]}
        if "enum" in only and set(only) <= {"enum", "type"}:
            return {"enum": [*only["enum"], None]}
    if nullable:
        members.append({"type": "null"})
    return members[0] if len(members) == 1 else {"anyOf": members}


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = {_SIMPLE_TYPES.get(type(v)) for v in values}
    schema: dict[str, Any] = {"enum": values}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    return schema


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


# --- docstrings ------------------------------------------------------------------------

_GOOGLE_ARGS = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args):\s*$")
_GOOGLE_SECTION = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")
_GOOGLE_ITEM = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_REST_FIELD = re.compile(r"^:\w+")
_UNDERLINE = re.compile(r"^-{3,}\s*$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(summary, {parameter: description})`` from a Google, NumPy or reST docstring.

    The summary is the first paragraph, joined into one line.
    """
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    summary: list[str] = []
    for index, line in enumerate(lines):
        text = line.strip()
        is_header = (
            _GOOGLE_ARGS.match(text)
            or _REST_FIELD.match(text)
            or (index + 1 < len(lines) and _UNDERLINE.match(lines[index + 1].strip()))
        )
        if not text or is_header:
            break
        summary.append(text)
    params = {**_numpy_params(lines), **_google_params(lines), **_rest_params(lines)}
    return " ".join(summary), params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _collect(items: dict[str, list[str]]) -> dict[str, str]:
    return {name: " ".join(part for part in parts if part) for name, parts in items.items()}


def _google_params(lines: list[str]) -> dict[str, str]:
    items: dict[str, list[str]] = {}
    inside, item_indent, current = False, -1, ""
    for line in lines:
        text = line.strip()
        if _GOOGLE_ARGS.match(text):
            inside, item_indent, current = True, -1, ""
            continue
        if not inside or not text:
            continue
        if _indent(line) == 0 and _GOOGLE_SECTION.match(text):  # Returns:, Raises:, ...
            inside = False
            continue
        if item_indent < 0:
            item_indent = _indent(line)
        match = _GOOGLE_ITEM.match(text)
        if _indent(line) <= item_indent and match:
            current = match.group(1)
            items[current] = [match.group(2).strip()]
        elif current and _indent(line) > item_indent:
            items[current].append(text)
    return _collect(items)


def _numpy_params(lines: list[str]) -> dict[str, str]:
    items: dict[str, list[str]] = {}
    inside, current = False, ""
    for index, line in enumerate(lines):
        text = line.strip()
        next_is_underline = index + 1 < len(lines) and bool(
            _UNDERLINE.match(lines[index + 1].strip())
        )
        if next_is_underline:  # a section header
            inside, current = text in ("Parameters", "Other Parameters"), ""
            continue
        if not inside or not text or _UNDERLINE.match(text):
            continue
        match = _NUMPY_ITEM.match(text)
        if _indent(line) == 0 and match:
            current = match.group(1)
            items[current] = []
        elif current and _indent(line) > 0:
            items[current].append(text)
    return _collect(items)


def _rest_params(lines: list[str]) -> dict[str, str]:
    items: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        text = line.strip()
        match = _REST_PARAM.match(text)
        if match:
            current = match.group(1)
            items[current] = [match.group(2).strip()]
        elif _REST_FIELD.match(text) or not text:
            current = ""
        elif current and _indent(line) > 0:
            items[current].append(text)
    return _collect(items)


# --- results ---------------------------------------------------------------------------


def result_text(value: Any) -> str:
    """A function's return value as the text the model reads: str as is, else JSON, else repr."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _error_result(tool_use_id: str, message: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message, "is_error": True}
