"""Questions that ask when, texts that say when (time_questions.py), and the when boost."""

from __future__ import annotations

import calendar

import pytest

from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import Fused
from memlane.domain.time_boost import TimeStrengths, apply_when_boost, boost_by_time
from memlane.domain.time_questions import asks_when, says_when, when_weight
from tests.unit.domain.test_time_words import AS_OF as TIME_WORDS_AS_OF
from tests.unit.domain.test_time_words import WINDOWS

AS_OF = float(calendar.timegm((2026, 11, 20, 12, 0, 0)))

ASKING: list[tuple[str, str]] = [
    ("When did Caroline go to the LGBTQ support group?", "when did"),
    ("when was the deploy", "when was"),
    ("When's the dentist appointment?", "when's"),
    ("When exactly did we switch to Redis streams?", "when exactly did"),
    ("When Jon has lost his job as a banker?", "when"),
    ("so it happened when?", "when?"),
    ("Since when do we use uv?", "since when"),
    ("What date did I order the parts?", "what date"),
    ("In which year did she move?", "which year"),
    ("what month was the offsite", "what month"),
    ("How long ago was Caroline's 18th birthday?", "how long ago"),
    ("How long has Caroline had her current group of friends?", "how long has"),
    ("How many days passed between the two trips?", "how many days"),
    ("What was the date on which I attended the first BBQ event?", "what was the date"),
    ("¿Cuándo fue la última migración?", "cuándo"),
    ("¿Hace cuánto tiempo compré el portátil?", "hace cuánto"),
    ("Quando foi a reunião?", "quando"),
    ("Há quanto tempo uso o Redis?", "há quanto tempo"),
    ("Wann haben wir das entschieden?", "wann"),
    ("Wie lange dauerte die Migration?", "wie lange"),
    ("Quand avons-nous changé la politique ?", "quand"),
    ("Depuis combien de temps utilisons-nous Redis ?", "combien de temps"),
    ("متى بدأنا المشروع؟", "متى"),
    ("我们什么时候决定的?", "什么时候"),
    ("这个项目做了多久", "多久"),
    ("いつ決めましたか", "いつ"),
    ("何曜日に会いましたか", "何曜日"),
    ("언제 결정했어요?", "언제"),
    ("며칠에 만났어요?", "며칠"),
]

NOT_ASKING: list[str] = [
    "When I was in Paris, what did I eat?",  # a conjunction, the question is "what"
    "what did I say when we discussed the retry policy",
    "How long is the cable to the rack?",  # a length, not a time
    "what is the date format of the log",
    "how many tickets are open",
    "How many days a week do I attend fitness classes?",  # a frequency
    "the retry policy",
    "Quando eu estava em Lisboa, o que comi?",
    "いつも何を食べますか",  # いつも: always
    "언제나 같은 답",  # 언제나: always
    "whenever the build fails, what do we do",
]

SAYING: list[str] = [
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "I ran a charity race for mental health last Saturday",
    "I just joined a new LGBTQ activist group last Tues.",
    "Last Fri I finally took my kids to a pottery workshop.",
    "We're thinking about going camping next month.",
    "I had a quiet weekend after we went camping two weekends ago.",
    "A friend made it for my 18th birthday ten years ago.",
    "I've known these friends for 4 years, since I moved.",
    "I've been playing for about four months now",
    "We had a blast last year at the Pride fest.",
    "I recently adopted another pup from a shelter.",
    "Guess what? I just got accepted for a fashion internship!",
    "I finally opened my own car maintenance shop!",
    "the contract was signed in 2022",
    "the deploy is on 2026-11-17",
    "we meet tomorrow at ten",
    "上周我们决定了重试策略",
    "先週リトライの方針を決めた",
    "지난주에 결정했어요",
    "la semana pasada lo decidimos",
]

