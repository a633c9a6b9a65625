"""bench/studies/vector_options.py: the stage sizes, as the store's and scaled to a bigger store's share."""

from __future__ import annotations

import pytest

from memlane.adapters.store import vector_code_index
from memlane.bench.studies import vector_options


class TestStageSizes:
    def test_the_defaults_are_the_stores_sizes(self) -> None:
        for k in (10, 200):
            assert vector_options.stage_sizes(k, 1_000_000) == vector_code_index.pool_sizes(k)

    def test_depth_of_keeps_the_share_of_the_rows_a_bigger_store_keeps(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(vector_options, "DEPTH_OF", 1_000_000)
        # 4,000 of 1M = 0.4 %: 55 of 13,742 (rounded up); the re-score pool 200 of 1M -> 3, so k.
        assert vector_options.stage_sizes(10, 13_742) == (10, 55)
        # Never fewer rows than asked for, at either stage.
        assert vector_options.stage_sizes(200, 13_742) == (200, 200)
        monkeypatch.setattr(vector_options, "DEPTH_STAGES", "bits")
        # Only the bit stage scaled: everything it keeps is re-scored exactly.
        assert vector_options.stage_sizes(10, 13_742) == (55, 55)
        assert vector_options.stage_sizes(10, 1_000_000) == (200, 4000)
