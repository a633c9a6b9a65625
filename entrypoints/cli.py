"""Entry points: the `memlane` command line (results on stdout, diagnostics on stderr).

Exit codes: 0 success, 1 a failed operation, 2 bad usage (click's own usage errors included).
A sync that could not commit a change is a failed operation (1), a listen address that cannot be
had too; a wrong option value (empty token, TLS files, a state directory that is a file) is 2.
Warnings (a configured provider that cannot run) go to stderr as `warning: ...` lines.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from memlane import __version__
from memlane.application.ports.embedding import EmbeddingError
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.file_source import FileMissing, SourceError
from memlane.application.ports.index_store import StoreCorrupt, StoreError, caused_by
from memlane.application.sync import SyncFailed
from memlane.application.workspace import WorkspaceError
from memlane.domain.errors import DISABLED_REASON, ConfigError, InvalidQuery
from memlane.domain.events import event_to_record, type_name
from memlane.domain.search import MAX_QUERY_CHARS, check_query_text
from memlane.entrypoints.cli_output import (
    camel_dict,
    camel_keys,
    config_details,
    event_json,
    fmt,
    result_json,
    status_text,
    summary,
    verbose_text,
)
from memlane.entrypoints.config.runtime import RuntimeConfig
from memlane.entrypoints.config.schema import json_schema
from memlane.entrypoints.listen import (
    ListenOptionError,
    check_address,
    check_tls,
    check_token,
)
from memlane.entrypoints.logging import configure_logging
from memlane.entrypoints.progress_display import sync_progress

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager


class _Options:
    """Global options, resolved into a configuration, then a manager, on first use."""

    def __init__(self, **values: str | None) -> None:
        self.values = values
        self._manager: MemoryManager | None = None
        self._runtime: RuntimeConfig | None = None

    def runtime(self) -> RuntimeConfig:
        """The resolved configuration; each ignored key is warned about once, on stderr."""
        if self._runtime is None:
            from memlane.entrypoints.api import note_warned, resolve_config

            with _errors():
                self._runtime = resolve_config(
                    workspace=self.values["workspace"],
                    agent_id=self.values["agent"],
                    state_dir=self.values["state_dir"],
                    config_path=self.values["config"],
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
        with _errors():
            return self.open(move_workspace=move_workspace, **overrides)

    def open(self, *, move_workspace: bool = False, **overrides: object) -> MemoryManager:
        """The manager, opened on first use; errors are raised as they are (see `manager`)."""
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

        self.close()
        path, moved = move_damaged_index(
            agent_id=self.values["agent"],
            state_dir=self.values["state_dir"],
            config_path=self.values["config"],
        )
        return str(path), str(moved)

    def close(self) -> None:
        if self._manager is not None:
            manager, self._manager = self._manager, None
            try:
                manager.close()
            except Exception as exc:  # closing must not change the exit code
                click.echo(f"memlane: close failed: {exc}", err=True)


@contextmanager
def _errors() -> Iterator[None]:
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
        ctx.ensure_object(_Options).values[param.name] = value


def _global_options(command: Callable[..., None]) -> Callable[..., None]:
    """Accept the global options after the subcommand too, as the reference's CLI does."""
    for flags, text in reversed(_GLOBAL_FLAGS):
        command = click.option(
            *flags, help=text, expose_value=False, callback=_set_global, default=None
        )(command)
    return command


_GLOBAL_FLAGS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("--config",), "JSON5 config file (also before the command)."),
    (("--state-dir", "state_dir"), "State directory (also before the command)."),
    (("--agent",), "Agent id (also before the command)."),
    (("--workspace",), "Workspace (also before the command)."),
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", envvar="MEMLANE_CONFIG", help="JSON5 config file.")
@click.option(
    "--state-dir", envvar="MEMLANE_STATE_DIR", help="State directory (default ~/.memlane)."
)
@click.option("--agent", help="Agent id (default: the config's default agent, else 'main').")
@click.option(
    "--workspace",
    help="Workspace holding MEMORY.md and memory/ (default: the config's, else the one the "
    "index recorded, else the current directory for a new index).",
)
@click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
)
@click.option("--log-json", is_flag=True, help="Log JSON lines on stderr.")
@click.version_option(__version__, prog_name="memlane", message="%(prog)s %(version)s")
@click.pass_context
def cli(
    ctx: click.Context,
    config: str | None,
    state_dir: str | None,
    agent: str | None,
    workspace: str | None,
    log_level: str,
    log_json: bool,
) -> None:
    """Long-term memory for AI agents: index notes and transcripts, search them."""
    configure_logging(json=log_json or None, level=log_level)
    options = _Options(config=config, state_dir=state_dir, agent=agent, workspace=workspace)
    ctx.obj = options
    ctx.call_on_close(options.close)


