"""Entry point: read the JSON5 config file, apply env and CLI overrides, resolve paths and secrets.

Precedence, lowest to highest: built-in defaults < config file < environment < CLI flags.

Config file: `--config PATH` > `$MEMLANE_CONFIG` > `~/.memlane/config.json5`. A missing default
file is an empty config; a missing file that was named explicitly (flag or env) is an error.

Environment variables read here (all optional; empty values count as unset):

| variable | effect |
|---|---|
| `MEMLANE_CONFIG` | config file path |
| `MEMLANE_STATE_DIR` | state directory (default `~/.memlane`) |
| `MEMLANE_WORKSPACE` | workspace directory (below `--workspace`, above the config) |
| `MEMLANE_AGENT` | agent id (below `--agent`) |
| `MEMLANE_PROVIDER`, `MEMLANE_MODEL`, `MEMLANE_FALLBACK` | `memorySearch.provider` / `.model` / `.fallback` |
| `OPENAI_API_KEY`, `GEMINI_API_KEY` (then `GOOGLE_API_KEY`), `VOYAGE_API_KEY`, `MISTRAL_API_KEY`, `OLLAMA_API_KEY` | the provider's key when the config sets no `remote.apiKey` |
| `OPENAI_BASE_URL`, `OLLAMA_HOST` | the base URL when the config sets no `remote.baseUrl` (the variables those vendors' own tools read) |
| `HOME` | what `~` expands to |

Relative `store.path` / `sessions.dir` values are resolved against the state directory, so the
result does not depend on where a daemon was started; CLI code should make its own path flags
absolute before passing them as overrides.
"""  # noqa: E501 (the table is easier to read unwrapped)

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeAlias

import json5

from memlane.domain.config import MemorySettings
from memlane.domain.config_resolution import (
    default_agent_id,
    resolve_settings,
    resolve_workspace,
    validate_agent_id,
)
from memlane.domain.errors import ConfigError

ConfigTree: TypeAlias = dict[str, object]

ENV_CONFIG: Final = "MEMLANE_CONFIG"
ENV_STATE_DIR: Final = "MEMLANE_STATE_DIR"
ENV_WORKSPACE: Final = "MEMLANE_WORKSPACE"
ENV_AGENT: Final = "MEMLANE_AGENT"
DEFAULT_STATE_DIR: Final = "~/.memlane"
DEFAULT_CONFIG: Final = "~/.memlane/config.json5"

# memorySearch keys that plain environment variables override.
ENV_OVERRIDES: Final[Mapping[str, str]] = {
    "MEMLANE_PROVIDER": "provider",
    "MEMLANE_MODEL": "model",
    "MEMLANE_FALLBACK": "fallback",
}

