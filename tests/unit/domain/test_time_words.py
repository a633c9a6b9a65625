"""The time-word reader: a table of expressions across our languages and their windows, asked
on Friday 2026-11-20 at 12:00 UTC; and what must not read as time."""

from __future__ import annotations

import calendar
import datetime as dt
from typing import ClassVar

import pytest

from memlane.domain.time_words import MAX_CHARS, read_time_words

AS_OF = float(calendar.timegm((2026, 11, 20, 12, 0, 0)))  # a Friday

# (question, first day, last day) of the window the question names.
WINDOWS: list[tuple[str, str, str]] = [
    # English, days
    ("what did we do yesterday", "2026-11-19", "2026-11-19"),
    ("what happened today", "2026-11-20", "2026-11-20"),
    ("notes from the day before yesterday", "2026-11-18", "2026-11-18"),
    ("what did I say last night", "2026-11-19", "2026-11-19"),
    ("earlier today we deployed", "2026-11-20", "2026-11-20"),
    ("3 days ago", "2026-11-17", "2026-11-17"),
    ("two days ago we met", "2026-11-18", "2026-11-18"),
    ("a day ago", "2026-11-19", "2026-11-19"),
    # English, weeks
    ("what did we decide last week about retries", "2026-11-09", "2026-11-15"),
    ("this week", "2026-11-16", "2026-11-22"),
    ("two weeks ago", "2026-11-02", "2026-11-08"),
    ("a week ago", "2026-11-09", "2026-11-15"),
    ("a couple of weeks ago", "2026-11-02", "2026-11-08"),
    ("the week before last", "2026-11-02", "2026-11-08"),
    ("in the last 3 days", "2026-11-17", "2026-11-20"),
    ("over the past two weeks", "2026-11-06", "2026-11-20"),
    ("last weekend", "2026-11-14", "2026-11-15"),
    ("which bike did I service the past weekend", "2026-11-14", "2026-11-15"),
    ("this past weekend we moved", "2026-11-14", "2026-11-15"),
    # English: months, years
    ("last month", "2026-10-01", "2026-10-31"),
    ("this month", "2026-11-01", "2026-11-30"),
    ("three months ago", "2026-08-01", "2026-08-31"),
    ("last year", "2025-01-01", "2025-12-31"),
    ("this year", "2026-01-01", "2026-12-31"),
    ("two years ago", "2024-01-01", "2024-12-31"),
    ("in 2025", "2025-01-01", "2025-12-31"),
    # English: named months and days
    ("in March", "2026-03-01", "2026-03-31"),
    ("what did I buy in December", "2025-12-01", "2025-12-31"),
    ("since May", "2026-05-01", "2026-11-20"),  # up to the day asked
    ("in November", "2026-11-01", "2026-11-30"),
    ("last March", "2026-03-01", "2026-03-31"),
    ("January", "2026-01-01", "2026-01-31"),
    ("March 3", "2026-03-03", "2026-03-03"),
    ("on November 3rd", "2026-11-03", "2026-11-03"),
    ("Nov 17", "2026-11-17", "2026-11-17"),
    ("17 Nov", "2026-11-17", "2026-11-17"),
    ("the meeting on 17 November 2025", "2025-11-17", "2025-11-17"),
    ("May 2024", "2024-05-01", "2024-05-31"),
    ("December 24", "2025-12-24", "2025-12-24"),
    ("what did the user say before the deploy on the 17th", "2026-11-17", "2026-11-17"),
    ("what did we agree on the 17th at the standup", "2026-11-17", "2026-11-17"),
    ("what did we grill on the 4th of July", "2026-07-04", "2026-07-04"),
    ("the 3rd of May 2025", "2025-05-03", "2025-05-03"),
    ("what happened on Feb 29", "2024-02-29", "2024-02-29"),  # the last leap day
    ("mid-March", "2026-03-01", "2026-03-31"),
    ("next December", "2026-12-01", "2026-12-31"),  # ahead, not last December
    ("next May", "2027-05-01", "2027-05-31"),
    # "in the past week": the seven days up to today, not the calendar week before this one
    ("what did I do in the past week", "2026-11-13", "2026-11-20"),
    ("over the last month", "2026-10-01", "2026-11-20"),
    ("in the last week of October", "2026-10-25", "2026-10-31"),
    # "before" inside these is part of the phrase, not an order (TestOrder)
    ("what did I eat the night before last", "2026-11-18", "2026-11-18"),
    ("the month before last", "2026-09-01", "2026-09-30"),
    ("the year before last", "2024-01-01", "2024-12-31"),
    ("what did we cook last evening", "2026-11-19", "2026-11-19"),
    ("a fortnight ago", "2026-11-02", "2026-11-08"),
    ("half a year ago", "2026-05-01", "2026-05-31"),
    ("hace un par de días", "2026-11-18", "2026-11-18"),
    ("vor ein paar Tagen", "2026-11-17", "2026-11-17"),
    ("il y a quelques jours", "2026-11-17", "2026-11-17"),
    ("大前天吃了什么", "2026-11-17", "2026-11-17"),
    ("大后天", "2026-11-23", "2026-11-23"),
    ("上上个月的账单", "2026-09-01", "2026-09-30"),
    ("一昨年の夏", "2024-06-01", "2024-08-31"),
    ("先々月", "2026-09-01", "2026-09-30"),
    ("지지난주 회의", "2026-11-02", "2026-11-08"),
    ("지지난달", "2026-09-01", "2026-09-30"),
    ("그끄저께", "2026-11-17", "2026-11-17"),
    # slash dates only where the order is plain and a year or a preposition says "date"
    ("what did I log on 11/17", "2026-11-17", "2026-11-17"),
    ("the invoice of 17/11/2026", "2026-11-17", "2026-11-17"),
    ("the 12/25/2025 party", "2025-12-25", "2025-12-25"),
    ("what changed since 10/31?", "2026-10-31", "2026-11-20"),
    # month ranges: the first month's start to the second's end, latest occurrence
    ("what did I work on between March and May", "2026-03-01", "2026-05-31"),
    ("from May to July 2025", "2025-05-01", "2025-07-31"),
    ("between November and January", "2025-11-01", "2026-01-31"),
    ("entre marzo y mayo", "2026-03-01", "2026-05-31"),
    ("de março a maio", "2026-03-01", "2026-05-31"),
    ("von März bis Mai", "2026-03-01", "2026-05-31"),
    ("entre mars et mai", "2026-03-01", "2026-05-31"),
    ("3月から5月まで何をした", "2026-03-01", "2026-05-31"),
    ("3월부터 5월까지", "2026-03-01", "2026-05-31"),
    ("2025年11月到2026年2月", "2025-11-01", "2026-02-28"),
    # the nth weekend of a month: its nth Saturday and the Sunday after
    ("where did I go the first weekend of August 2023", "2023-08-05", "2023-08-06"),
    ("the last weekend of September 2025", "2025-09-27", "2025-09-28"),
    ("el primer fin de semana de mayo", "2026-05-02", "2026-05-03"),
    ("erstes Wochenende im Mai", "2026-05-02", "2026-05-03"),
    ("le premier week-end de juin", "2026-06-06", "2026-06-07"),
    ("o segundo fim de semana de outubro", "2026-10-10", "2026-10-11"),
    # holidays: bare or "last", the latest up to today; "next", the first after it
    ("what did we do at Christmas", "2025-12-25", "2025-12-25"),
    ("next Christmas", "2026-12-25", "2026-12-25"),
    ("Christmas Eve 2024", "2024-12-24", "2024-12-24"),
    ("where were we on New Year's Eve", "2025-12-31", "2025-12-31"),
    ("what costume did I wear for Halloween", "2026-10-31", "2026-10-31"),
    ("last Thanksgiving", "2025-11-27", "2025-11-27"),
    ("Easter 2025", "2025-04-20", "2025-04-20"),
    ("was haben wir an Weihnachten gegessen", "2025-12-25", "2025-12-25"),
    ("¿qué hicimos en Nochevieja?", "2025-12-31", "2025-12-31"),
    ("à Pâques", "2026-04-05", "2026-04-05"),
    ("圣诞节吃了什么", "2025-12-25", "2025-12-25"),
    ("クリスマスイブの予定", "2025-12-24", "2025-12-24"),
    ("크리스마스에 뭐 했지", "2025-12-25", "2025-12-25"),
    ("presents on Xmas Eve", "2025-12-24", "2025-12-24"),
    ("what did we cook the Friday before last", "2026-11-06", "2026-11-06"),
    ("a week from today", "2026-11-27", "2026-11-27"),
    ("the 3rd", "2026-11-03", "2026-11-03"),
    ("on the 25th", "2026-10-25", "2026-10-25"),
    ("on Monday", "2026-11-16", "2026-11-16"),
    ("last Friday", "2026-11-13", "2026-11-13"),
    ("what happened on Sunday", "2026-11-15", "2026-11-15"),
    ("Wednesday's standup", "2026-11-18", "2026-11-18"),
    ("2026-11-02", "2026-11-02", "2026-11-02"),
    ("on 2025/12/31", "2025-12-31", "2025-12-31"),
    # Spanish
    ("¿qué hicimos ayer?", "2026-11-19", "2026-11-19"),
    ("anteayer", "2026-11-18", "2026-11-18"),
    ("hoy", "2026-11-20", "2026-11-20"),
    ("la semana pasada hablamos de redis", "2026-11-09", "2026-11-15"),
    ("esta semana", "2026-11-16", "2026-11-22"),
    ("el mes pasado", "2026-10-01", "2026-10-31"),
    ("el año pasado", "2025-01-01", "2025-12-31"),
    ("hace dos semanas", "2026-11-02", "2026-11-08"),
    ("hace 3 días", "2026-11-17", "2026-11-17"),
    ("en marzo", "2026-03-01", "2026-03-31"),
    ("el 17 de noviembre", "2026-11-17", "2026-11-17"),
    ("el lunes", "2026-11-16", "2026-11-16"),
    ("el día 5", "2026-11-05", "2026-11-05"),
    # Portuguese
    ("o que fizemos ontem", "2026-11-19", "2026-11-19"),
    ("semana passada", "2026-11-09", "2026-11-15"),
    ("mês passado", "2026-10-01", "2026-10-31"),
    ("ano passado", "2025-01-01", "2025-12-31"),
    ("há duas semanas", "2026-11-02", "2026-11-08"),
    ("há 2 meses", "2026-09-01", "2026-09-30"),
    ("em março", "2026-03-01", "2026-03-31"),
    ("na segunda-feira", "2026-11-16", "2026-11-16"),
    ("no dia 12", "2026-11-12", "2026-11-12"),
    ("17 de novembro de 2025", "2025-11-17", "2025-11-17"),
    # German
    ("was war gestern", "2026-11-19", "2026-11-19"),
    ("vorgestern", "2026-11-18", "2026-11-18"),
    ("letzte Woche", "2026-11-09", "2026-11-15"),
    ("letzten Monat", "2026-10-01", "2026-10-31"),
    ("letztes Jahr", "2025-01-01", "2025-12-31"),
    ("vor drei Tagen", "2026-11-17", "2026-11-17"),
    ("vor zwei Wochen", "2026-11-02", "2026-11-08"),
    ("im März", "2026-03-01", "2026-03-31"),
    ("am Montag", "2026-11-16", "2026-11-16"),
    ("am 3.", "2026-11-03", "2026-11-03"),
    ("17. November 2026", "2026-11-17", "2026-11-17"),
    # French
    ("la semaine dernière", "2026-11-09", "2026-11-15"),
    ("le mois dernier", "2026-10-01", "2026-10-31"),
    ("l'année dernière", "2025-01-01", "2025-12-31"),
    ("il y a deux jours", "2026-11-18", "2026-11-18"),
    ("il y a 3 semaines", "2026-10-26", "2026-11-01"),
    ("avant-hier", "2026-11-18", "2026-11-18"),
    ("hier soir", "2026-11-19", "2026-11-19"),
    ("en mars", "2026-03-01", "2026-03-31"),
    ("lundi", "2026-11-16", "2026-11-16"),
    ("le 17 novembre", "2026-11-17", "2026-11-17"),
    # Arabic
    ("ماذا فعلنا أمس", "2026-11-19", "2026-11-19"),
    ("الأسبوع الماضي", "2026-11-09", "2026-11-15"),
    ("الشهر الماضي", "2026-10-01", "2026-10-31"),
    ("العام الماضي", "2025-01-01", "2025-12-31"),
    # Chinese
    ("昨天我们讨论了什么", "2026-11-19", "2026-11-19"),
    ("前天", "2026-11-18", "2026-11-18"),
    ("今天", "2026-11-20", "2026-11-20"),
    ("上周的会议", "2026-11-09", "2026-11-15"),
    ("上上周", "2026-11-02", "2026-11-08"),
    ("上个月", "2026-10-01", "2026-10-31"),
    ("去年", "2025-01-01", "2025-12-31"),
    ("三天前", "2026-11-17", "2026-11-17"),
    ("两周前", "2026-11-02", "2026-11-08"),
    ("三个月前", "2026-08-01", "2026-08-31"),
    ("最近7天", "2026-11-13", "2026-11-20"),
    ("上周一", "2026-11-09", "2026-11-09"),
    ("星期三", "2026-11-18", "2026-11-18"),
    ("十一月", "2026-11-01", "2026-11-30"),
    ("3月", "2026-03-01", "2026-03-31"),
    ("11月17日", "2026-11-17", "2026-11-17"),
    ("2025年", "2025-01-01", "2025-12-31"),
    ("2026年11月17日的部署", "2026-11-17", "2026-11-17"),
    ("17号", "2026-11-17", "2026-11-17"),
    ("查一下周五的日志", "2026-11-13", "2026-11-13"),  # 一下 + 周五, not 下周五
    ("我这周五有空", "2026-11-20", "2026-11-20"),  # 这周五 after another character
    # Japanese
    ("昨日の会議", "2026-11-19", "2026-11-19"),
    ("一昨日", "2026-11-18", "2026-11-18"),
    ("先週", "2026-11-09", "2026-11-15"),
    ("先月", "2026-10-01", "2026-10-31"),
    ("昨年", "2025-01-01", "2025-12-31"),
    ("3日前", "2026-11-17", "2026-11-17"),
    ("2週間前", "2026-11-02", "2026-11-08"),
    ("3か月前", "2026-08-01", "2026-08-31"),
    ("月曜日", "2026-11-16", "2026-11-16"),
    ("先週の金曜日", "2026-11-13", "2026-11-13"),
    # Korean
    ("어제 뭐 했지", "2026-11-19", "2026-11-19"),
    ("그저께", "2026-11-18", "2026-11-18"),
    ("지난주 회의", "2026-11-09", "2026-11-15"),
    ("지난달", "2026-10-01", "2026-10-31"),
    ("작년", "2025-01-01", "2025-12-31"),
    ("3일 전", "2026-11-17", "2026-11-17"),
    ("두 달 전", "2026-09-01", "2026-09-30"),
    ("2주 전", "2026-11-02", "2026-11-08"),
    ("일주일 전", "2026-11-09", "2026-11-15"),
    ("11월 3일", "2026-11-03", "2026-11-03"),
    ("월요일", "2026-11-16", "2026-11-16"),
    ("지난 7일", "2026-11-13", "2026-11-20"),
    # A week counted within a named month (it wins over "last week" at the same place)
    ("where was Calvin in the last week of October 2023", "2023-10-25", "2023-10-31"),
    ("the first week of May", "2026-05-01", "2026-05-07"),
    ("the second week in March", "2026-03-08", "2026-03-14"),
    ("la primera semana de mayo de 2025", "2025-05-01", "2025-05-07"),
    ("a última semana de fevereiro", "2026-02-22", "2026-02-28"),
    ("die letzte Woche im Oktober", "2026-10-25", "2026-10-31"),
    ("la dernière semaine de juin", "2026-06-24", "2026-06-30"),
    ("the fourth week of February 2026", "2026-02-22", "2026-02-28"),
    # Ahead: what a memory says is planned, or a question asks is
    ("what is planned for tomorrow", "2026-11-21", "2026-11-21"),
    ("the day after tomorrow", "2026-11-22", "2026-11-22"),
    ("next week", "2026-11-23", "2026-11-29"),
    ("next month", "2026-12-01", "2026-12-31"),
    ("next year", "2027-01-01", "2027-12-31"),
    ("a longer bike ride this weekend", "2026-11-21", "2026-11-22"),
    ("next weekend", "2026-11-28", "2026-11-29"),
    ("this Saturday", "2026-11-21", "2026-11-21"),
    ("this Monday", "2026-11-16", "2026-11-16"),
    ("the car show is next Tuesday", "2026-11-24", "2026-11-24"),
    ("next Friday", "2026-11-27", "2026-11-27"),
    ("la próxima semana", "2026-11-23", "2026-11-29"),
    ("pasado mañana", "2026-11-22", "2026-11-22"),
    ("el lunes que viene", "2026-11-23", "2026-11-23"),
    ("amanhã", "2026-11-21", "2026-11-21"),
    ("semana que vem", "2026-11-23", "2026-11-29"),
    ("nächste Woche", "2026-11-23", "2026-11-29"),
    ("übermorgen", "2026-11-22", "2026-11-22"),
    ("demain", "2026-11-21", "2026-11-21"),
    ("vendredi prochain", "2026-11-27", "2026-11-27"),
    ("明天开会", "2026-11-21", "2026-11-21"),
    ("下周五", "2026-11-27", "2026-11-27"),
    ("下个月", "2026-12-01", "2026-12-31"),
    ("明日の予定", "2026-11-21", "2026-11-21"),
    ("来週の金曜日", "2026-11-27", "2026-11-27"),
    ("来年", "2027-01-01", "2027-12-31"),
    ("내일 회의", "2026-11-21", "2026-11-21"),
    ("다음 주 금요일", "2026-11-27", "2026-11-27"),
    ("다음 달", "2026-12-01", "2026-12-31"),
    # spans: a range joins two expressions; "since" opens a window up to the day asked
    ("what config changed since Monday", "2026-11-16", "2026-11-20"),
    ("anything new since 2025", "2025-01-01", "2026-11-20"),
    ("what have we shipped since the 10th", "2026-11-10", "2026-11-20"),
    ("ever since last Christmas", "2025-12-25", "2026-11-20"),
    ("seit letzter Woche", "2026-11-09", "2026-11-20"),
    ("desde marzo", "2026-03-01", "2026-11-20"),
    ("depuis lundi", "2026-11-16", "2026-11-20"),
    ("先週から何が変わった", "2026-11-09", "2026-11-20"),
    ("从上周开始", "2026-11-09", "2026-11-20"),
    ("지난주부터 바뀐 것", "2026-11-09", "2026-11-20"),
    ("from 2026-11-16 to 2026-11-19", "2026-11-16", "2026-11-19"),
    ("from Monday to Wednesday", "2026-11-16", "2026-11-18"),
    ("between the 1st and the 5th", "2026-11-01", "2026-11-05"),
    ("from 11/17 to 11/19", "2026-11-17", "2026-11-19"),
    ("de lunes a miércoles", "2026-11-16", "2026-11-18"),
    ("von Montag bis Mittwoch", "2026-11-16", "2026-11-18"),
    ("月曜日から水曜日まで", "2026-11-16", "2026-11-18"),
    ("월요일부터 수요일까지", "2026-11-16", "2026-11-18"),
    ("the week of November 9", "2026-11-09", "2026-11-15"),
    # a counted day written as a word
    ("the fourth of July parade", "2026-07-04", "2026-07-04"),
    ("on the first of May", "2026-05-01", "2026-05-01"),
    # what still reads as a day: the end of a clause or a small word after it
    ("the 17th, we deployed", "2026-11-17", "2026-11-17"),
    ("what did we do at Friday's meeting", "2026-11-13", "2026-11-13"),
    # "last" / "past" before a weekday is its latest occurrence, and "since" opens from it
    ("what changed since last Monday", "2026-11-16", "2026-11-20"),
    ("this past Friday we shipped", "2026-11-13", "2026-11-13"),
    ("was ist seit letztem Freitag passiert", "2026-11-13", "2026-11-20"),
    # a weekend without "last": the one just gone (on a weekday)
    ("what did I cook over the weekend", "2026-11-14", "2026-11-15"),
    ("was haben wir übers Wochenende gemacht", "2026-11-14", "2026-11-15"),
    ("several weeks ago", "2026-10-26", "2026-11-01"),
    # a month of a year named from now
    ("what did I buy in December last year", "2025-12-01", "2025-12-31"),
    ("the trip in March of this year", "2026-03-01", "2026-03-31"),
    ("last year in May we moved", "2025-05-01", "2025-05-31"),
    ("marzo del año pasado", "2025-03-01", "2025-03-31"),
    ("im März letzten Jahres", "2025-03-01", "2025-03-31"),
    ("en mars de l'année dernière", "2025-03-01", "2025-03-31"),
    ("em março do ano passado", "2025-03-01", "2025-03-31"),
    ("今年三月我们去了哪里", "2026-03-01", "2026-03-31"),
    ("去年の3月", "2025-03-01", "2025-03-31"),
    ("去年3月15日的会议", "2025-03-15", "2025-03-15"),
    ("올해 3월에", "2026-03-01", "2026-03-31"),
    ("작년 12월", "2025-12-01", "2025-12-31"),
    # seasons (northern, meteorological; a year's winter starts in its December)
    ("where did we go last summer", "2026-06-01", "2026-08-31"),
    ("photos from last summer's trip", "2026-06-01", "2026-08-31"),
    ("last spring", "2026-03-01", "2026-05-31"),
    ("last winter", "2025-12-01", "2026-02-28"),
    ("this winter", "2026-12-01", "2027-02-28"),
    ("this fall", "2026-09-01", "2026-11-30"),  # under way
    ("last fall", "2025-09-01", "2025-11-30"),
    ("next spring", "2027-03-01", "2027-05-31"),
    ("the summer of 2025", "2025-06-01", "2025-08-31"),
    ("fall 2024", "2024-09-01", "2024-11-30"),
    ("el verano pasado", "2026-06-01", "2026-08-31"),
    ("l'été dernier", "2026-06-01", "2026-08-31"),
    ("去年夏天", "2025-06-01", "2025-08-31"),
    ("2025年の夏", "2025-06-01", "2025-08-31"),
    ("작년 여름", "2025-06-01", "2025-08-31"),
    ("지난 겨울", "2025-12-01", "2026-02-28"),
    # a third of a year
    ("early 2025", "2025-01-01", "2025-04-30"),
    ("what did I say in mid-2025", "2025-05-01", "2025-08-31"),
    ("late 2024", "2024-09-01", "2024-12-31"),
    ("at the end of last year", "2025-09-01", "2025-12-31"),
    ("at the beginning of this year", "2026-01-01", "2026-04-30"),
    # read against a dated day beside it, not against the day asked
    # (each window takes in the dated day: what happened then is often written on it)
    ("what did we ship the week before 2026-11-02", "2026-10-26", "2026-11-02"),
    ("the puppy she got two weeks before August 11, 2023", "2023-07-24", "2023-08-11"),
    ("shown on the Sunday before October 25, 2022", "2022-10-23", "2022-10-25"),
    ("what to do on the Saturday after October 28, 2023", "2023-10-28", "2023-11-04"),
    ("what did Joanna finish last Friday on 23 January, 2022", "2022-01-21", "2022-01-23"),
    ("the issue last week, as mentioned on November 6, 2023", "2023-10-30", "2023-11-06"),
    ("over the weekend before 4th October, 2023", "2023-09-30", "2023-10-04"),
    ("what happened the day after 2023-05-04", "2023-05-04", "2023-05-05"),
    ("the month before 2023-05-04", "2023-04-01", "2023-05-04"),
    ("3 days after 2023-05-04", "2023-05-04", "2023-05-07"),
    ("2023年8月11日の2週間前に何をした", "2023-07-24", "2023-08-11"),
    ("2023년 8월 11일 2주 전", "2023-07-24", "2023-08-11"),
    ("2023年5月4日的前一天", "2023-05-03", "2023-05-04"),
    ("2023년 5월 4일 다음날", "2023-05-04", "2023-05-05"),
]

