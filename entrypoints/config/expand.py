"""Entry points (config, read stage): the `env` block, `${VAR}` substitution and `~` in paths.

`${VAR}` inside the memory blocks (and the workspace) must resolve (a missing variable is an
error naming the key); elsewhere in the reference's config an unset one is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from memlane.domain.errors import ConfigError

_VARIABLE: Final = re.compile(r"\$(\$?)\{([A-Z_][A-Z0-9_]*)\}")
UNRESOLVED: Final = re.compile(r"^\$\{([A-Z_][A-Z0-9_]*)\}$")
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
    """Replace `${VAR}` in every string of `node` (see the module doc).

    Raises:
        ConfigError: a referenced variable is unset or empty; the key is where it was written.
    """
    if isinstance(node, str):
        return _substitute_string(node, env, path or "<root>", strict=bool(_STRICT.match(path)))
    if isinstance(node, dict):
        return {key: substitute(value, env, join_path(path, key)) for key, value in node.items()}
    if isinstance(node, list):
        return [substitute(item, env, f"{path}[{i}]") for i, item in enumerate(node)]
    return node


def _substitute_string(text: str, env: Mapping[str, str], path: str, *, strict: bool) -> str:
    def replace(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        if escaped:
            return match.group(0)[1:]
        value = env.get(name, "")
        if not value and not strict:
            return match.group(0)
        if not value:
            raise ConfigError(path, f"environment variable {name} is not set (used as ${{{name}}})")
        return value

    return _VARIABLE.sub(replace, text)


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def expand_user(value: str, env: Mapping[str, str] | None = None) -> Path:
    """Expand a leading `~` with `$HOME` from `env` (else the real home directory)."""
    if value == "~" or value.startswith("~/"):
        home = env_value(env or {}, "HOME")
        base = Path(home) if home else Path.home()
        return base / value[2:] if value != "~" else base
    return Path(value).expanduser()


def env_value(env: Mapping[str, str], name: str) -> str | None:
    """The variable's value, stripped; None when it is unset or blank."""
    value = env.get(name, "").strip()
    return value or None
