"""Entry points: find and parse the JSON5 config file.

Config file: `--config PATH` > `$MEMLANE_CONFIG` > `~/.memlane/config.json5` if it exists >
`$OPENCLAW_STATE_DIR/openclaw.json` (an existing installation of the reference system) >
`~/.memlane/config.json5`. A missing default file is an empty config; a missing file that was
named explicitly (flag or env) is an error. After parsing, `$include`, the `env` block and
`${VAR}` are applied as the reference does (expand.py).

The file, and each file it includes, is bounded before it is parsed: only a regular file is
read (a FIFO would block for ever, `/dev/zero` never ends), at most `MAX_CONFIG_BYTES`, nested
at most `MAX_CONFIG_DEPTH` levels (the JSON5 parser recurses once per level). Every refusal is
a ConfigFileError naming the file, which the CLI turns into exit 2.
"""

from __future__ import annotations

import os
import re
import stat
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
# A real config is a few KiB and a few levels deep; these leave wide room and stop abuse.
MAX_CONFIG_BYTES: Final = 1024 * 1024
MAX_CONFIG_DEPTH: Final = 32  # the JSON5 parser spends ~20 stack frames per level
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
        ConfigFileError: unreadable file, not a regular file, too large or too deeply nested,
            JSON5 syntax error (with line and column), duplicate key, or a top level that is
            not an object.
    """
    file, required = config_path(path, env)
    try:
        text = _read_bounded(file)
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
    """An included file, bounded as the main one is (regular file, size, nesting)."""
    try:
        text = _read_bounded(file, what="included config file")
    except FileNotFoundError as exc:
        raise ConfigFileError(file, "included config file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(file, f"cannot read included config file: {exc}") from exc
    return parse_config(text, file)


def _read_bounded(file: Path, *, what: str = "config file") -> str:
    """The text of `file` if it is a regular file of at most MAX_CONFIG_BYTES; `what` names
    it in the errors (the main file keeps its messages)."""
    # O_NONBLOCK: opening a FIFO with no writer returns at once instead of hanging; the fstat
    # below then refuses it. Checking the opened descriptor, not the name, leaves no race.
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            prefix = "" if what == "config file" else f"{what} is "
            raise ConfigFileError(file, f"{prefix}not a regular file ({_kind(mode)})")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            # One byte past the limit: a file that grew after the stat is still caught.
            data = handle.read(MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigFileError(file, f"{what} larger than {MAX_CONFIG_BYTES} bytes")
    return data.decode("utf-8")


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def _depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings and comments (JSON5 lexical rules)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i += 1
            while i < n and text[i] != ch:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 1
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
        i += 1
    return deepest


def parse_config(text: str, file: Path) -> ConfigTree:
    """Parse JSON5 text; `file` only names the source in errors. Blank text is `{}`."""
    if not text.strip():
        return {}
    brackets = text.count("{") + text.count("[")  # the scan is only needed past the limit
    if brackets > MAX_CONFIG_DEPTH and _depth(text) > MAX_CONFIG_DEPTH:
        raise ConfigFileError(file, f"nested deeper than {MAX_CONFIG_DEPTH} levels")
    try:
        tree = json5.loads(text, allow_duplicate_keys=False)
    except RecursionError as exc:  # the depth scan above should make this unreachable
        raise ConfigFileError(file, "nested too deeply") from exc
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
