"""The tool registry: what the model is told about a function, and what it gets back."""

from __future__ import annotations

import enum
from typing import Annotated, Literal, Optional

import pytest

from jupyter_tree_chat.errors import ChatError, ToolError
from jupyter_tree_chat.providers.base import ToolSpec
from jupyter_tree_chat.providers.tools.functions import (
    ToolRegistry,
    default_registry,
    parse_docstring,
    result_text,
    tool,
)


def schema_of(fn: object, **kwargs: object) -> dict:
    registry = ToolRegistry()
    registry.register(fn, **kwargs)  # type: ignore[call-overload]
    return registry.specs()[0].input_schema


def use(name: str, input: object, id: str = "toolu_1") -> dict:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


# --- schemas ---------------------------------------------------------------------------


def test_parameters_without_defaults_are_required_and_defaults_are_shown() -> None:
    def get_weather(city: str, days: int = 3, metric: bool = True, ratio: float = 0.5) -> str:
        return city

    assert schema_of(get_weather) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 3},
            "metric": {"type": "boolean", "default": True},
            "ratio": {"type": "number", "default": 0.5},
        },
        "required": ["city"],
    }


def test_optional_and_pipe_none_accept_null() -> None:
    def f(a: Optional[str], b: int | None = None) -> None:  # noqa: UP045
        pass

    props = schema_of(f)["properties"]
    assert props["a"] == {"type": ["string", "null"]}
    assert props["b"] == {"type": ["integer", "null"], "default": None}
    assert schema_of(f)["required"] == ["a"]


def test_lists_and_dicts_give_arrays_with_items_and_objects() -> None:
    def f(numbers: list[int], names: list[str], options: dict, plain: list) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["numbers"] == {"type": "array", "items": {"type": "integer"}}
    assert props["names"] == {"type": "array", "items": {"type": "string"}}
    assert props["options"] == {"type": "object"}
    assert props["plain"] == {"type": "array"}


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_literal_and_enum_give_an_enum() -> None:
    def f(units: Literal["metric", "imperial"], color: Color = Color.RED) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["units"] == {"enum": ["metric", "imperial"], "type": "string"}
    assert props["color"] == {"enum": ["red", "blue"], "type": "string"}


def test_a_hint_that_cannot_be_resolved_spoils_only_its_own_parameter() -> None:
    class Local:  # not visible from the module: its string annotation cannot be evaluated
        pass

    def f(thing: Local, count: int) -> None:
        pass

    assert schema_of(f)["properties"] == {"thing": {}, "count": {"type": "integer"}}


def test_unannotated_and_star_parameters() -> None:
    def f(anything, *args, **kwargs):  # type: ignore[no-untyped-def]
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {"anything": {}},
        "required": ["anything"],
    }


def test_annotated_string_becomes_the_description() -> None:
    def f(city: Annotated[str, "The city to look up"]) -> None:
        pass

    assert schema_of(f)["properties"]["city"] == {
        "type": "string",
        "description": "The city to look up",
    }


def test_google_docstring_gives_summary_and_parameter_descriptions() -> None:
    def get_weather(city: str, days: int = 1) -> str:
        """Get the weather forecast
        for a city.

        Uses a made-up service.

        Args:
            city (str): The city name,
                e.g. Paris.
            days: How many days ahead.

        Returns:
            A sentence.
        """
        return ""

    registry = ToolRegistry()
    registry.register(get_weather)
    spec = registry.specs()[0]
    assert spec.description == "Get the weather forecast for a city."
    assert spec.input_schema["properties"]["city"]["description"] == "The city name, e.g. Paris."
    assert spec.input_schema["properties"]["days"]["description"] == "How many days ahead."


def test_numpy_docstring_parameters() -> None:
    doc = """Add numbers.

    Parameters
    ----------
    a : int
        The first.
    b : int
        The second.

    Returns
    -------
    int
    """
    assert parse_docstring(doc) == ("Add numbers.", {"a": "The first.", "b": "The second."})


def test_rest_docstring_parameters() -> None:
    doc = """Add numbers.

    :param a: The first.
    :param int b: The second,
        continued.
    :returns: the sum
    """
    assert parse_docstring(doc) == (
        "Add numbers.",
        {"a": "The first.", "b": "The second, continued."},
    )


def test_no_docstring_still_gives_a_description() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    registry = ToolRegistry()
    registry.register(add)
    assert registry.specs()[0].description == "The Python function add(a: int, b: int) -> int."


# --- registering -----------------------------------------------------------------------


def test_register_as_plain_decorator_keeps_the_function_callable() -> None:
    registry = ToolRegistry()

    @registry.register
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert add(2, 3) == 5
    assert "add" in registry
    assert registry.names() == ("add",)
    assert registry.specs() == (
        ToolSpec(
            name="add",
            description="Add two integers.",
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        ),
    )


def test_register_with_arguments_overrides_name_and_description() -> None:
    registry = ToolRegistry()

    @registry.register(name="weather", description="Today's weather.")
    def get_weather(city: str) -> str:
        """Ignored."""
        return city

    assert "weather" in registry and "get_weather" not in registry
    assert registry.specs()[0].description == "Today's weather."
    assert get_weather("Paris") == "Paris"


def test_register_called_directly_and_empty_parentheses() -> None:
    registry = ToolRegistry()

    def one() -> int:
        return 1

    registry.register(one)

    @registry.register()
    def two() -> int:
        return 2

    assert registry.names() == ("one", "two")
    assert len(registry) == 2


