"""Domain: the word tables of the time-word reader (time_words.py), one block per language.

The languages are those of our stop-word lists (English, Spanish, Portuguese, Arabic, Chinese,
Japanese, Korean; domain/keywords.py) plus German and French. Everything is matched on the
lower-cased question. Words that are also ordinary words (`may`, `march`, `second`, `sat`,
`sun`) never stand alone: a month needs a preposition, a day or a year beside it; Portuguese
weekdays need their `-feira`.
"""

from __future__ import annotations

from typing import Final

# Number words (and digits, handled by the reader) that count units back.
NUMBERS: Final[dict[str, int]] = {
    # English
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "couple of": 2,
    "several": 3,
    # Spanish / Portuguese ("hace un par de días": a couple of days ago)
    "un par de": 2, "um par de": 2, "un": 1, "una": 1, "uno": 1, "um": 1, "uma": 1, "dos": 2,
    "dois": 2, "duas": 2,
    "tres": 3, "três": 3, "cuatro": 4, "quatro": 4, "cinco": 5,
    # German
    "ein paar": 3, "ein": 1, "einem": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5,
    # French
    "quelques": 3, "une": 1, "deux": 2, "trois": 3, "quatre": 4,
    # Chinese / Japanese numerals
    "一": 1, "两": 2, "兩": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9, "十": 10,
    # Korean native numerals (before a counter)
    "한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5,
}  # fmt: skip

# Unit words -> day / week / month / year.
UNITS: Final[dict[str, str]] = {
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month",
    "months": "month", "year": "year", "years": "year",
    "día": "day", "días": "day", "dia": "day", "dias": "day", "semana": "week",
    "semanas": "week", "mes": "month", "meses": "month", "mês": "month", "año": "year",
    "años": "year", "ano": "year", "anos": "year",
    "tag": "day", "tagen": "day", "woche": "week", "wochen": "week", "monat": "month",
    "monaten": "month", "jahr": "year", "jahren": "year",
    "jour": "day", "jours": "day", "semaine": "week", "semaines": "week", "mois": "month",
    "an": "year", "ans": "year", "année": "year", "années": "year",
    "天": "day", "日": "day", "周": "week", "週": "week", "星期": "week", "个星期": "week",
    "個星期": "week", "个礼拜": "week", "週間": "week", "个月": "month", "個月": "month",
    "月": "month", "か月": "month", "ヶ月": "month", "ヵ月": "month", "カ月": "month",
    "年": "year", "일": "day", "주": "week", "주일": "week", "달": "month", "개월": "month",
    "년": "year",
}  # fmt: skip