@cli.command()
@click.option(
    "--force",
    is_flag=True,
    help="Rebuild the whole index safely; a damaged index file is moved aside first.",
)
@click.option(
    "--move-workspace",
    is_flag=True,
    help="Bind the index to --workspace (or the current directory) although it recorded "
    "another workspace.",
)
@click.option("--verbose", is_flag=True, help="Print provider and sources first.")
@_global_options
@click.pass_obj
def index(options: _Options, force: bool, move_workspace: bool, verbose: bool) -> None:
    """Sync the index with the files now."""
    if not options.enabled():
        return
    with _errors(), sync_progress() as on_progress:
        try:
            manager = options.open(move_workspace=move_workspace)
            if verbose:
                status = manager.status(deep=False)
                click.echo(f"workspace: {status.workspace}\nstore: {status.store_path}", err=True)
            report = manager.sync(force=force, progress=on_progress)
        except Exception as exc:
            if not (force and caused_by(exc, StoreCorrupt)):
                raise
            # The sources are intact: keep the damaged file for inspection, rebuild from them.
            path, moved = options.move_damaged_index()
            click.echo(
                f"memlane: the index {path} is damaged ({exc}); moved it aside to {moved} and "
                "rebuilding it from the notes and transcripts",
                err=True,
            )
            manager = options.open(move_workspace=move_workspace)
            report = manager.sync(force=True, progress=on_progress)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(summary(report))


@cli.command()
@click.argument("query", required=False)
@click.option(
    "--query", "query_option", help="The query (wins over the argument); '-' reads it from stdin."
)
@click.option("--max-results", type=click.IntRange(1, 100), help="1-100 (default from config).")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), help="0-1 (default from config).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--explain", is_flag=True, help="Show each result's score parts.")
@_global_options
@click.pass_obj
def search(
    options: _Options,
    query: str | None,
    query_option: str | None,
    max_results: int | None,
    min_score: float | None,
    as_json: bool,
    explain: bool,
) -> None:
    """Search the memory (syncs first when the index is dirty or empty)."""
    text = query_option or query
    if text == "-":  # argv caps one argument at 128 KiB; a longer paste comes on stdin
        text = sys.stdin.read(MAX_QUERY_CHARS + 1)  # one past the limit: refused, not cut
    if not text or not text.strip():
        raise click.UsageError("missing search query: give QUERY or --query TEXT")
    if not options.enabled():
        if as_json:  # the payload the agent tools return
            click.echo(json.dumps({"results": [], "disabled": True, "error": DISABLED_REASON}))
        return
    with _errors():
        check_query_text(text)  # before opening and syncing the index
    manager = options.manager()
    with _errors():
        try:
            with sync_progress() as on_progress:  # the first search of a large workspace
                # A read-only index is searched as it is; the response says so once.
                manager.refresh(progress=on_progress)
        except (SyncFailed, StoreError, EventLogError) as exc:  # what is indexed can answer
            click.echo(f"warning: sync failed, searching the index as it is: {exc}", err=True)
        response = manager.search(
            text, max_results=max_results, min_score=min_score, explain=explain
        )
    for warning in response.warnings:  # on stderr in both forms: a pipe must not hide it
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        payload: dict[str, object] = {
            "results": [result_json(r, explain) for r in response.results],
            "provider": response.provider,
            "model": response.model,
            "mode": response.mode,
        }
        if response.warnings:
            payload["warnings"] = list(response.warnings)
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    if not response.results:
        click.echo("No matches.")
        return
    blocks = []
    for r in response.results:
        head = f"{r.score:.3f} {r.path}:{r.start_line}-{r.end_line}"
        if explain and r.explanation is not None:
            e = r.explanation
            head += (
                f"  [vector={fmt(e.vector_score)} text={fmt(e.text_score)} "
                f"decay={e.decay_factor:.3f} rank={e.mmr_rank}]"
            )
        blocks.append(f"{head}\n{r.snippet.strip()}")
    click.echo("\n\n".join(blocks))


@cli.command()
@click.argument("path")
@click.option(
    "--from", "from_line", type=int, help="First line (1-based; 0 or less: the first line)."
)
@click.option("--lines", type=click.IntRange(min=0), help="How many lines (0: to the end).")
@click.option("--json", "as_json", is_flag=True)
@_global_options
@click.pass_obj
def get(
    options: _Options, path: str, from_line: int | None, lines: int | None, as_json: bool
) -> None:
    """Print lines of a memory file or of a transcript hit (a missing file is empty)."""
    if not options.enabled():
        return
    manager = options.manager()
    with _errors():
        got = manager.get(path, from_line=from_line, lines=lines)
    if as_json:
        click.echo(json.dumps(camel_keys(asdict(got)), ensure_ascii=False, indent=2))
    else:
        click.echo(got.text)


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--deep", is_flag=True, help="Probe the provider and rescan the sources.")
@click.option("--verbose", is_flag=True, help="Also the config file, ignored keys and settings.")
@_global_options
@click.pass_obj
def status(options: _Options, as_json: bool, deep: bool, verbose: bool) -> None:
    """Show the index status and the problems found (or that memory search is disabled)."""
    runtime = options.runtime()
    payload: dict[str, object] = {"agentId": runtime.agent_id, "enabled": False}
    text = f"Memory search disabled ({runtime.agent_id}): {DISABLED_REASON}"
    if runtime.settings.enabled:
        with _errors():
            report = options.manager().status(deep=deep)
        payload = {**camel_dict(asdict(report)), "enabled": True}
        text = status_text(report)
    else:
        payload["status"] = "disabled"
        payload["reason"] = DISABLED_REASON
    payload |= config_details(runtime)
    if as_json:
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
        return
    click.echo(text)
    if verbose:
        click.echo(verbose_text(payload))


