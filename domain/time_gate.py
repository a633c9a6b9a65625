"""Domain: a cheap first look at a question for time words.

The time-word reader (time_words.py) compiles ~50-80 ms of patterns when first imported, which a
fresh CLI process would pay on every search although most questions name no time. This gate
needs only the word tables: a question passes when it holds a digit, a CJK or Hangul date
character, a distinctive word of some Latin-script table phrase (its longest word: "yesterday"
of "the day before yesterday", "couple" of "a couple of"), or a whole phrase of the other
scripts. Every question the reader finds a time or an order in passes (the tests hold it to the
reader's whole table); some that pass hold none, and the reader then finds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from memlane.domain.time_words_tables import (
    AFTER,
    BEFORE,
    EARLIEST,
    HOLIDAYS,
    LAST_WEEKEND,
    LATEST,
    MONTHS,
    NEXT_WEEKEND,
    RECENT_PREFIXES,
    RELATIVE_UNITS,
    THE_WEEKEND,
    THIS_WEEKEND,
    WEEKDAYS,
)
from memlane.domain.time_year_words import CJK_SEASONS, SEASONS

_WORD: Final = re.compile(r"\w+")
# Every window the reader names needs a digit, a CJK or Hangul date character, or a table
# phrase; its counted forms ("two weeks ago", "hace dos semanas", "过去三天") also these words.
_DATE_CHARACTERS: Final = re.compile(r"\d|[年月日号號周週天前전년월일주달]")
_COUNTED: Final = ("ago", "atrás", "hace", "há", "vor", "il y a", "过去", "過去")


def _latin(phrase: str) -> bool:
    return phrase[:1].isascii() or phrase[:1] in "áéíóúàâçêôãõüöäß'"


def _distinctive(*tables: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The longest word of each Latin-script phrase (all of a phrase's words must be present
    for it to match, so one suffices), and the other scripts' phrases whole."""
    words: set[str] = set()
    others: set[str] = set()
    for phrase in (p.strip().lower() for table in tables for p in table):
        tokens = _WORD.findall(phrase)
        if tokens and _latin(phrase):
            words.add(max(tokens, key=len))
        elif phrase:
            others.add(phrase)
    return frozenset(words), tuple(sorted(others))


_WINDOW_WORDS, _WINDOW_OTHERS = _distinctive(
    RELATIVE_UNITS, MONTHS, WEEKDAYS, LAST_WEEKEND, THIS_WEEKEND, NEXT_WEEKEND, THE_WEEKEND,
    RECENT_PREFIXES, _COUNTED, HOLIDAYS, SEASONS, CJK_SEASONS,
)  # fmt: skip
_ORDER_WORDS, _ORDER_OTHERS = _distinctive(EARLIEST, LATEST, BEFORE, AFTER)


def may_name_time(text: str, *, orders: bool, max_chars: int = 2_000) -> bool:
    """False only when the time-word reader would find no window in `text` (and, with `orders`,
    no ordering word either); `max_chars` is the head the reader reads."""
    head = text[:max_chars].lower()
    if _DATE_CHARACTERS.search(head) is not None:
        return True
    words = _WORD.findall(head)
    if not _WINDOW_WORDS.isdisjoint(words) or any(p in head for p in _WINDOW_OTHERS):
        return True
    return orders and (not _ORDER_WORDS.isdisjoint(words) or any(p in head for p in _ORDER_OTHERS))
