"""Item 14.2: a sync that could not commit fails loudly, and nothing already indexed is lost.

The disk is filled for real: an 8 MiB tmpfs when this process may mount one (root), else a
file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) on the `memlane` process, so its writes fail
with EFBIG the way they fail with ENOSPC on a full disk.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home, no_traceback

pytestmark = pytest.mark.e2e

BIG_NOTES = 40  # ~3 KB of distinct words each: far more than the space left


# Sets the limit, then becomes the `memlane` process. Not a preexec_fn: that forks the whole
# pytest process (gRPC's event engine threads included, when an earlier test started gRPC) and
# runs code in the child between fork and exec, where gRPC's fork handlers and the closing of
# inherited fds met as "epoll_wait error: Bad file descriptor" and SIGABRT under load. Without
# preexec_fn, subprocess uses vfork + exec and no fork handler runs.
_LIMITED = (
    "import os, resource, signal, sys; "
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "  # an ignored signal stays so across exec
    "resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)


def _run(
    home: Path, state: Path, *args: str, limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    launch = [sys.executable, "-c", _LIMITED, str(limit)] if limit is not None else []
    return subprocess.run(
        [*launch, sys.executable, "-m", "memlane.entrypoints", "--state-dir", str(state),
         "--workspace", str(home / "ws"), *args],
        capture_output=True, text=True, env=cli_env(home), timeout=180, check=False,
    )  # fmt: skip


def _add_big_notes(home: Path) -> None:
    for i in range(BIG_NOTES):
        words = " ".join(f"filler{i}x{k}" for k in range(300))
        (home / "ws" / "memory" / f"big-{i}.md").write_text(f"# Big {i}\n\n{words}\n")


@contextlib.contextmanager
def _tmpfs(where: Path) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
        capture_output=True, check=False, timeout=30,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False, timeout=30)


def _fill(fs: Path, leave_kib: int) -> Path:
    filler = fs / "filler"
    free = shutil.disk_usage(fs).free // 1024
    with filler.open("wb") as out:
        out.write(b"\0" * max(0, free - leave_kib) * 1024)
    return filler


def _integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def _scenario(home: Path, state: Path, fail: Callable[[], subprocess.CompletedProcess[str]],
              recover: Callable[[], None]) -> None:  # fmt: skip
    first = _run(home, state, "index")
    assert first.returncode == 0, first.stderr
    _add_big_notes(home)

    failed = fail()

    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    assert "file(s) indexed" not in failed.stdout
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith(("Error: sync failed: ", "Error: index error: ")), last
    assert "full" in last or "too large" in last.lower() or "I/O" in last, last
    assert no_traceback(failed)

    recover()
    db = state / "agents" / "main" / "memory.db"
    assert _integrity(db) == "ok"
    old = _run(home, state, "search", "--json", "tabs")
    assert old.returncode == 0 and '"MEMORY.md"' in old.stdout  # nothing indexed was lost
    again = _run(home, state, "index")
    assert again.returncode == 0, again.stderr
    found = _run(home, state, "search", "--json", f"filler{BIG_NOTES - 1}x7")
    assert f"memory/big-{BIG_NOTES - 1}.md" in found.stdout  # the retry indexed the rest


def test_a_full_tmpfs_fails_the_index_command(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    with _tmpfs(tmp_path / "fs") as fs:
        state = fs / "state"
        filler: list[Path] = []

        def fail() -> subprocess.CompletedProcess[str]:
            filler.append(_fill(fs, leave_kib=100))
            return _run(home, state, "index")

        def recover() -> None:
            filler[0].unlink()

        _scenario(home, state, fail, recover)


def test_a_file_size_limit_fails_the_index_command(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    state = tmp_path / "state"
    db = state / "agents" / "main" / "memory.db"

    def fail() -> subprocess.CompletedProcess[str]:
        return _run(home, state, "index", limit=db.stat().st_size + 64 * 1024)

    _scenario(home, state, fail, lambda: None)
    assert not os.environ.get("MEMLANE_PROVIDER")  # the parent's environment was not changed
