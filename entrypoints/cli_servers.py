"""Entry points: the CLI commands that run until stopped or move the index (watch, serve, mcp,
ui, store copy)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from memlane.entrypoints.listen import (
    check_address,
    check_tls,
    check_token,
)

if TYPE_CHECKING:
    from memlane.application.ports.index_transfer import IndexTransfer, TransferCounts
    from memlane.entrypoints.config.runtime import RuntimeConfig


from memlane.entrypoints.cli_options import Options, errors, global_options, listen_errors
from memlane.entrypoints.cli_output import summary
from memlane.entrypoints.stop_signals import StopSignals


@click.group("store")
def store_group() -> None:
    """Index storage tools."""


@store_group.command("copy")
@click.option(
    "--to",
    "target",
    required=True,
    help="postgresql://... or a SQLite state dir (sqlite:DIR); the target must be empty.",
)
@click.option("--all-agents", is_flag=True, help="Copy every agent of the store, not just one.")
@global_options
@click.pass_obj
def store_copy(options: Options, target: str, all_agents: bool) -> None:
    """Copy the index (chunks, vectors, cache, events, meta) without re-embedding."""
    from memlane.application.store_copy import copy_agents
    from memlane.entrypoints.config.running.credentials import store_url_for
    from memlane.entrypoints.config.runtime import resolve_runtime
    from memlane.entrypoints.container import (
        configured_transfer,
        stored_agents,
        target_holds_index,
    )

    _check_copy_target(target)
    env = dict(os.environ)
    with errors():
        runtime = resolve_runtime(
            env=env,
            cwd=Path.cwd(),
            config=options.values["config"],
            agent_id=options.values["agent"],
            workspace=options.values["workspace"],
            state=options.values["state_dir"],
        )
        if runtime.settings.store.driver == "postgres":
            store_url_for(runtime.settings, env)  # a missing URL is a usage error, said first
        agents = stored_agents(runtime, env) if all_agents else [runtime.agent_id]
        # All or nothing: a copy that stopped at the third agent would leave a target the user
        # has to sort out by hand; checked first, a refusal lists every agent in the way and a
        # rerun after clearing them copies everything.
        taken = [agent for agent in agents if target_holds_index(target, agent)]
        if taken:
            raise click.ClickException(
                f"the target already has an index of {', '.join(taken)}: nothing was copied "
                f"(the target must be empty for every agent copied; of {len(agents)} agent(s), "
                f"{len(agents) - len(taken)} would have been copied)"
            )
        # A copy that fails part-way removes the agents it wrote again (copy_agents): the same
        # all or nothing as the check above, so a rerun copies everything.
        copy_agents(
            agents,
            lambda agent: configured_transfer(runtime, env, agent),
            lambda agent: _opened_target(target, agent, runtime),
            _copied,
        )


def _copied(agent: str, counts: TransferCounts) -> None:
    click.echo(
        f"{agent}: {counts.files} file(s), {counts.chunks} chunk(s), "
        f"{counts.vectors} vector(s), {counts.cache} cached, {counts.events} event(s) "
        "copied and verified"
    )


def _check_copy_target(target: str) -> None:
    """A target that names nothing (`--to "$UNSET"`, `sqlite:`) would be the current folder,
    and a file cannot be a state dir: both refused before anything is read or written."""
    if target.strip().startswith(("postgresql://", "postgresql+psycopg://", "postgres://")):
        return
    folder = target.strip().removeprefix("sqlite:").strip()
    if not folder:
        raise click.UsageError(
            "--to names no target: give a postgresql:// URL or a SQLite state dir (sqlite:DIR)"
        )
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise click.UsageError(f"--to {folder}: not a folder, so it cannot be a state dir")


def _opened_target(target: str, agent: str, runtime: RuntimeConfig) -> IndexTransfer:
    """The target's transfer; a folder the machine will not let us create is one error line."""
    from memlane.entrypoints.container import target_transfer

    try:
        return target_transfer(target, agent, runtime)
    except OSError as exc:
        where = exc.filename or target
        raise click.ClickException(
            f"cannot write the copy of {agent} to {where}: {exc.strerror or exc}"
        ) from exc


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True)
@click.option("--token", envvar="MEMLANE_TOKEN", help="Require this bearer token.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False))
@global_options
@click.pass_obj
def serve(
    options: Options,
    host: str,
    port: int,
    token: str | None,
    tls_cert: str | None,
    tls_key: str | None,
) -> None:
    """Serve the memory over gRPC (beyond loopback only with --token, as `mcp --http`)."""
    from memlane.entrypoints.grpc.server import TlsConfig, build_server
    from memlane.entrypoints.listen import is_loopback

    with listen_errors():
        check_token(token)
        check_tls(tls_cert, tls_key)
    if not token and not is_loopback(host):
        # Every note and transcript would be readable by anyone who can reach the port.
        raise click.UsageError("--token is required when listening beyond loopback")
    with listen_errors():
        check_address(host, port)
    manager = options.manager()
    tls = TlsConfig(cert_file=tls_cert, key_file=tls_key) if tls_cert and tls_key else None
    with listen_errors():
        server, bound = build_server(manager, host=host, port=port, token=token, tls=tls)
    from memlane.entrypoints.daemon.sharing import serving_socket

    stop = StopSignals()
    with serving_socket(manager, "serve", disabled=options.daemon_disabled()):
        server.start()
        manager.start()
        click.echo(f"memlane gRPC listening on {host}:{bound}", err=True)
        stop.wait()
        server.stop(grace=5).wait()


@click.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP listen address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option("--token", envvar="MEMLANE_TOKEN", help="HTTP: require this bearer token.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-client-ca", type=click.Path(exists=True, dir_okay=False))
@click.option("--read-only", is_flag=True, help="Do not offer memory_write.")
@global_options
@click.pass_obj
def mcp(
    options: Options,
    use_http: bool,
    host: str,
    port: int,
    token: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    tls_client_ca: str | None,
    read_only: bool,
) -> None:
    """Serve the memory to agents over MCP (stdio for desktop and editor hosts, or HTTP)."""
    from memlane.entrypoints.listen import is_loopback
    from memlane.entrypoints.mcp.app import HttpOptions, run_mcp

    if use_http:
        with listen_errors():
            check_token(token)
            check_tls(tls_cert, tls_key, tls_client_ca)
        if not token and not is_loopback(host):
            raise click.UsageError("--token is required when listening beyond loopback")
        with listen_errors():
            check_address(host, port)
    from memlane.entrypoints.daemon.sharing import serving_socket

    http = HttpOptions(host, port, token or None, tls_cert, tls_key, tls_client_ca)
    manager = options.manager()
    if use_http:  # as `serve` and `ui` say where they listen (stdout stays the protocol's)
        scheme = "https" if tls_cert else "http"
        shown = f"[{host}]" if ":" in host else host
        click.echo(f"memlane mcp listening on {scheme}://{shown}:{port}/mcp", err=True)
    with ExitStack() as held, stopped_by_signals("mcp", held=None if use_http else held):
        held.callback(options.close)  # last: after the socket stops serving
        held.enter_context(serving_socket(manager, "mcp", disabled=options.daemon_disabled()))
        run_mcp(manager, read_only=read_only, http=http if use_http else None)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Listen address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8766, show_default=True)
