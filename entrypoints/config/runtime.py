"""Entry points: configuration, run from file, environment and flags to one agent's runtime.

`resolve_runtime` runs the stages in order, each once (see the package doc): read, validate,
merge, build; then it chooses the paths. Precedence, lowest to highest: built-in defaults <
config file < environment < CLI flags. Relative `store.path` / `sessions.dir` values are
resolved against the state directory, so the result does not depend on where a daemon was
started; CLI code should make its own path flags absolute before passing them as overrides.

Reading an existing installation of the reference system (the config file is its
`openclaw.json`, named by `--config` or found through `OPENCLAW_STATE_DIR`): its agents, memory
settings and workspaces are used as they are; a workspace the config does not name is the
reference's default (`<its state dir>/workspace`, `workspace-<agent id>` for other agents);
transcripts are read from `<its state dir>/agents/<agent id>/sessions`. The index is memlane's
own, in memlane's state directory: a `store.path` there points at the reference's SQLite file,
which memlane must not open, so it is reported as ignored.

The tree functions (`resolve_settings`, `ignored_settings`, ...) run the same stages on a tree
already read. What the environment adds when a provider or the store is used (API keys, base
URLs, the store URL) is read by `running/credentials.py`, when it is used.

Environment variables read here (all optional; empty values count as unset):

| variable | effect |
|---|---|
| `MEMLANE_CONFIG` | config file path |
| `MEMLANE_STATE_DIR` | state directory (default `~/.memlane`) |
| `MEMLANE_WORKSPACE` | workspace directory (below `--workspace`, above the config) |
| `MEMLANE_AGENT` | agent id (below `--agent`) |
| `OPENCLAW_STATE_DIR` | the reference system's state directory: its `openclaw.json` is the config file when neither `--config` nor `MEMLANE_CONFIG` names one (and a `~/.memlane/config.json5` does not exist); its transcripts and workspace are the defaults |
| `OPENCLAW_PROFILE` | with `OPENCLAW_STATE_DIR`, the default agent's default workspace is `workspace-<profile>` there, as the reference names it |
| `MEMLANE_PROVIDER`, `MEMLANE_MODEL`, `MEMLANE_FALLBACK` | `memorySearch.provider` / `.model` / `.fallback` |
| each provider's `key_env` (domain/providers.py: `OPENAI_API_KEY`, `GEMINI_API_KEY` then `GOOGLE_API_KEY`, ...) | the provider's key when the config sets no `remote.apiKey` |
| each provider's `base_url_env` (`OPENAI_BASE_URL`, `OLLAMA_HOST`) | the base URL when the config sets no `remote.baseUrl` (the variables those vendors' own tools read) |
| `MEMLANE_STORE_URL` | the PostgreSQL URL when `store.driver` is `postgres` and the config sets no `store.url` |
| `HOME` | what `~` expands to |
"""  # noqa: E501 (the table is easier to read unwrapped)

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from memlane.application.progress import DEFAULT_LOG_EVERY_SECONDS
from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.domain.providers import default_model
from memlane.entrypoints.config.build import build, settings_of
from memlane.entrypoints.config.build import ignored_settings as _ignored_settings
from memlane.entrypoints.config.merge import merge
from memlane.entrypoints.config.read import (
    ENV_STORE_URL,
    ENV_WORKSPACE,
    ConfigTree,
    env_value,
    expand_user,
    read_config,
    state_dir,
)
from memlane.entrypoints.config.reading.overrides import apply_overrides
from memlane.entrypoints.config.validate import (
    IgnoredKey,
    ValidConfig,
    validate,
    validate_agent_id,
)

ENV_REFERENCE_PROFILE = "OPENCLAW_PROFILE"
_PROFILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")

__all__ = [
    "IgnoredKey",
    "RuntimeConfig",
    "apply_overrides",
    "resolve_runtime",
    "resolve_settings",
    "state_dir",
    "validate_agent_id",
]


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


# --- the stages on a tree already read --------------------------------------------------------


def resolve_settings(root: Mapping[str, object], agent_id: str | None = None) -> MemorySettings:
    """Return the fully resolved settings of `agent_id` (default: the default agent).

    The whole tree is validated, including other agents' blocks, so a typo anywhere is reported.

    Raises:
        ConfigError: an unknown key, a wrong type, an unknown agent id; the key is the dotted path.
    """
    valid = validate(root, agent_id=agent_id)
    return settings_of(merge(valid), valid)


