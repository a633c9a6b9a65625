"""Keyword terms against the reference's own keyword-extraction test vectors (§17).

Each case: a query, terms it must keep and terms it must drop. The reference drops a few more
vague words than memlane does on purpose (domain/keywords.py says which and why); these vectors
are the ones both agree on, plus the stop words the issue asked for.
"""

from __future__ import annotations

import pytest

from memlane.domain.keywords import STOP_WORDS, fts_query_terms

CASES = [
    ("that thing we discussed about the API", {"discussed", "api"}, {"that", "thing", "we", "the"}),
    ("what was the solution for the CFR bug", {"solution", "cfr", "bug"}, {"what", "the", "for"}),
    ("어제 논의한 배포 전략", {"논의한", "배포", "전략"}, {"어제"}),
    ("서버에서 발생한 에러를 확인", {"서버", "에러", "확인"}, set()),
    ("API 배포에 대한 논의", {"api", "배포", "논의"}, set()),
    ("昨日話したデプロイ戦略", {"戦略"}, {"昨日"}),
    ("ayer hablamos sobre la estrategia de despliegue",
     {"hablamos", "estrategia", "despliegue"}, {"ayer", "sobre", "la", "de"}),
    ("ontem falamos sobre a estratégia de implantação",
     {"falamos", "estratégia", "implantação"}, {"ontem", "sobre", "de"}),
    ("بالأمس ناقشنا استراتيجية النشر", {"ناقشنا", "استراتيجية", "النشر"}, {"بالأمس"}),
    ("كيف متى أين ماذا وسيط", {"وسيط"}, {"كيف", "متى", "أين", "ماذا"}),
    ("之前讨论的那个方案", {"讨论", "方案"}, {"之前", "那个"}),
    ("昨天讨论的 API design", {"讨论", "api", "design"}, {"昨天"}),
]  # fmt: skip


@pytest.mark.parametrize(("query", "kept", "dropped"), CASES, ids=[c[0] for c in CASES])
def test_the_reference_vectors(query: str, kept: set[str], dropped: set[str]) -> None:
    terms = set(fts_query_terms(query))

    assert kept <= terms
    assert not (dropped & terms)


@pytest.mark.parametrize("word", ["thing", "어제", "昨日", "ayer", "ontem", "porquê", "بالأمس"])
def test_the_stop_words_the_reference_tests_require(word: str) -> None:
    assert word in STOP_WORDS


def test_an_email_address_keeps_its_domain() -> None:
    assert fts_query_terms("mail user@example.com") == ["mail", "user", "example", "com"]


def test_com_is_not_a_stop_word_in_any_language() -> None:
    assert "com" not in STOP_WORDS


# The reference's own illustrations of its keyword extraction: what each query must still search.
@pytest.mark.parametrize(
    ("query", "kept"),
    [("APIのバグ修正", {"api", "バグ", "修正"}), ("API를 배포", {"api", "배포"})],
)
def test_the_reference_illustrations_keep_their_content_words(query: str, kept: set[str]) -> None:
    assert kept <= set(fts_query_terms(query))


@pytest.mark.parametrize("word", ["보다", "فضلك"])
def test_the_entries_the_reference_behaviour_shows_are_stop_words(word: str) -> None:
    assert fts_query_terms(f"{word} zebra") == ["zebra"]


def test_an_arabic_please_is_dropped_as_the_english_one_is() -> None:
    assert fts_query_terms("من فضلك ساعدني") == ["ساعدني"]
    assert fts_query_terms("please help") == ["help"]