# Words that look like time but are not, in the same languages.
NOT_TIME: list[str] = [
    "May I ask about the second opinion?",
    "march forward with the plan",
    "a second look at the cache",
    "I may go to the store",
    "what is the last step of the build",
    "the first step of the deploy",
    "how many days ago did I order the parts",
    "the week view of the calendar app",
    "a weekly sync",
    "the past weekends were busy",  # no single weekend
    "a past-weekend special offer code",
    "a segunda opinião do médico",
    "hier bin ich",
    "mar azul",
    "Jan said the API is slow",
    "the year field of the form",
    "this morning-glory plant",
    "release 2.0.17 notes",
    "pages 12-17",
    "what does 3 mean here",
    "周期性任务",
    "월급",
    "when did Jolene get back from Rio de Janeiro",  # a bare "de" + month is a place here
    "o Rio de Janeiro é lindo",
    "this Spring Boot app fails to start",
    "a spring roll recipe",
    "he was hurt in the fall",  # "fall" needs last / this / next or a year to be the season
    "warm in the winter and cool in the summer",  # said of every year
    "during the summer months",
    "meal prep on the weekend and reheat it",  # said of every weekend
    "내려올 겨울에",  # 올 겨울 inside a verb
    "the early 1990s",
    "what happened the week before the launch",  # an order, no window (TestOrder)
    # "back" is no "ago": "a few years back" lifted the wrong year on LoCoMo (conv-49#85)
    "what did Evan start doing a few years back",
    "the first week of onboarding",
    "1日中雨でした",  # all day
    "1日あたり何食を取りましたか",  # per day
    "3日分の食料",  # three days' worth
    "what are the next steps",
    "the next release of the app",
    "por la mañana",  # in the morning
    "Guten Morgen",
    "a coming-of-age story",
    # an ordinal before a noun is a rank, not a day of the month
    "who took the 1st place in the race",
    "the 2nd largest city in Spain",
    "what happened the 3rd time I ran the tests",
    "our 1st-place finish",
    "the 2nd steps of the recipe",
    "the 3rd party library",
    "pass the 2nd argument",
    "the 12th man",
    # weekdays and holidays that name no day
    "black Friday sales",
    "the Good Friday agreement",
    "we meet every other Friday",
    "every Monday standup",
    "the second Monday of the month",
    "the Monday.com integration",
    "the mardi gras party",
    "an Easter egg in the UI",
    "the Christmas tree library",
    # "last year" / "last month" of something: a part of it, not a time
    "the last year of the project",
    "the last month of the quarter",
    "what was I up to in the last night of the trip",
    "a 3/16 inch drill bit",
    "add 1/2 cup of sugar",
    "it failed on 3/4 of the runs",  # 3/4: March 4 or 3 April, so not read
    "I rated it 4/5",
    "version 1.10/11.2 notes",
    "Noel said the build is green",  # a name, not Noël
    "prenatal and natal care",
    # time words whose characters belong to the words around them
    "明日香さんに連絡した",  # Asuka, a name
    "如今日益增长的需求",  # 如今 + 日益
    "说明日志的格式",  # 说明 + 日志
    "目前天气预报接口",  # 目前 + 天气
    "上周期的指标",  # 上 + 周期 (the previous cycle)
    "版本周期",  # 版本 + 周期
    "线上周报",  # 线上 + 周报
    "除去年费",  # 除去 + 年费
    "将来年金の話",  # 将来 + 年金
    "오늘날의 기술",  # nowadays
]

