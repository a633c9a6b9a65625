"""Entry points: the CLI's global options, the manager they open, and its error mapping."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from memlane.application.ports.embedding import EmbeddingError
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.file_source import FileMissing, SourceError
from memlane.application.ports.index_store import StoreCorrupt, StoreError, caused_by
from memlane.application.sync_trigger import SyncFailed
from memlane.application.workspace import WorkspaceError
from memlane.domain.errors import DISABLED_REASON, ConfigError, InvalidQuery
from memlane.entrypoints.config.runtime import RuntimeConfig
from memlane.entrypoints.daemon.hosting import NotServed, current
from memlane.entrypoints.listen import (
    ListenOptionError,
)

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager


class Options:
    """Global options, resolved into a configuration, then a manager, on first use."""

    def __init__(self, **values: str | None) -> None:
        self.values = values
        self._manager: MemoryManager | None = None
        self._runtime: RuntimeConfig | None = None

    def runtime(self) -> RuntimeConfig:
        """The resolved configuration; each ignored key is warned about once, on stderr."""
        if self._runtime is None:
            from memlane.entrypoints.api import note_warned, resolve_config

            hosted = current()  # a daemon resolves its client's command line, not its own
            with errors():
                self._runtime = resolve_config(
                    workspace=self.values["workspace"],
                    agent_id=self.values["agent"],
                    state_dir=self.values["state_dir"],
                    config_path=self.values["config"],
                    env=None if hosted is None else hosted.env,
                    cwd=None if hosted is None else hosted.cwd,
                )
            for found in self._runtime.ignored:
                click.echo(f"memlane: warning: {found.key} is ignored: {found.reason}", err=True)
            note_warned(self._runtime.ignored)  # so opening the manager does not log them again
        return self._runtime

    def enabled(self) -> bool:
        """False when the config turns memory search off; says so on stderr."""
        runtime = self.runtime()
        if not runtime.settings.enabled:
            click.echo(
                f"Memory search disabled for agent {runtime.agent_id!r}: {DISABLED_REASON}.",
                err=True,
            )
        return runtime.settings.enabled

    def manager(self, *, move_workspace: bool = False, **overrides: object) -> MemoryManager:
        with errors():
            return self.open(move_workspace=move_workspace, **overrides)

    def open(self, *, move_workspace: bool = False, **overrides: object) -> MemoryManager:
        """The manager, opened on first use; errors are raised as they are (see `manager`)."""
        hosted = current()
        if self._manager is None and hosted is not None:
            if move_workspace or overrides:
                raise NotServed("a command that rebinds or reconfigures the index")
            self._manager = hosted.source.manager_for(self.runtime(), self.values, hosted)
        if self._manager is None:
            from memlane.entrypoints.api import open_manager

            self.runtime()  # warns, once
            self._manager = open_manager(
                workspace=self.values["workspace"],
                agent_id=self.values["agent"],
                state_dir=self.values["state_dir"],
                config_path=self.values["config"],
                config=overrides or None,
                move_workspace=move_workspace,
            )
        return self._manager

    def move_damaged_index(self) -> tuple[str, str]:
        """Close the manager and move the index file aside; return (index, where it went)."""
        from memlane.entrypoints.api import move_damaged_index

        if current() is not None:
            raise NotServed("moving a damaged index aside")
        self.close()
        path, moved = move_damaged_index(
            agent_id=self.values["agent"],
            state_dir=self.values["state_dir"],
            config_path=self.values["config"],
        )
        return str(path), str(moved)

    def close(self) -> None:
        if current() is not None:  # the daemon's manager lives on for the next request
            self._manager = None
        if self._manager is not None:
            manager, self._manager = self._manager, None
            try:
                manager.close()
            except Exception as exc:  # closing must not change the exit code
                click.echo(f"memlane: close failed: {exc}", err=True)


@contextmanager
def errors() -> Iterator[None]:
    """The CLI's one error table: every expected failure becomes a message and exit code."""
    try:
        yield
    except (ConfigError, InvalidQuery) as exc:
        raise click.UsageError(str(exc)) from exc
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    except FileMissing as exc:
        raise click.ClickException(f"not found: {exc.path}") from exc
    except SourceError as exc:
        raise click.ClickException(f"refused: {exc}") from exc
    except EmbeddingError as exc:
        raise click.ClickException(f"embedding provider failed: {exc}") from exc
    except (StoreError, EventLogError) as exc:
        hint = _REPAIR_HINT if caused_by(exc, StoreCorrupt) else ""
        raise click.ClickException(f"index error: {exc}{hint}") from exc
    except SyncFailed as exc:
        raise click.ClickException(f"sync failed: {exc}") from exc


_REPAIR_HINT = (
    "\nThe notes and transcripts are intact: `memlane index --force` moves the damaged index "
    "aside and rebuilds it from them."
)


def _set_global(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """A global option given after the subcommand (`memlane search q --agent a`) wins."""
    if value is not None and param.name is not None:
        ctx.ensure_object(Options).values[param.name] = value


def global_options(command: Callable[..., None]) -> Callable[..., None]:
    """Accept the global options after the subcommand too, as the reference's CLI does."""
    for flags, text in reversed(_GLOBAL_FLAGS):
        command = click.option(
            *flags, help=text, expose_value=False, callback=_set_global, default=None
        )(command)
    # Read by the console script before the CLI loads (daemon/client.py); accepted here too.
    return click.option(
        "--no-daemon", is_flag=True, expose_value=False, help="Work in-process (no daemon)."
    )(command)


_GLOBAL_FLAGS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("--config",), "JSON5 config file (also before the command)."),
    (("--state-dir", "state_dir"), "State directory (also before the command)."),
    (("--agent",), "Agent id (also before the command)."),
    (("--workspace",), "Workspace (also before the command)."),
)


@contextmanager
def listen_errors() -> Iterator[None]:
    """Listen options: a wrong value is bad usage (2), an address we cannot have a failure (1)."""
    try:
        yield
    except ListenOptionError as exc:
        raise click.UsageError(str(exc)) from exc
    except OSError as exc:  # ListenError, or the server's own bind failure
        raise click.ClickException(str(exc)) from exc
