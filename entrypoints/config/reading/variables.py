"""Entry points, configuration stage 1, part: the config's `env` block and `${VAR}` in its
strings (steps 2 and 3 of read.py's module doc).

Separate from read.py because it works on a tree already read: which variables the process
and the `env` block give, and where an unset one is an error rather than left as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from memlane.domain.errors import ConfigError

_VARIABLE: Final = re.compile(r"\$(\$?)\{([A-Z_][A-Z0-9_]*)\}")
# Where an unset `${VAR}` is an error: memlane's own blocks (read.py's module doc, step 3).
_STRICT: Final = re.compile(
    r"^(memory|agents\.(defaults|list\[\d+\])\.(memorySearch|workspace))(\.|\[|$)"
)


def env_with_block(tree: Mapping[str, object], env: Mapping[str, str]) -> dict[str, str]:
    """The process environment plus the config's `env` block (the process wins).

    Raises:
        ConfigError: `env` or `env.vars` is not an object.
    """
    block = tree.get("env")
    if block is None:
        return dict(env)
    if not isinstance(block, dict):
        raise ConfigError("env", "must be an object of environment variables")
    given: dict[str, str] = {}
    variables = block.get("vars")
    if variables is not None:
        if not isinstance(variables, dict):
            raise ConfigError("env.vars", "must be an object of environment variables")
        given.update({k: v for k, v in variables.items() if isinstance(v, str)})
    given.update({k: v for k, v in block.items() if k != "vars" and isinstance(v, str)})
    merged = dict(env)
    for name, value in given.items():
        if not env.get(name, "").strip():
            merged[name] = value
    return merged


def substitute(node: object, env: Mapping[str, str], path: str = "") -> object:
    """Replace `${VAR}` in every string of `node` (read.py's module doc, step 3).

    Raises:
        ConfigError: a referenced variable is unset or empty; the key is where it was written.
    """
    if isinstance(node, dict):
        return {
            key: substitute(value, env, f"{path}.{key}" if path else key)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [substitute(item, env, f"{path}[{i}]") for i, item in enumerate(node)]
    if not isinstance(node, str):
        return node
    strict = bool(_STRICT.match(path))

    def replace(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        if escaped:
            return match.group(0)[1:]
        value = env.get(name, "")
        if not value and not strict:
            return match.group(0)
        if not value:
            raise ConfigError(
                path or "<root>", f"environment variable {name} is not set (used as ${{{name}}})"
            )
        return value

    return _VARIABLE.sub(replace, node)