@cli.group("store")
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
@click.pass_obj
def store_copy(options: _Options, target: str, all_agents: bool) -> None:
    """Copy the index (chunks, vectors, cache, events, meta) without re-embedding."""
    from memlane.application.store_copy import copy_index
    from memlane.entrypoints.config.env import store_url_for
    from memlane.entrypoints.config.runtime import resolve_runtime
    from memlane.entrypoints.container import (
        configured_transfer,
        stored_agents,
        target_transfer,
    )

    env = dict(os.environ)
    with _errors():
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
        for agent in agents:
            source = configured_transfer(runtime, env, agent)
            try:
                destination = target_transfer(target, agent)
                try:
                    counts = copy_index(source, destination)
                finally:
                    destination.close()
            finally:
                source.close()
            click.echo(
                f"{agent}: {counts.files} file(s), {counts.chunks} chunk(s), "
                f"{counts.vectors} vector(s), {counts.cache} cached, {counts.events} event(s) "
                "copied and verified"
            )


@cli.group("config")
def config_group() -> None:
    """Configuration tools."""


@config_group.command("schema")
def config_schema() -> None:
    """Print the config file's JSON Schema (for editors) on stdout."""
    click.echo(json.dumps(json_schema(), ensure_ascii=False, indent=2))


@cli.command()
@_global_options
@click.pass_obj
def watch(options: _Options) -> None:
    """Keep the index fresh in the foreground (watcher, interval, session growth)."""
    if not options.enabled():
        return
    manager = options.manager()
    stop = threading.Event()

    def on_signal(_sig: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with _errors():
        report = manager.sync()
    click.echo(summary(report), err=True)
    manager.start(watch=True)
    click.echo("watching; Ctrl-C to stop", err=True)
    stop.wait()
    click.echo("stopping", err=True)


@cli.command()
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@_global_options
@click.pass_obj
def events(options: _Options, limit: int, as_json: bool) -> None:
    """Show the tail of the event log: what changed, when, and what was done."""
    manager = options.manager()
    with _errors():
        records = manager.recent_events(limit)
    if as_json:
        click.echo(
            json.dumps([camel_keys(event_json(r)) for r in records], ensure_ascii=False, indent=2)
        )
        return
    for record in records:
        data = event_to_record(record.event)
        when = str(data.pop("occurred_at"))
        details = " ".join(f"{k}={v}" for k, v in data.items())
        click.echo(f"{record.position:>6} {when} {type_name(record.event)} {details}")


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True)
@click.option("--token", envvar="MEMLANE_TOKEN", help="Require this bearer token.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False))
@_global_options
@click.pass_obj
def serve(
    options: _Options,
    host: str,
    port: int,
    token: str | None,
    tls_cert: str | None,
    tls_key: str | None,
) -> None:
    """Serve the memory over gRPC."""
    from memlane.entrypoints.grpc.server import TlsConfig, build_server

    with _listen_errors():
        check_token(token)
        check_tls(tls_cert, tls_key)
        check_address(host, port)
    manager = options.manager()
    tls = TlsConfig(cert_file=tls_cert, key_file=tls_key) if tls_cert and tls_key else None
    with _listen_errors():
        server, bound = build_server(manager, host=host, port=port, token=token, tls=tls)
    server.start()
    manager.start()
    click.echo(f"memlane gRPC listening on {host}:{bound}", err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=5).wait()


@cli.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP listen address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option("--token", envvar="MEMLANE_TOKEN", help="HTTP: require this bearer token.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False))
@click.option("--tls-client-ca", type=click.Path(exists=True, dir_okay=False))
@click.option("--read-only", is_flag=True, help="Do not offer memory_write.")
@_global_options
@click.pass_obj
def mcp(
    options: _Options,
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
    from memlane.entrypoints.mcp.app import HttpOptions, run_mcp
    from memlane.entrypoints.mcp.http import is_loopback

    if use_http:
        with _listen_errors():
            check_token(token)
            check_tls(tls_cert, tls_key, tls_client_ca)
        if not token and not is_loopback(host):
            raise click.UsageError("--token is required when listening beyond loopback")
        with _listen_errors():
            check_address(host, port)
    http = HttpOptions(host, port, token or None, tls_cert, tls_key, tls_client_ca)
    run_mcp(options.manager(), read_only=read_only, http=http if use_http else None)


@contextmanager
def _listen_errors() -> Iterator[None]:
    """Listen options: a wrong value is bad usage (2), an address we cannot have a failure (1)."""
    try:
        yield
    except ListenOptionError as exc:
        raise click.UsageError(str(exc)) from exc
    except OSError as exc:  # ListenError, or the server's own bind failure
        raise click.ClickException(str(exc)) from exc


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="memlane")


if __name__ == "__main__":
    main()
