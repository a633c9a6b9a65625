"""Entry points, configuration stage 3, merge: one agent's leaves over the defaults and the table.

Per key: the agent's `agents.list[]` block ?? `agents.defaults` ?? the key table's default, where
a JSON `null` already counts as unset (the validate stage drops it, as `??` does). Sub-objects are
merged key by key; `extraPaths` is concatenated (defaults first), trimmed and deduplicated;
`remote.headers` is taken whole from the level that defines it. A configured number is clamped to
its row's range here (integers floored first): out of range is not an error.

`Merged` is what the build stage reads: every key's value, and for a key that was written, the
path it was written at (so an error names it) and the fact that it was written at all (some
defaults follow other keys: the fusion's weights, the reference's alias names). It is plain data:
the build stage never calls back here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from memlane.entrypoints.config.keys import KEYS_BY_PATH
from memlane.entrypoints.config.validate import Flat, ValidConfig, Value

# Every key's built-in value (immutable: numbers, strings, tuples, None), read once.
_TABLE_DEFAULTS: Final[Mapping[str, object]] = {
    path: key.default for path, key in KEYS_BY_PATH.items()
}


@dataclass(frozen=True, slots=True)
class Merged:
    """One agent's merged configuration: a value for every key of the table."""

    agent: str
    values: Mapping[str, object]  # the configured value clamped, else the table default
    written: Flat  # the keys some level sets: the value as written and the path it came from


def merge(valid: ValidConfig) -> Merged:
    """Stage 3: the leaves of the agent `validate` chose over the defaults block and the table."""
    leaves = merge_blocks(valid.defaults_block, valid.entry_blocks.get(valid.agent, {}))
    values = dict(_TABLE_DEFAULTS)
    values.update((path, KEYS_BY_PATH[path].clamp(leaf.value)) for path, leaf in leaves.items())
    return Merged(valid.agent, values, leaves)


def merge_blocks(defaults: Flat, override: Flat) -> Flat:
    """Per key: override ?? defaults; extraPaths concatenated (defaults first)."""
    merged = {**defaults, **override}
    paths = [
        path
        for block in (defaults, override)
        if "extraPaths" in block
        for path in _strings(block["extraPaths"].value)
    ]
    if paths:
        cleaned = dict.fromkeys(p.strip() for p in paths if p.strip())
        origin = (override.get("extraPaths") or defaults["extraPaths"]).origin
        merged["extraPaths"] = Value(tuple(cleaned), origin)
    return merged


def _strings(value: object) -> tuple[str, ...]:
    return (
        tuple(item for item in value if isinstance(item, str)) if isinstance(value, tuple) else ()
    )
