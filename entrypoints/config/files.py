"""Entry points: find and parse the JSON5 config file.

Config file: `--config PATH` > `$MEMLANE_CONFIG` > `~/.memlane/config.json5` if it exists >
`$OPENCLAW_STATE_DIR/openclaw.json` (an existing installation of the reference system) >
`~/.memlane/config.json5`. A missing default file is an empty config; a missing file that was
named explicitly (flag or env) is an error. After parsing, `$include`, the `env` block and
`${VAR}` are applied as the reference does (expand.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TypeAlias

import json5

from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.env import (
    ENV_CONFIG,
    ENV_REFERENCE_STATE_DIR,
    env_value,
    expand_user,
)
from memlane.entrypoints.config.expand import env_with_block, resolve_includes, substitute

ConfigTree: TypeAlias = dict[str, object]

DEFAULT_CONFIG: Final = "~/.memlane/config.json5"
# The reference system's config file name, in its state directory.
REFERENCE_CONFIG_NAME: Final = "openclaw.json"
_JSON5_POSITION = re.compile(r"^<string>:(?P<line>\d+) (?P<what>.*) at column (?P<column>\d+)$")


class ConfigFileError(ConfigError):
    """The config file cannot be read or parsed; `key` is the file path."""

    def __init__(
        self, path: Path, message: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(str(path), f"{where}{message}")
        self.path = path
        self.line = line
        self.column = column


def config_path(explicit: str | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """Return the config file to read and whether it must exist (named by flag or env)."""
    named = explicit or env_value(env, ENV_CONFIG)
    if named:
        return expand_user(named, env), True
    default = expand_user(DEFAULT_CONFIG, env)
    reference_state = env_value(env, ENV_REFERENCE_STATE_DIR)
    if reference_state and not default.is_file():
        installed = expand_user(reference_state, env) / REFERENCE_CONFIG_NAME
        if installed.is_file():
            return installed, False
    return default, False


def reference_state_dir(file: Path | None) -> Path | None:
    """The reference system's state directory when `file` is its config (`openclaw.json`)."""
    if file is not None and file.name == REFERENCE_CONFIG_NAME:
        return file.parent
    return None


def load_config(path: str | None, env: Mapping[str, str]) -> ConfigTree:
    """Read and parse the config file chosen by `config_path`; a missing default file is `{}`.

    Raises:
        ConfigFileError: unreadable file, JSON5 syntax error (with line and column), duplicate
            key, or a top level that is not an object.
    """
    file, required = config_path(path, env)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        if required:
            raise ConfigFileError(file, "config file not found") from exc
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(file, f"cannot read config file: {exc}") from exc
    tree = resolve_includes(parse_config(text, file), file, _read_included)
    expanded = substitute(tree, env_with_block(tree, env))
    assert isinstance(expanded, dict)  # substitute keeps the shape
    return expanded


def _read_included(file: Path) -> ConfigTree:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigFileError(file, "included config file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(file, f"cannot read included config file: {exc}") from exc
    return parse_config(text, file)


def parse_config(text: str, file: Path) -> ConfigTree:
    """Parse JSON5 text; `file` only names the source in errors. Blank text is `{}`."""
    if not text.strip():
        return {}
    try:
        tree = json5.loads(text, allow_duplicate_keys=False)
    except ValueError as exc:
        found = _JSON5_POSITION.match(str(exc))
        if found is None:
            raise ConfigFileError(file, str(exc)) from exc
        raise ConfigFileError(
            file, found["what"], line=int(found["line"]), column=int(found["column"])
        ) from exc
    if not isinstance(tree, dict):
        raise ConfigFileError(file, "the top level must be an object")
    return tree
