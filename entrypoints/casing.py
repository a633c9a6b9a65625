"""Entry points: the one key casing of every JSON payload memlane prints or returns.

camelCase, the casing of the reference's tool payloads (`startLine`) and of the config keys, so
`status --json`, the MCP `memory_status` tool and the other CLI payloads read alike.
"""

from __future__ import annotations


def camel_keys(value: object) -> object:
    """Every dict key in camelCase (`by_source` -> `bySource`), at every depth."""
    if isinstance(value, dict):
        return {_camel(str(k)): camel_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


def camel_dict(value: dict[str, object]) -> dict[str, object]:
    """`camel_keys` of one object."""
    return {_camel(k): camel_keys(v) for k, v in value.items()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
