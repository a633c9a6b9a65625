"""Domain: the regular expressions of the time-word reader (time_words.py), built from the word
tables (time_words_tables.py). Each pattern names its parts (`n` a count, `u` a unit, `m` a
month, `d` a day, `y` a year) for the reader's matchers; everything is matched on the
lower-cased question. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from memlane.domain.time_words_tables import (
    COMING_WEEKDAY_PREFIXES,
    COMING_WEEKDAY_SUFFIXES,
    DAY_FOLLOWERS,
    HOLIDAY_PREFIXES,
    HOLIDAYS,
    JOINED_AFTER,
    JOINED_BEFORE,
    LAST_WEEKDAY_PREFIXES,
    MONTH_PREPOSITIONS,
    MONTHS,
    NEXT_WEEKDAY_PREFIXES,
    NOT_A_HOLIDAY_AFTER,
    NOT_A_WEEKDAY_BEFORE,
    NUMBERS,
    ORDINAL_NOUNS,
    ORDINAL_WORDS,
    PRIOR_WEEKDAY_PREFIXES,
    RECENT_PREFIXES,
    THIS_WEEKDAY_PREFIXES,
    UNITS,
    WEEK_OF_LINKS,
    WEEK_OF_MONTH,
    WEEK_WORDS,
    WEEKDAYS,
    WEEKEND_WORDS,
)


def alternation(words: Iterable[str]) -> str:
    """One regex alternative per word, longest first, so the longest phrase wins."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def joined(words: Iterable[str]) -> str:
    """CJK and Hangul words, longest first, each not read inside a word its edge characters
    make with their neighbours (JOINED_BEFORE / JOINED_AFTER: 说明日志 holds no 明日)."""
    pieces = []
    for word in sorted(set(words), key=len, reverse=True):
        before, after = JOINED_BEFORE.get(word[0], ""), JOINED_AFTER.get(word[-1], "")
        pieces.append(
            (f"(?<![{before}])" if before else "")
            + re.escape(word)
            + (f"(?![{after}])" if after else "")
        )
    return "|".join(pieces)


def bounded(words: Iterable[str]) -> str:
    """Latin-script words need word edges; CJK and Hangul words attach to particles."""
    latin = [w for w in words if w[0].isascii() or w[0] in "áéíóúàâçêôãõüöäß'"]
    other = [w for w in words if w not in latin]
    pieces = []
    if latin:
        # A possessive ("Monday's") still names the day; a longer word does not.
        pieces.append(rf"(?<![\w'])(?:{alternation(latin)})(?![\w-])(?!'(?!s(?!\w)))")
    if other:
        pieces.append(f"(?:{joined(other)})")
    return "|".join(pieces)


