"""Entry point: MCP tool arguments checked against the tool's own declared input schema.

A host may send anything; the schema the tools list is the contract, so a field it does not
declare (`content` for `text`), a missing required field or a value of the wrong type is refused
with what was wrong and the fields the tool expects, before any work. Only the subset of JSON
Schema the tools declare is understood: an object of properties with `type` (string, integer,
number, boolean, array of strings), `enum`, `minimum`, `maximum`, `required` and
`additionalProperties: false`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from memlane.domain.errors import InvalidQuery

_TYPE_NAMES: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
}


class ArgumentsRefused(InvalidQuery):
    """Tool arguments that break the tool's input schema; `expected` describes its fields."""

    def __init__(self, problems: list[str], expected: dict[str, str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)
        self.expected = expected


def expected_fields(schema: Mapping[str, object]) -> dict[str, str]:
    """Each field of `schema` with its type, whether required, and its description."""
    required = _strings(schema.get("required"))
    fields: dict[str, str] = {}
    for name, spec in _properties(schema).items():
        words = [_describe_type(spec)]
        if name in required:
            words.append("required")
        line = ", ".join(words)
        doc = spec.get("description")
        fields[name] = f"{line}: {doc}" if isinstance(doc, str) else line
    return fields


def check_arguments(schema: Mapping[str, object], args: Mapping[str, object]) -> None:
    """Raise ArgumentsRefused listing every way `args` breaks `schema` (nothing when it fits)."""
    properties = _properties(schema)
    problems: list[str] = []
    if schema.get("additionalProperties") is False:
        for name in args:
            if name not in properties:
                problems.append(f"unknown field {name!r}")
    for name in _strings(schema.get("required")):
        if name not in args:
            problems.append(f"missing required field {name!r}")
    for name, value in args.items():
        spec = properties.get(name)
        if spec is not None:
            problem = _check_value(spec, value)
            if problem is not None:
                problems.append(f"field {name!r} {problem}")
    if problems:
        raise ArgumentsRefused(problems, expected_fields(schema))


def _check_value(spec: Mapping[str, object], value: object) -> str | None:
    kind = spec.get("type")
    if not _has_type(kind, value):
        return f"must be {_TYPE_NAMES.get(str(kind), kind)}, not {_json_type(value)}"
    if kind == "array":
        items = spec.get("items")
        item_type = items.get("type") if isinstance(items, Mapping) else None
        assert isinstance(value, list)  # _has_type checked it
        if item_type is not None and not all(_has_type(item_type, v) for v in value):
            return f"must be a list of {item_type}s"
    enum = spec.get("enum")
    if isinstance(enum, list) and value not in enum:
        return "must be one of " + ", ".join(repr(v) for v in enum)
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = spec.get("minimum"), spec.get("maximum")
        if isinstance(low, int | float) and value < low:
            return f"must be at least {low}"
        if isinstance(high, int | float) and value > high:
            return f"must be at most {high}"
    return None


def _has_type(kind: object, value: object) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":  # JSON has one number type: 3.0 is the integer 3
        if isinstance(value, float):
            return math.isfinite(value) and value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        if isinstance(value, float):
            return math.isfinite(value)
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    return True  # no type declared: anything goes


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _describe_type(spec: Mapping[str, object]) -> str:
    enum = spec.get("enum")
    if isinstance(enum, list):
        return " | ".join(repr(v) for v in enum)
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items")
        item = items.get("type") if isinstance(items, Mapping) else None
        return f"list of {item}s" if item else "list"
    if isinstance(kind, list):  # a union such as ["string", "number"]
        return " or ".join(str(k) for k in kind)
    return str(kind)


def _properties(schema: Mapping[str, object]) -> dict[str, Mapping[str, object]]:
    found = schema.get("properties")
    if not isinstance(found, Mapping):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, Mapping)}


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
