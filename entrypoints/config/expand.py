"""Entry points: what the reference system does to its config file before reading the keys.

Applied in this order, so an included file may use the variables of the `env` block:

1. `$include`: an object holding `"$include": "other.json5"` (or a list of paths) is replaced by
   the included objects deep-merged in list order, then its other keys merged over them (a
   sibling wins). Paths are relative to the including file; at most 10 levels; a cycle is an
   error naming the key.
2. The `env` block: `env.vars` and `env`'s other string values are environment variables for the
   config and the providers; a variable already set in the process wins (the block gives
   defaults, it never overrides). Non-string values (`shellEnv`) are the host's and are skipped.
3. `${VAR}` in any string value is replaced by the variable (names `[A-Z_][A-Z0-9_]*`, as in the
   reference); `$${VAR}` writes a literal `${VAR}`. Inside the blocks memlane reads (`memory`,
   `agents.*.memorySearch`, `agents.*.workspace`) an unset or empty variable is an error naming the
   key, rather than a request sent with `Bearer ${KEY}` in it. Elsewhere (the gateway's channel
   tokens, `models.providers`) it is left as written: memlane must not fail on a variable only the
   gateway's environment has; a provider key still holding `${VAR}` is read from the environment
   when that provider is used, and is an error then (resolve.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from memlane.domain.errors import ConfigError

MAX_INCLUDE_DEPTH: Final = 10
INCLUDE_KEY: Final = "$include"
_VARIABLE: Final = re.compile(r"\$(\$?)\{([A-Z_][A-Z0-9_]*)\}")
UNRESOLVED: Final = re.compile(r"^\$\{([A-Z_][A-Z0-9_]*)\}$")
_STRICT: Final = re.compile(
    r"^(memory|agents\.(defaults|list\[\d+\])\.(memorySearch|workspace))(\.|\[|$)"
)

Loader = Callable[[Path], dict[str, object]]


def resolve_includes(
    tree: dict[str, object], file: Path, load: Loader, chain: tuple[Path, ...] = ()
) -> dict[str, object]:
    """Return `tree` with every `$include` replaced by the files it names (see the module doc).

    Raises:
        ConfigError: a bad `$include` value, a cycle, too deep a nesting, or an unreadable file
            (ConfigFileError from `load`).
    """
    chain = (*chain, file.resolve())
    return _walk(tree, file, load, chain, "")


def _walk(
    node: dict[str, object], file: Path, load: Loader, chain: tuple[Path, ...], path: str
) -> dict[str, object]:
    result: dict[str, object] = {}
    if INCLUDE_KEY in node:
        for included in _included(node[INCLUDE_KEY], file, load, chain, _join(path, INCLUDE_KEY)):
            result = deep_merge(result, included)
    for key, value in node.items():
        if key == INCLUDE_KEY:
            continue
        child = (
            _walk(value, file, load, chain, _join(path, key)) if isinstance(value, dict) else value
        )
        result = deep_merge(result, {key: child})
    return result


def _included(
    value: object, file: Path, load: Loader, chain: tuple[Path, ...], key: str
) -> list[dict[str, object]]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(key, "must be a file path or a list of file paths")
    if len(chain) > MAX_INCLUDE_DEPTH:
        raise ConfigError(key, f"includes nest deeper than {MAX_INCLUDE_DEPTH} levels")
    trees = []
    for name in names:
        assert isinstance(name, str)
        target = Path(name).expanduser()
        target = target if target.is_absolute() else file.parent / target
        if target.resolve() in chain:
            raise ConfigError(key, f"include cycle: {target} includes itself")
        trees.append(_walk(load(target), target, load, (*chain, target.resolve()), ""))
    return trees


def deep_merge(base: Mapping[str, object], over: Mapping[str, object]) -> dict[str, object]:
    """Objects merged key by key (recursively); any other value of `over` replaces `base`'s."""
    merged = dict(base)
    for key, value in over.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


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
        return {key: substitute(value, env, _join(path, key)) for key, value in node.items()}
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


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
