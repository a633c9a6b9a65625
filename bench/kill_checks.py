"""Reliability suite, part 2: check an index file against the files on disk, below the adapter.

Everything here reads the database directly (read-only, or a copy in memory), so a bug in the
store's own read path cannot hide a bug in its write path. Each check returns human-readable
failure strings; an empty list means the index is exactly what the files on disk call for.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlean
import sqlite_vec

from memlane.adapters.store.fts5_numbers import read_varint
from memlane.bench.kill_workspace import KillWorkspace

_LABELS = {"user": "User", "assistant": "Assistant"}
_MAX_REPORTED = 5  # per check: enough to reproduce, short enough to read


@contextmanager
def read_only(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection with sqlite-vec loaded (the vec0 table needs its module)."""
    conn: sqlite3.Connection = sqlean.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        yield conn
    finally:
        conn.close()


@dataclass(frozen=True, slots=True)
class KillState:
    """What a killed process left behind, read before anything opens the index again."""

    db_exists: bool
    pending_events: int  # logged by the detector, not yet handled by every handler
    temp_files: int  # a rebuild's temporary database (the killed `--force` was building)
    stale_files: int  # files whose indexed hash differs from the disk (or missing/extra rows)


def temp_files(ws: KillWorkspace) -> list[Path]:
    """Temporary rebuild databases beside the index (their -wal/-shm side files excluded)."""
    return [
        p
        for p in ws.db.parent.glob(f"{ws.db.name}.tmp-*")
        if not p.name.endswith(("-wal", "-shm", "-journal"))
    ]


def disk_files(ws: KillWorkspace) -> dict[tuple[str, str], str]:
    """(source, index path) -> sha256 of the bytes on disk, for every file the model knows."""
    out: dict[tuple[str, str], str] = {}
    for rel in ws.live:
        source = "sessions" if rel.startswith("sessions/") else "memory"
        out[(source, rel)] = hashlib.sha256(ws.file(rel).read_bytes()).hexdigest()
    return out


def kill_state(ws: KillWorkspace) -> KillState:
    """Read the index as the kill left it (pending work, temporary files, stale rows)."""
    temps = len(temp_files(ws))
    if not ws.db.exists():
        return KillState(False, 0, temps, len(ws.live))
    with read_only(ws.db) as conn:
        last = conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
        done = conn.execute("SELECT coalesce(min(position), 0) FROM tracking").fetchone()[0]
        indexed = {(s, p): h for s, p, h in conn.execute("SELECT source, path, hash FROM files")}
    on_disk = disk_files(ws)
    stale = sum(
        1 for key in on_disk.keys() | indexed.keys() if on_disk.get(key) != indexed.get(key)
    )
    return KillState(True, max(0, last - done), temps, stale)


def _limit(kind: str, items: list[str]) -> list[str]:
    shown = [f"{kind}: {item}" for item in items[:_MAX_REPORTED]]
    if len(items) > _MAX_REPORTED:
        shown.append(f"{kind}: ... and {len(items) - _MAX_REPORTED} more")
    return shown


def check_integrity(ws: KillWorkspace) -> list[str]:
    """PRAGMA integrity_check, then FTS5's own integrity-check on an in-memory copy (that
    command writes, and the checker must not touch the file the next run opens)."""
    failures: list[str] = []
    copy: sqlite3.Connection = sqlean.connect(":memory:")
    try:
        with read_only(ws.db) as conn:
            verdict = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            conn.backup(copy)
        if verdict != ["ok"]:
            failures += _limit("integrity_check", verdict)
        copy.enable_load_extension(True)
        sqlite_vec.load(copy)
        copy.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    except sqlean.DatabaseError as exc:  # sqlean has its own exception classes
        failures.append(f"fts integrity-check: {exc}")
    finally:
        copy.close()
    return failures


