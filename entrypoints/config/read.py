"""Entry points, configuration stage 1, read: the file, `$include`, the `env` block, `${VAR}`,
then the overrides of the environment and the flags, into one raw tree.

Config file: `--config PATH` > `$MEMLANE_CONFIG` > `~/.memlane/config.json5` if it exists >
`$OPENCLAW_STATE_DIR/openclaw.json` (an existing installation of the reference system) >
`~/.memlane/config.json5`. A missing default file is an empty config; a missing file that was
named explicitly (flag or env) is an error. So is an empty `--config`, `--workspace`,
`--state-dir` or `--agent` (`"$UNSET"` must not pick the default); an empty variable is unset.

The file, and each file it includes, is bounded before it is parsed: only a regular file is
read (a FIFO would block for ever, `/dev/zero` never ends), at most `MAX_CONFIG_BYTES`, nested
at most `MAX_CONFIG_DEPTH` levels (the JSON5 parser recurses once per level). Every refusal is
a ConfigFileError naming the file, which the CLI turns into exit 2.

Then, as the reference system does, in this order (so an included file may use the variables of
the `env` block):

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
   when that provider is used, and is an error then (runtime.py).
4. Overrides: `MEMLANE_PROVIDER` / `_MODEL` / `_FALLBACK`, then the flags, each a dotted
   memorySearch key written into every memorySearch block (`apply_overrides`); an unusable
   value a variable set is reported against the variable (`RawConfig.set_by_env`).

Nothing here knows a key's type: the validate stage checks the tree this stage returns.
`expand_user` and `env_value` also serve the driver's paths and credentials (runtime.py).

This module finds, reads and parses the files and resolves `$include` (step 1); the parse memo
and the depth scan, steps 2-3 and step 4 are in reading/ (`json5_text.py`, `variables.py`,
`overrides.py`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias

from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.reading.json5_text import nesting_depth, parse_json5
from memlane.entrypoints.config.reading.overrides import apply_overrides
from memlane.entrypoints.config.reading.variables import env_with_block, substitute
from memlane.entrypoints.daemon.protocol import EMPTY_STATE_DIR, expand_home, state_dir_of

# Named here for this stage's importers (its tests); defined in reading/variables.py.
__all__ = ["env_with_block", "substitute"]

ConfigTree: TypeAlias = dict[str, object]
ENV_CONFIG: Final = "MEMLANE_CONFIG"
ENV_WORKSPACE: Final = "MEMLANE_WORKSPACE"
ENV_AGENT: Final = "MEMLANE_AGENT"
ENV_REFERENCE_STATE_DIR: Final = "OPENCLAW_STATE_DIR"
ENV_STORE_URL: Final = "MEMLANE_STORE_URL"
# memorySearch keys that plain environment variables override.
ENV_OVERRIDES: Final[Mapping[str, str]] = {
    "MEMLANE_PROVIDER": "provider",
    "MEMLANE_MODEL": "model",
    "MEMLANE_FALLBACK": "fallback",
}
_EMPTY_CONFIG: Final = (
    "is empty: name a file, or leave the option out for $MEMLANE_CONFIG, else the default file"
)
_EMPTY_WORKSPACE: Final = (
    "is empty: name a folder, or leave the option out for $MEMLANE_WORKSPACE, else the "
    "config's, the index's or the current folder"
)
_EMPTY_AGENT: Final = (
    "is empty: name an agent, or leave the option out for $MEMLANE_AGENT, else the config's "
    "default agent"
)
MAX_INCLUDE_DEPTH: Final = 10
INCLUDE_KEY: Final = "$include"
DEFAULT_CONFIG: Final = "~/.memlane/config.json5"
# The reference system's config file name, in its state directory.
REFERENCE_CONFIG_NAME: Final = "openclaw.json"
# A real config is a few KiB and a few levels deep; these leave wide room and stop abuse.
MAX_CONFIG_BYTES: Final = 1024 * 1024
MAX_CONFIG_DEPTH: Final = 32  # the JSON5 parser spends ~20 stack frames per level
_JSON5_POSITION = re.compile(r"^<string>:(?P<line>\d+) (?P<what>.*) at column (?P<column>\d+)$")
_KINDS: Final = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


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


@dataclass(frozen=True, slots=True)
class RawConfig:
    """What the read stage hands on: the one raw tree, where it came from, what was asked."""

    tree: ConfigTree  # as read, then with the environment's and the flags' overrides
    written: ConfigTree  # as read, before the overrides (ignored keys are reported from it)
    found: Path | None  # the file read: None when the default file does not exist
    env: dict[str, str]  # the process environment plus the `env` block (the process wins)
    state_dir: Path
    reference_state: Path | None  # the reference's state dir when its config is the one read
    agent: str | None  # `--agent` > `$MEMLANE_AGENT`; None: the config's default agent
    workspace: str | None  # `--workspace` > `$MEMLANE_WORKSPACE`; None: the config's or cwd
    workspace_origin: str | None  # "flag", "env", or None
    # memorySearch keys whose value a MEMLANE_* variable set (a flag did not override), with
    # the variable: an error in such a value names what the user set, not the tree path.
    set_by_env: dict[str, str] = field(default_factory=dict)


def read_config(
    path: str | None,
    env: Mapping[str, str],
    flags: Mapping[str, object] | None = None,
    *,
    agent: str | None = None,
    workspace: str | None = None,
    state: str | None = None,
) -> RawConfig:
    """Stage 1: read the file chosen by `config_path`, apply `$include`, the `env` block and
    `${VAR}`, then the environment's overrides and the flags; take what the flags and the
    environment ask for (agent, workspace, state directory).

    Raises:
        ConfigError: a bad file (ConfigFileError), `$include`, `env` block, variable or
            override path.
    """
    workspace = _given(workspace, "--workspace", _EMPTY_WORKSPACE)
    file, required = config_path(path, env)
    written = _load(file, required, env)
    from_env = env_overrides(env)
    tree = apply_overrides(apply_overrides(written, from_env), flags or {})
    found = file if (required or file.is_file()) else None
    env_workspace = env_value(env, ENV_WORKSPACE)
    return RawConfig(
        tree=tree,
        written=written,
        found=found,
        env=env_with_block(written, env),
        state_dir=state_dir(state, env),
        reference_state=found.parent if found and found.name == REFERENCE_CONFIG_NAME else None,
        agent=_given(agent, "--agent", _EMPTY_AGENT) or env_value(env, ENV_AGENT),
        workspace=workspace or env_workspace,
        workspace_origin="flag" if workspace else "env" if env_workspace else None,
        set_by_env={
            key: name
            for name, key in ENV_OVERRIDES.items()
            if key in from_env and key not in (flags or {})
        },
    )


def config_path(explicit: str | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """Return the config file to read and whether it must exist (named by flag or env)."""
    named = _given(explicit, "--config", _EMPTY_CONFIG) or env_value(env, ENV_CONFIG)
    if named:
        return expand_user(named, env), True
    default = expand_user(DEFAULT_CONFIG, env)
    reference_state = env_value(env, ENV_REFERENCE_STATE_DIR)
    if reference_state and not default.is_file():
        installed = expand_user(reference_state, env) / REFERENCE_CONFIG_NAME
        if installed.is_file():
            return installed, False
    return default, False


def state_dir(explicit: str | None, env: Mapping[str, str], cwd: Path | None = None) -> Path:
    """Return the state directory: `--state-dir` > `$MEMLANE_STATE_DIR` > `~/.memlane`, absolute
    (relative to `cwd`, default this process's folder). The daemon's client finds the socket
    with the same function (daemon/protocol.state_dir_of), so both name the same index."""
    given = _given(explicit, "--state-dir", EMPTY_STATE_DIR)
    return Path(state_dir_of(given, env, None if cwd is None else str(cwd)))


def env_overrides(env: Mapping[str, str]) -> dict[str, object]:
    """Return the memorySearch overrides given by `MEMLANE_PROVIDER`/`_MODEL`/`_FALLBACK`."""
    return {key: env[name] for name, key in ENV_OVERRIDES.items() if env_value(env, name)}


def load_config(path: str | None, env: Mapping[str, str]) -> ConfigTree:
    """The config file chosen by `config_path` with its includes and `${VAR}`s (a missing
    default file is `{}`); a file that cannot be read or parsed is a ConfigFileError."""
    return _load(*config_path(path, env), env)


def _load(file: Path, required: bool, env: Mapping[str, str]) -> ConfigTree:
    """The file with its includes, then the `env` block's and the environment's `${VAR}`s."""
    tree = _walk(_read(file, "config file", required=required), file, (file.resolve(),), "")
    expanded = substitute(tree, env_with_block(tree, env))
    assert isinstance(expanded, dict)  # substitution keeps the shape
    return expanded


def _read(file: Path, what: str, *, required: bool = True) -> ConfigTree:
    """`file` parsed (`{}` when it is missing and not `required`); `what` names it in errors."""
    try:
        text = _read_bounded(file, what)
    except FileNotFoundError as exc:
        if not required:
            return {}
        raise ConfigFileError(file, f"{what} not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(file, f"cannot read {what}: {exc}") from exc
    return parse_config(text, file)


def _read_bounded(file: Path, what: str) -> str:
    """The text of `file` if it is a regular file of at most MAX_CONFIG_BYTES."""
    # O_NONBLOCK: opening a FIFO with no writer returns at once instead of hanging; the fstat
    # below then refuses it. Checking the opened descriptor, not the name, leaves no race.
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            prefix = "" if what == "config file" else f"{what} is "  # the main file's wording
            raise ConfigFileError(
                file, f"{prefix}not a regular file ({_KINDS.get(stat.S_IFMT(mode), 'not a file')})"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            # One byte past the limit: a file that grew after the stat is still caught.
            data = handle.read(MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigFileError(file, f"{what} larger than {MAX_CONFIG_BYTES} bytes")
    return data.decode("utf-8")


def parse_config(text: str, file: Path) -> ConfigTree:
    """Parse JSON5 text; `file` only names the source in errors. Blank text is `{}`."""
    if not text.strip():
        return {}
    brackets = text.count("{") + text.count("[")  # the scan is only needed past the limit
    if brackets > MAX_CONFIG_DEPTH and nesting_depth(text) > MAX_CONFIG_DEPTH:
        raise ConfigFileError(file, f"nested deeper than {MAX_CONFIG_DEPTH} levels")
    try:
        tree = parse_json5(text)
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


def _walk(node: ConfigTree, file: Path, chain: tuple[Path, ...], path: str) -> ConfigTree:
    """`node` with every `$include` replaced by the files it names; `chain`: the files open."""
    result: ConfigTree = {}
    if INCLUDE_KEY in node:
        for included in _included(node[INCLUDE_KEY], file, chain, _join(path, INCLUDE_KEY)):
            result = deep_merge(result, included)
    for key, value in node.items():
        if key != INCLUDE_KEY:
            child = (
                _walk(value, file, chain, _join(path, key)) if isinstance(value, dict) else value
            )
            result = deep_merge(result, {key: child})
    return result


def _included(value: object, file: Path, chain: tuple[Path, ...], key: str) -> list[ConfigTree]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(key, "must be a file path or a list of file paths")
    if len(chain) > MAX_INCLUDE_DEPTH:
        raise ConfigError(key, f"includes nest deeper than {MAX_INCLUDE_DEPTH} levels")
    trees = []
    for name in names:
        target = Path(str(name)).expanduser()
        target = target if target.is_absolute() else file.parent / target
        if target.resolve() in chain:
            raise ConfigError(key, f"include cycle: {target} includes itself")
        tree = _read(target, "included config file")
        trees.append(_walk(tree, target, (*chain, target.resolve()), ""))
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


def expand_user(value: str, env: Mapping[str, str] | None = None) -> Path:
    """Expand a leading `~` with `$HOME` from `env` (else this process's home), as the state
    dir's `~` is expanded (daemon/protocol.expand_home)."""
    return Path(expand_home(value, os.environ if env is None else env))


def env_value(env: Mapping[str, str], name: str) -> str | None:
    """The variable's value, stripped; None when it is unset or blank."""
    value = env.get(name, "").strip()
    return value or None


def _given(value: str | None, flag: str, reason: str) -> str | None:
    """A flag's value, None when not given; given empty (`--workspace "$UNSET"`), a config
    error rather than the default in disguise (an empty variable is unset: `env_value`)."""
    if value == "":
        raise ConfigError(flag, reason)
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
