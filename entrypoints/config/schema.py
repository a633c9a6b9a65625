"""Entry points: what the key table publishes: a JSON Schema, the README key list, effective values.

The schema describes what the resolver accepts, no more and no less: `null` is allowed wherever a
value is (it means unset), numbers out of range are clamped rather than rejected (so the range is
written in the description, not as `minimum` / `maximum`), and keys outside memlane's blocks are
tolerated (they belong to the host system's config).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Final

from memlane.domain.config import MemorySettings
from memlane.domain.url_passwords import mask_url_passwords
from memlane.entrypoints.config.key_table.row import shown_number
from memlane.entrypoints.config.keys import MEMORY_KEYS, MEMORY_SEARCH_KEYS, Key
from memlane.entrypoints.config.validate import AGENT_ID_PATTERN

README_START: Final = "<!-- configuration keys: generated from entrypoints/config/keys.py -->"
README_END: Final = "<!-- end of configuration keys -->"

_JSON_TYPES: Final[Mapping[str, str]] = {
    "bool": "boolean",
    "number": "number",
    "integer": "number",  # floored, so 2.5 is accepted
    "string": "string",
    "provider": "string",  # memlane's ids, OpenAI-compatible ones or any models.providers id
}


def json_schema() -> dict[str, object]:
    """The JSON Schema (draft 2020-12) of the config file, for editors."""
    nullable_string = {"type": ["string", "null"]}
    agent = {
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": {"type": "string", "pattern": f"^{AGENT_ID_PATTERN}$"},
            "default": {"type": ["boolean", "null"]},
            "workspace": nullable_string,
            "memorySearch": {"$ref": "#/$defs/memorySearch"},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "memlane configuration",
        "type": "object",
        "properties": {
            "agents": {
                "type": ["object", "null"],
                "properties": {
                    "defaults": {
                        "type": ["object", "null"],
                        "properties": {
                            "memorySearch": {"$ref": "#/$defs/memorySearch"},
                            "workspace": nullable_string,
                        },
                    },
                    "list": {"type": ["array", "null"], "items": agent},
                },
            },
            "memory": _object(MEMORY_KEYS),
        },
        "$defs": {"memorySearch": _object(MEMORY_SEARCH_KEYS)},
    }


def _object(keys: Sequence[Key], prefix: str = "") -> dict[str, object]:
    """A closed object schema for the keys under `prefix`, nested as they are written."""
    properties: dict[str, object] = {}
    nested: dict[str, list[Key]] = {}
    for key in keys:
        head, dot, _ = key.path.removeprefix(prefix).partition(".")
        if dot:
            properties.setdefault(head, {})
            nested.setdefault(head, []).append(key)
        else:
            properties[head] = _leaf(key)
    for head, members in nested.items():
        properties[head] = _object(members, f"{prefix}{head}.")
    return {"type": ["object", "null"], "properties": properties, "additionalProperties": False}


def _leaf(key: Key) -> dict[str, object]:
    schema: dict[str, object]
    if key.kind in _JSON_TYPES:
        schema = {"type": [_JSON_TYPES[key.kind], "null"]}
    elif key.kind == "choice":
        schema = {"enum": [*key.choices, None]}
    elif key.kind in ("choices", "strings", "patterns"):
        items = {"enum": list(key.choices)} if key.kind == "choices" else {"type": "string"}
        schema = {"type": ["array", "null"], "items": items}
    elif key.kind == "headers":
        schema = {"type": ["object", "null"], "additionalProperties": {"type": "string"}}
    elif key.kind == "secret":
        schema = {
            "anyOf": [
                {"type": ["string", "null"]},
                {
                    "type": "object",
                    "required": ["source", "id"],
                    "properties": {
                        "source": {"const": "env"},
                        "id": {"type": "string", "minLength": 1},
                        "provider": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
            ]
        }
    else:  # opaque
        schema = {}
    schema["description"] = describe(key)
    if key.default is not None:
        schema["default"] = _json(key.default)
    return schema


def describe(key: Key) -> str:
    """The key's doc with its range (clamped, not rejected) and, for integers, the flooring."""
    text = key.doc
    if key.low is not None or key.high is not None:
        text += f" Clamped to [{shown_number(key.low)}, {shown_number(key.high)}]."
    if key.kind == "integer":
        text += " Floored to an integer."
    return text


def _json(value: object) -> object:
    if isinstance(value, tuple):
        return [_json(item) for item in value]
    return value


# --- README -----------------------------------------------------------------------------------


def keys_markdown() -> str:
    """The README's key list: one table row per key of the table."""
    lines = [
        "Keys of `agents.defaults.memorySearch` (and of each `agents.list[].memorySearch`), then "
        "of `memory`:",
        "",
        "| key | type | default | description |",
        "|---|---|---|---|",
    ]
    for block, keys in (("", MEMORY_SEARCH_KEYS), ("memory.", MEMORY_KEYS)):
        for key in keys:
            default = "–" if key.default is None else f"`{_shown(key.default)}`"
            kind = " \\| ".join(f"`{c}`" for c in key.choices) if key.choices else key.kind
            if key.kind == "choices":
                kind = f"list of {kind}"
            lines.append(f"| `{block}{key.path}` | {kind} | {default} | {describe(key)} |")
    return "\n".join(lines)


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def render_readme(text: str) -> str:
    """Return `text` with the block between the README markers replaced by `keys_markdown()`.

    Raises:
        ValueError: the markers are missing.
    """
    start = text.index(README_START) + len(README_START)
    end = text.index(README_END, start)
    return f"{text[:start]}\n{keys_markdown()}\n{text[end:]}"


# --- status --json ----------------------------------------------------------------------------


def effective_settings(settings: MemorySettings) -> dict[str, object]:
    """Every key's resolved value, by dotted key (`memory.` for the memory block).

    Keys without a settings field (accepted, not used) are left out; header values are withheld,
    since they may be credentials and their names are enough to check a config; a password in a
    URL (`remote.baseUrl: http://user:pass@proxy/v1`) is masked.
    """
    shown: dict[str, object] = {}
    for block, keys in (("", MEMORY_SEARCH_KEYS), ("memory.", MEMORY_KEYS)):
        for key in keys:
            if key.field is None:
                continue
            value = attrgetter(key.field)(settings)
            if key.kind == "headers":
                value = tuple(name for name, _ in value)
            shown[block + key.path] = _without_url_passwords(_json(value))
    return shown


def _without_url_passwords(value: object) -> object:
    if isinstance(value, str):
        return mask_url_passwords(value)
    if isinstance(value, list):
        return [_without_url_passwords(item) for item in value]
    return value