def test_registering_the_same_name_again_replaces_the_tool() -> None:
    registry = ToolRegistry()

    def answer() -> int:
        return 1

    def answer_again() -> int:  # the same cell, edited and run again
        return 2

    registry.register(answer)
    registry.register(answer_again, name="answer")

    assert len(registry) == 1
    assert registry.run(use("answer", {}))["content"] == "2"


def test_a_lambda_needs_a_name() -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolError, match="name="):
        registry.register(lambda: 1)
    registry.register(lambda: 1, name="one")
    assert "one" in registry


def test_a_non_function_is_refused() -> None:
    with pytest.raises(ToolError, match="must be a function"):
        ToolRegistry().register(42)  # type: ignore[call-overload]


def test_specs_of_named_tools_in_the_order_asked() -> None:
    registry = ToolRegistry()
    for name in ("a", "b", "c"):
        registry.register(lambda: None, name=name)
    assert [s.name for s in registry.specs(["c", "a"])] == ["c", "a"]
    assert [s.name for s in registry.specs("b")] == ["b"]


def test_specs_of_an_unknown_name_raise_a_tool_error_listing_the_known_ones() -> None:
    registry = ToolRegistry()
    registry.register(lambda: None, name="add")
    with pytest.raises(ToolError, match=r"'sub'.*registered tools: add") as info:
        registry.specs(["sub"])
    assert isinstance(info.value, ChatError)


def test_the_tool_decorator_fills_the_default_registry() -> None:
    @tool(name="test_tools_shout")
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    try:
        assert "test_tools_shout" in default_registry
        result = default_registry.run(use("test_tools_shout", {"text": "hi"}))
        assert result["content"] == "HI"
    finally:
        default_registry.unregister("test_tools_shout")
    assert "test_tools_shout" not in default_registry


# --- running ---------------------------------------------------------------------------


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def add(a: int, b: int = 0) -> int:
        return a + b

    @registry.register
    def divide(a: float, b: float) -> float:
        return a / b

    @registry.register
    def forecast(city: str) -> dict:
        return {"city": city, "sky": "clear", "temp_c": 21}

    @registry.register
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @registry.register
    def nothing() -> object:
        return object.__new__(Opaque)

    return registry


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque>"


def test_run_returns_a_tool_result_for_the_same_id(registry: ToolRegistry) -> None:
    assert registry.run(use("add", {"a": 2, "b": 3}, id="toolu_42")) == {
        "type": "tool_result",
        "tool_use_id": "toolu_42",
        "content": "5",
    }


def test_run_uses_defaults_for_missing_optional_arguments(registry: ToolRegistry) -> None:
    assert registry.run(use("add", {"a": 7}))["content"] == "7"


def test_results_become_text_str_as_is_else_json_else_repr(registry: ToolRegistry) -> None:
    assert registry.run(use("greet", {"name": "Ada"}))["content"] == "Hello, Ada!"
    assert (
        registry.run(use("forecast", {"city": "Paris"}))["content"]
        == '{"city": "Paris", "sky": "clear", "temp_c": 21}'
    )
    assert registry.run(use("nothing", {}))["content"] == "<Opaque>"
    assert result_text(None) == "null"
    assert result_text("ünïcode") == "ünïcode"


def test_an_exception_becomes_an_error_result_not_a_crash(registry: ToolRegistry) -> None:
    assert registry.run(use("divide", {"a": 1, "b": 0})) == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "ZeroDivisionError: division by zero",
        "is_error": True,
    }


def test_an_unknown_tool_becomes_an_error_result(registry: ToolRegistry) -> None:
    result = registry.run(use("subtract", {"a": 1}))
    assert result["is_error"] is True
    assert result["tool_use_id"] == "toolu_1"
    assert "Unknown tool 'subtract'" in result["content"]
    assert "add" in result["content"]


def test_missing_or_unexpected_arguments_become_an_error_result(registry: ToolRegistry) -> None:
    missing = registry.run(use("add", {"b": 1}))
    assert missing["is_error"] is True
    assert missing["content"].startswith("Bad arguments for add:")
    assert "'a'" in missing["content"]
    unexpected = registry.run(use("add", {"a": 1, "c": 2}))
    assert unexpected["is_error"] is True
    assert "'c'" in unexpected["content"]


def test_input_that_is_not_an_object_becomes_an_error_result(registry: ToolRegistry) -> None:
    result = registry.run(use("add", [1, 2]))
    assert result["is_error"] is True
    assert "must be a JSON object" in result["content"]


def test_a_type_error_inside_the_tool_is_reported_as_raised(registry: ToolRegistry) -> None:
    result = registry.run(use("add", {"a": "x", "b": 1}))
    assert result["is_error"] is True
    assert result["content"].startswith("TypeError: ")


def test_positional_only_parameters_are_filled_from_input() -> None:
    registry = ToolRegistry()

    @registry.register
    def power(base: int, /, exponent: int = 2) -> int:
        return int(base**exponent)

    assert registry.run(use("power", {"base": 3}))["content"] == "9"
    assert registry.run(use("power", {"base": 2, "exponent": 10}))["content"] == "1024"


def test_keyboard_interrupt_is_not_swallowed() -> None:
    registry = ToolRegistry()

    @registry.register
    def stop() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        registry.run(use("stop", {}))
