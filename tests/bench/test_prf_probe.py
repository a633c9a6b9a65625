"""The PRF probe's word filter: lower-cased words of four letters or more, no stop words."""

from __future__ import annotations

from memlane.bench.studies.prf_probe import _words


def test_words_keep_content_words_and_drop_stop_words_and_short_ones() -> None:
    assert _words("Melanie: We went CAMPING there, and it was about pottery!") == [
        "melanie",
        "went",
        "camping",
        "pottery",
    ]
