"""The real CLI on names and queries that are not valid UTF-8: a name is one issue and the sync
goes on; a query is refused as a bad query (exit 2), not taken for a provider failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def memlane(
    home: Path, *args: str | bytes, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env.update(HOME=str(home), MEMLANE_NO_DAEMON="1")
    options = ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")]
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", *options, *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=240,
        check=False,
    )


def _status(home: Path) -> dict[str, object]:
    done = memlane(home, "status", "--json")
    assert done.returncode == 0, done.stderr
    status: dict[str, object] = json.loads(done.stdout.decode("utf-8"))  # strict: valid UTF-8
    return status


@pytest.fixture
def home(tmp_path: Path) -> Path:
    memory = os.fsencode(tmp_path / "ws" / "memory")
    os.makedirs(memory)
    (tmp_path / "ws" / "MEMORY.md").write_text("# a\nwalrus note\n")
    with open(os.path.join(memory, b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# x\nwalrus\n")
    return tmp_path


def test_a_name_is_one_issue_and_a_query_a_bad_query_not_a_provider_failure(home: Path) -> None:
    """One index (with the bundled model) serves both checks: each process costs seconds."""
    indexed = memlane(home, "index")
    searched = memlane(home, "search", "walrus")
    rebuilt = memlane(home, "index", "--force")
    deep = memlane(home, "status", "--deep")

    # A name is one issue and every command goes on.
    for done in (indexed, searched, rebuilt, deep):
        assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"MEMORY.md" in searched.stdout
    assert b"memory/caf\\xe9.md: file name is not valid UTF-8" in deep.stdout

    # A query is a bad query (exit 2), not a provider failure, given on stdin or as an argument.
    query = b"\xff\xfe deploy"
    from_stdin = memlane(home, "search", "--query", "-", stdin=query)
    from_argument = memlane(home, "search", query)

    for done in (from_stdin, from_argument):
        assert done.returncode == 2
        assert b"query is not valid UTF-8 text (byte 0xff at character 0)" in done.stderr
        assert b"embedding provider" not in done.stderr
    status = _status(home)
    assert status["issues"] == [
        {"path": "memory/caf\\xe9.md", "reason": "file name is not valid UTF-8"}
    ]
    assert status["embedFailures"] == 0
    assert not [w for w in status["warnings"] if "failed" in w]  # type: ignore[attr-defined]


def test_status_json_spells_a_workspace_folder_name_readably(tmp_path: Path) -> None:
    """A workspace folder whose name is not UTF-8: `status --json` is valid UTF-8 JSON that
    names it as the sources name such files (`caf\\xe9`), not with raw bytes or surrogates."""
    workspace = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.makedirs(os.path.join(workspace, b"memory"))
    with open(os.path.join(workspace, b"MEMORY.md"), "wb") as handle:
        handle.write(b"# a\nwalrus note\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env.update(HOME=str(tmp_path), MEMLANE_NO_DAEMON="1", MEMLANE_PROVIDER="none")
    base = [sys.executable, "-m", "memlane.entrypoints", "--state-dir", str(tmp_path / "state")]

    runs = [
        subprocess.run(
            [*base, "--workspace", workspace, *command],
            capture_output=True,
            env=env,
            timeout=240,
            check=False,
        )
        for command in (["index"], ["status", "--json"])
    ]

    for done in runs:
        assert done.returncode == 0, done.stderr.decode(errors="replace")
    status = json.loads(runs[1].stdout.decode("utf-8"))  # strict: valid UTF-8
    assert status["workspace"] == f"{tmp_path}/caf\\xe9"
