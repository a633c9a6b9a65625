"""Entry points: progress of a long sync on stderr (`index`, and the sync before a search).

On a terminal: one line rewritten in place (phase, files, chunks embedded, rate, ETA; during the
vector backfill, vectors done of all chunks with their own rate and ETA). Anywhere
else (a pipe, a log file, a service manager): the same text as a plain line every
`MEMLANE_PROGRESS_SECONDS` seconds (default 10), so a long first sync is visibly alive without
flooding a log; a sync shorter than that prints nothing.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from memlane.application.reports import SyncProgress
from memlane.entrypoints.config.runtime import progress_every_seconds


def progress_text(p: SyncProgress, elapsed: float) -> str:
    """`index: 120/5000 files, 300 chunks embedded (12.5/s), 0:24 eta 16:16`."""
    rate = f" ({p.chunks_embedded / elapsed:.1f}/s)" if elapsed > 0 and p.chunks_embedded else ""
    eta = ""
    if p.files_total and p.files_done and p.files_done < p.files_total:
        eta = " eta " + _clock(elapsed / p.files_done * (p.files_total - p.files_done))
    return (
        f"{p.phase}: {p.files_done}/{p.files_total} files, {p.chunks_embedded} chunks embedded"
        f"{rate}, {_clock(elapsed)}{eta}"
    )


def vectors_text(p: SyncProgress, elapsed: float, rate: float | None) -> str:
    """`vectors: 12,345/100,000 chunks (12 %), 2.1/s, 0:24 eta 11:45:10`; rate and ETA are
    those of this backfill (chunks per second since it started), absent until measured."""
    percent = 100 * p.vectors_done // p.vectors_total if p.vectors_total else 100
    speed = eta = ""
    if rate:
        speed = f", {rate:.1f}/s"
        eta = " eta " + _clock((p.vectors_total - p.vectors_done) / rate)
    return (
        f"vectors: {p.vectors_done:,}/{p.vectors_total:,} chunks ({percent} %){speed}, "
        f"{_clock(elapsed)}{eta}"
    )


def _clock(seconds: float) -> str:
    if seconds >= 3600:
        return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


@contextmanager
def sync_progress(stream: TextIO | None = None) -> Iterator[Callable[[SyncProgress], None]]:
    """A progress callback for `MemoryManager.sync` writing to `stream` (default stderr)."""
    out = stream or sys.stderr
    tty = out.isatty()
    every = progress_every_seconds(os.environ)
    started = time.monotonic()
    last_line = started
    shown = False
    backfill_start: tuple[float, int] | None = None  # when the vector phase began, and its count

    def text(p: SyncProgress, now: float) -> str:
        nonlocal backfill_start
        if p.phase != "vectors" or not p.vectors_total:
            return progress_text(p, now - started)
        if backfill_start is None:
            backfill_start = (now, p.vectors_done)
        spent = now - backfill_start[0]
        rate = (p.vectors_done - backfill_start[1]) / spent if spent > 0 else None
        return vectors_text(p, now - started, rate)

    def show(p: SyncProgress) -> None:
        nonlocal last_line, shown
        now = time.monotonic()
        if tty:
            out.write(f"\r{text(p, now)}   ")
            shown = True
        elif p.phase != "idle" and now - last_line >= every:
            out.write(text(p, now) + "\n")
            last_line = now
        out.flush()

    try:
        yield show
    finally:
        if tty and shown:
            out.write("\n")
            out.flush()