# "last <unit>" / "this <unit>" in every language: phrase -> (unit, offset).
RELATIVE_UNITS: Final[dict[str, tuple[str, int]]] = {
    # days
    "today": ("day", 0), "yesterday": ("day", -1), "the day before yesterday": ("day", -2),
    "earlier today": ("day", 0), "this morning": ("day", 0), "tonight": ("day", 0),
    "last night": ("day", -1), "last evening": ("day", -1), "the night before last": ("day", -2),
    "a week from today": ("day", 7), "a week from now": ("day", 7),
    "hoy": ("day", 0), "ayer": ("day", -1), "anteayer": ("day", -2), "anoche": ("day", -1),
    "hoje": ("day", 0), "ontem": ("day", -1), "anteontem": ("day", -2),
    "heute": ("day", 0), "gestern": ("day", -1), "vorgestern": ("day", -2),
    "aujourd'hui": ("day", 0), "avant-hier": ("day", -2), "d'hier": ("day", -1),
    "hier soir": ("day", -1), "hier matin": ("day", -1),
    "اليوم": ("day", 0), "أمس": ("day", -1), "امس": ("day", -1), "البارحة": ("day", -1),
    "今天": ("day", 0), "昨天": ("day", -1), "前天": ("day", -2), "大前天": ("day", -3),
    "昨晚": ("day", -1),
    "今日": ("day", 0), "昨日": ("day", -1), "一昨日": ("day", -2), "昨夜": ("day", -1),
    "오늘": ("day", 0), "어제": ("day", -1), "그저께": ("day", -2), "엊그제": ("day", -2),
    "그끄저께": ("day", -3),
    # weeks
    "last week": ("week", -1), "this week": ("week", 0), "the week before last": ("week", -2),
    "previous week": ("week", -1), "past week": ("week", -1),
    "a fortnight ago": ("week", -2),
    "la semana pasada": ("week", -1), "esta semana": ("week", 0),
    "semana passada": ("week", -1), "nesta semana": ("week", 0),
    "letzte woche": ("week", -1), "vergangene woche": ("week", -1),
    "letzten woche": ("week", -1), "letzter woche": ("week", -1), "vorige woche": ("week", -1),
    "diese woche": ("week", 0),
    "la semaine dernière": ("week", -1), "la semaine passée": ("week", -1),
    "cette semaine": ("week", 0),
    "الأسبوع الماضي": ("week", -1), "الاسبوع الماضي": ("week", -1),
    "上周": ("week", -1), "上週": ("week", -1), "上个星期": ("week", -1), "上個星期": ("week", -1),
    "上上周": ("week", -2), "本周": ("week", 0), "这周": ("week", 0), "這週": ("week", 0),
    "先週": ("week", -1), "今週": ("week", 0), "先々週": ("week", -2),
    "지난주": ("week", -1), "지지난주": ("week", -2), "지난 주": ("week", -1),
    "저번 주": ("week", -1),
    "저번주": ("week", -1), "이번 주": ("week", 0), "이번주": ("week", 0),
    # months
    "last month": ("month", -1), "this month": ("month", 0), "previous month": ("month", -1),
    "the month before last": ("month", -2), "half a year ago": ("month", -6),
    "el mes pasado": ("month", -1), "este mes": ("month", 0), "mês passado": ("month", -1),
    "mes passado": ("month", -1), "este mês": ("month", 0), "letzten monat": ("month", -1),
    "letzter monat": ("month", -1), "diesen monat": ("month", 0),
    "le mois dernier": ("month", -1), "ce mois-ci": ("month", 0),
    "الشهر الماضي": ("month", -1),
    "上个月": ("month", -1), "上個月": ("month", -1), "这个月": ("month", 0), "本月": ("month", 0),
    "先月": ("month", -1), "先々月": ("month", -2), "上上个月": ("month", -2), "今月": ("month", 0),
    "지난달": ("month", -1), "지지난달": ("month", -2),
    "지난 달": ("month", -1), "이번 달": ("month", 0), "이번달": ("month", 0),
    # years
    "last year": ("year", -1), "this year": ("year", 0), "previous year": ("year", -1),
    "the year before last": ("year", -2),
    "el año pasado": ("year", -1), "este año": ("year", 0), "ano passado": ("year", -1),
    "este ano": ("year", 0), "letztes jahr": ("year", -1), "letzten jahr": ("year", -1),
    "dieses jahr": ("year", 0), "l'année dernière": ("year", -1),
    "l'an dernier": ("year", -1), "cette année": ("year", 0),
    "العام الماضي": ("year", -1), "السنة الماضية": ("year", -1),
    "去年": ("year", -1), "今年": ("year", 0), "前年": ("year", -2), "昨年": ("year", -1),
    "一昨年": ("year", -2),
    "작년": ("year", -1), "지난해": ("year", -1), "올해": ("year", 0), "재작년": ("year", -2),
    # Ahead: a memory says what is planned ("the car show is next Friday"), and a question may
    # ask what is. Not "mañana" / "morgen" alone: they are "morning" too.
    "tomorrow": ("day", 1), "the day after tomorrow": ("day", 2), "pasado mañana": ("day", 2),
    "amanhã": ("day", 1), "depois de amanhã": ("day", 2), "übermorgen": ("day", 2),
    "demain": ("day", 1), "après-demain": ("day", 2), "غدا": ("day", 1), "غداً": ("day", 1),
    "明天": ("day", 1), "后天": ("day", 2), "大后天": ("day", 3), "後天": ("day", 2),
    "明日": ("day", 1),
    "明後日": ("day", 2), "내일": ("day", 1), "모레": ("day", 2),
    "next week": ("week", 1), "la semana que viene": ("week", 1),
    "la próxima semana": ("week", 1), "próxima semana": ("week", 1),
    "semana que vem": ("week", 1), "nächste woche": ("week", 1), "nächsten woche": ("week", 1),
    "la semaine prochaine": ("week", 1), "الأسبوع القادم": ("week", 1),
    "الأسبوع المقبل": ("week", 1), "下周": ("week", 1), "下週": ("week", 1),
    "下个星期": ("week", 1), "下個星期": ("week", 1), "来週": ("week", 1), "다음 주": ("week", 1),
    "다음주": ("week", 1),
    "next month": ("month", 1), "el mes que viene": ("month", 1), "el próximo mes": ("month", 1),
    "mês que vem": ("month", 1), "próximo mês": ("month", 1), "nächsten monat": ("month", 1),
    "le mois prochain": ("month", 1), "الشهر القادم": ("month", 1), "下个月": ("month", 1),
    "下個月": ("month", 1), "来月": ("month", 1), "다음 달": ("month", 1), "다음달": ("month", 1),
    "next year": ("year", 1), "el año que viene": ("year", 1), "el próximo año": ("year", 1),
    "ano que vem": ("year", 1), "próximo ano": ("year", 1), "nächstes jahr": ("year", 1),
    "l'année prochaine": ("year", 1), "العام القادم": ("year", 1), "明年": ("year", 1),
    "来年": ("year", 1), "내년": ("year", 1),
}  # fmt: skip