NOT_SAYING: list[str] = [
    "May I ask for a second opinion on the retry policy?",
    "We march forward with the plan.",
    "The view from the top was amazing! The 2 younger kids love nature.",
    "It costs 2022 dollars",
    "The build has 20451 lines",
    "Thanks, Melanie! I'm stoked to start this new chapter.",
    "I have a lot of things to do",
    "I just want to say thanks",
    "just in case the build fails",
]


@pytest.mark.parametrize(("question", "words"), ASKING)
def test_a_question_that_asks_when(question: str, words: str) -> None:
    assert asks_when(question) == words


@pytest.mark.parametrize("question", NOT_ASKING)
def test_a_question_that_does_not_ask_when(question: str) -> None:
    assert asks_when(question) is None


@pytest.mark.parametrize("text", SAYING)
def test_a_text_that_says_when(text: str) -> None:
    assert says_when(text, AS_OF)


@pytest.mark.parametrize("text", NOT_SAYING)
def test_a_text_that_does_not_say_when(text: str) -> None:
    assert not says_when(text, AS_OF)


def _fused(rid: int, text: str, score: float) -> Fused:
    return Fused(
        chunk_id=ChunkId(str(rid)),
        source="sessions",
        path=f"s{rid}.jsonl",
        start_line=1,
        end_line=1,
        text=text,
        vector_score=None,
        text_score=score,
        score=score,
    )


TERMS = ["caroline", "support", "group"]
POOL = [
    _fused(1, "Caroline: the support group was powerful", 0.9),
    _fused(2, "Caroline: I went to the support group yesterday", 0.8),
    _fused(3, "Melanie: support groups help", 0.7),
]


def test_the_when_boost_lifts_the_candidates_that_say_when() -> None:
    out = apply_when_boost(POOL, "when did", terms=TERMS, as_of=AS_OF, strength=0.5)

    assert [f.path for f in out] == ["s2.jsonl", "s1.jsonl", "s3.jsonl"]
    assert out[0].score == pytest.approx(0.8)  # full weight: the score is kept
    assert out[1].score == pytest.approx(0.9 / 1.5)
    assert out[1].time_boost == pytest.approx(1 / 1.5)


def test_no_when_question_or_no_strength_changes_nothing() -> None:
    assert apply_when_boost(POOL, None, terms=TERMS, as_of=AS_OF, strength=0.5) == POOL
    assert apply_when_boost(POOL, "when did", terms=TERMS, as_of=AS_OF, strength=0.0) == POOL


def test_the_time_word_must_be_on_a_line_about_the_question() -> None:
    chunk = "Caroline: the support group was powerful\nMelanie: I baked bread yesterday"
    assert when_weight(chunk, TERMS, AS_OF) == 0.0
    # The line that says when shares one of the three terms: a third of the weight.
    assert when_weight("Melanie: the group met yesterday", TERMS, AS_OF) == pytest.approx(1 / 3)
    # Stems: "painted" is about "paint".
    assert when_weight("I painted it last year", ["painting"], AS_OF) == 1.0
    # No terms (a question of stop words): any line that says when counts.
    assert when_weight("see you tomorrow", [], AS_OF) == 1.0


def test_the_time_step_says_what_it_read_for_explain() -> None:
    out, said = boost_by_time(
        POOL,
        "When did Caroline go to the support group?",
        as_of=AS_OF,
        strengths=TimeStrengths(when=0.5),
    )
    assert out[0].path == "s2.jsonl"
    assert said == 'asks when ("when did")'
    # Nothing read when every strength is 0 and nobody asks for the explanation.
    out, said = boost_by_time(POOL, "When did she go?", as_of=AS_OF, strengths=TimeStrengths())
    assert out == POOL and said is None


@pytest.mark.parametrize(("question", "first", "last"), WINDOWS)
def test_every_window_the_reader_finds_still_says_when(
    question: str, first: str, last: str
) -> None:
    # says_when skips the reader for texts without a digit or a table word: never one of these.
    assert says_when(question, TIME_WORDS_AS_OF)