# Questions that ask for the earliest or the latest occurrence.
ORDERS: list[tuple[str, str]] = [
    ("when did I first time use Redis streams", "earliest"),
    ("what was the first time we met", "earliest"),
    ("originally, what did we pick", "earliest"),
    ("what is my most recent order", "latest"),
    ("what did I say most recently about the car", "latest"),
    ("what did the user say before the deploy", "earliest"),
    ("what changed after the migration", "latest"),
    ("第一次用 Redis 是什么时候", "earliest"),
    ("最近的订单", "latest"),
    ("初めて会ったのはいつ", "earliest"),
    ("최근 주문", "latest"),
    ("la primera vez que hablamos", "earliest"),
    ("a última vez que falamos", "latest"),
    ("zuletzt besprochen", "latest"),
    ("la dernière fois", "latest"),
]


def _day(text: str) -> float:
    return float(calendar.timegm(dt.date.fromisoformat(text).timetuple()))


class TestWindows:
    def test_the_table_is_large_and_has_no_duplicates(self) -> None:
        questions = [q for q, _, _ in WINDOWS]
        assert len(questions) + len(NOT_TIME) >= 100
        assert len(set(questions)) == len(questions)

    @pytest.mark.parametrize(("question", "first", "last"), WINDOWS)
    def test_the_window_each_expression_names(self, question: str, first: str, last: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is not None and intent.phrase
        assert (intent.since, intent.until) == (_day(first), _day(last) + 86_399)


class TestNotTime:
    @pytest.mark.parametrize("question", NOT_TIME)
    def test_no_window_is_read(self, question: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is None or intent.since is None


class TestSpans:
    def test_until_opens_the_window_from_the_calendar_start(self) -> None:
        intent = read_time_words("what was decided until yesterday", AS_OF)

        assert intent is not None and intent.until == _day("2026-11-19") + 86_399
        assert intent.since is not None and intent.since < _day("1900-01-01")
        assert intent.describe() == '"until yesterday" → up to 2026-11-19'

    @pytest.mark.parametrize("question", ["since Monday", "until yesterday", "先週から"])
    def test_an_open_window_reaches_a_day_beyond_it(self, question: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is not None and intent.reach == 86_400

    def test_a_closed_window_keeps_the_default_reach(self) -> None:
        intent = read_time_words("from Monday to Wednesday", AS_OF)

        assert intent is not None and intent.reach is None

    def test_up_to_is_not_until(self) -> None:
        intent = read_time_words("what was I up to yesterday", AS_OF)

        assert intent is not None and intent.phrase == "yesterday"
        assert (intent.since, intent.until) == (_day("2026-11-19"), _day("2026-11-19") + 86_399)

    def test_an_end_before_the_start_is_read_after_it(self) -> None:
        # Asked Friday the 20th: Wednesday is the 18th, and the Monday after it the 23rd.
        intent = read_time_words("from Wednesday to Monday", AS_OF)

        assert intent is not None
        assert (intent.since, intent.until) == (_day("2026-11-18"), _day("2026-11-23") + 86_399)

    def test_a_range_whose_end_never_follows_its_start_is_not_joined(self) -> None:
        intent = read_time_words("from 2026-11-18 to 2026-11-02", AS_OF)

        assert intent is not None and intent.phrase == "2026-11-18"

    def test_a_bare_and_joins_no_range(self) -> None:
        intent = read_time_words("yesterday and the 17th", AS_OF)

        assert intent is not None and intent.phrase == "yesterday"

    def test_last_christmas_asked_on_christmas_day_is_last_years(self) -> None:
        christmas = _day("2026-12-25") + 12 * 3600
        intent = read_time_words("what did we cook last Christmas", christmas)

        assert intent is not None and intent.since == _day("2025-12-25")
        bare = read_time_words("what are we cooking at Christmas", christmas)
        assert bare is not None and bare.since == _day("2026-12-25")


class TestOrder:
    @pytest.mark.parametrize(("question", "order"), ORDERS)
    def test_ordering_words(self, question: str, order: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is not None and intent.order == order

    @pytest.mark.parametrize(
        "question",
        [
            "the day before yesterday",
            "the week before last",
            "the night before last",
            "the Friday before last",
        ],
    )
    def test_a_word_inside_a_time_phrase_does_not_order(self, question: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is not None and intent.order is None and intent.since is not None

    def test_a_window_and_an_order_together(self) -> None:
        intent = read_time_words("the first time last week", AS_OF)

        assert intent is not None
        assert (intent.order, intent.phrase) == ("earliest", "last week")


class TestReading:
    def test_no_time_word_reads_nothing(self) -> None:
        assert read_time_words("which database does the billing service use", AS_OF) is None

    def test_the_first_expression_wins(self) -> None:
        intent = read_time_words("yesterday or last week", AS_OF)

        assert intent is not None and intent.phrase == "yesterday"

    def test_only_the_head_of_a_long_query_is_read(self) -> None:
        assert read_time_words("x " * MAX_CHARS + "yesterday", AS_OF) is None

    def test_as_of_is_the_reference(self) -> None:
        intent = read_time_words("yesterday", float(calendar.timegm((2025, 3, 1, 0, 0, 0))))

        assert intent is not None and intent.describe() == '"yesterday" → 2025-02-28'


def _asked(day: str) -> float:
    return _day(day) + 12 * 3600


class TestAskedOnOtherDays:
    """Windows that depend on the day asked: short months, leap days, "this" / "next" month."""

    @pytest.mark.parametrize(
        ("asked", "question", "first", "last"),
        [
            # a day of the month this month has not: the latest month that has it
            ("2026-12-05", "the 31st", "2026-10-31", "2026-10-31"),
            ("2026-03-05", "on the 30th", "2026-01-30", "2026-01-30"),
            ("2026-03-05", "the 29th", "2026-01-29", "2026-01-29"),
            ("2024-03-05", "the 29th", "2024-02-29", "2024-02-29"),
            ("2026-12-31", "the 31st", "2026-12-31", "2026-12-31"),
            # "this <month>" is this year's, ahead or not; "next <month>" the first after today
            ("2026-03-05", "this December", "2026-12-01", "2026-12-31"),
            ("2026-03-05", "this May", "2026-05-01", "2026-05-31"),
            ("2026-12-26", "next December", "2027-12-01", "2027-12-31"),
            ("2026-03-05", "next March", "2027-03-01", "2027-03-31"),
            ("2026-03-05", "letzten März", "2025-03-01", "2025-03-31"),
            ("2026-03-05", "next Feb 29", "2028-02-29", "2028-02-29"),
            ("2028-02-29", "last Feb 29", "2024-02-29", "2024-02-29"),
            # the first days of a year
            ("2027-01-02", "last week", "2026-12-21", "2026-12-27"),
            ("2027-01-02", "in December", "2026-12-01", "2026-12-31"),
            ("2027-01-02", "last month", "2026-12-01", "2026-12-31"),
        ],
    )
    def test_the_window(self, asked: str, question: str, first: str, last: str) -> None:
        intent = read_time_words(question, _asked(asked))

        assert intent is not None
        assert (intent.since, intent.until) == (_day(first), _day(last) + 86_399)


class TestAhead:
    """Words for times after `as_of`: what was planned, read against the day it was said."""

    MONDAY = float(calendar.timegm((2026, 11, 16, 12, 0, 0)))

    def _window(self, text: str, as_of: float) -> tuple[float, float]:
        intent = read_time_words(text, as_of)
        assert intent is not None and intent.since is not None and intent.until is not None
        return intent.since, intent.until

    def test_this_weekend_said_on_a_monday_is_the_one_just_gone(self) -> None:
        since, until = self._window("how was this weekend", self.MONDAY)
        assert (since, until) == (_day("2026-11-14"), _day("2026-11-15") + 86_399)
        since, _ = self._window("next weekend", self.MONDAY)
        assert since == _day("2026-11-21")

    def test_next_weekday_is_its_first_occurrence_after_today(self) -> None:
        since, _ = self._window("next Friday", self.MONDAY)
        assert since == _day("2026-11-20")
        since, _ = self._window("next Monday", self.MONDAY)
        assert since == _day("2026-11-23")

    def test_the_weekend_said_on_a_weekend_is_the_one_under_way(self) -> None:
        sunday = float(calendar.timegm((2026, 11, 22, 12, 0, 0)))
        since, until = self._window("what did I cook over the weekend", sunday)
        assert (since, until) == (_day("2026-11-21"), _day("2026-11-22") + 86_399)

    def test_a_season_said_within_it(self) -> None:
        july = float(calendar.timegm((2026, 7, 15, 12, 0, 0)))
        since, _ = self._window("last summer", july)  # not the one under way
        assert since == _day("2025-06-01")
        since, _ = self._window("this summer", july)
        assert since == _day("2026-06-01")
        january = float(calendar.timegm((2027, 1, 10, 12, 0, 0)))
        since, until = self._window("this winter", january)  # begun last December
        assert (since, until) == (_day("2026-12-01"), _day("2027-02-28") + 86_399)

    def test_a_bare_weekday_is_still_the_last_one(self) -> None:
        since, _ = self._window("on Friday", self.MONDAY)
        assert since == _day("2026-11-13")


MIN_EPOCH = float(calendar.timegm((1, 1, 1, 0, 0, 0)))
MAX_EPOCH = float(calendar.timegm((9999, 12, 31, 23, 59, 59))) + 1.0


class TestTheCalendarsEnds:
    """Dates outside years 1 to 9999 cannot be computed; a question naming one still searches."""

    @pytest.mark.parametrize(
        "question",
        [
            "what did we plan between March 0000 and May",
            "0000年11月から0000年2月",
            "the first weekend of August 0000",
            "the first week of August 0000",
        ],
    )
    def test_a_year_outside_the_calendar_names_no_window(self, question: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is None or intent.since is None

    QUESTIONS: ClassVar[list[str]] = [
        *(q for q, _, _ in WINDOWS),
        *NOT_TIME,
        "999 weeks ago",
        "999 months ago",
    ]

    @pytest.mark.parametrize(
        "as_of",
        [
            MIN_EPOCH,
            float(calendar.timegm((9999, 12, 31, 12, 0, 0))),
        ],
    )
    def test_every_expression_reads_without_failing_at_the_ends(self, as_of: float) -> None:
        # What is checked is that no read raises (OverflowError / ValueError did, before), and
        # that whatever window is read lies inside the calendar.
        for question in self.QUESTIONS:
            intent = read_time_words(question, as_of)
            if intent is not None and intent.since is not None and intent.until is not None:
                assert MIN_EPOCH <= intent.since <= intent.until <= MAX_EPOCH, question

    def test_an_as_of_that_is_no_day_reads_no_time_words(self) -> None:
        read = [read_time_words(q, 1e20) for q in self.QUESTIONS]

        assert read == [None] * len(self.QUESTIONS)

    def test_a_window_inside_the_calendar_is_still_read_at_its_end(self) -> None:
        intent = read_time_words("last year", float(calendar.timegm((9999, 12, 31, 12, 0, 0))))

        assert intent is not None and intent.describe() == '"last year" → 9998-01-01..9998-12-31'


class TestRangeEnds:
    """A range's end without a year is read from the range's start, not from the day asked."""

    @pytest.mark.parametrize(
        ("question", "first", "last"),
        [
            ("1961年6月24日-27日の災害", "1961-06-24", "1961-06-27"),
            ("1942年7月22日から9月10日にかけて", "1942-07-22", "1942-09-10"),
            ("from March 3 2020 to April 5", "2020-03-03", "2020-04-05"),
            ("2006年8月3日から2020年3月まで", "2006-08-03", "2020-03-31"),
        ],
    )
    def test_the_end_follows_the_start(self, question: str, first: str, last: str) -> None:
        intent = read_time_words(question, AS_OF)

        assert intent is not None
        assert (intent.since, intent.until) == (_day(first), _day(last) + 86_399)


class TestReviewedCases:
    """Cases a review of the span reader found (asked on Wednesday 2026-11-18 unless said)."""

    WEDNESDAY = float(calendar.timegm((2026, 11, 18, 12, 0, 0)))

    def _window(self, question: str, as_of: float | None = None) -> tuple[str, str] | None:
        intent = read_time_words(question, self.WEDNESDAY if as_of is None else as_of)
        if intent is None or intent.since is None or intent.until is None:
            return None
        first = dt.datetime.fromtimestamp(intent.since, tz=dt.UTC).date().isoformat()
        last = dt.datetime.fromtimestamp(intent.until, tz=dt.UTC).date().isoformat()
        return first, last

    def test_the_week_of_the_calendar_s_last_day_reads_without_failing(self) -> None:
        assert self._window("notes from the week of 9999-12-31") == ("9999-12-31", "9999-12-31")

    @pytest.mark.parametrize(
        "question",
        [
            "on the 17th during the standup",
            "on the 17th not the 18th",
            "the meeting on the 17th went well",
            "on the 17th via slack",
        ],
    )
    def test_on_the_nth_is_a_day_whatever_follows(self, question: str) -> None:
        assert self._window(question) == ("2026-11-17", "2026-11-17")

    @pytest.mark.parametrize(
        ("question", "first", "last"),
        [
            ("from the 1st through the 5th", "2026-11-01", "2026-11-05"),
            ("the 16th - the 19th", "2026-11-16", "2026-11-19"),
            # an end later this week or month: read after the start, not as its last occurrence
            ("from monday to wednesday", "2026-11-16", "2026-11-18"),
            ("between monday and friday", "2026-11-16", "2026-11-20"),
            ("from the 16th to the 19th", "2026-11-16", "2026-11-19"),
            ("from 11/17 to 11/19", "2026-11-17", "2026-11-19"),
            ("月曜日から水曜日まで", "2026-11-16", "2026-11-18"),
            # a date after "since" is the date, not its year
            ("since 2025-06-01", "2025-06-01", "2026-11-18"),
        ],
    )
    def test_ranges_and_since(self, question: str, first: str, last: str) -> None:
        assert self._window(question) == (first, last)

    def test_a_range_asked_inside_it_on_its_third_day(self) -> None:
        third = float(calendar.timegm((2026, 11, 3, 12, 0, 0)))

        assert self._window("between the 1st and the 5th", third) == ("2026-11-01", "2026-11-05")
