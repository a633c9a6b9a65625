"""The progress line of `index`: files while indexing, vectors done of all while backfilling."""

from __future__ import annotations

import io

import pytest

from memlane.application.reports import SyncProgress
from memlane.entrypoints.progress_display import progress_text, sync_progress, vectors_text


def _vectors(done: int, total: int) -> SyncProgress:
    return SyncProgress(
        phase="vectors", files_done=0, files_total=0, chunks_embedded=done, vectors_done=done,
        vectors_total=total,
    )  # fmt: skip


class TestProgressText:
    def test_the_index_phase_counts_files(self) -> None:
        p = SyncProgress(phase="index", files_done=120, files_total=5000, chunks_embedded=300)

        assert progress_text(p, 24.0).startswith("index: 120/5000 files, 300 chunks embedded")

    def test_the_backfill_shows_vectors_done_of_all_with_rate_and_eta(self) -> None:
        text = vectors_text(_vectors(12_345, 100_000), elapsed=60.0, rate=2.0)

        # 87,655 missing at 2/s: 43,827 s = 12:10:27
        assert text == "vectors: 12,345/100,000 chunks (12 %), 2.0/s, 1:00 eta 12:10:27"

    def test_no_rate_yet_means_no_eta(self) -> None:
        assert vectors_text(_vectors(0, 10), elapsed=1.0, rate=None) == (
            "vectors: 0/10 chunks (0 %), 0:01"
        )


class TestSyncProgress:
    def test_a_pipe_gets_plain_lines_of_the_backfill(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("MEMLANE_PROGRESS_SECONDS", "0")
        out = io.StringIO()
        with sync_progress(out) as show:
            show(_vectors(0, 64))
            show(_vectors(32, 64))

        lines = out.getvalue().splitlines()
        assert lines[0].startswith("vectors: 0/64 chunks (0 %)")
        assert lines[1].startswith("vectors: 32/64 chunks (50 %)")


class TestProgressEverySeconds:
    def test_a_number_a_default_and_a_loud_bad_value(self) -> None:
        from structlog.testing import capture_logs

        from memlane.entrypoints.config.runtime import progress_every_seconds

        assert progress_every_seconds({"MEMLANE_PROGRESS_SECONDS": "2.5"}) == 2.5
        assert progress_every_seconds({"MEMLANE_PROGRESS_SECONDS": "-3"}) == 0.0
        assert progress_every_seconds({}) == 10.0
        with capture_logs() as logs:
            assert progress_every_seconds({"MEMLANE_PROGRESS_SECONDS": "soon"}) == 10.0
        assert [(e["event"], e["variable"], e["value"]) for e in logs] == [
            ("setting_ignored", "MEMLANE_PROGRESS_SECONDS", "soon")
        ]

    def test_a_bad_value_is_said_once_though_read_twice(self) -> None:
        """A command reads it twice (its progress line, the container): one warning."""
        from structlog.testing import capture_logs

        from memlane.entrypoints.config.runtime import progress_every_seconds

        with capture_logs() as logs:
            for _ in range(2):
                assert progress_every_seconds({"MEMLANE_PROGRESS_SECONDS": "in a while"}) == 10.0

        assert [e["value"] for e in logs] == ["in a while"]
