"""Domain: questions that ask *when* ("when did I …", "how long ago …", "什么时候", "いつ",
"언제", "cuándo") and texts that say when ("yesterday", "last Saturday", "two weekends ago",
"in 2022", "for 4 years").

Most time questions name no time: they ask for one. The memory that answers "when did Caroline
go to the support group?" is the line that says "I went to a support group yesterday", dated
by its session. `asks_when(question)` finds the asking words; `says_when(text, as_of)` whether
a candidate holds a time expression: any window the question reader finds (time_words.py) or
one of the mention-only forms below (future times, weekday abbreviations, durations, years),
which name a time without a window we could compute. time_boost.py lifts the candidates that
say when. No I/O, no clock.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.chunk_times import SECONDS_PER_DAY
from memlane.domain.keywords import fts_document
from memlane.domain.time_words import named_windows, read_time_words
from memlane.domain.time_words_tables import (
    HOLIDAYS,
    LAST_WEEKEND,
    MONTHS,
    NEXT_WEEKEND,
    RELATIVE_UNITS,
    THE_WEEKEND,
    THIS_WEEKEND,
    UNITS,
    WEEKDAYS,
)
from memlane.domain.time_year_words import CJK_SEASONS, SEASONS

# Words that ask for a time or a duration, one pattern per language. Bare "when" / "quando" /
# "quand" are conjunctions too ("when I was in Paris, what …"): they count only before a verb
# that makes them a question. いつ / 언제 exclude "always" / "anytime" (いつも, 언제나).
_AUX: Final = r"did|do|does|is|was|were|will|would|has|have|had|are|am|can|could|should|shall|must"
# Question words after a comma: "When I was in Paris, what did I eat?" asks what, not when.
_WH: Final = (
    r"what|where|who|which|how|why|did|do|does|is|was|can|could|tell|o que|onde|quem|qual"
    r"|como|por que|que|qu'|où|qui|quel|quelle|comment|pourquoi"
)
_ASKING: Final = (
    # English
    rf"(?<![\w'])when(?:'s|\s+(?:exactly\s+|roughly\s+|approximately\s+)?(?:{_AUX})\b|\s*\?)",
    # a question that starts with "when" (or quando, quand) and asks nothing after a comma
    rf"^\W*(?:when|quando|quand)\b(?![^?]*,\s*(?:{_WH}))",
    r"(?<![\w'])since when\b",
    r"(?<![\w'])(?:what|which)\s+(?:exact\s+|specific\s+)?(?:date|day|year|month|week|weekend"
    r"|time of year|season)s?\b",
    r"(?<![\w'])how long(?:\s+ago\b|\s+(?:has|have|had|did|do|does|was|were|will|would|is it)\b)",
    # "how many days passed", not a frequency ("how many days a week")
    r"(?<![\w'])how many\s+(?:days|weeks|months|years|hours|minutes|decades)\b"
    r"(?!\s+(?:a|an|per|each|every)\s+(?:day|week|month|year)\b)",
    r"(?<![\w'])(?:what|which)\s+(?:was|is|were|will be)\s+the\s+(?:exact\s+)?(?:date|day|year"
    r"|month)\b(?!\s+(?:format|field|column|type|picker))",
    # Spanish
    r"cuándo\b",
    r"(?<!\w)(?:cuánto tiempo|hace cuánto|qué día|qué fecha|(?:en\s+)?qué (?:año|mes))(?!\w)",
    r"(?<!\w)cuánt[oa]s\s+(?:días|semanas|meses|años)(?!\w)",
    # Portuguese
    r"(?<!\w)quando\s+(?:foi|é|era|será|vai|fiz|fui|comecei|terminei)\b",
    r"(?<!\w)(?:quanto tempo|há quanto tempo|que dia|que data|em que (?:ano|mês))(?!\w)",
    r"(?<!\w)quant[oa]s\s+(?:dias|semanas|meses|anos)(?!\w)",
    # German
    r"(?<!\w)(?:seit\s+)?wann(?!\w)",
    r"(?<!\w)(?:wie lange|an welchem tag|welches datum|in welchem (?:jahr|monat))(?!\w)",
    r"(?<!\w)wie viele\s+(?:tage|wochen|monate|jahre)(?!\w)",
    # French
    r"(?<!\w)(?:depuis quand|quand est-ce|combien de temps)(?!\w)",
    r"(?<!\w)(?:quel jour|quelle date|(?:en\s+)?quelle année|(?:en\s+)?quel mois)(?!\w)",
    r"(?<!\w)combien de\s+(?:jours|semaines|mois|ans|années)(?!\w)",
    # Arabic
    r"(?<!\w)(?:متى|كم من الوقت|في أي سنة|في أي يوم)(?!\w)",
    # Chinese
    r"什么时候|什麼時候|何时|何時|哪天|哪一天|哪年|哪一年|哪个月|哪個月|几月|幾月|几号|幾號",
    r"多久|多长时间|多長時間|多少天|多少年|多少个月|多少個月|多少周",
    # Japanese
    r"いつ(?!も|か|でも|の間|の日)|何年|何月|何日|何曜日|どのくらい前|どれくらい前|どのくらいの期間",
    # Korean
    r"언제(?!나|든|라도)|몇\s*년|몇\s*월|며칠|무슨\s*요일|얼마나\s*오래|얼마\s*동안|몇\s*달",
)
_ASKING_RE: Final = re.compile("|".join(f"(?:{p})" for p in _ASKING))

# Time expressions that name no window the question reader computes but still say when.
_WEEKDAY_SHORT: Final = r"mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun"
_WEEKDAY_LONG: Final = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_SAYING: Final = (
    # future and near times
    r"(?<![\w'])(?:tomorrow|tonight|next\s+(?:week|weekend|month|year|summer|winter|spring|fall"
    rf"|autumn|{_WEEKDAY_LONG}|{_WEEKDAY_SHORT})|in\s+a\s+(?:few\s+)?(?:days?|weeks?|months?))\b",
    # "last Fri", "this Saturday", "last summer", "over the weekend"
    rf"(?<![\w'])(?:last|this|past|on)\s+(?:{_WEEKDAY_SHORT})\b\.?(?!\w)",
    r"(?<![\w'])(?:last|this|past)\s+(?:weekend|summer|winter|spring|fall|autumn|christmas"
    rf"|easter|thanksgiving|morning|afternoon|evening|{_WEEKDAY_LONG})\b",
    r"(?<![\w'])(?:over the weekend|recently|lately|the other day)\b",
    # "I just joined", "finally opened": an event of the day the message was written
    r"(?<![\w'])(?:just|finally)\s+(?:\w+ed|got|went|began|made|won|took|bought|found|met|saw"
    r"|did|ran|gave|came|had|started|opened)\b",
    # "two weekends ago", "a decade ago", "a while ago", "ages ago"
    r"(?<![\w'])(?:days?|weeks?|weekends?|months?|years?|decades?|while|ages)\s+ago\b",
    r"(?<![\w'])(?:days?|weeks?|weekends?|months?|years?)\s+(?:later|now)\b",
    # durations: "for 4 years", "for a few months", "since 2016"
    r"(?<![\w'])for\s+(?:(?:about|almost|nearly|over|around|just under|more than)\s+)?"
    r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few"
    r"|a couple of|several|many)\s+(?:days|weeks|months|years|decades|day|week|month|year)\b",
    r"(?<![\w'])since\s+(?:(?:19|20)\d{2}|last\s+\w+|i\s+was)\b",
    # a year on its own ("2022"), not a longer number
    r"(?<![\d.,])(?:19[5-9]\d|20[0-4]\d)(?!\d|[.,]\d)(?!\s*(?:dollars|usd|\$|%|km|kg|m\b))",
    # other languages: tomorrow / next week
    r"(?<!\w)(?:la semana que viene|la próxima semana|próxima semana|nächste woche|morgen"
    r"|la semaine prochaine|demain)(?!\w)",
    r"明天|下周|下週|下个月|下個月|明年|明日|来週|来月|来年|내일|다음\s*주|다음\s*달|내년",
)
_SAYING_RE: Final = re.compile("|".join(f"(?:{p})" for p in _SAYING))
_WORD: Final = re.compile(r"\w+")
# Candidates are read up to here (a chunk is a few hundred words; a pasted log is not read whole).
MAX_TEXT: Final = 4_000


def asks_when(question: str) -> str | None:
    """The words that make `question` ask for a time or a duration, or None."""
    found = _ASKING_RE.search(question[:2_000].lower())
    return None if found is None else found.group(0).strip()


def _gate() -> re.Pattern[str]:
    """A cheap test every text the time-word reader finds a window in passes: a digit, a CJK
    date character, or one of its table words (the reader costs ~1 ms on a long line; most
    lines of a conversation hold none of these)."""
    words = {w for table in (RELATIVE_UNITS, MONTHS, WEEKDAYS) for w in table}
    words |= {w for w in UNITS if len(w) > 2} | {"il y a", "ago", "hace"}
    words |= set(LAST_WEEKEND) | set(THIS_WEEKEND) | set(NEXT_WEEKEND) | set(HOLIDAYS)
    words |= set(THE_WEEKEND) | set(SEASONS) | set(CJK_SEASONS)
    # Latin-script words need word edges; CJK and Hangul ones attach to particles ("모레에").
    latin = sorted((w for w in words if w.isascii() or w[0] in "áéíóúàâçêôãõüöäß'"), key=len)
    other = sorted(words.difference(latin), key=len)
    bounded = "|".join(re.escape(w) for w in reversed(latin))
    attached = "|".join(re.escape(w) for w in reversed(other))
    return re.compile(
        rf"\d|[年月日号號周週天前전년월일주달]|(?<!\w)(?:{bounded})(?!\w)|(?:{attached})"
    )


_GATE: Final = _gate()


def says_when(text: str, as_of: float) -> bool:
    """Whether `text` holds a time expression (a window or a mention-only form)."""
    return _says_when(text[:MAX_TEXT].lower(), int(as_of // SECONDS_PER_DAY))


# The candidates of one memory come back query after query: their lines are read once a day.
@functools.lru_cache(maxsize=4_096)  # lines of <= 4,000 chars: at most ~16 MB
def _says_when(head: str, day: int) -> bool:
    if _SAYING_RE.search(head) is not None:
        return True
    if _GATE.search(head) is None:
        return False
    intent = read_time_words(head, float(day * SECONDS_PER_DAY + SECONDS_PER_DAY // 2))
    return intent is not None and intent.since is not None


# A relative expression's window moves when its line is read this much later; a date does not.
_A_YEAR_LATER: Final = 366 * SECONDS_PER_DAY


def mentioned_windows(text: str, written: float) -> list[tuple[float, float]]:
    """The windows the relative time expressions of `text` name, read against `written` (when
    the text was written: its "last Friday" is the Friday before that day); line by line, each
    line read once a day (the reader is the costly part: ~1 ms for a long line).

    Only relative ones: a date or a year written out ("in 2018", "24 October 2023") is a word
    the keyword leg already matches when the question names it, and a document that names the
    question's year is not for that reason about it (a report's pages all name years). An
    expression is relative when reading the line a year later moves its window."""
    day = int(written // SECONDS_PER_DAY)
    return [
        window
        for line in text[:MAX_TEXT].lower().split("\n")
        if line.strip()
        for window in _mentioned(line, day)
    ]


@functools.lru_cache(maxsize=4_096)
def _mentioned(line: str, day: int) -> tuple[tuple[float, float], ...]:
    if _GATE.search(line) is None:
        return ()
    noon = float(day * SECONDS_PER_DAY + SECONDS_PER_DAY // 2)
    fixed = set(named_windows(line, noon + _A_YEAR_LATER))
    return tuple(window for window in named_windows(line, noon) if window not in fixed)


@dataclass(frozen=True, slots=True)
class _Words:
    """A text's words, and their five-letter stems (for "paint" ~ "painted")."""

    words: frozenset[str]
    stems: frozenset[str]