def check_rows(ws: KillWorkspace) -> list[str]:
    """The derived tables agree with `chunks`, and `files` is exactly the files on disk."""
    failures: list[str] = []
    with read_only(ws.db) as conn:
        q = conn.execute
        chunks = q("SELECT count(*) FROM chunks").fetchone()[0]
        fts = q("SELECT count(*) FROM chunks_fts").fetchone()[0]
        no_fts = q(
            "SELECT count(*) FROM chunks WHERE rid NOT IN (SELECT rowid FROM chunks_fts)"
        ).fetchone()[0]
        orphans = q(
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM files f WHERE f.source = c.source AND f.path = c.path)"
        ).fetchone()[0]
        empty = q(
            "SELECT count(*) FROM files f WHERE NOT EXISTS "
            "(SELECT 1 FROM chunks c WHERE c.source = f.source AND c.path = f.path)"
        ).fetchone()[0]
        with_vectors = q("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[0]
        has_vec = q("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()[0]
        vec = q("SELECT count(*) FROM chunks_vec").fetchone()[0] if has_vec else 0
        indexed = {(s, p): h for s, p, h in q("SELECT source, path, hash FROM files")}
        averages = q("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
        sizes = [read_varint(bytes(sz), 0)[0] for (sz,) in q("SELECT sz FROM chunks_fts_docsize")]
    # bm25 reads N and the token total from FTS5's averages record: it must count the live rows.
    if averages is not None and averages[0]:
        n_rows, at = read_varint(bytes(averages[0]), 0)
        recorded = (n_rows, read_varint(bytes(averages[0]), at)[0])
        if recorded != (len(sizes), sum(sizes)):
            failures.append(
                f"keyword statistics {recorded} (rows, tokens) for live {(len(sizes), sum(sizes))}"
            )
    if (chunks, no_fts) != (fts, 0):
        failures.append(f"fts rows {fts} for {chunks} chunks, {no_fts} chunk(s) without one")
    if orphans or empty:
        failures.append(f"{orphans} chunk(s) of no file, {empty} file(s) without chunks")
    if with_vectors != vec:
        failures.append(f"{with_vectors} chunk(s) with a vector, {vec} vec0 row(s)")
    on_disk = disk_files(ws)
    missing = sorted(f"{s}:{p}" for (s, p) in on_disk.keys() - indexed.keys())
    extra = sorted(f"{s}:{p}" for (s, p) in indexed.keys() - on_disk.keys())
    stale = sorted(
        f"{s}:{p}" for (s, p), h in on_disk.items() if (s, p) in indexed and indexed[s, p] != h
    )
    return (
        failures
        + _limit("not indexed", missing)
        + _limit("indexed but deleted", extra)
        + _limit("indexed with an old hash", stale)
    )


def _expected_lines(ws: KillWorkspace, source: str, rel: str) -> dict[int, str]:
    """Line number -> the text a chunk must show for it (a note's line, a rendered message)."""
    text = ws.file(rel).read_text(encoding="utf-8")
    if source == "memory":
        return dict(enumerate(text.split("\n"), start=1))
    out: dict[int, str] = {}
    for n, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            message = json.loads(raw)["message"]
            out[n] = f"{_LABELS[message['role']]}: {message['content']}"
    return out


def check_chunk_texts(ws: KillWorkspace) -> list[str]:
    """Each chunk's text is its file's current lines start..end (for a transcript: the rendered
    messages of those JSONL lines), and together the chunks cover every non-blank line."""
    wrong: list[str] = []
    uncovered: list[str] = []
    with read_only(ws.db) as conn:
        rows = conn.execute(
            "SELECT source, path, start_line, end_line, text FROM chunks ORDER BY path, start_line"
        ).fetchall()
    by_file: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for source, path, start, end, text in rows:
        by_file.setdefault((source, path), []).append((start, end, text))
    for (source, rel), chunks in by_file.items():
        if rel not in ws.live:
            continue  # reported by check_rows
        lines = _expected_lines(ws, source, rel)
        covered: set[int] = set()
        for start, end, text in chunks:
            want = "\n".join(lines[n] for n in range(start, end + 1) if n in lines)
            if text != want:
                wrong.append(f"{rel}:{start}-{end}")
            covered.update(range(start, end + 1))
        missed = [n for n, line in lines.items() if line.strip() and n not in covered]
        if missed:
            uncovered.append(f"{rel} lines {missed[:5]}")
    return _limit("chunk text differs from the file", wrong) + _limit("not covered", uncovered)


def check_planted_words(ws: KillWorkspace) -> list[str]:
    """Every live planted word is found by the keyword index in its own file, no retired one
    anywhere: a missing row and a stale row both fail here."""
    lost: list[str] = []
    stale: list[str] = []
    with read_only(ws.db) as conn:

        def paths_for(word: str) -> set[str]:
            return {
                row[0]
                for row in conn.execute(
                    "SELECT c.path FROM chunks_fts JOIN chunks c ON c.rid = chunks_fts.rowid "
                    "WHERE chunks_fts MATCH ?",
                    (f'"{word}"',),
                )
            }

        for rel, words in sorted(ws.live.items()):
            for word in sorted(words):
                if paths_for(word) != {rel}:
                    lost.append(f"{word} of {rel}")
        for word in sorted(ws.retired):
            found = paths_for(word)
            if found:
                stale.append(f"{word} in {sorted(found)}")
    return _limit("planted word not found in its file", lost) + _limit(
        "retired word still found", stale
    )


def check_vectors(ws: KillWorkspace) -> list[str]:
    """With a model, every chunk has a vector and its vec0 row (the keyword-only runs skip)."""
    with read_only(ws.db) as conn:
        without = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0]
    return [f"{without} chunk(s) without a vector"] if without else []


def verify(ws: KillWorkspace, *, vectors: bool) -> list[str]:
    """All direct checks of the index file against the files on disk."""
    failures = _limit("temporary rebuild file left", [p.name for p in temp_files(ws)])
    failures += check_integrity(ws) + check_rows(ws) + check_chunk_texts(ws)
    failures += check_planted_words(ws)
    if vectors:
        failures += check_vectors(ws)
    return failures
