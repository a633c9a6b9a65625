"""Entry points: `memlane daemon start | stop | status` (daemon/ holds the daemon itself).

A daemon runs only when asked (`daemon start`); the CLI uses one when it runs and answers, and
`--no-daemon` / MEMLANE_NO_DAEMON=1 bypass it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from memlane.entrypoints.cli_options import ConfigProblem, Options, global_options
from memlane.entrypoints.daemon import control, hosting
from memlane.entrypoints.daemon.paths import log_path, state_dir_of


def _state(options: Options) -> tuple[Path, list[str]]:
    values = options.values
    state = state_dir_of(values["state_dir"])
    forwarded: list[str] = []
    for flag, key in (("--config", "config"), ("--agent", "agent"), ("--workspace", "workspace")):
        value = values[key]
        if value == "":  # `--workspace "$UNSET"`: refused as every other command refuses it
            raise ConfigProblem(f"{flag}: is empty: name it, or leave the option out")
        if value:
            forwarded += [flag, str(Path(value).resolve()) if key != "agent" else value]
    return state, forwarded


def daemon_json(state: Path) -> dict[str, object]:
    """`status`'s daemon entry: whether a process serves the state dir's daemon socket, its
    pid and its command (`daemon`, or a `watch` / `serve` / `mcp` that serves it)."""
    served = hosting.current()
    if served is not None:
        owner: tuple[int, str] | None = (served.source.pid, served.source.served_by)
    else:
        owner = control.lock_owner(state)
    if owner is None:
        return {"running": False, "pid": None, "servedBy": None}
    return {"running": True, "pid": owner[0] or None, "servedBy": owner[1] or "daemon"}


def daemon_text(entry: object) -> str:
    if not isinstance(entry, dict) or not entry.get("running"):
        return "not running (memlane daemon start)"
    command = entry.get("servedBy")
    if command not in (None, "daemon"):
        return f"served by `memlane {command}` (pid {entry.get('pid')})"
    return f"running (pid {entry.get('pid')})"


@click.group("daemon")
def daemon_group() -> None:
    """A resident process the CLI hands search, get, status, index and events to."""


@daemon_group.command("start")
@click.option(
    "--timeout",
    type=click.FloatRange(1, 3600),
    default=120,
    show_default=True,
    help="Seconds to wait until the daemon answers.",
)
@global_options
@click.pass_obj
def daemon_start(options: Options, timeout: float) -> None:
    """Start the state dir's daemon (one per state dir; a running one is kept)."""
    state, forwarded = _state(options)
    try:
        started, ours = control.start(state, forwarded, timeout=timeout)
    except OSError as exc:  # its folder or log cannot be made: a read-only or full state dir
        raise click.ClickException(
            f"cannot start the daemon in {state}: {exc.strerror or exc} "
            f"({exc.filename or state}); searches work without it"
        ) from exc
    if not started.answering:
        raise click.ClickException(
            f"the daemon did not come up ({started.text()}); see {log_path(state)}"
        )
    if not ours and started.served_by not in (None, "daemon"):
        click.echo(
            f"`memlane {started.served_by}` (pid {started.pid}) already serves this state dir"
        )
        return
    verb = "started" if ours else "already running"
    click.echo(f"memlane daemon {verb} (pid {started.pid})")


@daemon_group.command("stop")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=60, show_default=True)
@global_options
@click.pass_obj
def daemon_stop(options: Options, timeout: float) -> None:
    """Stop the state dir's daemon."""
    state, _ = _state(options)
    try:
        pid = control.stop(state, timeout=timeout)
    except (TimeoutError, control.NotADaemon) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo("no daemon runs" if pid is None else f"memlane daemon stopped (pid {pid})")


# `daemon status` exits as `systemctl status` does (the LSB's codes for a status action), so a
# script can test for a daemon without parsing the output.
EXIT_NOT_RUNNING = 3


@daemon_group.command("status")
@click.option("--json", "as_json", is_flag=True)
@global_options
@click.pass_obj
def daemon_status(options: Options, as_json: bool) -> None:
    """Whether a daemon (or a `watch` / `serve` / `mcp` serving its socket) runs for the state dir,
    its pid and whether it answers this CLI.

    \b
    Exit codes:
      0  one runs (answering this CLI or not: the output says which)
      3  none runs (the LSB code `systemctl status` uses)
      2  a usage error"""
    state, _ = _state(options)
    found = control.probe(state)
    if as_json:
        click.echo(json.dumps(found.as_json(state), indent=2))
    else:
        click.echo(f"daemon: {found.text()}")
    if not found.running:
        click.get_current_context().exit(EXIT_NOT_RUNNING)
