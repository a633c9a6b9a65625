"""The three CJK sets differ on purpose: each keeps the characters its use needs."""

from __future__ import annotations

import re

import pytest

from memlane.domain.cjk import BASIC_CJK_LETTERS, HAN, HANGUL, KANA, WIDE_CHARACTERS


def _in(body: str, char: str) -> bool:
    return re.fullmatch(f"[{body}]", char) is not None


@pytest.mark.parametrize(
    ("char", "wide", "letter", "basic"),
    [
        ("漢", True, True, True),  # unified ideograph
        ("𠀀", True, True, True),  # extension B
        ("々", True, True, True),  # iteration mark
        ("〡", True, True, False),  # Hangzhou numeral: a keyword letter only
        ("か", True, True, True),
        ("ー", True, True, True),  # prolonged sound mark stays inside katakana words
        ("ｱ", True, True, False),  # half-width katakana: NFKC folds it for keywords, not for MMR
        ("한", True, True, True),
        ("ᄀ", True, True, False),  # Hangul jamo
        ("。", True, False, False),  # punctuation costs a token but is no letter
        ("・", True, False, False),  # the middle dot splits katakana words
        ("ㄅ", True, False, False),  # Bopomofo
        ("，", True, False, False),  # full-width comma
        ("a", False, False, False),
        ("é", False, False, False),
    ],
)
def test_each_set_keeps_its_own_characters(
    char: str, wide: bool, letter: bool, basic: bool
) -> None:
    assert _in(WIDE_CHARACTERS, char) is wide
    assert (_in(HAN, char) or _in(KANA, char) or _in(HANGUL, char)) is letter
    assert _in(BASIC_CJK_LETTERS, char) is basic


def test_the_keyword_scripts_do_not_overlap() -> None:
    for a, b in [(HAN, KANA), (HAN, HANGUL), (KANA, HANGUL)]:
        assert not any(_in(a, ch) and _in(b, ch) for ch in map(chr, range(0x1000, 0x10000)))
