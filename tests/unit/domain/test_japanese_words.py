"""Japanese whole-word terms: kanji and katakana runs, marked, beside the bigrams (keyword leg)."""

from __future__ import annotations

import sqlite3

import pytest

from memlane.domain.japanese_words import WORD_MARK, is_japanese, mark, word_runs
from memlane.domain.keywords import (
    FTS_TOKENIZER,
    MAX_FTS_TERMS,
    build_fts_query,
    fts_document,
    fts_query_terms,
    japanese_word_terms,
)


def _marked(document: str) -> list[str]:
    return [t[1:] for t in document.split() if t.startswith(WORD_MARK)]


class TestWordRuns:
    @pytest.mark.parametrize(
        ("text", "runs"),
        [
            ("東京タワーは何年に完成しましたか", ["東京", "タワー", "何年", "完成"]),
            ("データベースの移行は週末に行う", ["データベース", "移行", "週末", "行"]),
            ("人々は々を使う", ["人々", "々", "使"]),  # the iteration mark belongs to the kanji
            ("ホワイト・ハウス", ["ホワイト", "ハウス"]),  # the middle dot splits, as in FTS5
            ("すべてひらがな", []),
        ],
    )
    def test_kanji_and_katakana_runs_in_order(self, text: str, runs: list[str]) -> None:
        assert word_runs(text) == runs

    @pytest.mark.parametrize(
        ("text", "japanese"),
        [("東京で会議", True), ("カタカナだけ", True), ("我们讨论了方案", False), ("plain", False)],
    )
    def test_only_text_with_kana_is_japanese(self, text: str, japanese: bool) -> None:
        assert is_japanese(text) is japanese


class TestIndexSide:
    def test_japanese_text_ends_with_its_marked_words(self) -> None:
        document = fts_document("東京で会議の資料を準備した")

        assert _marked(document) == ["東京", "会議", "資料", "準備"]
        assert document.split()[:3] == ["東京", "京で", "で会"]  # the bigrams come first, as before

    def test_chinese_text_gets_no_word_terms(self) -> None:
        document = fts_document("我们昨天讨论了新的部署方案")

        assert WORD_MARK not in document
        assert document.split()[:2] == ["我们", "们昨"]

    def test_korean_and_latin_text_are_unchanged(self) -> None:
        for text in ("서울에서 회의를 했다", "The deploy runs at noon", "café résumé"):
            assert WORD_MARK not in fts_document(text)

    def test_half_width_katakana_is_folded_before_it_is_cut(self) -> None:
        assert _marked(fts_document("ﾃﾞｰﾀを保存")) == ["データ", "保存"]

    def test_a_mark_written_by_a_user_cannot_forge_a_word_term(self) -> None:
        forged = fts_document(f"中文{WORD_MARK}东京")  # no kana: not Japanese, no word terms

        assert WORD_MARK not in forged


class TestQuerySide:
    def test_the_match_ors_the_marked_words_after_the_bigrams(self) -> None:
        match = build_fts_query("会議の資料はどこ")
        assert match is not None

        assert match.endswith(f'"{mark("会議")}" OR "{mark("資料")}"')
        assert match.startswith('"会議"')

    def test_stop_words_are_no_word_terms(self) -> None:
        assert japanese_word_terms("私は何を食べた") == [mark("食")]

    def test_the_words_people_read_have_no_marks(self) -> None:
        """Highlighting, the word share and the time boosts read `fts_query_terms`."""
        terms = fts_query_terms("会議の資料はどこ")

        assert all(WORD_MARK not in t for t in terms)

    @pytest.mark.parametrize("query", ["部署方案", "회의 일정", "deploy plan", "ｈｅｌｌｏ"])
    def test_other_languages_get_no_word_terms(self, query: str) -> None:
        assert japanese_word_terms(query) == []
        assert WORD_MARK not in (build_fts_query(query) or "")

    def test_a_long_query_stays_within_the_term_cap(self) -> None:
        query = "、".join(f"{a}{b}の件" for a in "東西南北上下左右" for b in "春夏秋冬朝昼夜")
        match = build_fts_query(query)
        assert match is not None

        assert match.count(" OR ") + 1 == MAX_FTS_TERMS


class TestRanking:
    """Through real FTS5: the chunk that holds the question's whole word comes first."""

    def _rank(self, docs: dict[int, str], query: str) -> list[int]:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(terms, tokenize = '{FTS_TOKENIZER}')")
        conn.executemany(
            "INSERT INTO t(rowid, terms) VALUES (?, ?)",
            [(rid, fts_document(text)) for rid, text in docs.items()],
        )
        match = build_fts_query(query)
        assert match is not None
        rows = conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (match,)
        ).fetchall()
        return [int(r[0]) for r in rows]

    def test_a_whole_word_beats_its_pieces_across_words(self) -> None:
        # Chunk 1 holds タワー only inside the longer katakana word ワタワーズ, twice (more bigram
        # hits); chunk 2 holds the word itself once. Bigrams alone rank chunk 1 first.
        docs = {1: "ワタワーズとワタワーズの話をした", 2: "タワーの話をしたけれども"}

        assert self._rank(docs, "タワーはどこ")[0] == 2

    def test_a_two_kanji_word_beats_a_bigram_that_straddles_two_words(self) -> None:
        # 会議 in chunk 1 is the end of 大会 and the start of 議事 (大会議事録 is one run, so it is
        # one word term); chunk 2 has the word 会議 between kana.
        docs = {1: "大会議事録と大会議事録を読んだ", 2: "今日は会議があった"}

        assert self._rank(docs, "会議はいつ")[0] == 2