HAN_NUMBERS: Final = "一两兩二三四五六七八九十"
NUMBER_WORD: Final = rf"\d{{1,3}}|{alternation(NUMBERS)}"
LATIN_UNITS: Final = alternation(u for u in UNITS if u.isascii() or u[0] in "díaé")
AGO: Final = (
    # English, German, French, Spanish, Portuguese
    rf"(?<!\w)(?P<n>{NUMBER_WORD})\s+(?P<u>{LATIN_UNITS})\s+(?:ago|atrás)(?!\w)",
    rf"(?<!\w)(?:hace|há|vor|il y a)\s+(?P<n>{NUMBER_WORD})\s+(?P<u>{LATIN_UNITS})(?!\w)",
    # Chinese and Japanese: 三天前, 两个星期前, 3か月前, 2年前
    rf"(?<!\d)(?P<n>\d{{1,3}}|[{HAN_NUMBERS}]{{1,3}})\s*(?P<u>天|周|週間|週|个星期|個星期|星期|个月|個月"
    r"|か月|ヶ月|ヵ月|カ月|年|日)\s*(?:以)?前",
    # Korean: 3일 전, 두 달 전, 2주 전
    r"(?<!\d)(?P<n>\d{1,3}|한|두|세|네|다섯)\s*(?P<u>일|주일|주|달|개월|년)\s*전",
)
RECENT: Final = (
    # in the past week, over the last month: one unit back to today, as "the past 7 days"
    r"(?<!\w)(?:in|over|within|during)\s+the\s+(?:last|past)\s+(?P<u>day|week|month|year)(?![\w-])"
    r"(?!\s+(?:of|in)\s)",  # not "in the last week of October" (a week of that month)
    rf"(?<!\w)(?:{alternation(RECENT_PREFIXES)})\s+(?P<n>{NUMBER_WORD})\s+(?P<u>{LATIN_UNITS})(?!\w)",
    rf"(?:最近|过去|過去)\s*(?P<n>\d{{1,3}}|[{HAN_NUMBERS}]{{1,3}})\s*(?P<u>天|周|个星期|個星期|个月"
    r"|個月|日|週間|か月|ヶ月|年)",
    r"지난\s*(?P<n>\d{1,3})\s*(?P<u>일|주|개월|년)(?!\s*전)",
)
MONTH_WORDS: Final = alternation(MONTHS)
ORDINAL: Final = r"(?:st|nd|rd|th|º|°|er|\.)?"
MONTH_DATES: Final = (
    # March 17, March 17th 2026, March 2026, March
    rf"(?<![\w'])(?P<pre>(?:{alternation(MONTH_PREPOSITIONS)})\s+(?:de\s+)?|mid-)?(?P<m>{MONTH_WORDS})"
    rf"(?![\w'])\.?(?:\s+(?P<d>\d{{1,2}}){ORDINAL}(?!\d))?(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?",
    # 17 March, 17. März 2026, 17 de marzo de 2026
    # the 4th of July: "the" is taken too, so this reading outruns "the 4th" (a day of this month)
    rf"(?<!\w)(?:(?:on\s+)?the\s+)?(?P<d>\d{{1,2}})"
    rf"(?:(?:st|nd|rd|th)\s+of\s+|{ORDINAL}\s+(?:de\s+)?)(?P<m>{MONTH_WORDS})(?![\w'])"
    rf"(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?",
    # the fourth of July, the first of May 2025
    rf"(?<!\w)(?:(?:on\s+)?the\s+)?(?P<d>{alternation(ORDINAL_WORDS)})\s+of\s+"
    rf"(?P<m>{MONTH_WORDS})(?![\w'])(?:,?\s+(?P<y>\d{{4}}))?",
)
# between March and May (2025), from May to July, entre marzo y mayo, de março a maio, von März
# bis Mai, entre mars et mai, 3月から5月, 3月到5月, 3월부터 5월까지: the first month's start to
# the second's end. The structure makes "may" and "march" months here.
MONTH_RANGES: Final = (
    rf"(?<![\w'])(?:between|from|entre|desde|de|zwischen|von)\s+(?P<m1>{MONTH_WORDS})"
    rf"(?:\s+(?P<y1>\d{{4}}))?\s+(?:and|to|until|till|through|thru|y|a|hasta|e|até|und|bis|et|à)"
    rf"\s+(?P<m2>{MONTH_WORDS})(?![\w'])(?:,?\s+(?:de\s+)?(?P<y2>\d{{4}}))?",
    r"(?:(?P<y1>\d{4})\s*[年년]\s*)?(?<!\d)(?P<m1>1[0-2]|0?[1-9])\s*[月월]\s*(?:から|到|至|~|〜|부터)\s*"
    r"(?:(?P<y2>\d{4})\s*[年년]\s*)?(?P<m2>1[0-2]|0?[1-9])\s*[月월](?!\s*\d)",
)
# last Christmas, next Easter, Christmas Eve 2024, Weihnachten, 圣诞节, クリスマスイブ
HOLIDAY: Final = (
    rf"(?:(?<![\w'])(?P<w>{alternation(HOLIDAY_PREFIXES)})\s+)?(?P<h>{bounded(HOLIDAYS)})"
    rf"(?!\s+(?:{alternation(NOT_A_HOLIDAY_AFTER)})(?!\w))(?:\s+(?P<y>\d{{4}})(?!\d))?"
)
WEEK_OF_MONTH_DATE: Final = (
    rf"(?<![\w'])(?:(?:the|la|a|die|der)\s+)?(?P<o>{alternation(WEEK_OF_MONTH)})\s+"
    rf"(?P<k>{alternation((*WEEKEND_WORDS, *WEEK_WORDS))})\s+(?:{alternation(WEEK_OF_LINKS)})\s+"
    rf"(?P<m>{MONTH_WORDS})"
    rf"(?![\w'])(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?"
)
CJK_DATE: Final = (
    rf"(?:(?P<y>\d{{4}})\s*[年년]\s*)?(?P<m>1[0-2]|0?[1-9]|十一|十二|[{HAN_NUMBERS}])\s*[月월]"
    r"(?:\s*(?P<d>\d{1,2})\s*[日号號일])?"
)
ISO_DATE: Final = r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"
# 11/17, 17/11/2026: read only where the order is plain (one number above 12; 3/4 could be
# either) and something says it is a date (a year, or "on" / "since" / … before it), since
# "3/16 inch" and "1/2 cup" are not.
SLASH_DATE: Final = (
    r"(?<![\w/.])(?:(?:on|by|since|until|till|from|to|through|thru|due|before|after)\s+(?P<a>\d{1,2})/(?P<b>\d{1,2})"
    r"(?:/(?P<y>\d{4}))?|(?P<a2>\d{1,2})/(?P<b2>\d{1,2})/(?P<y2>\d{4}))(?![\w/]|\.\d)"
)
YEAR: Final = (
    # not "since 2025" inside "since 2025-06-01": the date is the expression
    r"(?<!\w)(?:in|during|since|en|em|im jahr|im|seit|durante)\s+(?P<y>(?:19|20)\d{2})"
    r"(?!\w|[-/.]\d)",
    r"(?P<y>(?:19|20)\d{2})\s*[年년](?!\s*\d)",
)
DAY_OF_MONTH: Final = (
    # "on the 17th ...": a day unless a rank's noun follows ("on the 3rd floor")
    rf"(?<!\w)on\s+the\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)(?!\w)"
    rf"(?![\s-]+(?:{alternation(ORDINAL_NOUNS)})(?:s|es)?(?!\w))",
    # a bare "the 17th": a day only at a clause's end or before a small word ("the 3rd party")
    rf"(?<!\w)the\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)(?!\w)"
    rf"(?![\s-]+(?:{alternation(ORDINAL_NOUNS)})(?:s|es)?(?!\w))"
    rf"(?=\s*(?:$|[^\w\s]|(?:{alternation(DAY_FOLLOWERS)})(?![\w-])))",
    r"(?<!\w)(?:el\s+)?día\s+(?P<d>\d{1,2})(?!\d)",
    r"(?<!\w)(?:no\s+)?dia\s+(?P<d>\d{1,2})(?!\d)",
    r"(?<!\w)am\s+(?P<d>\d{1,2})\.(?!\d)",
    r"(?<![\d月월])(?P<d>\d{1,2})\s*[号號](?!\w)",
    # not a span: 3日間 / 3日后 (three days), 1日中 (all day), 1日あたり / 1日分 (per / a day's)
    r"(?<![\d月월])(?P<d>\d{1,2})日(?![前間间後后中分]|あたり|当たり|おき|ぶり|以内|以上|程度|ほど)",
    r"(?<![\d월])(?P<d>\d{1,2})일(?!\s*(?:전|동안|간|째))",
)
WEEKDAY: Final = (
    rf"(?:(?P<last>{joined(LAST_WEEKDAY_PREFIXES)})|(?P<next>{joined(NEXT_WEEKDAY_PREFIXES)})"
    rf"|(?P<coming>(?<![\w'])(?:{alternation(COMING_WEEKDAY_PREFIXES)}))"
    rf"|(?P<prior>(?<![\w'])(?:{alternation(PRIOR_WEEKDAY_PREFIXES)}))"
    rf"|(?P<this>(?<![\w'])(?:{alternation(p for p in THIS_WEEKDAY_PREFIXES if p.isascii())})"
    rf"|{joined(p for p in THIS_WEEKDAY_PREFIXES if not p.isascii())}))?"
    + "".join(f"(?<!{re.escape(word)} )" for word in NOT_A_WEEKDAY_BEFORE)
    + rf"(?P<w>{bounded(WEEKDAYS)})(?!\.\w| gras\b|\s+of\s+(?:the|each|every)\s+month)"
    # "Friday prochain" (the coming one), "the Friday before last" (a week before last Friday)
    rf"(?:(?P<after>{alternation(COMING_WEEKDAY_SUFFIXES)})|(?P<before_last>\s+before\s+last\b))?"
)