# Chinese and Japanese write no spaces, so a time word's characters may belong to the words
# around it: 说明 + 日志 holds 明日 ("tomorrow"), 目前 + 天气 前天, 线上 + 周报 上周, 版本 + 周期
# 本周, 将来 + 年金 来年, 明日香 is a name, 오늘날 "nowadays". A time word starting with one of
# these characters is not read after the characters listed for it, nor one ending with one of
# them before the characters listed (the other word's usual partners, not every compound).
JOINED_BEFORE: Final[dict[str, str]] = {
    "明": "说說证證表声聲发發聪聰透光文简簡阐闡标標注指查分鲜鮮英失申黎",
    "今": "如当當古而迄",
    "去": "除过過失回离離出进進下上死来來归歸",
    "前": "目提之以当當空面眼跟从從生事战戰门門胸台向超",
    "后": "之以然最午今随隨此往事战产背落",
    "後": "之以然最午今随隨此往事戰背落",
    "上": "以马馬早晚网網线線身路加桌地之向往北爬楼樓台臺会會班世面表墙牆手",
    "下": "一以线線地天底留私乡鄉陛部手属屬零打楼樓剩拿写寫接按往向坐停躺倒记記看想等试試算查南",
    "本": "日基根版成资資样樣文脚腳课課剧劇副账賬原书書范範血老标標读讀话話笔筆",
    "来": "将将以出本元由従从未往到伝外家生古原带起",
    "來": "將以出本元由從未往到外家生古原帶起",
}
JOINED_AFTER: Final[dict[str, str]] = {
    "周": "期边邊围圍全密转轉长長岁歲游遊到刊",
    "週": "期边邊围圍全密转轉长長岁歲游遊到刊",
    "日": "香",
    "늘": "날",
}

# "in the last N days" style: the prefix words per language (the number and unit follow).
RECENT_PREFIXES: Final = (
    "in the last", "in the past", "over the last", "over the past", "the last", "the past",
    "en los últimos", "en las últimas", "nos últimos", "nas últimas", "in den letzten",
    "ces derniers", "ces dernières", "au cours des derniers", "au cours des dernières",
)  # fmt: skip

MONTHS: Final[dict[str, int]] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
    "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7,
    "agosto": 8, "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11,
    "diciembre": 12,
    "janeiro": 1, "fevereiro": 2, "março": 3, "maio": 5, "junho": 6, "julho": 7,
    "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12,
    "januar": 1, "februar": 2, "märz": 3, "juni": 6, "juli": 7, "oktober": 10, "dezember": 12,
    "janvier": 1, "février": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "août": 8, "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12,
}  # fmt: skip
# Month names that are ordinary words too ("May I ask", "march forward", "mar" = sea, "mai"):
# these need a preposition, a day or a year beside them.
AMBIGUOUS_MONTHS: Final = frozenset(
    {"may", "march", "mar", "jan", "sep", "oct", "nov", "dec", "aug", "mai", "mars"}
)
# Words before a month name that make it a month ("in March", "since May").
MONTH_PREPOSITIONS: Final = (
    "in", "during", "since", "until", "till", "by", "last", "this", "next", "early", "late",
    "mid",
    "of", "en", "em", "de", "desde", "im", "seit", "bis", "ende", "anfang", "letzten",
    "au", "mois de", "depuis", "el pasado", "em meados de", "a principios de", "a finales de",
)  # fmt: skip

