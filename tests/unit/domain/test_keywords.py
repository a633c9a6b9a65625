"""Unit tests: FTS5 document expansion, MATCH construction, Korean stems and stop words."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlane.domain.keywords import (
    ARABIC_STOP_WORDS,
    CHINESE_STOP_WORDS,
    ENGLISH_STOP_WORDS,
    FTS_TOKENIZER,
    JAPANESE_STOP_WORDS,
    KOREAN_STOP_WORDS,
    MAX_FTS_TERMS,
    PORTUGUESE_STOP_WORDS,
    SPANISH_STOP_WORDS,
    _normalize,
    build_fts_query,
    fts_document,
    fts_query_terms,
    korean_stem,
    quote_fts_term,
    stop_words_only,
)

DOCS: dict[int, str] = {
    1: "我们需要备份数据库里的所有文件，然后检查日志。",
    2: "昨日は東京で新しいプロジェクトの会議がありました。",
    3: "저는 서울에서 일하고 있습니다. 물을 많이 마셔요.",
    4: "The deployment pipeline failed on Tuesday because of a missing API_KEY.",
    5: "Reunión sobre el presupuesto: revisar la factura de café con el equipo.",
    6: "猫",
}

NASTY_QUERIES = [
    '"',
    '""',
    'a "quoted" phrase',
    "a*b",
    "foo*",
    "NEAR(x y)",
    "NEAR/3",
    "-foo",
    "+bar",
    "col:val",
    "terms:deployment",
    "^x",
    "AND OR NOT",
    "AND",
    "(",
    ")",
    "{terms}: x",
    "[]",
    "x AND (y OR",
    "'; DROP TABLE chunks_fts; --",
    "\x00",
    "",
    "   ",
    "数据 AND 서울 OR 東京*",
]


def _open_index() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, tokenize = '{FTS_TOKENIZER}')")
    conn.executemany(
        "INSERT INTO chunks_fts(rowid, terms) VALUES (?, ?)",
        [(rowid, fts_document(text)) for rowid, text in DOCS.items()],
    )
    return conn


def _search(conn: sqlite3.Connection, query: str) -> list[int]:
    expression = build_fts_query(query)
    if expression is None:
        return []
    rows = conn.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts)",
        (expression,),
    ).fetchall()
    return [int(row[0]) for row in rows]


@pytest.fixture
def index() -> Iterator[sqlite3.Connection]:
    conn = _open_index()
    yield conn
    conn.close()


class TestFtsDocument:
    def test_a_cjk_run_becomes_overlapping_bigrams_then_its_characters(self) -> None:
        assert fts_document("数据库").split() == ["数据", "据库", "数", "据", "库"]

    def test_a_single_cjk_character_stays_itself(self) -> None:
        assert fts_document("猫").split() == ["猫"]

    def test_latin_text_is_left_as_is(self) -> None:
        text = "The deployment failed: see API_KEY (v2)."
        assert fts_document(text) == text

    def test_ascii_glued_to_han_is_separated_from_it(self) -> None:
        assert fts_document("api调用").split() == ["api", "调用", "调", "用"]

    def test_a_hangul_word_gives_itself_its_bigrams_and_its_stem(self) -> None:
        assert fts_document("서울에서").split() == ["서울에서", "서울", "울에", "에서"]
        assert fts_document("물을").split() == ["물을", "물"]

    def test_kana_and_kanji_form_one_run(self) -> None:
        # Then the kanji word as its marked term (test_japanese_words.py).
        assert fts_document("食べる").split() == ["食べ", "べる", "食", "べ", "る", "\ue000食"]

    def test_full_width_latin_is_folded_by_nfkc(self) -> None:
        assert fts_document("ＡＰＩ") == "API"

    def test_arabic_vowel_marks_are_dropped_so_words_stay_whole(self) -> None:
        assert fts_document("مَرْحَبًا") == "مرحبا"

    @settings(max_examples=300)
    @given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
    def test_marks_are_dropped_exactly_as_a_per_character_check_would(self, text: str) -> None:
        """The mark lookup runs once per distinct character; the result must not change."""
        folded = unicodedata.normalize("NFKC", text)
        expected = "".join(ch for ch in folded if unicodedata.category(ch) != "Mn")

        assert _normalize(text) == (text if text.isascii() else expected)


class TestBuildFtsQuery:
    def test_terms_are_quoted_and_or_ed(self) -> None:
        assert build_fts_query("deployment pipeline") == '"deployment" OR "pipeline"'

    def test_words_are_lowercased_and_stop_words_dropped(self) -> None:
        assert build_fts_query("What is the Deployment status") == '"deployment" OR "status"'

    def test_a_query_of_only_stop_words_keeps_them(self) -> None:
        assert build_fts_query("the of") == '"the" OR "of"'

    def test_nothing_searchable_gives_none(self) -> None:
        assert build_fts_query("  ?!… ") is None
        assert build_fts_query("") is None

    def test_fts5_operators_are_plain_quoted_words(self) -> None:
        assert build_fts_query("cats NEAR birds") == '"cats" OR "near" OR "birds"'
        assert build_fts_query("AND OR NOT") == '"and" OR "or" OR "not"'

    def test_cjk_runs_become_the_bigrams_the_index_holds(self) -> None:
        assert fts_query_terms("数据库") == ["数据", "据库"]

    def test_cjk_stop_word_bigrams_are_dropped(self) -> None:
        assert "我们" not in fts_query_terms("我们的数据")
        assert "数据" in fts_query_terms("我们的数据")

    def test_a_hangul_word_searches_for_itself_and_its_stem(self) -> None:
        assert fts_query_terms("서울에서") == ["서울에서", "서울"]

    def test_mixed_ascii_and_han_keeps_both(self) -> None:
        assert fts_query_terms("api调用") == ["api", "调用"]

    def test_duplicate_terms_appear_once(self) -> None:
        assert fts_query_terms("deploy Deploy DEPLOY") == ["deploy"]

    def test_the_number_of_terms_is_bounded(self) -> None:
        query = " ".join(f"word{i}" for i in range(MAX_FTS_TERMS * 2))
        assert len(fts_query_terms(query)) == MAX_FTS_TERMS

    def test_quoting_doubles_embedded_quotes(self) -> None:
        assert quote_fts_term('say "hi"') == '"say ""hi"""'


