"""Entry points, configuration stage 2, part: one written value checked against its row of the
key table (`check_leaf`, by the row's kind), and the small checks the tree walk shares (an
object, an optional string, a value's name in a message).

Separate from validate.py, which walks the tree: these look at one value and know nothing of
where it sits but the dotted path they put in the error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from memlane.domain.config import SecretRef
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.key_table.row import Key


def object_at(node: object, path: str) -> Mapping[str, object]:
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        raise ConfigError(path, f"must be an object, not {type_name(node)}")
    return node


def optional_string(node: object, path: str) -> str | None:
    if node is None:
        return None
    if not isinstance(node, str):
        raise ConfigError(path, f"must be a string, not {type_name(node)}")
    return node


def check_leaf(key: Key, value: object, path: str) -> object:
    """Return the validated value of one leaf, or raise ConfigError naming `path`."""
    kind = key.kind
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(path, f"must be true or false, not {type_name(value)}")
        return value
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(path, f"must be a number, not {type_name(value)}")
        if not math.isfinite(value):
            raise ConfigError(path, f"must be a finite number, not {value}")
        return value
    if kind in ("string", "provider"):
        return optional_string(value, path)
    if kind == "choice":
        if not isinstance(value, str) or value not in key.choices:
            raise ConfigError(path, f"must be one of {_listing(key.choices)}, not {value!r}")
        return value
    if kind in ("strings", "choices", "patterns"):
        items = _string_list(value, path)
        for index, item in enumerate(items):
            if kind == "choices" and item not in key.choices:
                allowed = _listing(key.choices)
                raise ConfigError(f"{path}[{index}]", f"must be one of {allowed}, not {item!r}")
            if kind == "patterns":
                _check_pattern(item, f"{path}[{index}]")
        return items
    if kind == "headers":
        headers = object_at(value, path)
        for name, header in headers.items():
            if not isinstance(header, str):
                raise ConfigError(f"{path}.{name}", "header values must be strings")
        return tuple((name, str(header)) for name, header in headers.items())
    if kind == "secret":
        return _secret(value, path)
    return value  # opaque: tolerated as written


def _string_list(value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(path, f"must be a list of strings, not {type_name(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigError(f"{path}[{index}]", f"must be a string, not {type_name(item)}")
    return tuple(str(item) for item in value)


def _check_pattern(pattern: str, path: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ConfigError(path, f"not a valid regular expression: {exc}") from exc


def _secret(value: object, path: str) -> str | SecretRef:
    if isinstance(value, str):
        return value
    ref = object_at(value, path)
    unknown = [key for key in ref if key not in ("source", "id", "provider")]
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}", "unknown key in a secret reference")
    source, ident, provider = ref.get("source"), ref.get("id"), ref.get("provider")
    if source != "env":
        raise ConfigError(
            f"{path}.source", f"only 'env' secret references are supported, not {source!r}"
        )
    if not isinstance(ident, str) or not ident:
        raise ConfigError(f"{path}.id", "must name the environment variable")
    if provider is not None and not isinstance(provider, str):
        raise ConfigError(f"{path}.provider", "must be a string")
    return SecretRef(source="env", id=ident, provider=provider)


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _listing(choices: Sequence[str]) -> str:
    return ", ".join(repr(choice) for choice in choices)