WEEKDAYS: Final[dict[str, int]] = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6,
    "lunes": 0, "martes": 1, "miércoles": 2, "miercoles": 2, "jueves": 3, "viernes": 4,
    "sábado": 5, "sabado": 5, "domingo": 6,
    "segunda-feira": 0, "terça-feira": 1, "terca-feira": 1, "quarta-feira": 2,
    "quinta-feira": 3, "sexta-feira": 4,
    "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5,
    "sonntag": 6,
    "lundi": 0, "mardi": 1, "mercredi": 2, "jeudi": 3, "vendredi": 4, "samedi": 5,
    "dimanche": 6,
    "星期一": 0, "星期二": 1, "星期三": 2, "星期四": 3, "星期五": 4, "星期六": 5,
    "星期天": 6, "星期日": 6, "周一": 0, "周二": 1, "周三": 2, "周四": 3, "周五": 4, "周六": 5,
    "周日": 6, "週一": 0, "週二": 1, "週三": 2, "週四": 3, "週五": 4, "週六": 5, "週日": 6,
    "月曜日": 0, "火曜日": 1, "水曜日": 2, "木曜日": 3, "金曜日": 4, "土曜日": 5, "日曜日": 6,
    "월요일": 0, "화요일": 1, "수요일": 2, "목요일": 3, "금요일": 4, "토요일": 5, "일요일": 6,
}  # fmt: skip
# Words that move a weekday back one more week ("last Monday" asked on a Tuesday is still the
# Monday before; "上周一" is the Monday of last week).
LAST_WEEKDAY_PREFIXES: Final = ("上", "上个", "先週の", "지난주 ", "지난 주 ")
# The weekday of next week ("下周五", "来週の金曜日", "다음 주 금요일").
NEXT_WEEKDAY_PREFIXES: Final = ("下", "下个", "来週の", "다음주 ", "다음 주 ")
# The weekday's first occurrence after today ("next Friday", "vendredi prochain").
COMING_WEEKDAY_PREFIXES: Final = (
    "next ", "this coming ", "coming ", "el próximo ", "el proximo ", "la próxima ",
    "na próxima ", "a próxima ", "o próximo ", "nächsten ", "nächster ", "kommenden ",
    "am nächsten ", "am kommenden ",
)  # fmt: skip
COMING_WEEKDAY_SUFFIXES: Final = (" prochain", " que viene", " que vem")
# The weekday of this week, Monday first ("this Saturday" said on a Wednesday is ahead).
THIS_WEEKDAY_PREFIXES: Final = ("this ", "este ", "esta ", "diesen ", "ce ", "这", "這", "本")
# Words that name a weekday's latest occurrence, as the bare weekday does; taken into the phrase
# so that "since last Monday" opens from that Monday.
PRIOR_WEEKDAY_PREFIXES: Final = (
    "last ", "past ", "this past ", "letzten ", "letztem ", "vergangenen ", "vergangenem ",
)  # fmt: skip

