"""Issue #14 through the real CLI: nothing silent, nothing lost.

Each test runs `memlane` as a subprocess on real files with the real store (keyword-only, so
that no model has to load) and checks the exit code, the message and that nothing was lost.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memlane
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_event_log import SqliteEventLog
from memlane.domain import events

pytestmark = pytest.mark.e2e

NOTES = {
    "MEMORY.md": "# Preferences\n\nThe user prefers tabs over spaces and dark mode.\n",
    "memory/2026-11-17.md": "# Deploy\n\npgbouncer runs in transaction mode for asyncpg.\n",
}


def keyword_only(*, sources: list[str] | None = None, workspace: Path | None = None) -> object:
    """A config file's content: keyword-only search, optionally sources and a workspace."""
    block: dict[str, object] = {"provider": "none"}
    if sources is not None:
        block["sources"] = sources
    defaults: dict[str, object] = {"memorySearch": block}
    if workspace is not None:
        defaults["workspace"] = str(workspace)
    return {"agents": {"defaults": defaults}}


def make_home(root: Path, *, config: object = None) -> Path:
    """A workspace `ws`, an empty folder `elsewhere`, a state dir and a config file."""
    for name, text in NOTES.items():
        path = root / "ws" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "elsewhere").mkdir()
    (root / "memlane.json").write_text(json.dumps(config or keyword_only()), encoding="utf-8")
    return root