# Where each remote provider's key is found when the config does not set one, in order.
API_KEY_ENV: Final[Mapping[str, tuple[str, ...]]] = {
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "voyage": ("VOYAGE_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "ollama": ("OLLAMA_API_KEY",),
}

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


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """Everything an entry point needs to open one agent's memory, fully resolved."""

    agent_id: str
    settings: MemorySettings
    workspace: Path
    state_dir: Path
    store_path: Path
    sessions_dir: Path
    config_path: Path | None
    tree: ConfigTree


def config_path(explicit: str | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """Return the config file to read and whether it must exist (named by flag or env)."""
    named = explicit or _env(env, ENV_CONFIG)
    if named:
        return expand_user(named, env), True
    return expand_user(DEFAULT_CONFIG, env), False


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


def env_overrides(env: Mapping[str, str]) -> dict[str, object]:
    """Return the memorySearch overrides given by `MEMLANE_PROVIDER`/`_MODEL`/`_FALLBACK`."""
    return {key: env[name] for name, key in ENV_OVERRIDES.items() if _env(env, name)}


def apply_overrides(tree: Mapping[str, object], overrides: Mapping[str, object]) -> ConfigTree:
    """Return a copy of `tree` where each dotted memorySearch key wins for every agent.

    Each key (`"provider"`, `"query.maxResults"`) is written into `agents.defaults.memorySearch`
    and into every `agents.list[].memorySearch` that exists, so an override beats both levels.
    Values are validated later by `resolve_settings`, like values from the file.

    Raises:
        ConfigError: a key is empty or the tree has a non-object where the path must go.
    """
    result: ConfigTree = copy.deepcopy(dict(tree))
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


def api_key_for(provider: str, settings: MemorySettings, env: Mapping[str, str]) -> str | None:
    """Return the API key for `provider`: config `remote.apiKey` (or its env ref) > the env vars.

    Returns None when no key is found (the caller then tries the next provider or goes
    keyword-only) and always for `local` / `none` / `auto`, which need no key themselves.

    Raises:
        ConfigError: `remote.apiKey` refers to an environment variable that is not set.
    """
    if provider not in API_KEY_ENV:
        return None
    if settings.remote.api_key:
        return settings.remote.api_key
    ref = settings.remote.api_key_ref
    if ref is not None:
        value = _env(env, ref.id)
        if value is None:
            raise ConfigError(
                "memorySearch.remote.apiKey", f"environment variable {ref.id} is not set"
            )
        return value
    for name in API_KEY_ENV[provider]:
        value = _env(env, name)
        if value is not None:
            return value
    return None


def base_url_for(provider: str, settings: MemorySettings, env: Mapping[str, str]) -> str | None:
    """Return the base URL: config `remote.baseUrl` > `OPENAI_BASE_URL` / `OLLAMA_HOST` > None.

    None means the adapter's own default. `OLLAMA_HOST` may omit the scheme (`host:port`), as
    the Ollama CLI allows; `http://` is added then.
    """
    if settings.remote.base_url:
        return settings.remote.base_url
    if provider == "openai":
        return _env(env, "OPENAI_BASE_URL")
    if provider == "ollama":
        host = _env(env, "OLLAMA_HOST")
        if host is None:
            return None
        return host if "://" in host else f"http://{host}"
    return None


def state_dir(explicit: str | None, env: Mapping[str, str]) -> Path:
    """Return the state directory: `--state-dir` > `$MEMLANE_STATE_DIR` > `~/.memlane`."""
    return expand_user(explicit or _env(env, ENV_STATE_DIR) or DEFAULT_STATE_DIR, env)


def store_path(
    settings: MemorySettings, state: Path, agent_id: str, env: Mapping[str, str] | None = None
) -> Path:
    """Return the index file: `store.path` (`{agentId}`, `~` expanded) or the default.

    The default is `<state>/agents/<agent id>/memory.db`.
    """
    validate_agent_id(agent_id)
    if settings.store.path:
        return _configured_path(settings.store.path, state, agent_id, env)
    return state / "agents" / agent_id / "memory.db"


def sessions_dir(
    settings: MemorySettings, state: Path, agent_id: str, env: Mapping[str, str] | None = None
) -> Path:
    """Return the transcripts folder: `sessions.dir` or `<state>/agents/<id>/sessions`."""
    validate_agent_id(agent_id)
    if settings.sessions_dir:
        return _configured_path(settings.sessions_dir, state, agent_id, env)
    return state / "agents" / agent_id / "sessions"


def workspace_dir(
    explicit: str | None,
    env: Mapping[str, str],
    tree: Mapping[str, object],
    agent_id: str | None,
    cwd: Path,
) -> Path:
    """Return the workspace: `--workspace` > `$MEMLANE_WORKSPACE` > config > `cwd`.

    Relative values are taken from `cwd` (they come from the command line or a shell).
    """
    chosen = explicit or _env(env, ENV_WORKSPACE) or resolve_workspace(tree, agent_id)
    if not chosen:
        return cwd
    path = expand_user(chosen, env)
    return path if path.is_absolute() else cwd / path


def resolve_runtime(
    *,
    env: Mapping[str, str],
    cwd: Path,
    config: str | None = None,
    flags: Mapping[str, object] | None = None,
    agent_id: str | None = None,
    workspace: str | None = None,
    state: str | None = None,
) -> RuntimeConfig:
    """Load the file, apply env then CLI overrides, and resolve one agent's settings and paths.

    Args:
        env: the process environment (passed in so tests never touch `os.environ`).
        cwd: the directory relative `--workspace` values are taken from.
        config, agent_id, workspace, state: the `--config`, `--agent`, `--workspace` and
            `--state-dir` flags, None when not given.
        flags: memorySearch overrides from CLI flags as dotted keys (`{"query.maxResults": 3}`).

    Raises:
        ConfigError: a bad file, key, value or agent id (ConfigFileError for the file itself).
    """
    file, required = config_path(config, env)
    tree = load_config(config, env)
    tree = apply_overrides(tree, env_overrides(env))
    tree = apply_overrides(tree, flags or {})
    agent = agent_id or _env(env, ENV_AGENT) or default_agent_id(tree)
    settings = resolve_settings(tree, agent)
    state_path = state_dir(state, env)
    return RuntimeConfig(
        agent_id=agent,
        settings=settings,
        workspace=workspace_dir(workspace, env, tree, agent, cwd),
        state_dir=state_path,
        store_path=store_path(settings, state_path, agent, env),
        sessions_dir=sessions_dir(settings, state_path, agent, env),
        config_path=file if (required or file.is_file()) else None,
        tree=tree,
    )


def expand_user(value: str, env: Mapping[str, str] | None = None) -> Path:
    """Expand a leading `~` with `$HOME` from `env` (else the real home directory)."""
    if value == "~" or value.startswith("~/"):
        home = _env(env or {}, "HOME")
        base = Path(home) if home else Path.home()
        return base / value[2:] if value != "~" else base
    return Path(value).expanduser()


def _configured_path(value: str, state: Path, agent_id: str, env: Mapping[str, str] | None) -> Path:
    path = expand_user(value.replace("{agentId}", agent_id), env)
    return path if path.is_absolute() else state / path


def _child(node: dict[str, object], key: str, path: str) -> dict[str, object]:
    child = node.get(key)
    if child is None:
        child = {}
        node[key] = child
    if not isinstance(child, dict):
        raise ConfigError(path, "must be an object to apply an override")
    return child


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None