def resolve_workspace(root: Mapping[str, object], agent_id: str | None = None) -> str | None:
    """Return the configured workspace of an agent, or None when the config names none.

    As in the reference: `agents.list[].workspace`, else `agents.defaults.workspace` for the
    default agent only. The entry points fall back to `--workspace` or the current directory.
    """
    return validate(root, agent_id=agent_id).agent_workspace


def default_agent_id(root: Mapping[str, object]) -> str:
    """Return the default agent: the first entry with `default: true`, else the first entry."""
    return validate(root).default_agent


def ignored_keys(root: Mapping[str, object]) -> list[str]:
    """Return the dotted paths of keys outside memlane's blocks, tolerated and not used."""
    return list(validate(root).ignored)


def ignored_settings(root: Mapping[str, object]) -> list[IgnoredKey]:
    """Return the memory keys written in `root` that memlane accepts and ignores, in file order."""
    return _ignored_settings(validate(root))


# --- one agent's runtime ---------------------------------------------------------------------


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
    """Read the file, apply env then CLI overrides, and resolve one agent's settings and paths.

    Args:
        env: the process environment (passed in so tests never touch `os.environ`).
        cwd: the directory relative `--workspace` values are taken from.
        config, agent_id, workspace, state: the `--config`, `--agent`, `--workspace` and
            `--state-dir` flags, None when not given.
        flags: memorySearch overrides from CLI flags as dotted keys (`{"query.maxResults": 3}`).

    Raises:
        ConfigError: a bad file, key, value or agent id (ConfigFileError for the file itself).
    """
    raw = read_config(config, env, flags, agent=agent_id, workspace=workspace, state=state)
    valid = validate(raw.tree, raw.written, raw.agent, set_by=raw.set_by_env)
    settings, ignored = build(merge(valid), valid)
    # The paths: from the settings, the state directory and what was asked.
    agent, state_path, reference = valid.agent, raw.state_dir, raw.reference_state
    sessions = _sessions_dir(settings, state_path, agent, env)
    chosen = raw.workspace or valid.agent_workspace
    chosen_workspace = _workspace(chosen, env, cwd)
    origin = raw.workspace_origin or ("config" if chosen else "cwd")
    ignored += _unused_store_settings(settings, raw.env)
    if settings.provider == "local" and settings.model not in ("", default_model("local")):
        # The local provider runs the bundled model or the file local.modelPath names; a model
        # name (a remote provider's) would otherwise be listed by `status` and used nowhere.
        ignored.append(
            IgnoredKey(
                _origin(valid, "model", raw.set_by_env.get("model", "memorySearch.model")),
                f"the local provider does not take a model name ({settings.model!r}): it runs the "
                "bundled model, or the file local.modelPath names",
            )
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
        if not chosen:
            is_default = agent == valid.default_agent
            folder = _reference_workspace(env) if is_default else f"workspace-{agent}"
            chosen_workspace = reference / folder
            origin = "default"  # configured, by the reference's rule: not the current directory
    return RuntimeConfig(
        agent_id=agent,
        settings=settings,
        workspace=chosen_workspace,
        state_dir=state_path,
        store_path=_store_path(settings, state_path, agent, env),
        sessions_dir=sessions,
        config_path=raw.found,
        tree=raw.tree,
        env=raw.env,
        ignored=tuple(ignored),
        reference_state=reference,
        workspace_origin=origin,
    )


def store_path(
    settings: MemorySettings, state: Path, agent_id: str, env: Mapping[str, str] | None = None
) -> Path:
    """Return the index file: `store.path` (`{agentId}`, `~` expanded) or the default.

    The default is `<state>/agents/<agent id>/memory.db`.
    """
    return _store_path(settings, state, validate_agent_id(agent_id), env)


def sessions_dir(
    settings: MemorySettings, state: Path, agent_id: str, env: Mapping[str, str] | None = None
) -> Path:
    """Return the transcripts folder: `sessions.dir` or `<state>/agents/<id>/sessions`."""
    return _sessions_dir(settings, state, validate_agent_id(agent_id), env)


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
    return _workspace(chosen, env, cwd)


def _store_path(
    settings: MemorySettings, state: Path, agent_id: str, env: Mapping[str, str] | None
) -> Path:
    if settings.store.path:
        return _configured_path(settings.store.path, state, agent_id, env)
    return state / "agents" / agent_id / "memory.db"


def _reference_workspace(env: Mapping[str, str]) -> str:
    """The reference's default workspace folder: `workspace-<profile>` when `OPENCLAW_PROFILE` is
    set (ignored, it indexed the plain `workspace` unsaid), else `workspace`."""
    profile = env.get(ENV_REFERENCE_PROFILE, "").strip()
    if not profile:
        return "workspace"
    if not _PROFILE.fullmatch(profile):
        raise ConfigError(
            ENV_REFERENCE_PROFILE,
            f"{profile!r} is not a profile name (letters, digits, '-', '_' and '.', not "
            "starting with '.')",
        )
    return f"workspace-{profile}"


def _sessions_dir(
    settings: MemorySettings, state: Path, agent_id: str, env: Mapping[str, str] | None
) -> Path:
    if settings.sessions_dir:
        return _configured_path(settings.sessions_dir, state, agent_id, env)
    return state / "agents" / agent_id / "sessions"


def _workspace(chosen: str | None, env: Mapping[str, str], cwd: Path) -> Path:
    if not chosen:
        return cwd
    path = expand_user(chosen, env)
    return path if path.is_absolute() else cwd / path


def _origin(valid: ValidConfig, key: str, fallback: str) -> str:
    """Where the chosen agent's `key` was written (its dotted path, or the variable that set
    it), as every other notice names a key."""
    for block in (valid.entry_blocks.get(valid.agent, {}), valid.defaults_block):
        if key in block:
            return block[key].origin
    return fallback


def _configured_path(value: str, state: Path, agent_id: str, env: Mapping[str, str] | None) -> Path:
    path = expand_user(value.replace("{agentId}", agent_id), env)
    return path if path.is_absolute() else state / path


# --- store settings the chosen driver does not read -------------------------------------------


def _unused_store_settings(settings: MemorySettings, env: Mapping[str, str]) -> list[IgnoredKey]:
    """Store settings the chosen driver does not read: a PostgreSQL URL while the driver is
    SQLite (the index then stays on this machine while the user believes it is shared), a file
    path while it is PostgreSQL."""
    store = settings.store
    if store.driver == "postgres":
        reason = "the PostgreSQL store keeps no file here: store.path is not used"
        return [IgnoredKey("memorySearch.store.path", reason)] if store.path else []
    reason = 'store.driver is "sqlite" (the default): set driver: "postgres" to use this URL'
    found = []
    if store.url or store.url_ref is not None:
        found.append(IgnoredKey("memorySearch.store.url", reason))
    if env.get(ENV_STORE_URL, "").strip():  # read here: the read stage has run (one pass)
        found.append(IgnoredKey(ENV_STORE_URL, reason))
    return found


# Unusable MEMLANE_PROGRESS_SECONDS values already said: both readers of one command (its
# progress line, the container) call progress_every_seconds, and the warning must come once.
_SAID_UNUSABLE: set[str] = set()


def progress_every_seconds(env: Mapping[str, str]) -> float:
    """Seconds between plain progress lines (MEMLANE_PROGRESS_SECONDS, 10 by default): the CLI's
    lines on a pipe and the log lines of a sync nobody draws read the same value. A value that
    is not a number is said on stderr once per process, then the default is used."""
    raw = env.get("MEMLANE_PROGRESS_SECONDS")
    if raw is None:
        return DEFAULT_LOG_EVERY_SECONDS
    try:
        return max(0.0, float(raw))
    except ValueError:
        if raw in _SAID_UNUSABLE:
            return DEFAULT_LOG_EVERY_SECONDS
        _SAID_UNUSABLE.add(raw)
        structlog.get_logger(__name__).warning(
            "setting_ignored",
            variable="MEMLANE_PROGRESS_SECONDS",
            value=raw,
            reason=f"not a number; using {DEFAULT_LOG_EVERY_SECONDS:g} s",
        )
        return DEFAULT_LOG_EVERY_SECONDS
