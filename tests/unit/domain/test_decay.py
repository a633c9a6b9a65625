"""Unit tests: temporal decay (the factor, each item's timestamp, decay applied to hits)."""

from __future__ import annotations

import calendar
import math

import pytest

from memlane.domain.decay import apply_temporal_decay, decay_factor, item_timestamp
from tests.unit.domain._scoring_support import (
    DAY,
    NOW,
    fused,
    ids,
)


class TestDecayFactor:
    def test_one_half_life_halves(self) -> None:
        assert decay_factor(30.0, 30.0) == pytest.approx(0.5)
        assert decay_factor(60.0, 30.0) == pytest.approx(0.25)

    def test_age_zero_and_future_dates_do_not_decay(self) -> None:
        assert decay_factor(0.0, 30.0) == 1.0
        assert decay_factor(-10.0, 30.0) == 1.0

    @pytest.mark.parametrize("half_life", [0.0, -1.0, math.nan, math.inf])
    def test_a_disabled_half_life_never_decays(self, half_life: float) -> None:
        assert decay_factor(100.0, half_life) == 1.0

    def test_a_non_finite_age_does_not_decay(self) -> None:
        assert decay_factor(math.nan, 30.0) == 1.0


class TestItemTimestamp:
    def test_a_dated_note_uses_its_date_at_midnight_utc(self) -> None:
        ts = item_timestamp("memory", "memory/2026-01-05.md", chunk_timestamp=None, file_mtime=1.0)
        assert ts == calendar.timegm((2026, 1, 5, 0, 0, 0))

    def test_a_dated_note_under_an_extra_path_or_with_backslashes_is_dated(self) -> None:
        expected = calendar.timegm((2025, 12, 31, 0, 0, 0))
        for path in ("../notes/memory/2025-12-31.md", ".\\memory\\2025-12-31.md"):
            assert item_timestamp("memory", path, chunk_timestamp=None, file_mtime=1.0) == expected

    @pytest.mark.parametrize(
        "path", ["MEMORY.md", "memory.md", "memory/projects.md", "memory/2026-02-30.md"]
    )
    def test_evergreen_memory_files_never_decay(self, path: str) -> None:
        assert item_timestamp("memory", path, chunk_timestamp=None, file_mtime=1.0) is None

    def test_a_session_chunk_uses_its_own_timestamp(self) -> None:
        ts = item_timestamp("sessions", "sessions/a.jsonl", chunk_timestamp=42.0, file_mtime=99.0)
        assert ts == 42.0

    def test_a_session_chunk_without_timestamp_uses_the_file_mtime(self) -> None:
        ts = item_timestamp("sessions", "sessions/a.jsonl", chunk_timestamp=None, file_mtime=99.0)
        assert ts == 99.0

    def test_other_files_use_the_file_mtime(self) -> None:
        ts = item_timestamp("memory", "../notes/x.md", chunk_timestamp=None, file_mtime=7.0)
        assert ts == 7.0


class TestApplyTemporalDecay:
    def test_older_items_lose_score_and_the_list_is_re_sorted(self) -> None:
        items = [
            fused("old", 1.0, path="memory/2026-01-30.md"),  # 30 days before NOW
            fused("new", 0.8, path="memory/2026-03-01.md"),
        ]
        decayed = apply_temporal_decay(items, now=NOW, half_life_days=30.0)
        assert ids(decayed) == ["new", "old"]
        assert decayed[1].score == pytest.approx(0.5)
        assert decayed[1].decay_factor == pytest.approx(0.5)

    def test_evergreen_items_keep_their_score(self) -> None:
        [item] = apply_temporal_decay(
            [fused("e", 0.7, path="MEMORY.md")], now=NOW, half_life_days=1
        )
        assert item.score == 0.7
        assert item.decay_factor == 1.0

    def test_session_items_decay_by_message_time(self) -> None:
        item = fused("s", 1.0, path="sessions/a.jsonl", source="sessions", timestamp=NOW - 10 * DAY)
        [decayed] = apply_temporal_decay([item], now=NOW, half_life_days=10.0)
        assert decayed.score == pytest.approx(0.5)

    def test_the_explanation_reports_the_decay(self) -> None:
        item = fused("s", 1.0, path="x.md", file_mtime=NOW - 30 * DAY, text_score=0.4)
        [decayed] = apply_temporal_decay([item], now=NOW, half_life_days=30.0)
        explanation = decayed.explanation(mmr_rank=2)
        assert explanation.decay_factor == pytest.approx(0.5)
        assert explanation.fused_score == pytest.approx(0.5)
        assert explanation.text_score == 0.4
        assert explanation.mmr_rank == 2
