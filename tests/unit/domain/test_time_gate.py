"""The gate before the time-word reader lets through every question the reader finds a time in."""

from __future__ import annotations

import pytest

from memlane.domain.time_gate import may_name_time
from memlane.domain.time_words import read_time_words
from tests.unit.domain.test_time_words import AS_OF, NOT_TIME, ORDERS, WINDOWS

AHEAD = ["how was this weekend", "next Friday", "next Monday", "on Friday"]


@pytest.mark.parametrize("question", [q for q, _, _ in WINDOWS] + AHEAD)
def test_every_window_the_reader_finds_passes(question: str) -> None:
    assert may_name_time(question, orders=False)
    assert may_name_time(question.upper(), orders=False)


@pytest.mark.parametrize(("question", "order"), ORDERS)
def test_every_ordering_word_passes_when_orders_count(question: str, order: str) -> None:
    assert may_name_time(question, orders=True)


def test_plain_questions_are_stopped() -> None:
    plain = [
        "what is the retry policy for the queue",
        "which database did we pick for the event log",
        "我们的重试策略是什么",
        "キャッシュの設定はどこ",
        "캐시 설정은 어디에 있나요",
        "¿cuál es la política de reintentos?",
    ]
    for question in plain:
        assert not may_name_time(question, orders=True), question
        assert read_time_words(question, AS_OF) is None


def test_a_question_the_gate_stops_reads_no_window() -> None:
    # The gate may pass what holds no time; it must never stop what does.
    for question in NOT_TIME:
        if not may_name_time(question, orders=False):
            intent = read_time_words(question, AS_OF)
            assert intent is None or intent.since is None
