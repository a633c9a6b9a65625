"""Item 14.10: the config file is bounded: only a regular file, at most 1 MiB, 32 levels deep."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlane.entrypoints.config.files import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH
from tests.e2e._loud_support import make_home, memlane, no_traceback

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


def _refused(home: Path, config: Path | str, reason: str) -> None:
    done = memlane(home, "--config", str(config), "search", "tabs", timeout=30)
    assert done.returncode == 2, done.stderr
    assert f"{config}: {reason}" in done.stderr
    assert no_traceback(done)
    assert not (home / "state" / "agents").exists()  # refused before anything was opened


def test_a_device_is_refused_without_reading_it(home: Path) -> None:
    _refused(home, "/dev/zero", "not a regular file (a character device)")


def test_a_fifo_is_refused_instead_of_hanging(home: Path) -> None:
    fifo = home / "config.fifo"
    os.mkfifo(fifo)
    _refused(home, fifo, "not a regular file (a FIFO)")


def test_a_directory_is_refused(home: Path) -> None:
    _refused(home, home / "ws", "not a regular file (a directory)")


def test_a_file_over_the_size_limit_is_refused(home: Path) -> None:
    big = home / "big.json5"
    big.write_text("{}" + " " * MAX_CONFIG_BYTES)
    _refused(home, big, f"config file larger than {MAX_CONFIG_BYTES} bytes")


def test_five_thousand_nested_levels_are_refused(home: Path) -> None:
    deep = home / "deep.json5"
    deep.write_text('{"a":' * 5000 + "1" + "}" * 5000)
    _refused(home, deep, f"nested deeper than {MAX_CONFIG_DEPTH} levels")


def test_a_config_at_the_limits_still_works(home: Path) -> None:
    """Brackets inside strings and comments do not count; the limit itself is accepted."""
    nested = '{"x":' * (MAX_CONFIG_DEPTH - 2) + "1" + "}" * (MAX_CONFIG_DEPTH - 2)
    text = (
        "// {{{{ [[[[ " + "{" * 100 + "\n"
        '{memorySearch: {provider: "none", remote: {headers: {"X-Note": "' + "[" * 100 + '"}}},'
        f" ignoredExtra: {nested}}}\n"
    )
    config = home / "ok.json5"
    config.write_text(text + " " * (MAX_CONFIG_BYTES - len(text.encode())))
    assert config.stat().st_size == MAX_CONFIG_BYTES
    done = memlane(home, "--config", str(config), "search", "tabs", timeout=60)
    assert "nested deeper" not in done.stderr and "larger than" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "MEMORY.md" in done.stdout


# Issue #32 item 2: a file named by `$include` is bounded as the main config file is.


def _including(home: Path, target: Path | str) -> Path:
    main = home / "main.json5"
    main.write_text(f'{{"$include": "{target}", memorySearch: {{provider: "none"}}}}\n')
    return main


def _include_refused(home: Path, target: Path | str, reason: str) -> None:
    done = memlane(home, "--config", str(_including(home, target)), "search", "tabs", timeout=30)
    assert done.returncode == 2, done.stderr
    assert f"{target}: {reason}" in done.stderr
    assert no_traceback(done)
    assert not (home / "state" / "agents").exists()


@pytest.mark.timeout(60)
def test_an_included_device_is_refused_without_reading_it(home: Path) -> None:
    _include_refused(
        home, "/dev/zero", "included config file is not a regular file (a character device)"
    )


@pytest.mark.timeout(60)
def test_an_included_fifo_is_refused_instead_of_hanging(home: Path) -> None:
    fifo = home / "included.fifo"
    os.mkfifo(fifo)
    _include_refused(home, fifo, "included config file is not a regular file (a FIFO)")


@pytest.mark.timeout(60)
def test_an_included_directory_is_refused(home: Path) -> None:
    _include_refused(home, home / "ws", "included config file is not a regular file (a directory)")


@pytest.mark.timeout(60)
def test_an_included_file_over_the_size_limit_is_refused(home: Path) -> None:
    big = home / "big-include.json5"
    big.write_text("{}" + " " * MAX_CONFIG_BYTES)
    _include_refused(home, big, f"included config file larger than {MAX_CONFIG_BYTES} bytes")


def test_an_included_file_within_the_limits_still_applies(home: Path) -> None:
    part = home / "part.json5"
    part.write_text('{memorySearch: {provider: "none", query: {maxResults: 3}}}\n')
    done = memlane(home, "--config", str(_including(home, part)), "search", "tabs", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "MEMORY.md" in done.stdout
