"""Entry points, configuration stage 3, merge: one agent's leaves over the defaults and the table.

Per key: the agent's `agents.list[]` block ?? `agents.defaults` ?? the key table's default, where
a JSON `null` already counts as unset (the validate stage drops it, as `??` does). Sub-objects are
merged key by key; `extraPaths` is concatenated (defaults first), trimmed and deduplicated;
`remote.headers` is taken whole from the level that defines it. A configured number is clamped to
its row's range here (integers floored first): out of range is not an error.

`Merged` is what the build stage reads: every key's value, and for a key that was written, the
path it was written at (so an error names it) and the fact that it was written at all (some
defaults follow other keys: the fusion's weights, the reference's alias names).
"""

from __future__ import annotations

from dataclasses import dataclass

from memlane.entrypoints.config.keys import KEYS_BY_PATH
from memlane.entrypoints.config.validate import Flat, ValidConfig, Value


@dataclass(frozen=True, slots=True)
class Merged:
    """One agent's merged leaves: the configured value clamped, else the table default."""

    agent: str
    leaves: Flat

    def raw(self, path: str) -> Value | None:
        """The leaf as written (its value unclamped), or None when no level sets it."""
        return self.leaves.get(path)

    def origin(self, path: str) -> str:
        """Where the key was written, for errors; `memorySearch.<key>` when it was not."""
        found = self.leaves.get(path)
        return found.origin if found is not None else f"memorySearch.{path}"

    def value(self, path: str) -> object:
        key = KEYS_BY_PATH[path]
        found = self.leaves.get(path)
        return key.default if found is None else key.clamp(found.value)

    def flag(self, path: str) -> bool:
        value = self.value(path)
        assert isinstance(value, bool), path
        return value

    def number(self, path: str) -> float:
        value = self.value(path)
        assert isinstance(value, float), path
        return value

    def integer(self, path: str) -> int:
        value = self.value(path)
        assert isinstance(value, int), path
        return value

    def optional_number(self, path: str) -> float | None:
        value = self.value(path)
        assert value is None or isinstance(value, float), path
        return value

    def optional_integer(self, path: str) -> int | None:
        value = self.value(path)
        assert value is None or isinstance(value, int), path
        return value

    def text(self, path: str) -> str | None:
        value = self.value(path)
        return value if isinstance(value, str) else None

    def strings(self, path: str) -> tuple[str, ...]:
        return _strings(self.value(path))


def merge(valid: ValidConfig, agent: str) -> Merged:
    """Stage 3: the leaves of `agent` (chosen by `ValidConfig.select`) over the defaults block."""
    return Merged(agent, merge_blocks(valid.defaults_block, valid.entry_blocks.get(agent, {})))


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
