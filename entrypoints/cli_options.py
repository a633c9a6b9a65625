"""Entry points: the CLI's global options, the manager they open, and its error mapping."""

from __future__ import annotations

import itertools
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, Final

import click

from memlane.application.ports.index_store import StoreCorrupt, caused_by
from memlane.application.sync_trigger import SyncFailed
from memlane.domain.errors import InvalidQuery, MemoryDisabled
from memlane.domain.search import MAX_QUERY_CHARS
from memlane.entrypoints.config.runtime import RuntimeConfig
from memlane.entrypoints.daemon.hosting import NotServed, current
from memlane.entrypoints.errors import kind_of
from memlane.entrypoints.errors import message as error_message
from memlane.entrypoints.errors import text as error_text
from memlane.entrypoints.ignored_notice import to_show
from memlane.entrypoints.listen import (
    ListenOptionError,
)
from memlane.entrypoints.logging import configure_logging

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager

# The levels `--log-level` offers, before or after the command.
LOG_LEVELS: Final = ("debug", "info", "warning", "error")


class Options:
    """Global options, resolved into a configuration, then a manager, on first use."""

    def __init__(self, **values: str | None) -> None:
        self.values = values
        # The logging the group configured; an option after the command configures it again.
        self.log_level = "warning"
        self.log_json = False
        # --no-daemon: the client works in-process; watch / serve / mcp do not serve the socket.
        self.no_daemon = False
        self._manager: MemoryManager | None = None
        self._runtime: RuntimeConfig | None = None

    def daemon_disabled(self) -> bool:
        """--no-daemon (before or after the command) or MEMLANE_NO_DAEMON set true."""
        from memlane.entrypoints.daemon.client import daemon_disabled

        return self.no_daemon or daemon_disabled([], os.environ)

    def runtime(self, *, show_ignored: bool = False) -> RuntimeConfig:
        """The resolved configuration; its ignored keys are warned about on stderr once per
        config change (entrypoints/ignored_notice.py), or always with `show_ignored`."""
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
            if to_show(self._runtime, always=show_ignored):
                for found in self._runtime.ignored:
                    click.echo(
                        f"memlane: warning: {found.key} {found.verb}: {found.reason}", err=True
                    )
            note_warned(self._runtime.ignored)  # so opening the manager does not log them again
        return self._runtime

    def enabled(self) -> bool:
        """False when the config turns memory search off; says so on stderr."""
        from memlane.application.enabled import require_enabled

        runtime = self.runtime()
        try:
            require_enabled(runtime.settings)  # before opening an index there is none of
        except MemoryDisabled as exc:
            click.echo(disabled_line(runtime.agent_id, exc), err=True)
            return False
        return True

    def manager(
        self, *, move_workspace: bool = False, binds: bool = True, **overrides: object
    ) -> MemoryManager:
        with errors():
            return self.open(move_workspace=move_workspace, binds=binds, **overrides)

    def open(
        self, *, move_workspace: bool = False, binds: bool = True, **overrides: object
    ) -> MemoryManager:
        """The manager, opened on first use; errors are raised as they are (see `manager`).

        `binds`: the command syncs, so a new index records its workspace now and the user is
        told which (a `warning:` line); a command that only reads (`status`, `get`, `events`)
        records nothing, says nothing about it and creates no index for an agent without one.
        A daemon answering the command opens the manager the same way."""
        hosted = current()
        tell = _warn if binds else _quiet
        if self._manager is None and hosted is not None:
            if move_workspace or overrides:
                raise NotServed("a command that rebinds or reconfigures the index")
            self._manager = hosted.source.manager_for(
                self.runtime(), self.values, hosted, on_notice=tell, reads_only=not binds
            )
        if self._manager is None:
            from memlane.entrypoints.api import open_telling

            self.runtime()  # warns, once
            self._manager = open_telling(
                tell,
                reads_only=not binds,
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


# Exit codes: 1 a failed operation (click's ClickException), 2 bad usage (click's UsageError)
# and a configuration that cannot be used: both are the caller's input, fixed before a retry.
EXIT_CONFIG = 2


class ConfigProblem(click.ClickException):
    """A configuration error: one `error:` line naming the key, not click's usage text (the
    command line was right, the file or a value it names was not)."""

    exit_code = EXIT_CONFIG

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def _warn(notice: str) -> None:
    click.echo(f"warning: {notice}", err=True)


def _quiet(_notice: str) -> None:
    """A reading command binds nothing, so it has nothing to say about the binding."""


@contextmanager
def errors() -> Iterator[None]:
    """The CLI's form of the one error table (entrypoints/errors.py): a wrong call is a usage
    error (exit 2), memory turned off a stderr line (exit 0), any other expected failure its
    `label: message` line (exit 1); an unexpected error goes on up."""
    try:
        yield
    except Exception as exc:
        kind = kind_of(exc)
        if kind is None:
            raise
        if kind.name == "config":  # the file or a value was wrong, not the command line
            raise ConfigProblem(error_message(exc)) from exc
        if kind.wrong_call:
            raise click.UsageError(error_message(exc)) from exc
        if kind.exit_code == 0:
            click.echo(f"memlane: {error_text(exc)}", err=True)
            raise click.exceptions.Exit(0) from exc
        hint = _REPAIR_HINT if caused_by(exc, StoreCorrupt) or _corrupt_write(exc) else ""
        # Every other kind exits 1, click's code for a failed operation (the contract test
        # checks the table agrees).
        raise click.ClickException(f"{error_text(exc)}{hint}") from exc


class QueryCommand(click.Command):
    """A command taking a query: an unknown option may be the query itself (`search "--dry-run"`:
    the shell has removed the quotes), so the error says how to search for it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # click's parser consumes the list it is handed
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if exc.possibilities:  # a near option: more likely a typo (--max-result)
                raise
            name = exc.option_name
            options, words = _options_and_words(self, given)
            command = " ".join(["memlane", str(ctx.info_name), *options])
            raise click.UsageError(
                f"No such option: {name}. To search for text that starts with '-', put it after "
                f"`--` ({command} -- {shlex.quote(' '.join(words))}) or use "
                f"--query={shlex.quote(' '.join(words))}",
                ctx=ctx,
            ) from None


def _options_and_words(command: click.Command, args: list[str]) -> tuple[list[str], list[str]]:
    """Split a command line into the command's own options (with their values) and the rest,
    the words of the query as typed, so the hint repeats the whole query, not its '-' word."""
    takes_value: dict[str, bool] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for opt in (*param.opts, *param.secondary_opts):
                takes_value[opt] = not (param.is_flag or param.count)
    options: list[str] = []
    words: list[str] = []
    tokens = iter(args)
    for token in tokens:
        name = token.split("=", 1)[0]
        if name not in takes_value:
            words.append(token)
            continue
        options.append(shlex.quote(token))
        if takes_value[name] and "=" not in token:
            options.extend(shlex.quote(value) for value in itertools.islice(tokens, 1))
    return options, words


def _corrupt_write(exc: BaseException) -> bool:
    """A sync whose writes failed on a damaged index file: retrying cannot help, a rebuild can."""
    failures = exc.failures if isinstance(exc, SyncFailed) else ()
    return any(f.error.startswith(StoreCorrupt.__name__) for f in failures)


def query_from_stdin() -> str:
    """`search --query -`: the query on standard input, refused (exit 2) past the limit."""
    text = sys.stdin.read(MAX_QUERY_CHARS + 1)  # one past the limit: refused, not cut
    if len(text) > MAX_QUERY_CHARS:  # its length is unknown: the rest was never read
        with errors():
            raise InvalidQuery(
                f"query too long: more than {MAX_QUERY_CHARS} characters on standard input "
                f"(at most {MAX_QUERY_CHARS})"
            )
    return text


def disabled_line(agent_id: str, exc: MemoryDisabled) -> str:
    """What every command prints on stderr for an agent whose memory search is off."""
    return f"Memory search disabled for agent {agent_id!r}: {exc}."


_REPAIR_HINT = (
    "\nThe notes and transcripts are intact: `memlane --workspace <the notes folder> index "
    "--force` moves the damaged index aside and rebuilds it from them (name the folder: a "
    "damaged index can no longer say which workspace it was built from)."
)


def _set_global(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """A global option given after the subcommand (`memlane search q --agent a`) wins."""
    if value is not None and param.name is not None:
        ctx.ensure_object(Options).values[param.name] = value


def _set_logging(ctx: click.Context, param: click.Parameter, value: str | bool | None) -> None:
    """`--log-level` / `--log-json` after the subcommand: logging is configured again with it."""
    if value is None or value is False:
        return
    options = ctx.ensure_object(Options)
    if param.name == "log_level":
        options.log_level = str(value)
    else:
        options.log_json = True
    configure_logging(json=options.log_json or None, level=options.log_level)


def global_options(command: Callable[..., None]) -> Callable[..., None]:
    """Accept every global option after the subcommand too, as the reference's CLI does
    (`--version` and `--help` excepted: they answer at once, wherever they stand)."""
    command = click.option(
        "--log-json", is_flag=True, default=None, expose_value=False, callback=_set_logging,
        help="Log JSON lines on stderr on a terminal too (also before the command).",
    )(command)  # fmt: skip
    command = click.option(
        "--log-level", type=click.Choice(LOG_LEVELS), default=None, expose_value=False,
        callback=_set_logging, help="Lowest level logged (also before the command).",
    )(command)  # fmt: skip
    for flags, text in reversed(_GLOBAL_FLAGS):
        command = click.option(
            *flags, help=text, expose_value=False, callback=_set_global, default=None
        )(command)
    # Read by the console script before the CLI loads (daemon/client.py); accepted here too.
    return click.option(
        "--no-daemon", is_flag=True, expose_value=False, callback=_set_no_daemon,
        help="Work in-process, not through a running daemon; watch, serve and mcp: do not serve "
        "the daemon socket either.",
    )(command)  # fmt: skip


def _set_no_daemon(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(Options).no_daemon = True


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
