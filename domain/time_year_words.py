"""Domain: the word tables of a part of a year, for the reader's matchers in
time_year_parts.py: seasons, a month's year named from now, a third of a year. Kept apart from
the patterns so that the cheap gates (time_gate.py, time_questions.py) read them without
compiling anything. Lower-cased, as the question is matched.
"""

from __future__ import annotations

from typing import Final

# A season's name -> its first month.
SEASONS: Final[dict[str, int]] = {
    "spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
    "primavera": 3, "verano": 6, "otoño": 9, "invierno": 12, "verão": 6, "outono": 9,
    "inverno": 12,
    "frühling": 3, "frühjahr": 3, "sommer": 6, "herbst": 9,
    "printemps": 3, "été": 6, "automne": 9, "hiver": 12,
}  # fmt: skip
CJK_SEASONS: Final[dict[str, int]] = {
    "春天": 3, "春季": 3, "夏天": 6, "夏季": 6, "秋天": 9, "秋季": 9, "冬天": 12, "冬季": 12,
    "春": 3, "夏": 6, "秋": 9, "冬": 12, "봄": 3, "여름": 6, "가을": 9, "겨울": 12,
}  # fmt: skip
# Words before a season that say which one ("last summer", "el próximo verano", "cet été").
# Not "in the summer" / "during the winter" alone: memories say it of every year ("warm in the
# winter and cool in the summer"), and a season read there would date the text.
SEASON_BEFORE: Final[dict[str, str]] = {
    "last": "last", "past": "last", "this past": "last", "this": "this", "next": "next",
    "this coming": "next", "coming": "next",
    "este": "this", "esta": "this", "el próximo": "next", "la próxima": "next",
    "o próximo": "next", "a próxima": "next",
    "letzten": "last", "vergangenen": "last", "diesen": "this", "dieses": "this",
    "nächsten": "next", "kommenden": "next",
    "cet": "this", "cette": "this", "ce": "this",
}  # fmt: skip
# Words after a season that say which one ("el verano pasado", "l'été dernier").
SEASON_AFTER: Final[dict[str, str]] = {
    "pasado": "last", "pasada": "last", "passado": "last", "passada": "last",
    "dernier": "last", "dernière": "last",
    "que viene": "next", "que vem": "next", "prochain": "next", "prochaine": "next",
}  # fmt: skip
# A year named from the year asked, as an offset ("去年" last year, "재작년" the one before).
YEARS_FROM_NOW: Final[dict[str, int]] = {"last year": -1, "this year": 0, "next year": 1}
CJK_YEARS_FROM_NOW: Final[dict[str, int]] = {
    "去年": -1, "昨年": -1, "今年": 0, "明年": 1, "来年": 1, "前年": -2, "一昨年": -2,
    "작년": -1, "지난해": -1, "올해": 0, "내년": 1, "재작년": -2,
}  # fmt: skip
# CJK and Korean words before a season: an offset from this year, or which one.
CJK_SEASON_BEFORE: Final[dict[str, int | str]] = {
    **CJK_YEARS_FROM_NOW, "올": 0,
    "这个": "this", "這個": "this", "今": "this", "この": "this", "이번": "this",
    "上个": "last", "上個": "last", "지난": "last", "저번": "last",
    "下个": "next", "下個": "next", "다음": "next",
}  # fmt: skip
# A month's year named after it ("in December last year", "marzo del año pasado", "im März
# letzten Jahres"); Chinese, Japanese and Korean name it before (CJK_YEARS_FROM_NOW: "去年3月").
YEAR_AFTER_MONTH: Final[dict[str, int]] = {
    "last year": -1, "of last year": -1, "this year": 0, "of this year": 0, "next year": 1,
    "of next year": 1, "the year before last": -2, "of the year before last": -2,
    "del año pasado": -1, "de este año": 0, "del año que viene": 1, "del próximo año": 1,
    "do ano passado": -1, "deste ano": 0, "do próximo ano": 1, "do ano que vem": 1,
    "letzten jahres": -1, "vergangenen jahres": -1, "dieses jahres": 0, "nächsten jahres": 1,
    "de l'année dernière": -1, "de l'an dernier": -1, "de cette année": 0,
    "de l'année prochaine": 1,
}  # fmt: skip
# "early 2025", "mid-2025", "the end of last year": a third of the year -> its first month.
YEAR_THIRDS: Final[dict[str, int]] = {
    "early": 1, "the beginning of": 1, "the start of": 1, "beginning of": 1, "start of": 1,
    "mid": 5, "the middle of": 5, "middle of": 5,
    "late": 9, "the end of": 9, "end of": 9,
}  # fmt: skip
