"""Entry points: the `memlane` command line (results on stdout, diagnostics on stderr).

Exit codes: 0 success, 1 a failed operation, 2 bad usage (click's own usage errors included).
A sync that could not commit a change is a failed operation (1), a listen address that cannot be
had too; a wrong option value (empty token, TLS files, a state directory that is a file) is 2.
A configuration error is 2 as well, printed as one `error: <key>: ...` line rather than click's
usage text (cli_options.ConfigProblem); a sync refused as a mass deletion is 1.
Warnings (a configured provider that cannot run) go to stderr as `warning: ...` lines.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from memlane import __version__
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.index_store import StoreCorrupt, StoreError, caused_by
from memlane.application.sync_trigger import SyncFailed
from memlane.domain.agents import parse_agents
from memlane.domain.errors import DISABLED_REASON, MemoryDisabled
from memlane.domain.events import event_to_record, type_name
from memlane.domain.search import check_query_text
from memlane.domain.url_passwords import mask_url_passwords
from memlane.entrypoints.casing import camel_dict, camel_keys
from memlane.entrypoints.cli_daemon import daemon_group, daemon_json, daemon_text
from memlane.entrypoints.cli_options import (
    LOG_LEVELS,
    Options,
    QueryCommand,
    errors,
    global_options,
    query_from_stdin,
)
from memlane.entrypoints.cli_output import (
    check_time_options,
    config_details,
    event_json,
    readable_strings,
    search_output,
    status_text,
    summary,
    verbose_text,
)
from memlane.entrypoints.cli_servers import mcp, serve, store_group, ui, watch
from memlane.entrypoints.config.schema import json_schema
from memlane.entrypoints.daemon import hosting
from memlane.entrypoints.errors import failure_payload
from memlane.entrypoints.fast_exit import exit_code, exit_without_teardown
from memlane.entrypoints.logging import configure_logging
from memlane.entrypoints.progress_display import sync_progress


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
# No envvar= on --config and --state-dir: MEMLANE_CONFIG and MEMLANE_STATE_DIR are read where
# the flags are resolved (config/read.py), from the caller's environment; click would read the
# daemon's own when a daemon runs the command.
@click.option(
    "--config",
    help="JSON5 config file (default $MEMLANE_CONFIG, else ~/.memlane/config.json5).",
)
@click.option("--state-dir", help="State directory (default $MEMLANE_STATE_DIR, else ~/.memlane).")
@click.option(
    "--agent",
    help="Agent id (default $MEMLANE_AGENT, else the config's default agent, else 'main').",
)
@click.option(
    "--workspace",
    help="Workspace holding MEMORY.md and memory/ (default $MEMLANE_WORKSPACE, else the "
    "config's, else the one the index recorded, else the current directory for a new index).",
)
@click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(LOG_LEVELS),
)
@click.option(
    "--log-json",
    is_flag=True,
    help="Log JSON lines on stderr on a terminal too (when stderr is not a terminal, log lines "
    "are JSON already; results and warning: lines are not logs).",
)
@click.option(
    "--no-daemon",
    is_flag=True,
    help="Work in-process even when a daemon runs (also MEMLANE_NO_DAEMON=1).",
)
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
    no_daemon: bool,
) -> None:
    """Long-term memory for AI agents: index notes and transcripts, search them."""
    # Read by the console script before this CLI loads (daemon/client.py); here it keeps
    # `watch` and `serve` from serving the daemon socket.
    if hosting.current() is None:  # a daemon configured its logging once, for every request
        configure_logging(json=log_json or None, level=log_level)
    options = Options(config=config, state_dir=state_dir, agent=agent, workspace=workspace)
    options.log_level, options.log_json = log_level, log_json
    options.no_daemon = no_daemon
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
@click.option(
    "--allow-mass-delete",
    is_flag=True,
    help="Remove files missing from the workspace even when they are more than "
    "sync.maxDeletePercent of the index (refused otherwise: a wrong or unmounted folder).",
)
@click.option("--verbose", is_flag=True, help="Print provider and sources first.")
@global_options
@click.pass_obj
def index(
    options: Options, force: bool, move_workspace: bool, allow_mass_delete: bool, verbose: bool
) -> None:
    """Sync the index with the files now."""
    if not options.enabled():
        return
    with errors(), sync_progress() as on_progress:
        try:
            manager = options.open(move_workspace=move_workspace)
            if verbose:
                status = manager.status(deep=False)
                click.echo(f"workspace: {status.workspace}\nstore: {status.store_path}", err=True)
            report = manager.sync(
                force=force, progress=on_progress, allow_mass_delete=allow_mass_delete
            )
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
            report = manager.sync(
                force=True, progress=on_progress, allow_mass_delete=allow_mass_delete
            )
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(summary(report))


@cli.command(cls=QueryCommand)
@click.argument("query", required=False)
@click.option(
    "--query", "query_option", help="The query (wins over the argument); '-' reads it from stdin."
)
@click.option("--max-results", type=click.IntRange(1, 100), help="1-100 (default from config).")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), help="0-1 (default from config).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--explain", is_flag=True, help="Show each result's score parts.")
@click.option("--since", help="Only memories written from then: 2026-11-01, an ISO time, 7d, 2w.")
@click.option("--until", help="Only memories written until then (as --since; a date: its end).")
@click.option("--as-of", "as_of", help="When the question is asked (time words read against it).")
@click.option(
    "--agents",
    help="Search these agents' memories in one ranking (ids, comma-separated; a shared "
    "store: PostgreSQL, or one state dir). Each hit names its agent.",
)
@global_options
@click.pass_obj
def search(
    options: Options,
    query: str | None,
    query_option: str | None,
    max_results: int | None,
    min_score: float | None,
    as_json: bool,
    explain: bool,
    agents: str | None,
    since: str | None,
    until: str | None,
    as_of: str | None,
) -> None:
    """Search the memory (brings the index up to date first unless sync.onSearch is false)."""
    text = query_option or query
    if text == "-":  # argv caps one argument at 128 KiB; a longer paste comes on stdin
        text = query_from_stdin()
    if not text or not text.strip():
        raise click.UsageError("missing search query: give QUERY or --query TEXT")
    if not options.enabled():
        if as_json:  # the payload the agent tools return
            disabled = failure_payload(MemoryDisabled(DISABLED_REASON), tool="search")
            click.echo(json.dumps(disabled))
        return
    with errors():
        check_query_text(text)  # before opening and syncing the index
        asked = None if agents is None else parse_agents(agents)
        check_time_options(since, until, as_of)
    manager = options.manager()
    with errors():
        if asked is not None:
            manager.check_agents(asked)  # an unknown agent is refused before any sync works
        try:
            with sync_progress() as on_progress:  # the first search of a large workspace
                # A read-only index is searched as it is; the response says so once.
                manager.refresh(progress=on_progress)
        except (SyncFailed, StoreError, EventLogError) as exc:  # what is indexed can answer
            said = mask_url_passwords(str(exc))
            click.echo(f"warning: sync failed, searching the index as it is: {said}", err=True)
        response = manager.search(
            text,
            max_results=max_results,
            min_score=min_score,
            explain=explain,
            agents=asked,
            since=since,
            until=until,
            as_of=as_of,
        )
    for warning in response.warnings:  # on stderr in both forms: a pipe must not hide it
        click.echo(f"warning: {warning}", err=True)
    click.echo(search_output(response, as_json=as_json, explain=explain))


@cli.command()
@click.argument("path")
@click.option(
    "--from", "from_line", type=int, help="First line (1-based; 0 or less: the first line)."
)
@click.option("--lines", type=click.IntRange(min=0), help="How many lines (0: to the end).")
@click.option(
    "--from-agent",
    help="Read a hit of another agent's memory (the agent a `search --agents` hit names), "
    "from the workspace its index recorded.",
)
@click.option("--json", "as_json", is_flag=True, help="The lines as JSON (path, from, text, ...).")
@global_options
@click.pass_obj
def get(
    options: Options,
    path: str,
    from_line: int | None,
    lines: int | None,
    from_agent: str | None,
    as_json: bool,
) -> None:
    """Print lines of a memory file or of a transcript hit (a missing file is empty)."""
    if not options.enabled():
        return
    manager = options.manager(binds=False)
    with errors():
        got = manager.get(path, from_line=from_line, lines=lines, agent=from_agent)
    if as_json:
        click.echo(json.dumps(camel_keys(asdict(got)), ensure_ascii=False, indent=2))
    else:
        click.echo(got.text)
    if got.missing:
        click.echo(f"memlane: {got.path} does not exist (read as empty)", err=True)
    if got.more_from is not None:
        click.echo(
            f"memlane: stopped after {got.lines:,} lines; {got.path} goes on: "
            f"memlane get {got.path} --from {got.more_from}",
            err=True,
        )


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
@click.option("--deep", is_flag=True, help="Probe the provider and rescan the sources.")
@click.option("--verbose", is_flag=True, help="Also the config file, ignored keys and settings.")
@global_options
@click.pass_obj
def status(options: Options, as_json: bool, deep: bool, verbose: bool) -> None:
    """Show the index status and the problems found (or that memory search is disabled)."""
    runtime = options.runtime(show_ignored=verbose)
    payload: dict[str, object] = {"agentId": runtime.agent_id, "enabled": False}
    text = f"Memory search disabled ({runtime.agent_id}): {DISABLED_REASON}"
    if runtime.settings.enabled:
        with errors():
            report = options.manager(binds=False).status(deep=deep)
        payload = {**camel_dict(asdict(report)), "enabled": True}
        text = status_text(report)
    else:
        payload["status"] = "disabled"
        payload["reason"] = DISABLED_REASON
    payload |= config_details(runtime)
    payload["daemon"] = daemon_json(runtime.state_dir)
    text += f"\nDaemon: {daemon_text(payload['daemon'])}"
    if as_json:
        shown = readable_strings(payload)  # a workspace folder's name may not be UTF-8
        click.echo(json.dumps(shown, ensure_ascii=False, indent=2, default=str))
        return
    click.echo(text)
    if verbose:
        click.echo(verbose_text(payload))


@cli.group("config")
def config_group() -> None:
    """Configuration tools."""


@config_group.command("schema")
@global_options  # accepted like everywhere; the schema does not depend on them
def config_schema() -> None:
    """Print the config file's JSON Schema (for editors) on stdout."""
    click.echo(json.dumps(json_schema(), ensure_ascii=False, indent=2))


@cli.command()
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="The events as JSON.")
@global_options
@click.pass_obj
def events(options: Options, limit: int, as_json: bool) -> None:
    """Show the tail of the event log: what changed, when, and what was done."""
    manager = options.manager(binds=False)
    with errors():
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


cli.add_command(store_group)
cli.add_command(watch)
cli.add_command(serve)
cli.add_command(mcp)
cli.add_command(ui)
cli.add_command(daemon_group)


def main() -> None:
    """Console-script entry point (ends without the interpreter's teardown: `fast_exit`)."""
    try:
        cli.main(prog_name="memlane")
    except SystemExit as done:
        exit_without_teardown(exit_code(done.code))


if __name__ == "__main__":
    main()