def run(
    home: Path, *args: str, cwd: Path | None = None, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """`memlane --state-dir S --config C ARGS` in `cwd` (the workspace by default), no --workspace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env["HOME"] = str(home)
    command = [
        sys.executable,
        "-m",
        "memlane.entrypoints",
        "--state-dir",
        str(home / "state"),
        "--config",
        str(home / "memlane.json"),
        *args,
    ]
    return subprocess.run(
        [*prefix, *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or home / "ws",
        timeout=240,
        check=False,
    )


def status(home: Path, *args: str, cwd: Path | None = None) -> dict[str, object]:
    done = run(home, "status", "--json", *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def store(home: Path) -> Path:
    return home / "state" / "agents" / "main" / "memory.db"


def indexed_paths(home: Path) -> list[str]:
    """The indexed files, read from the index file itself."""
    db = SqliteDatabase.open(store(home))
    try:
        with db.read() as conn:
            rows = conn.exec_driver_sql("SELECT path FROM files ORDER BY path").all()
        return [str(r[0]) for r in rows]
    finally:
        db.close()


class TestTheIndexIsBoundToItsWorkspace:
    def test_a_new_index_is_bound_to_its_folder_refuses_others_and_moves_only_when_asked(
        self, tmp_path: Path
    ) -> None:
        """One index, made once: every check on its binding in turn, the moves last."""
        home = make_home(tmp_path)

        # A new index says it takes the current directory.
        done = run(home, "index")

        assert done.returncode == 0
        assert f"bound to the current directory {home / 'ws'}" in done.stderr

        # A search from another folder keeps every note.
        found = run(home, "search", "pgbouncer", cwd=home / "elsewhere")

        assert found.returncode == 0, found.stderr
        assert "memory/2026-11-17.md" in found.stdout
        assert indexed_paths(home) == sorted(NOTES)
        log = run(home, "events", "--json", cwd=home / "elsewhere")
        assert "file_removed" not in log.stdout
        report = status(home, cwd=home / "elsewhere")
        assert report["workspace"] == str(home / "ws")
        # Keyword-only is not called hybrid (the same status report, nothing changed since).
        assert (report["provider"], report["searchMode"]) == ("none", "keyword")
        assert report["dirty"] is False

        # Another workspace is refused and says how to move.
        refused = run(home, "--workspace", str(home / "elsewhere"), "search", "tabs")

        assert refused.returncode == 1
        assert f"belongs to the workspace {home / 'ws'}" in refused.stderr
        assert "index --move-workspace" in refused.stderr
        assert indexed_paths(home) == sorted(NOTES)

        # A missing workspace folder is an error, not an empty result.
        missing = home / "gone"
        done = run(home, "--workspace", str(missing), "search", "tabs")

        assert done.returncode == 1
        assert f"workspace folder does not exist: {missing}" in done.stderr
        assert "No matches" not in done.stdout
        assert indexed_paths(home) == sorted(NOTES)

        # A recorded workspace that vanished is an error.
        shutil.move(home / "ws", home / "renamed")

        done = run(home, "search", "tabs", cwd=home / "elsewhere")

        assert done.returncode == 1
        assert "workspace folder does not exist" in done.stderr
        assert "--move-workspace" in done.stderr
        assert indexed_paths(home) == sorted(NOTES)
        shutil.move(home / "renamed", home / "ws")  # back where it was bound

        # The index moves only when asked.
        (home / "elsewhere" / "MEMORY.md").write_text("The new workspace mentions zeppelins.\n")

        moved = run(home, "--workspace", str(home / "elsewhere"), "index", "--move-workspace")

        assert moved.returncode == 0, moved.stderr
        assert "moving the index" in moved.stderr
        assert indexed_paths(home) == ["MEMORY.md"]
        found = run(home, "search", "zeppelins", cwd=home / "ws")  # the new binding holds
        assert "zeppelins" in found.stdout
        assert status(home, cwd=home / "ws")["workspace"] == str(home / "elsewhere")

    def test_the_config_names_the_workspace(self, tmp_path: Path) -> None:
        home = make_home(tmp_path, config=keyword_only(workspace=tmp_path / "ws"))

        done = run(home, "index", cwd=home / "elsewhere")

        assert done.returncode == 0, done.stderr
        assert "bound to the current directory" not in done.stderr
        assert indexed_paths(home) == sorted(NOTES)

    def test_the_python_api_refuses_a_missing_workspace(self, tmp_path: Path) -> None:
        with pytest.raises(memlane.WorkspaceMissing, match="does not exist"):
            memlane.open(
                workspace=tmp_path / "nope",
                state_dir=tmp_path / "state",
                config={"provider": "none"},
            )
        assert not (tmp_path / "state" / "agents" / "main" / "memory.db").exists()


def _read_only_mount(state: Path) -> tuple[str, ...]:
    """A command prefix running the rest in a private mount namespace where `state` is a
    read-only bind mount (a real read-only file system: even root gets EROFS)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return ("unshare", "--mount", "sh", "-c", script, str(state))


def _can_mount_read_only(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(
        [*_read_only_mount(probe), "sh", "-c", f'! touch "{probe}/x" 2>/dev/null'],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


class TestAReadOnlyIndex:
    def test_it_answers_without_a_warning_then_says_once_that_it_could_not_sync(
        self, tmp_path: Path
    ) -> None:
        if not _can_mount_read_only(tmp_path):
            pytest.skip("needs unshare and mount (a private read-only bind mount)")
        home = make_home(tmp_path)
        assert run(home, "index").returncode == 0
        read_only = _read_only_mount(home / "state")

        # With nothing to sync it answers without a warning.
        found = run(home, "search", "tabs", prefix=read_only)

        assert found.returncode == 0, found.stderr
        assert "MEMORY.md" in found.stdout
        assert "could not sync" not in found.stderr

        # It answers searches and says once that it could not sync.
        # A change the sync would have to write: it cannot, the search must still answer.
        (home / "ws" / "memory" / "new.md").write_text("Zeppelins land on Tuesdays.\n")

        unchanged = run(home, "search", "pgbouncer", prefix=read_only)

        assert unchanged.returncode == 0, unchanged.stderr
        assert "memory/2026-11-17.md" in unchanged.stdout
        assert unchanged.stderr.count("could not sync") == 1
        assert "read-only" in unchanged.stderr
        assert indexed_paths(home) == sorted(NOTES)


class TestADamagedIndex:
    def test_an_interrupted_force_and_a_damaged_file_are_each_rebuilt_from_the_sources(
        self, tmp_path: Path
    ) -> None:
        home = make_home(tmp_path)
        assert run(home, "index").returncode == 0

        # An interrupted force is reported as one rebuild.
        # What a SIGKILL during `index --force` leaves: the request logged, never handled.
        db = SqliteDatabase.open(store(home))
        SqliteEventLog(db).append(
            [
                events.ReindexRequired(
                    occurred_at=datetime(2026, 12, 1, tzinfo=UTC), reason="user_requested"
                )
            ]
        )
        db.close()
        assert status(home)["dirty"] is True

        done = run(home, "index")

        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("full reindex: 2 file(s) indexed, 0 removed")
        assert indexed_paths(home) == sorted(NOTES)
        assert status(home)["dirty"] is False

        # `index --force` moves a damaged index aside and rebuilds from the sources.
        data = bytearray(store(home).read_bytes())
        garbage = bytes((i * 37 + 11) % 256 for i in range(len(data)))
        data[0:4096] = garbage[0:4096]  # the header and the schema page
        data[len(data) // 2 : len(data) // 2 + 8192] = garbage[0:8192]  # and pages inside
        store(home).write_bytes(bytes(data))

        broken = run(home, "search", "tabs")
        assert broken.returncode == 1
        assert "memlane --workspace <the notes folder> index --force" in broken.stderr

        repaired = run(home, "--workspace", str(home / "ws"), "index", "--force")

        assert repaired.returncode == 0, repaired.stderr
        assert "is damaged" in repaired.stderr and "moved it aside" in repaired.stderr
        assert repaired.stdout.startswith("full reindex: 2 file(s) indexed")
        aside = list(store(home).parent.glob("memory.db.corrupt-*"))
        assert [p.read_bytes() for p in aside if not p.name.endswith(("-wal", "-shm"))] == [
            bytes(data)
        ]
        assert indexed_paths(home) == sorted(NOTES)
        assert "MEMORY.md" in run(home, "search", "tabs").stdout


class TestProblemsSurviveTheProcess:
    def test_problems_found_are_shown_by_each_new_process_and_nothing_to_do_writes_nothing(
        self, tmp_path: Path
    ) -> None:
        home = make_home(tmp_path)
        config = keyword_only(sources=["memory", "sessions"])
        (home / "memlane.json").write_text(json.dumps(config))

        # A fresh workspace without sessions has no problem.
        done = run(home, "index")

        assert done.returncode == 0
        assert "issue" not in done.stdout
        assert status(home, "--deep")["issues"] == []

        # A new process shows every problem.
        ws = home / "ws" / "memory"
        with (ws / "huge.md").open("wb") as f:
            f.truncate(50 * 1024 * 1024)  # sparse: 50 MB by stat, refused before reading
        (ws / "blob.md").write_bytes(b"\x00\x01\x02 binary")
        (ws / "latin1.md").write_bytes("caf\xe9 notes\n".encode("latin-1"))
        sessions = home / "state" / "agents" / "main" / "sessions"
        sessions.mkdir(parents=True)
        message = {"type": "message", "message": {"role": "user", "content": "hello there"}}
        (sessions / "chat.jsonl").write_text(json.dumps(message) + "\n{broken json\n")

        done = run(home, "index")
        assert done.returncode == 0, done.stderr
        assert "4 issue(s)" in done.stdout

        for args in ((), ("--deep",)):
            report = status(home, *args)  # a new process each time
            paths = sorted(str(i["path"]) for i in report["issues"])  # type: ignore[attr-defined]
            assert paths == [
                "memory/blob.md",
                "memory/huge.md",
                "memory/latin1.md",
                "sessions/chat.jsonl",
            ], args

        # An index and a search with nothing changed leave the files untouched (problem files
        # there: the ones above).
        files = sorted(store(home).parent.glob("memory.db*"))
        before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in files}

        again = run(home, "index")
        found = run(home, "search", "tabs")

        assert again.returncode == 0 and found.returncode == 0
        assert "0 file(s) indexed, 0 removed" in again.stdout
        after = {
            p.name: (p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(store(home).parent.glob("memory.db*"))
        }
        assert after == before

        # A note that turned binary is named on its old hits.
        # Its indexed rows stay (nothing lost), and a search answered from them said nothing:
        # the old text looked current, and `get` of the hit then failed.
        (home / "ws" / "memory" / "2026-11-17.md").write_bytes(b"pgbouncer\x00binary")

        searched = run(home, "search", "pgbouncer", "--json")  # syncs first, then answers
        again = run(home, "search", "pgbouncer")  # a new process, nothing changed since

        assert searched.returncode == 0, searched.stderr
        answer = json.loads(searched.stdout)
        assert [r["path"] for r in answer["results"]] == ["memory/2026-11-17.md"]
        (warning,) = [w for w in answer["warnings"] if w.startswith("not indexed again")]
        assert "memory/2026-11-17.md (binary content (NUL byte))" in warning
        assert "warning: not indexed again after a change" in again.stderr


class TestStatusTellsTheTruthInANewProcess:
    def test_after_an_index_the_recorded_state_is_shown(self, tmp_path: Path) -> None:
        home = make_home(tmp_path, config={"agents": {}})  # provider auto: the bundled model
        assert run(home, "index").returncode == 0

        text = run(home, "status")

        assert text.returncode == 0
        assert "Provider: local (requested: auto)" in text.stdout
        assert "Model: multilingual-e5-small" in text.stdout
        assert "Dirty: no" in text.stdout
        assert "Last sync: never" not in text.stdout
        report = status(home)
        assert report["searchMode"] == "hybrid"
        assert report["lastSyncReason"] == "explicit"
