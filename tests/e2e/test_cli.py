"""The real `memlane` CLI as a subprocess, on real files, the real store and the bundled model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

NOTES = {
    "MEMORY.md": "# Preferences\n\nThe user prefers tabs over spaces and dark mode.\n",
    "memory/2026-11-17.md": (
        "# 2026-11-17\n\nFixed the prepared statement error: pgbouncer runs in transaction "
        "mode, so asyncpg needs statement_cache_size=0.\n"
    ),
}
SESSION = [
    {
        "type": "message",
        "message": {"role": "user", "content": "数据库迁移的停机窗口定在什么时候？"},
        "timestamp": "2026-11-25T09:00:00Z",
    },
    {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "停机窗口定在周六凌晨两点到两点半。"}],
        },
        "timestamp": "2026-11-25T09:00:05Z",
    },
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    for name, text in NOTES.items():
        path = root / "ws" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    sessions = root / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    lines = [json.dumps(r, ensure_ascii=False) for r in SESSION]
    (sessions / "chat.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def memlane(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env["HOME"] = str(home)  # no user config file can leak in
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "memlane.entrypoints",
            "--state-dir",
            str(home / "state"),
            "--workspace",
            str(home / "ws"),
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


class TestCli:
    def test_index_then_search_in_english(self, home: Path) -> None:
        """index builds the store; search finds the note that answers the question."""
        indexed = memlane(home, "index")
        assert indexed.returncode == 0, indexed.stderr
        assert "3 file(s) indexed" in indexed.stdout

        found = memlane(
            home, "search", "how did we fix the pgbouncer prepared statement error", "--json"
        )

        assert found.returncode == 0, found.stderr
        payload = json.loads(found.stdout)
        assert payload["provider"] == "local" and payload["mode"] == "hybrid"
        assert payload["results"][0]["path"] == "memory/2026-11-17.md"
        assert payload["results"][0]["startLine"] >= 1

    def test_search_in_chinese_finds_the_transcript(self, home: Path) -> None:
        """A Chinese question finds the Chinese transcript, with JSONL line numbers."""
        found = memlane(home, "search", "停机窗口是什么时候", "--json")

        assert found.returncode == 0, found.stderr
        top = json.loads(found.stdout)["results"][0]
        assert top["path"] == "sessions/chat.jsonl"
        assert (top["startLine"], top["endLine"]) == (1, 2)

    def test_explain_json_keys_and_log_options_after_the_command(self, home: Path) -> None:
        """One search with `--explain --json` and a log option after the command checks both."""
        # `--explain --json` names the score parts like every other JSON key (README).
        found = memlane(
            home, "search", "tabs or spaces", "--json", "--explain", "--log-level", "info"
        )

        assert found.returncode == 0, found.stderr
        results = json.loads(found.stdout)["results"]
        assert results  # logs never mix with the JSON on stdout
        for result in results:
            assert set(result["explain"]) == {
                "vectorScore", "textScore", "fusedScore", "decayFactor", "mmrRank", "timeBoost",
                "bestPiece",
            }  # fmt: skip
        assert [r["explain"]["mmrRank"] for r in results] == list(range(1, len(results) + 1))
        # `memlane search "q" --log-level info` (README: global options go either side); its
        # `status --json --log-json --log-level error` is the status test's status.
        logged = [json.loads(line) for line in found.stderr.splitlines() if line.startswith("{")]
        assert "sync_finished" in {line["event"] for line in logged}

    def test_get_reads_lines_and_transcript_hits(self, home: Path) -> None:
        """get prints the requested lines of a note and the messages of a transcript hit."""
        note = memlane(home, "get", "memory/2026-11-17.md", "--from", "3", "--lines", "1")
        chat = memlane(home, "get", "sessions/chat.jsonl", "--from", "2", "--lines", "1")

        assert note.returncode == 0 and "statement_cache_size=0" in note.stdout
        assert chat.returncode == 0 and chat.stdout.startswith("Assistant: 停机窗口")

    def test_get_says_on_stderr_where_a_note_longer_than_a_read_goes_on(
        self, tmp_path: Path
    ) -> None:
        """A read stops at 10,000 lines; the rest of a longer note is named, not dropped."""
        (tmp_path / "ws" / "memory").mkdir(parents=True)
        long_note = "".join(f"line {n}\n" for n in range(1, 10_004))
        (tmp_path / "ws" / "memory" / "long.md").write_text(long_note, encoding="utf-8")

        whole = memlane(tmp_path, "get", "memory/long.md")
        rest = memlane(tmp_path, "get", "memory/long.md", "--from", "10001")

        assert whole.returncode == 0, whole.stderr
        assert whole.stdout.splitlines()[-1] == "line 10000"
        assert "memlane get memory/long.md --from 10001" in whole.stderr
        assert rest.stdout.split() == ["line", "10001", "line", "10002", "line", "10003"]
        assert "goes on" not in rest.stderr

    def test_get_of_a_missing_note_is_empty_and_says_so(self, home: Path) -> None:
        """Empty text, exit 0, as in the reference; stderr says the file does not exist."""
        done = memlane(home, "get", "memory/2031-01-01.md")

        assert (done.returncode, done.stdout.strip()) == (0, "")
        assert "memory/2031-01-01.md does not exist (read as empty)" in done.stderr

    def test_path_traversal_is_refused(self, home: Path) -> None:
        """get refuses paths outside the memory files and sessions."""
        (home / "secret.md").write_text("top secret", encoding="utf-8")

        for path in ("../secret.md", str(home / "secret.md"), "memory/../../secret.md"):
            result = memlane(home, "get", path)
            assert result.returncode == 1, (path, result.stdout)
            assert "top secret" not in result.stdout
            assert "refused" in result.stderr or "not found" in result.stderr

    def test_status_and_events_report_the_index(self, home: Path) -> None:
        """status shows counts per source; events shows what the syncs did. The JSON status is
        also the `status --json --log-json --log-level error` of the README's line on global
        options after the command."""
        status = memlane(home, "status", "--json", "--log-json", "--log-level", "error")
        events = memlane(home, "events", "--json", "--limit", "50")

        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        assert report["agentId"] == "main"  # log options after the command: JSON alone on stdout
        counts = {s["source"]: s["files"] for s in report["bySource"]}
        assert counts == {"memory": 2, "sessions": 1}
        # A small index is searched exactly: the code file's state says so, text and JSON.
        assert report["vectorIndex"]["engine"] == "codes"
        assert report["vectorIndex"]["state"].startswith("exact: ")
        text = memlane(home, "status")
        assert "Vector index: codes — exact: " in text.stdout
        assert events.returncode == 0, events.stderr
        types = {e["type"] for e in json.loads(events.stdout)}
        assert {"reindex_required", "index_rebuilt"} <= types

    def test_an_edit_is_picked_up_by_the_next_search(self, home: Path) -> None:
        """search syncs first, so a new note is found without an explicit index."""
        (home / "ws" / "memory" / "todo.md").write_text(
            "# Todo\n\nRenew the wildcard TLS certificate before December 15.\n", encoding="utf-8"
        )

        found = memlane(home, "search", "wildcard certificate renewal", "--json")

        assert json.loads(found.stdout)["results"][0]["path"] == "memory/todo.md"

    @pytest.mark.parametrize(
        "args",
        [
            ("search",),
            ("search", "x", "--max-results", "0"),
            ("search", "x", "--min-score", "abc"),
            ("get",),
            ("no-such-command",),
        ],
    )
    def test_bad_usage_exits_2_with_a_message(self, home: Path, args: tuple[str, ...]) -> None:
        """Bad arguments give exit code 2 and say what is wrong on stderr."""
        result = memlane(home, *args)

        assert result.returncode == 2
        assert result.stderr.strip()
        assert result.stdout == ""


class TestWatchCommand:
    def test_watch_follows_changes_and_stops_cleanly_on_sigterm(self, tmp_path: Path) -> None:
        """`memlane watch` indexes a new note by itself and exits 0 on SIGTERM."""
        import signal
        import time

        (tmp_path / "ws" / "memory").mkdir(parents=True)
        (tmp_path / "ws" / "MEMORY.md").write_text("# Notes\n\nNothing yet.\n")
        config = tmp_path / "config.json5"
        config.write_text(
            "{agents: {defaults: {memorySearch: {provider: 'none', sync: {watchDebounceMs: 200}}}}}"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
        env["HOME"] = str(tmp_path)
        base = [
            sys.executable,
            "-m",
            "memlane.entrypoints",
            "--config",
            str(config),
            "--state-dir",
            str(tmp_path / "state"),
            "--workspace",
            str(tmp_path / "ws"),
        ]
        with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as proc:
            assert proc.stderr is not None
            while "watching" not in proc.stderr.readline():
                assert proc.poll() is None
            (tmp_path / "ws" / "memory" / "new.md").write_text("# New\n\nThe narwhal migration.\n")
            db = tmp_path / "state" / "agents" / "main" / "memory.db"
            deadline = time.monotonic() + 20
            found = False
            while time.monotonic() < deadline and not found:
                time.sleep(0.3)
                import sqlean

                with sqlean.connect(db) as conn:
                    found = (
                        conn.execute(
                            "select count(*) from files where path = 'memory/new.md'"
                        ).fetchone()[0]
                        == 1
                    )
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)

        assert found
        assert code == 0

    def test_watch_honours_sync_watch_false_and_says_so(self, tmp_path: Path) -> None:
        """With `sync.watch: false` no file watcher runs (it was turned on regardless)."""
        import signal
        import time

        import sqlean

        (tmp_path / "ws" / "memory").mkdir(parents=True)
        (tmp_path / "ws" / "MEMORY.md").write_text("# Notes\n\nNothing yet.\n")
        config = tmp_path / "config.json5"
        config.write_text(
            "{agents: {defaults: {memorySearch: {provider: 'none',"
            " sync: {watch: false, watchDebounceMs: 200}}}}}"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
        env["HOME"] = str(tmp_path)
        base = [
            sys.executable, "-m", "memlane.entrypoints", "--config", str(config),
            "--state-dir", str(tmp_path / "state"), "--workspace", str(tmp_path / "ws"),
        ]  # fmt: skip
        said = []
        with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as proc:
            assert proc.stderr is not None
            while "watching;" not in (line := proc.stderr.readline()):
                said.append(line)
                assert proc.poll() is None
            (tmp_path / "ws" / "memory" / "new.md").write_text("# New\n\nThe narwhal.\n")
            time.sleep(3)  # fifteen debounce periods: a watcher would have indexed it
            db = tmp_path / "state" / "agents" / "main" / "memory.db"
            with sqlean.connect(db) as conn:
                rows = conn.execute("select count(*) from files where path = 'memory/new.md'")
                indexed = rows.fetchone()[0]
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0

        assert any("sync.watch is false: no file watcher" in line for line in said)
        assert indexed == 0