def _words(text: str) -> _Words:
    words = frozenset(_WORD.findall(fts_document(text).lower()))
    return _Words(words, frozenset(w[:5] for w in words if len(w) >= 5))


def _shares(term: str, words: _Words) -> bool:
    """The term or a word of its stem ("paint" ~ "painted", "camping" ~ "camped")."""
    return term in words.words or (len(term) >= 5 and term[:5] in words.stems)


def term_weights(terms: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """Each term's weight among the candidates: log(1 + n / (1 + df)). A term on almost every
    candidate (a speaker's name in a conversation) says little about which one answers."""
    found = [_words(text[:MAX_TEXT]) for text in texts]
    n = len(found)
    return {
        term: math.log(1.0 + n / (1.0 + sum(_shares(term, words) for words in found)))
        for term in (t.lower() for t in terms)
    }


def when_weight(
    text: str, terms: Sequence[str], as_of: float, weights: Mapping[str, float] | None = None
) -> float:
    """How well `text` says when about what the question asks: the largest weighted share of
    the question's `terms` (`weights`: term_weights, else 1 each) found on one line of the text
    that says when (0: no line says when; 1 for a line that says when if there are no terms).
    Line by line, because a chunk holds several messages and a time word three lines away from
    the topic dates something else. The lines are read for time words best share first, and
    only until one says when (the time-word reader is the costly part)."""
    wanted = [t.lower() for t in terms]
    weight = {t: (1.0 if weights is None else weights.get(t, 1.0)) for t in wanted}
    total = sum(weight.values())
    lines = [line for line in text[:MAX_TEXT].split("\n") if line.strip()]
    if total <= 0.0:
        return 1.0 if any(says_when(line, as_of) for line in lines) else 0.0
    shares = []
    for line in lines:
        words = _words(line)
        share = sum(weight[t] for t in wanted if _shares(t, words)) / total
        if share > 0.0:
            shares.append((share, line))
    for share, line in sorted(shares, key=lambda pair: -pair[0]):
        if says_when(line, as_of):
            return share
    return 0.0
