"""Test helpers: config trees written the way the reference lays them out, and the ConfigError
a tree raises; shared by the test_config_* modules that resolve trees into MemorySettings."""

from __future__ import annotations

import pytest

from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.runtime import resolve_settings


def tree(
    defaults: dict[str, object] | None = None, *entries: dict[str, object]
) -> dict[str, object]:
    """A config tree with `defaults` as agents.defaults.memorySearch and the given agent entries."""
    agents: dict[str, object] = {"defaults": {"memorySearch": defaults or {}}}
    if entries:
        agents["list"] = list(entries)
    return {"agents": agents}


def nested(dotted: str, value: object) -> dict[str, object]:
    """`nested("query.maxResults", 3)` -> `{"query": {"maxResults": 3}}`."""
    node: dict[str, object] = {}
    *parents, leaf = dotted.split(".")
    current = node
    for part in parents:
        child: dict[str, object] = {}
        current[part] = child
        current = child
    current[leaf] = value
    return node


def config_error(root: dict[str, object], agent: str | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        resolve_settings(root, agent)
    return caught.value
