"""Every global option is accepted before and after every command (README, issue 29).

Parsing is the real click parsing of the `memlane` command line (the group's own options, then
the subcommand's); what each option does is shown by the e2e tests (tests/e2e/test_cli*.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import click
import pytest
import structlog

from memlane.entrypoints.cli import cli
from memlane.entrypoints.cli_options import Options

# The arguments each command needs besides the global options.
COMMAND_ARGS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("index",): (),
    ("search",): ("query",),
    ("get",): ("MEMORY.md",),
    ("status",): (),
    ("watch",): (),
    ("events",): (),
    ("serve",): (),
    ("mcp",): (),
    ("ui",): (),
    ("daemon", "start"): (),
    ("daemon", "stop"): (),
    ("daemon", "status"): (),
    ("config", "schema"): (),
    ("store", "copy"): ("--to", "sqlite:/tmp/elsewhere"),
}
GLOBAL_OPTIONS: dict[str, tuple[str, ...]] = {
    "config": ("--config", "/tmp/c.json5"),
    "state_dir": ("--state-dir", "/tmp/state"),
    "agent": ("--agent", "work"),
    "workspace": ("--workspace", "/tmp/ws"),
    "log_level": ("--log-level", "debug"),
    "log_json": ("--log-json",),
}


def _leaves(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _leaves(command, (*path, name))
        else:
            yield (*path, name)


def _parse(before: list[str], command: tuple[str, ...], after: list[str]) -> Options:
    """Parse `memlane BEFORE COMMAND AFTER` as the CLI does, without running the command."""
    ctx = cli.make_context("memlane", [*before, *command, *after])
    options = Options(**{k: ctx.params[k] for k in ("config", "state_dir", "agent", "workspace")})
    options.log_level, options.log_json = ctx.params["log_level"], ctx.params["log_json"]
    ctx.obj = options
    group: click.Command = cli
    for i, name in enumerate(command):
        assert isinstance(group, click.Group)
        found = group.get_command(ctx, name)
        assert found is not None
        rest = after if i == len(command) - 1 else list(command[i + 1 :])
        ctx = found.make_context(name, rest, parent=ctx)
        group = found
    return options


def _value(options: Options, name: str) -> object:
    if name == "log_level":
        return options.log_level
    if name == "log_json":
        return options.log_json
    return options.values[name]


def test_the_table_names_every_command() -> None:
    assert set(_leaves(cli)) == set(COMMAND_ARGS)


@pytest.mark.parametrize("option", list(GLOBAL_OPTIONS))
@pytest.mark.parametrize("command", list(COMMAND_ARGS), ids=" ".join)
def test_after_the_command(command: tuple[str, ...], option: str) -> None:
    flag = GLOBAL_OPTIONS[option]

    options = _parse([], command, [*COMMAND_ARGS[command], *flag])

    assert _value(options, option) == (True if len(flag) == 1 else flag[1])


@pytest.mark.parametrize("option", list(GLOBAL_OPTIONS))
@pytest.mark.parametrize("command", list(COMMAND_ARGS), ids=" ".join)
def test_before_the_command(command: tuple[str, ...], option: str) -> None:
    flag = GLOBAL_OPTIONS[option]

    options = _parse([*flag], command, [*COMMAND_ARGS[command]])

    assert _value(options, option) == (True if len(flag) == 1 else flag[1])


def test_after_the_command_wins() -> None:
    options = _parse(["--log-level", "error"], ("search",), ["q", "--log-level", "debug"])

    assert options.log_level == "debug"


def test_log_options_after_the_command_configure_logging(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _parse([], ("search",), ["q", "--log-level", "debug", "--log-json"])
    structlog.get_logger().debug("probe_event", n=1)

    assert json.loads(capsys.readouterr().err)["event"] == "probe_event"
