"""Entry points: one agent's runtime configuration from file, environment and flags.

Precedence, lowest to highest: built-in defaults < config file < environment < CLI flags.
Relative `store.path` / `sessions.dir` values are resolved against the state directory, so the
result does not depend on where a daemon was started; CLI code should make its own path flags
absolute before passing them as overrides.

Reading an existing installation of the reference system (the config file is its
`openclaw.json`, named by `--config` or found through `OPENCLAW_STATE_DIR`): its agents, memory
settings and workspaces are used as they are; a workspace the config does not name is the
reference's default (`<its state dir>/workspace`, `workspace-<agent id>` for other agents);
transcripts are read from `<its state dir>/agents/<agent id>/sessions`. The index is memlane's
own, in memlane's state directory: a `store.path` there points at the reference's SQLite file,
which memlane must not open, so it is reported as ignored.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.env import (
    ENV_AGENT,
    ENV_STATE_DIR,
    ENV_WORKSPACE,
    env_overrides,
    env_value,
    expand_user,
)
from memlane.entrypoints.config.expand import env_with_block
from memlane.entrypoints.config.files import (
    ConfigTree,
    config_path,
    load_config,
    reference_state_dir,
)
from memlane.entrypoints.config.resolve import (
    IgnoredKey,
    default_agent_id,
    ignored_settings,
    resolve_settings,
    resolve_workspace,
    validate_agent_id,
)

DEFAULT_STATE_DIR: Final = "~/.memlane"


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
    # The environment with the config's `env` block (the process wins); providers read it.
    env: Mapping[str, str] = field(default_factory=dict)
    # Keys accepted and not implemented, one entry per key written (warned once on stderr).
    ignored: tuple[IgnoredKey, ...] = ()
    # The reference system's state directory when its config is the one read.
    reference_state: Path | None = None
    # Where `workspace` came from: "flag", "env", "config", "default" (the reference system's
    # default workspace, its config naming none), or "cwd" when nothing named one (the index's
    # recorded workspace then wins, application/workspace.py).
    workspace_origin: str = "cwd"


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


def state_dir(explicit: str | None, env: Mapping[str, str]) -> Path:
    """Return the state directory: `--state-dir` > `$MEMLANE_STATE_DIR` > `~/.memlane`."""
    return expand_user(explicit or env_value(env, ENV_STATE_DIR) or DEFAULT_STATE_DIR, env)


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
    chosen = explicit or env_value(env, ENV_WORKSPACE) or resolve_workspace(tree, agent_id)
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
    merged_env = env_with_block(tree, env)
    ignored = ignored_settings(tree)  # as written, before flags and MEMLANE_* overrides
    tree = apply_overrides(tree, env_overrides(env))
    tree = apply_overrides(tree, flags or {})
    agent = agent_id or env_value(env, ENV_AGENT) or default_agent_id(tree)
    settings = resolve_settings(tree, agent)
    state_path = state_dir(state, env)
    found = file if (required or file.is_file()) else None
    reference = reference_state_dir(found)
    sessions = sessions_dir(settings, state_path, agent, env)
    chosen_workspace = workspace_dir(workspace, env, tree, agent, cwd)
    origin = (
        "flag"
        if workspace
        else "env"
        if env_value(env, ENV_WORKSPACE)
        else "config"
        if resolve_workspace(tree, agent)
        else "cwd"
    )
    if reference is not None:
        if settings.store.path:
            ignored.append(
                IgnoredKey(
                    "memorySearch.store.path",
                    "the reference's index file is left alone: memlane keeps its own index in "
                    f"{state_path}",
                )
            )
            settings = replace(settings, store=replace(settings.store, path=None))
        if not settings.sessions_dir:
            sessions = reference / "agents" / agent / "sessions"
        if not (workspace or env_value(env, ENV_WORKSPACE) or resolve_workspace(tree, agent)):
            is_default = agent == default_agent_id(tree)
            chosen_workspace = reference / ("workspace" if is_default else f"workspace-{agent}")
            origin = "default"  # configured, by the reference's rule: not the current directory
    return RuntimeConfig(
        agent_id=agent,
        settings=settings,
        workspace=chosen_workspace,
        state_dir=state_path,
        store_path=store_path(settings, state_path, agent, env),
        sessions_dir=sessions,
        config_path=found,
        tree=tree,
        env=merged_env,
        ignored=tuple(ignored),
        reference_state=reference,
        workspace_origin=origin,
    )


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