class TestFtsRoundTrip:
    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("数据", 1),  # two-character word inside a longer Chinese run
            ("日志", 1),
            ("会議", 2),  # Japanese kanji word
            ("プロジェクト", 2),  # Japanese katakana word
            ("東京の会議", 2),
            ("서울", 3),  # Korean noun indexed with a particle (서울에서)
            ("물", 3),  # one-syllable noun with a particle (물을)
            ("pipeline", 4),
            ("Deployment", 4),
            ("api_key", 4),
            ("cafe", 5),  # diacritics folded on both sides
            ("presupuesto", 5),
            ("猫", 6),  # one-character Chinese document
        ],
    )
    def test_words_are_found_in_their_document(
        self, index: sqlite3.Connection, query: str, expected: int
    ) -> None:
        assert expected in _search(index, query)

    def test_a_two_character_word_only_matches_documents_containing_it(
        self, index: sqlite3.Connection
    ) -> None:
        assert _search(index, "数据") == [1]
        assert _search(index, "서울") == [3]

    def test_one_matching_term_is_enough(self, index: sqlite3.Connection) -> None:
        assert _search(index, "pipeline zebra") == [4]

    def test_a_chunk_matching_more_terms_ranks_first(self, index: sqlite3.Connection) -> None:
        index.execute(
            "INSERT INTO chunks_fts(rowid, terms) VALUES (7, ?)",
            (fts_document("The pipeline was green all week."),),
        )
        assert _search(index, "deployment pipeline failed")[0] == 4

    @pytest.mark.parametrize("query", NASTY_QUERIES)
    def test_hostile_query_strings_never_raise(self, index: sqlite3.Connection, query: str) -> None:
        _search(index, query)

    @settings(max_examples=300, deadline=None)
    @given(st.text())
    def test_any_text_query_builds_a_valid_match_expression(self, query: str) -> None:
        conn = _open_index()
        try:
            _search(conn, query)
        finally:
            conn.close()


class TestKoreanStem:
    def test_the_longest_matching_particle_is_stripped(self) -> None:
        assert korean_stem("서울에서") == "서울"

    def test_a_word_is_never_stripped_to_nothing(self) -> None:
        assert korean_stem("이") == "이"
        assert korean_stem("에서") == "에서"


ALL_LISTS = {
    "en": ENGLISH_STOP_WORDS,
    "es": SPANISH_STOP_WORDS,
    "pt": PORTUGUESE_STOP_WORDS,
    "ar": ARABIC_STOP_WORDS,
    "zh": CHINESE_STOP_WORDS,
    "ko": KOREAN_STOP_WORDS,
    "ja": JAPANESE_STOP_WORDS,
}


class TestStopWordLists:
    @pytest.mark.parametrize("language", sorted(ALL_LISTS))
    def test_a_list_has_no_duplicates(self, language: str) -> None:
        words = ALL_LISTS[language]
        assert len(set(words)) == len(words)

    @pytest.mark.parametrize("language", sorted(ALL_LISTS))
    def test_every_entry_is_one_normalised_lowercase_token(self, language: str) -> None:
        for word in ALL_LISTS[language]:
            assert word, language
            assert not any(ch.isspace() for ch in word), word
            assert word == unicodedata.normalize("NFKC", word).lower(), word

    @pytest.mark.parametrize("word", ["como", "se", "can", "son", "hay", "era", "sin"])
    def test_latin_words_meaningful_in_another_language_are_not_stop_words(self, word: str) -> None:
        assert word in fts_query_terms(f"{word} zebra")


class TestEveryStopWordIsDropped:
    """A stop word of any length, alone beside a content word, leaves only the content word.

    Queries are searched as CJK bigrams, so a stop word of 3+ characters used to leak pieces
    (为什么 → 为什; について → につ, つい, いて).
    """

    @pytest.mark.parametrize(
        "word", [w for words in ALL_LISTS.values() for w in words], ids=lambda w: w
    )
    def test_alone_beside_a_content_word(self, word: str) -> None:
        assert fts_query_terms(f"{word} zebra") == ["zebra"]

    def test_a_bigram_between_two_long_stop_words_is_dropped(self) -> None:
        assert fts_query_terms("APIについて教えて") == ["api"]

    def test_a_bigram_reaching_into_a_content_word_stays(self) -> None:
        assert fts_query_terms("这个那个方案") == ["个方", "方案"]

    def test_one_character_stop_words_inside_a_run_do_not_drop_bigrams(self) -> None:
        assert fts_query_terms("我的猫") == ["我的", "的猫"]


class TestStopWordsOnly:
    def test_a_query_of_fillers_is_named_word_by_word(self) -> None:
        assert stop_words_only("What is it? what") == ["what", "is", "it"]

    def test_any_content_term_makes_it_a_real_query(self) -> None:
        assert stop_words_only("what is pgbouncer") is None
        assert stop_words_only("数据库是什么") is None

    def test_an_empty_query_is_not_one(self) -> None:
        assert stop_words_only("?!") is None
