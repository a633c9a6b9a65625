"""English morphology: the keyword index stems, so a query finds other forms of its words."""

from __future__ import annotations

import sqlite3

from memlane.domain.keywords import FTS_TOKENIZER, build_fts_query, fts_document


def _matches(document: str, query: str) -> bool:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(terms, tokenize = '{FTS_TOKENIZER}')")
    conn.execute("INSERT INTO t(terms) VALUES (?)", (fts_document(document),))
    match = build_fts_query(query)
    assert match is not None
    count: int = conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (match,)).fetchone()[0]
    return count == 1


class TestStemming:
    def test_inflected_forms_match(self) -> None:
        assert _matches("We deployed the services on Tuesday.", "deploying service")
        assert _matches("Proteins regulate cell migration.", "protein regulation")

    def test_cjk_bigrams_are_untouched_by_the_stemmer(self) -> None:
        assert _matches("我们讨论了数据库迁移方案。", "迁移方案")
        assert not _matches("我们讨论了数据库迁移方案。", "停机窗口")
