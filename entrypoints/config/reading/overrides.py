"""Entry points, configuration stage 1, part: the overrides of the environment
(`MEMLANE_PROVIDER` / `_MODEL` / `_FALLBACK`) and the flags, each a dotted memorySearch key
written into every memorySearch block of the tree (step 4 of read.py's module doc).

Separate from read.py because it edits a tree already read and knows nothing of files.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from memlane.domain.errors import ConfigError


def apply_overrides(
    tree: Mapping[str, object], overrides: Mapping[str, object]
) -> dict[str, object]:
    """Return a copy of `tree` where each dotted memorySearch key wins for every agent.

    Each key (`"provider"`, `"query.maxResults"`) is written into `agents.defaults.memorySearch`
    and into every `agents.list[].memorySearch` that exists, so an override beats both levels.
    Values are validated later by the validate stage, like values from the file.

    Raises:
        ConfigError: a key is empty or the tree has a non-object where the path must go.
    """
    result: dict[str, object] = copy.deepcopy(dict(tree))
    if not overrides:
        return result
    agents = _child(result, "agents", "agents")
    defaults = _child(agents, "defaults", "agents.defaults")
    blocks = [_child(defaults, "memorySearch", "agents.defaults.memorySearch")]
    entries = agents.get("list")
    if isinstance(entries, list):
        for index, entry in enumerate(entries):
            if isinstance(entry, dict) and isinstance(entry.get("memorySearch"), dict):
                blocks.append(_child(entry, "memorySearch", f"agents.list[{index}].memorySearch"))
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        if not all(parts):
            raise ConfigError(dotted, "not a valid memorySearch key")
        for block in blocks:
            node = block
            for depth, part in enumerate(parts[:-1]):
                node = _child(node, part, ".".join(["memorySearch", *parts[: depth + 1]]))
            node[parts[-1]] = copy.deepcopy(value)
    return result


def _child(node: dict[str, object], key: str, path: str) -> dict[str, object]:
    child = node.get(key)
    if child is None:
        child = {}
        node[key] = child
    if not isinstance(child, dict):
        raise ConfigError(path, "must be an object to apply an override")
    return child
