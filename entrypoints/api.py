"""Entry points: the Python API for host apps (`memlane.open`) and agent-tool payloads."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from memlane.application.memory import MemoryManager
from memlane.application.ports.index_store import StoreError
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.read import state_dir as resolve_state_dir
from memlane.entrypoints.config.runtime import RuntimeConfig, resolve_runtime
from memlane.entrypoints.config.validate import IgnoredKey
from memlane.entrypoints.ignored_notice import to_show
from memlane.entrypoints.logging import configure_logging
from memlane.entrypoints.workspace_binding import bound_runtime

if TYPE_CHECKING:
    from memlane.entrypoints.container.stores import StoreDatabase

log = structlog.get_logger()
_managers: dict[str, MemoryManager] = {}
# One live manager per key, even under concurrent `open`: two would write the same index.
_creating = threading.Lock()
_runtimes: weakref.WeakKeyDictionary[MemoryManager, RuntimeConfig] = weakref.WeakKeyDictionary()
_warned: set[IgnoredKey] = set()
# The managers `open_manager` has handed out: another open of one is one more holder.
_opened: weakref.WeakSet[MemoryManager] = weakref.WeakSet()


def _log_ignored(found: IgnoredKey) -> None:
    log.warning("config_key_ignored", key=found.key, reason=found.reason)


def resolve_config(
    *,
    workspace: str | os.PathLike[str] | None = None,
    agent_id: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    config: Mapping[str, object] | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> RuntimeConfig:
    """Resolve what `open_manager` would open, without opening anything (arguments alike).

    `cwd` (default: this process's) is where relative paths start: a daemon resolves a
    client's command line from the client's folder.
    """
    environ = dict(os.environ if env is None else env)
    if config is not None:
        # An explicit block wins over whatever config file the environment points at.
        environ.pop("MEMLANE_CONFIG", None)
    here = Path.cwd() if cwd is None else cwd
    return resolve_runtime(
        env=environ,
        cwd=here,
        config=config_path,
        agent_id=agent_id,
        workspace=None if workspace is None else os.fspath(workspace),
        # Resolved here, from the caller's folder and environment (a daemon's client's), by
        # the function the daemon's client finds the socket with: one `~`, one index.
        state=str(
            resolve_state_dir(None if state_dir is None else os.fspath(state_dir), environ, here)
        ),
        flags=_block(config) if config is not None else None,
    )


def note_warned(ignored: Iterable[IgnoredKey]) -> None:
    """Record that the caller has told the user about these keys (the CLI prints its own line)."""
    _warned.update(ignored)


def runtime_of(manager: MemoryManager) -> RuntimeConfig | None:
    """The resolved configuration a manager was opened with (None for one built elsewhere)."""
    return _runtimes.get(manager)


def open_manager(
    *,
    workspace: str | os.PathLike[str] | None = None,
    agent_id: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    config: Mapping[str, object] | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
    start_background: bool = False,
    move_workspace: bool = False,
) -> MemoryManager:
    """Return the live MemoryManager of (agent, workspace, settings), creating it once.

    `config` is a memorySearch block (camelCase keys, as in the JSON5 file); when given, it is
    used instead of the config file. `start_background` starts the watcher and timers (not
    when `memorySearch.enabled` is false). Each key the config sets that memlane ignores is
    logged as a warning on stderr once per config change (entrypoints/ignored_notice.py) and
    at most once per process (see `note_warned`).
    The index serves the workspace it recorded (application/workspace.py): another named one
    raises WorkspaceMismatch unless `move_workspace`; a missing folder raises WorkspaceMissing.
    A line about the binding (a new index takes the current directory, a move) is logged as
    a warning (`open_telling` hands it to the caller instead).
    """
    manager = open_telling(
        None,
        workspace=workspace,
        agent_id=agent_id,
        state_dir=state_dir,
        config=config,
        config_path=config_path,
        env=env,
        start_background=start_background,
        move_workspace=move_workspace,
    )
    with _creating:
        if manager in _opened:
            manager.retain()  # each caller closes its own hold; the last one closes it
        else:
            _opened.add(manager)
    return manager


def open_telling(
    on_notice: Callable[[str], None] | None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    agent_id: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    config: Mapping[str, object] | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
    start_background: bool = False,
    move_workspace: bool = False,
    cwd: Path | None = None,
    reads_only: bool = False,
    shared: bool = True,
) -> MemoryManager:
    """`open_manager`, with the line about the workspace binding handed to `on_notice` (the
    CLI prints it as a `warning:` line, or not at all for a command that binds nothing;
    None logs it) and relative paths taken from `cwd` (None: this process's folder; the
    daemon opens what a client's command line names, from the client's folder).

    `reads_only`: the caller only reads (`status`, `get`, `events`); an agent whose store does
    not exist is answered from an empty stand-in, so nothing is created (its file, its
    folder), and that manager is the caller's alone. `shared=False`: a manager of the
    caller's own, never handed to another caller (the daemon's answer for one request); the
    caller closes it."""
    if not structlog.is_configured():
        # A library must not print to the host's stdout: warnings and errors go to stderr.
        configure_logging(level="warning")
    environ, runtime = _resolve(workspace, agent_id, state_dir, config, config_path, env, cwd)
    runtime = bound_runtime(
        runtime, {**runtime.env} or environ, move=move_workspace, on_notice=on_notice
    )
    fresh = [found for found in runtime.ignored if found not in _warned]
    if fresh and to_show(runtime):  # once per process, and once per config change
        for found in fresh:
            _log_ignored(found)
    _warned.update(fresh)
    env_of_store = {**runtime.env} or environ
    if reads_only:
        from memlane.entrypoints.container import stand_in_for

        _refuse_a_file_in_the_way(runtime.store_path.parent)
        stand_in = stand_in_for(runtime)
        if stand_in is not None:  # never cached: a later command that syncs opens the store
            return _build(runtime, env_of_store, stand_in=stand_in)
    if not shared:
        return _build(runtime, env_of_store, cached=False)
    key = _key(runtime)
    with _creating:
        manager = _managers.get(key)
        if manager is None:
            # The config's `env` block joins the environment the providers read.
            manager = _build(runtime, env_of_store)
            _managers[key] = manager
    if start_background:
        manager.start()
    return manager


def move_damaged_index(
    *,
    agent_id: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    config: Mapping[str, object] | None = None,
    config_path: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Path, Path]:
    """Move this agent's index file aside (`memory.db.corrupt-<UTC time>`, with -wal/-shm).

    For a damaged index: the sources are intact, so a forced sync rebuilds it. Close the
    manager first. Returns (index path, where the damaged file went).
    """
    from memlane.entrypoints.container import move_damaged_index as move

    _, runtime = _resolve(None, agent_id, state_dir, config, config_path, env)
    return runtime.store_path, move(runtime.store_path)


def _resolve(
    workspace: str | os.PathLike[str] | None,
    agent_id: str | None,
    state_dir: str | os.PathLike[str] | None,
    config: Mapping[str, object] | None,
    config_path: str | None,
    env: Mapping[str, str] | None,
    cwd: Path | None = None,
) -> tuple[dict[str, str], RuntimeConfig]:
    environ = dict(os.environ if env is None else env)
    runtime = resolve_config(
        workspace=workspace,
        agent_id=agent_id,
        state_dir=state_dir,
        config=config,
        config_path=config_path,
        env=environ,
        cwd=cwd,
    )
    return environ, runtime


def close_all() -> None:
    """Close every live manager (host-app shutdown)."""
    with _creating:
        managers = list(_managers.values())
        _managers.clear()
    for manager in managers:
        manager.close(every_holder=True)


def _build(
    runtime: RuntimeConfig,
    env: Mapping[str, str],
    *,
    stand_in: StoreDatabase | None = None,
    cached: bool = True,
) -> MemoryManager:
    """The manager of `runtime` (over `stand_in` when given: nothing is created on disk);
    `cached`: `open_telling` keeps it for the next caller of the same key until it closes."""
    from memlane.entrypoints.container import Container

    if stand_in is None:
        _make_state_dir(runtime.store_path.parent)
        container = Container(runtime_config=runtime, env=env)
    else:
        container = Container(runtime_config=runtime, env=env, stand_in=stand_in)
    try:
        manager: MemoryManager = container.manager()
    except BaseException:
        if stand_in is not None:
            stand_in.close()  # removes its temporary folder
        raise
    _runtimes[manager] = runtime
    if stand_in is not None or not cached:
        return manager
    key = _key(runtime)

    def forget() -> None:
        with _creating:
            if _managers.get(key) is manager:
                del _managers[key]

    manager.on_close(forget)
    return manager


def _make_state_dir(folder: Path) -> None:
    """Create the index's folder; a file in the way is a configuration error, not a crash.

    Raises:
        ConfigError: a part of the path exists and is not a directory (CLI exit 2).
        StoreError: the folder cannot be created (permissions, read-only file system; exit 1).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (NotADirectoryError, FileExistsError) as exc:
        blocking = next((p for p in (folder, *folder.parents) if p.is_file()), folder)
        raise ConfigError(
            str(folder), f"cannot create the state directory: {blocking} is a file"
        ) from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise StoreError(f"cannot create the state directory {folder}: {reason}") from exc


def _refuse_a_file_in_the_way(folder: Path) -> None:
    """What `_make_state_dir` says of a file where the index's folder goes, without creating
    anything (a command that only reads).

    Raises:
        ConfigError: a part of the path exists and is not a directory (CLI exit 2).
    """
    blocking = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise ConfigError(str(folder), f"cannot create the state directory: {blocking} is a file")


def _key(runtime: RuntimeConfig) -> str:
    return f"{runtime.agent_id}:{runtime.workspace}:{runtime.store_path}:{runtime.settings!r}"


def _block(config: object) -> dict[str, object]:
    """The `config` argument as dotted overrides; ConfigError for one that is no mapping (a
    list or a string crashed with AttributeError)."""
    if not isinstance(config, Mapping):
        raise ConfigError(
            "config", f"must be a memorySearch block (a mapping), not {type(config).__name__}"
        )
    return _flatten(config)


def _flatten(block: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """Turn a nested memorySearch block into the dotted overrides `resolve_runtime` takes."""
    flat: dict[str, object] = {}
    for name, value in block.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and name != "headers":
            nested = _flatten(value, f"{key}.")
            flat.update(nested or {key: {}})
        else:
            flat[key] = value
    return flat
