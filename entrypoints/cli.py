"""Entry points: the `memlane` command line (results on stdout, diagnostics on stderr).

Exit codes: 0 success, 1 a failed operation, 2 bad usage (click's own usage errors included).
A sync that could not commit a change is a failed operation (1), a listen address that cannot be
had too; a wrong option value (empty token, TLS files, a state directory that is a file) is 2.
Warnings (a configured provider that cannot run) go to stderr as `warning: ...` lines.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from types import FrameType
from typing import TYPE_CHECKING

import click

from memlane import __version__
from memlane.application.ports.embedding import EmbeddingError
from memlane.application.ports.event_log import EventLogError, RecordedEvent
from memlane.application.ports.file_source import FileMissing, SourceError
from memlane.application.ports.index_store import StoreError
from memlane.application.reports import StatusReport, SyncReport
from memlane.application.sync import SyncFailed
from memlane.domain.errors import ConfigError, InvalidQuery
from memlane.domain.events import event_to_record, type_name
from memlane.domain.search import MAX_QUERY_CHARS, check_query_text
from memlane.entrypoints.config.schema import effective_settings, json_schema
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
    """Global options, resolved into a manager on first use."""

    def __init__(self, **values: str | None) -> None:
        self.values = values
        self._manager: MemoryManager | None = None

    def manager(self, **overrides: object) -> MemoryManager:
        if self._manager is None:
            from memlane.entrypoints.api import open_manager

            with _errors():
                self._manager = open_manager(
                    workspace=self.values["workspace"],
                    agent_id=self.values["agent"],
                    state_dir=self.values["state_dir"],
                    config_path=self.values["config"],
                    config=overrides or None,
                )
        return self._manager

    def close(self) -> None:
        if self._manager is not None:
            try:
                self._manager.close()
            except Exception as exc:  # closing must not change the exit code
                click.echo(f"memlane: close failed: {exc}", err=True)


@contextmanager
def _errors() -> Iterator[None]:
    """The CLI's one error table: every expected failure becomes a message and exit code."""
    try:
        yield
    except (ConfigError, InvalidQuery) as exc:
        raise click.UsageError(str(exc)) from exc
    except FileMissing as exc:
        raise click.ClickException(f"not found: {exc.path}") from exc
    except SourceError as exc:
        raise click.ClickException(f"refused: {exc}") from exc
    except EmbeddingError as exc:
        raise click.ClickException(f"embedding provider failed: {exc}") from exc
    except (StoreError, EventLogError) as exc:
        raise click.ClickException(f"index error: {exc}") from exc
    except SyncFailed as exc:
        raise click.ClickException(f"sync failed: {exc}") from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", envvar="MEMLANE_CONFIG", help="JSON5 config file.")
@click.option(
    "--state-dir", envvar="MEMLANE_STATE_DIR", help="State directory (default ~/.memlane)."
)
@click.option("--agent", help="Agent id (default: the config's default agent, else 'main').")
@click.option("--workspace", help="Workspace holding MEMORY.md and memory/ (default: cwd).")
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
@click.option("--force", is_flag=True, help="Rebuild the whole index safely.")
@click.option("--verbose", is_flag=True, help="Print provider and sources first.")
@click.pass_obj
def index(options: _Options, force: bool, verbose: bool) -> None:
    """Sync the index with the files now."""
    manager = options.manager()
    if verbose:
        status = manager.status(deep=False)
        click.echo(f"workspace: {status.workspace}\nstore: {status.store_path}", err=True)
    with _errors(), sync_progress() as on_progress:
        report = manager.sync(force=force, progress=on_progress)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(_summary(report))


@cli.command()
@click.argument("query", required=False)
@click.option(
    "--query", "query_option", help="The query (wins over the argument); '-' reads it from stdin."
)
@click.option("--max-results", type=click.IntRange(1, 100), help="1-100 (default from config).")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), help="0-1 (default from config).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--explain", is_flag=True, help="Show each result's score parts.")
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
    with _errors():
        check_query_text(text)  # before opening and syncing the index
    manager = options.manager()
    with _errors():
        try:
            with sync_progress() as on_progress:  # the first search of a large workspace
                manager.sync(progress=on_progress)
        except (SyncFailed, StoreError, EventLogError) as exc:  # what is indexed can answer
            click.echo(f"warning: sync failed, searching the index as it is: {exc}", err=True)
        response = manager.search(
            text, max_results=max_results, min_score=min_score, explain=explain
        )
    for warning in response.warnings:  # on stderr in both forms: a pipe must not hide it
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        payload: dict[str, object] = {
            "results": [_result_json(r, explain) for r in response.results],
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
                f"  [vector={_fmt(e.vector_score)} text={_fmt(e.text_score)} "
                f"decay={e.decay_factor:.3f} rank={e.mmr_rank}]"
            )
        blocks.append(f"{head}\n{r.snippet.strip()}")
    click.echo("\n\n".join(blocks))


