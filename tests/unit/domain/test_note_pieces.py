"""A note chunk's pieces, and how its best piece's cosine joins the chunk's own."""

from __future__ import annotations

import pytest

from memlane.domain.note_pieces import (
    LONG_LINE,
    has_pieces,
    note_pieces,
    pieced_score,
)


def test_each_non_blank_line_is_a_piece() -> None:
    text = "# Retry policy\n\nWe retry five times with backoff.\n  \nThe limit is per request.\n"

    assert note_pieces(text) == [
        "# Retry policy",
        "We retry five times with backoff.",
        "The limit is per request.",
    ]


def test_a_tiny_line_joins_the_piece_before_it() -> None:
    assert note_pieces("The deploy went out on Friday.\nok\n---\nNext item here.") == [
        "The deploy went out on Friday. ok ---",
        "Next item here.",
    ]


def test_a_long_line_is_cut_into_runs_of_whole_sentences() -> None:
    sentence = "Redis streams keep the order of events within one key. "
    line = sentence * 12  # ~670 characters on one line
    pieces = note_pieces(line)

    assert len(pieces) > 1
    assert all(len(p) < LONG_LINE for p in pieces)
    assert all(p.endswith("key.") for p in pieces)
    assert " ".join(pieces) == line.strip()


def test_cjk_sentences_are_cut_at_full_width_stops() -> None:
    line = "会议在周五举行，讨论了重试策略。" * 30

    pieces = note_pieces(line)

    assert len(pieces) > 1
    assert "".join(p.replace(" ", "") for p in pieces) == line


def test_a_chunk_of_blank_lines_is_its_own_single_piece() -> None:
    assert note_pieces("\n  \n") == ["\n  \n"]


def test_only_notes_have_pieces() -> None:
    assert has_pieces("memory")
    assert not has_pieces("sessions")


@pytest.mark.parametrize(
    ("cosine", "best", "weight", "expected"),
    [
        (0.8, 0.9, 0.5, 0.85),
        (0.8, 0.6, 0.5, 0.7),
        (0.8, None, 0.5, 0.8),  # no pieces (yet): the cosine alone
        (0.8, 0.9, 0.0, 0.8),  # pieceWeight 0: off
        (0.8, 0.9, 1.0, 0.9),
    ],
)
def test_the_score_mixes_the_cosine_with_the_best_piece(
    cosine: float, best: float | None, weight: float, expected: float
) -> None:
    assert pieced_score(cosine, best, weight) == pytest.approx(expected)