# "the last week of October 2023", "la primera semana de mayo": a week counted within a named
# month (n: days 7n-6 .. 7n; -1: the month's last seven days). The reader needs the month after it.
WEEK_OF_MONTH: Final[dict[str, int]] = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "last": -1, "final": -1,
    "primera": 1, "segunda": 2, "tercera": 3, "cuarta": 4, "última": -1, "ultima": -1,
    "primeira": 1, "terceira": 3, "quarta": 4,
    "erste": 1, "ersten": 1, "zweite": 2, "zweiten": 2, "dritte": 3, "dritten": 3, "vierte": 4,
    "vierten": 4, "letzte": -1, "letzten": -1,
    "première": 1, "premiere": 1, "deuxième": 2, "troisième": 3, "quatrième": 4, "dernière": -1,
    # before a weekend (masculine or neuter there): "el primer fin de semana", "erstes Wochenende"
    "primer": 1, "tercer": 3, "cuarto": 4, "último": -1, "ultimo": -1, "primeiro": 1,
    "segundo": 2, "terceiro": 3, "quarto": 4, "erstes": 1, "zweites": 2, "drittes": 3,
    "viertes": 4, "letztes": -1, "premier": 1, "dernier": -1,
}  # fmt: skip
# Words after "the 2nd" that make it a rank, not a day of the month: "the 1st place", "the 3rd
# time", "the 2nd largest". A day of the month is followed by a preposition, a name, a verb or
# nothing ("on the 17th", "the 17th at noon"); plurals are matched too ("the 2nd steps").
ORDINAL_NOUNS: Final = (
    "place", "time", "floor", "call", "round", "attempt", "try", "tries", "edition",
    "anniversary", "birthday", "grade", "century", "quarter", "chapter", "page", "step",
    "version", "level", "season", "episode", "game", "match", "row", "person", "one", "day",
    "week", "month", "year", "item", "question", "line", "lap", "draft", "date", "child", "kid",
    "son", "daughter", "book", "movie", "film", "song", "goal", "run", "iteration", "sprint",
    "batch", "phase", "stage", "generation", "album", "test", "interview", "meeting", "session",
    "visit", "trip", "class", "lesson", "semester", "term", "half", "part", "section", "option",
    "choice", "rule", "point", "problem", "issue", "reason", "thing", "largest", "biggest",
    "best", "most", "highest", "lowest", "smallest", "longest", "oldest", "youngest", "last",
)  # fmt: skip
# What may follow "the 17th" when it is a day: the end of a clause or a small word ("on the 17th
# at the standup", "the 17th, we deployed"). Any other word makes it a rank: "the 3rd party",
# "the 2nd argument", "the 12th man" (ORDINAL_NOUNS names the commonest for the dash forms).
DAY_FOLLOWERS: Final = (
    "of", "at", "in", "on", "for", "from", "when", "with", "to", "and", "or", "but", "so",
    "we", "i", "you", "he", "she", "they", "it", "me", "us", "him", "her", "them", "my", "our",
    "your", "his", "their", "was", "were", "is", "are", "be", "been", "did", "do", "does",
    "had", "has", "have", "will", "would", "could", "should", "can", "that", "this", "which",
    "who", "what", "where", "why", "how", "if", "because", "as", "after", "before", "until",
    "till", "by", "about", "around", "morning", "afternoon", "evening", "night", "again",
    "too", "also", "then", "there", "here", "last", "next", "or so", "already", "through",
    "thru", "not", "during", "between", "via", "while", "regarding", "went", "just", "late",
    "early", "until", "till",
)  # fmt: skip
# Counted days written as words, for "the fourth of July".
ORDINAL_WORDS: Final[dict[str, int]] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "twenty-first": 21, "twenty-second": 22,
    "twenty-third": 23, "twenty-fourth": 24, "twenty-fifth": 25, "twenty-sixth": 26,
    "twenty-seventh": 27, "twenty-eighth": 28, "twenty-ninth": 29, "thirtieth": 30,
    "thirty-first": 31,
}  # fmt: skip
# Words before a weekday or after a holiday that make it no day: "every Monday" (each one),
# "Good Friday", "Black Friday", "Cyber Monday", "an Easter egg", "the Christmas tree".
NOT_A_WEEKDAY_BEFORE: Final = ("every", "every other", "each", "good", "black", "cyber")
NOT_A_HOLIDAY_AFTER: Final = ("egg", "eggs", "tree", "trees", "card", "cards", "carol", "carols")
WEEK_WORDS: Final = ("week", "semana", "woche", "semaine")
# "the first weekend of August": the Saturday and Sunday of the month's first (… last) Saturday.
WEEKEND_WORDS: Final = ("weekend", "week-end", "fin de semana", "fim de semana", "wochenende")
WEEK_OF_LINKS: Final = ("of", "in", "de", "im", "des", "du", "do", "da", "del")

