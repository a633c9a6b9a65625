"""The time-filter bench's bookkeeping: which files a window holds, and the keyword truth."""

from __future__ import annotations

import numpy as np
import pytest

from memlane.bench.time_filter_bench import SPAN_DAYS, WINDOWS, KeywordTruth, file_day, window_files


@pytest.mark.parametrize("files_total", [200, 5_000, 50_000])
def test_window_files_are_exactly_the_files_dated_inside_each_window(files_total: int) -> None:
    for spec in WINDOWS.values():
        if spec is None:
            continue
        days, end = spec
        inside = [f for f in range(files_total) if end <= file_day(f, files_total) < end + days]

        first, stop = window_files(spec, files_total)

        assert list(range(first, stop)) == inside


def test_the_past_windows_end_before_the_newest_day_and_the_oldest_reaches_the_last_day() -> None:
    ends = {name: spec[1] for name, spec in WINDOWS.items() if spec is not None}

    assert ends["day -1y"] == 365
    assert ends["day oldest"] == SPAN_DAYS - 1
    assert window_files((1, SPAN_DAYS - 1), 50_000)[1] == 50_000


def test_keyword_truth_counts_the_chunks_holding_any_query_word() -> None:
    truth = KeywordTruth(['"w3" OR "w1200"', '"w7"'], files_total=2)
    drawn = np.array([[3, 5, 5], [1200, 3, 9], [8, 9, 10]])

    truth.add(0, drawn)
    truth.add(1, np.array([[7, 7, 7], [1, 2, 4], [12, 1200, 7]]))

    assert truth.per_file.tolist() == [[2, 0], [1, 2]]