@click.option(
    "--token",
    envvar="MEMLANE_UI_TOKEN",
    help="Require this token (generated and printed when --host leaves loopback).",
)
@click.option("--read-only", is_flag=True, help="Offer no write action (no 'sync now').")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
@global_options
@click.pass_obj
def ui(
    options: Options, host: str, port: int, token: str | None, read_only: bool, open_browser: bool
) -> None:
    """Serve a local web page: search with explanations, files, health."""
    import secrets

    from memlane.entrypoints.listen import is_loopback
    from memlane.entrypoints.ui.app import UiOptions, run_ui

    with listen_errors():
        check_token(token)
        check_address(host, port)
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)  # beyond loopback a token is required: make one
    settings = UiOptions(host, port, token, read_only, open_browser)
    manager = options.manager()
    with stopped_by_signals("ui"):
        run_ui(
            manager, settings, on_ready=lambda: click.echo(f"memlane ui: {settings.url}", err=True)
        )


@contextmanager
def stopped_by_signals(name: str, *, held: ExitStack | None = None) -> Iterator[None]:
    """Stop on SIGTERM as on Ctrl-C, cleanly: the server's clean-ups run (its socket, the watch
    lease), it says so and exits 0, as `watch` and `serve` do. The HTTP servers (uvicorn) shut
    down gracefully and then raise the signal again, for the handler found before them: this
    one. Without it the process died by the signal, leaving its socket behind.

    The stdio server cannot be interrupted so: its host's stdin is read in a thread that only
    returns with a line or the end of input, and the event loop waits for it. Given its
    clean-ups (`held`), SIGTERM runs them and ends the process at once.
    """

    def interrupt(_sig: int, _frame: FrameType | None) -> None:
        if held is None:
            raise KeyboardInterrupt
        try:
            with contextlib.suppress(OSError):  # the host may have closed stderr already
                click.echo(f"memlane {name}: stopping", err=True)
            held.close()
        finally:
            os._exit(0)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    except KeyboardInterrupt:
        click.echo(f"memlane {name}: stopping", err=True)
    finally:
        signal.signal(signal.SIGTERM, previous)


@click.command()
@global_options
@click.pass_obj
def watch(options: Options) -> None:
    """Keep the index fresh in the foreground (watcher, interval, session growth)."""
    if not options.enabled():
        return
    manager = options.manager()
    stop = StopSignals()
    with errors():
        # Missing vectors (a first index) are embedded by the background syncer, batch by batch
        # between syncs: watching starts as soon as the keyword rows are in.
        report = manager.sync(wait_for_vectors=False)
    click.echo(summary(report), err=True)
    vectors = manager.status().vectors
    if vectors is not None and not vectors.complete:
        click.echo(f"{vectors.text()}: embedding the rest in the background", err=True)
    from memlane.entrypoints.daemon.sharing import serving_socket

    with serving_socket(manager, "watch", disabled=options.daemon_disabled()):
        manager.start()  # the file watcher as `sync.watch` says (default on)
        if not manager.settings.sync.watch:
            click.echo(
                "sync.watch is false: no file watcher; interval and session-growth syncs only",
                err=True,
            )
        click.echo("watching; Ctrl-C to stop", err=True)
        stop.wait()
        click.echo("stopping", err=True)