LAST_WEEKEND: Final = (
    "last weekend", "the past weekend", "this past weekend", "past weekend",
    "el fin de semana pasado", "fim de semana passado",
    "letztes wochenende", "le week-end dernier", "上周末", "上週末", "先週末", "지난 주말",
    "지난주말",
)  # fmt: skip
# A weekend named without "last" or "this": the one under way on a Saturday or Sunday, else the
# one just gone ("what did I cook over the weekend"). Not "on the weekend" / "am Wochenende":
# memories say those of every weekend ("meal prep on the weekend").
THE_WEEKEND: Final = ("over the weekend", "übers wochenende")
# The weekend of this week (said on a Monday: the one just gone) and of next week.
THIS_WEEKEND: Final = (
    "this weekend", "este fin de semana", "este fim de semana", "dieses wochenende",
    "ce week-end", "这个周末", "這個週末", "这周末", "這週末", "本周末", "今週末", "이번 주말",
    "이번주말",
)  # fmt: skip
NEXT_WEEKEND: Final = (
    "next weekend", "el próximo fin de semana", "el fin de semana que viene",
    "o próximo fim de semana", "próximo fim de semana", "nächstes wochenende",
    "le week-end prochain", "下周末", "下週末", "来週末", "다음 주말", "다음주말",
)  # fmt: skip

EARLIEST: Final = (
    "first time", "for the first time", "initially", "originally", "at first",
    "earliest", "at the start", "primera vez", "por primera vez", "primeira vez",
    "pela primeira vez", "zum ersten mal", "erstmals", "première fois", "pour la première fois",
    "第一次", "最早", "最初", "初めて", "처음", "최초", "أول مرة",
)  # fmt: skip
LATEST: Final = (
    "most recent", "most recently", "latest", "last time", "recently", "lately",
    "más reciente", "última vez", "mais recente", "zuletzt", "neueste", "letzte mal",
    "plus récent", "dernière fois", "récemment", "最近", "最新", "上一次", "上次", "前回",
    "最後", "최근", "마지막", "최신", "آخر مرة",
)  # fmt: skip
BEFORE: Final = (
    "before",
    "antes de",
    "vor dem",
    "vor der",
    "avant",
    "之前",
    "以前",
    "前に",
    "전에",
)
AFTER: Final = (
    "after", "después de", "depois de", "nach dem", "nach der", "après", "之后", "以后", "後に",
    "후에",
)  # fmt: skip

# Holidays: a fixed (month, day), or a rule of calendar_days.holiday ("easter": Western Easter
# Sunday; "thanksgiving": the fourth Thursday of November, as in the United States). Bare, a
# holiday is its latest occurrence up to today ("what did we do at Christmas"). Names that are
# also ordinary words or places ("natal", "noel", "pascua" for Passover) are left out.
HOLIDAYS: Final[dict[str, tuple[int, int] | str]] = {
    "christmas": (12, 25), "christmas day": (12, 25), "christmas eve": (12, 24), "xmas": (12, 25),
    "xmas eve": (12, 24),
    "new year's eve": (12, 31), "new years eve": (12, 31), "new year's day": (1, 1),
    "new years day": (1, 1), "halloween": (10, 31), "valentine's day": (2, 14),
    "valentines day": (2, 14), "easter": "easter", "easter sunday": "easter",
    "thanksgiving": "thanksgiving",
    "navidad": (12, 25), "nochebuena": (12, 24), "nochevieja": (12, 31), "año nuevo": (1, 1),
    "san valentín": (2, 14), "día de san valentín": (2, 14),
    "véspera de natal": (12, 24), "dia de natal": (12, 25), "réveillon": (12, 31),
    "ano novo": (1, 1), "páscoa": "easter",
    "weihnachten": (12, 25), "heiligabend": (12, 24), "silvester": (12, 31), "neujahr": (1, 1),
    "ostern": "easter", "valentinstag": (2, 14),
    "noël": (12, 25), "nouvel an": (1, 1), "saint-valentin": (2, 14), "pâques": "easter",
    "圣诞节": (12, 25), "聖誕節": (12, 25), "圣诞": (12, 25), "平安夜": (12, 24), "元旦": (1, 1),
    "情人节": (2, 14), "情人節": (2, 14), "万圣节": (10, 31), "萬聖節": (10, 31),
    "クリスマスイブ": (12, 24), "クリスマス": (12, 25), "元日": (1, 1), "大晦日": (12, 31),
    "バレンタインデー": (2, 14), "ハロウィン": (10, 31),
    "크리스마스 이브": (12, 24), "크리스마스": (12, 25), "새해 첫날": (1, 1),
    "밸런타인데이": (2, 14),
    "핼러윈": (10, 31), "할로윈": (10, 31),
}  # fmt: skip
# Before a holiday: "last Christmas" (its latest occurrence, as bare), "this" (this year's),
# "next" (its first occurrence after today).
HOLIDAY_PREFIXES: Final = ("last", "this", "next")