@cli.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(min=1), help="First line (1-based).")
@click.option("--lines", type=click.IntRange(min=1), help="How many lines.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def get(
    options: _Options, path: str, from_line: int | None, lines: int | None, as_json: bool
) -> None:
    """Print lines of a memory file or of a transcript hit."""
    manager = options.manager()
    with _errors():
        got = manager.get(path, from_line=from_line, lines=lines)
    if as_json:
        click.echo(json.dumps(asdict(got), ensure_ascii=False, indent=2))
    else:
        click.echo(got.text)


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--deep", is_flag=True, help="Probe the provider and rescan the sources.")
@click.pass_obj
def status(options: _Options, as_json: bool, deep: bool) -> None:
    """Show the index status and the problems found."""
    manager = options.manager()
    with _errors():
        report = manager.status(deep=deep)
    if as_json:
        payload = asdict(report)
        # The resolved value of every key, derived from the key table like the JSON Schema.
        payload["settings"] = effective_settings(manager.settings)
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(_status_text(report))


@cli.group("config")
def config_group() -> None:
    """Configuration tools."""


@config_group.command("schema")
def config_schema() -> None:
    """Print the config file's JSON Schema (for editors) on stdout."""
    click.echo(json.dumps(json_schema(), ensure_ascii=False, indent=2))


@cli.command()
@click.pass_obj
def watch(options: _Options) -> None:
    """Keep the index fresh in the foreground (watcher, interval, session growth)."""
    manager = options.manager()
    stop = threading.Event()

    def on_signal(_sig: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with _errors():
        report = manager.sync()
    click.echo(_summary(report), err=True)
    manager.start(watch=True)
    click.echo("watching; Ctrl-C to stop", err=True)
    stop.wait()
    click.echo("stopping", err=True)


@cli.command()
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def events(options: _Options, limit: int, as_json: bool) -> None:
    """Show the tail of the event log: what changed, when, and what was done."""
    manager = options.manager()
    with _errors():
        records = manager.recent_events(limit)
    if as_json:
        click.echo(json.dumps([_event_json(r) for r in records], ensure_ascii=False, indent=2))
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


def _summary(report: SyncReport) -> str:
    kind = "full reindex" if report.full_reindex else "sync"
    issues = (
        f", {len(report.issues)} issue(s) (see `memlane status --deep`)" if report.issues else ""
    )
    return (
        f"{kind}: {report.files_indexed} file(s) indexed, {report.files_removed} removed, "
        f"{report.files_unchanged} unchanged, {report.chunks_embedded} chunk(s) embedded "
        f"in {report.duration_ms / 1000:.1f}s{issues}"
    )


def _result_json(r: object, explain: bool) -> dict[str, object]:
    from memlane.domain.search import SearchResult

    assert isinstance(r, SearchResult)
    data: dict[str, object] = {
        "path": r.path,
        "startLine": r.start_line,
        "endLine": r.end_line,
        "score": r.score,
        "snippet": r.snippet,
        "source": r.source,
    }
    if explain and r.explanation is not None:
        data["explain"] = asdict(r.explanation)
    return data


def _event_json(record: RecordedEvent) -> dict[str, object]:
    return {
        "position": record.position,
        "type": type_name(record.event),
        **event_to_record(record.event),
    }


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _status_text(s: StatusReport) -> str:
    lines = [
        f"Memory ({s.agent_id})",
        f"Provider: {s.provider} (requested: {s.requested_provider})"
        + (f" — {s.provider_reason}" if s.provider_reason else ""),
        f"Model: {s.model or '-'}",
        f"Search mode: {s.search_mode}",
        f"Sources: {', '.join(s.sources)}",
        f"Indexed: {s.files} files · {s.chunks} chunks",
    ]
    lines += [f"  {b.source} · {b.files} files · {b.chunks} chunks" for b in s.by_source]
    lines += [
        f"Dirty: {'yes' if s.dirty else 'no'}",
        f"Store: {s.store_path}",
        f"Workspace: {s.workspace}",
        f"Vector: {'ready' if s.vector_available else 'unavailable'}"
        + (f" ({s.vector_error})" if s.vector_error else ""),
        f"Vector dims: {s.vector_dims or '-'}",
        f"Embedding cache: {s.cache_entries} entries (cap {s.cache_max_entries or 'none'})",
        f"Events: position {s.events_position}, {s.events_pending} pending",
    ]
    if s.fallback_from:
        lines.append(f"Fallback: from {s.fallback_from} ({s.fallback_reason})")
    lines += [f"Warning: {w}" for w in s.warnings]
    if s.issues:
        lines.append("Issues:")
        lines += [f"  {i.path}: {i.reason}" for i in s.issues]
    return "\n".join(lines)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="memlane")


if __name__ == "__main__":
    main()
