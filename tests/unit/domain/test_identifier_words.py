"""The words inside camelCase identifiers (domain/identifier_words.py) and what the keyword
index and query make of them (domain/keywords.py)."""

from __future__ import annotations

import pytest

from memlane.domain.identifier_words import identifier_pieces
from memlane.domain.keywords import build_fts_query, fts_document


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("relevanceFloor", ["relevance", "Floor"]),
        ("getUserProfile", ["get", "User", "Profile"]),
        ("JavaScript and TypeScript", ["Java", "Script", "Type", "Script"]),
        ("my_camelCase", ["camel", "Case"]),  # "_" is a mark: the name after it is cut
        ("config.maxResults=6", ["max", "Results"]),
        ("getHTTPResponse", ["get", "HTTPResponse"]),  # cut only where lower meets upper
        ("utf8Encoder base64Decode", ["utf8", "Encoder", "base64", "Decode"]),
        ("YouTube", ["You", "Tube"]),
    ],
)
def test_an_identifier_is_cut_where_lower_case_or_a_digit_meets_upper_case(
    text: str, pieces: list[str]
) -> None:
    assert identifier_pieces(text) == pieces


@pytest.mark.parametrize(
    "text",
    [
        "iPhone",  # one piece of three letters or more: an abbreviation's letter
        "mRNA",
        "HbA1c",
        "NFkB",
        "McDonald",
        "setUp",
        "TGFbeta",  # upper meeting lower is no cut
        "HTTPServer",
        "ABC123DEF",  # no lower-case letter: a code, not a name
        "deploy",
        "DEPLOY",
        "snake_case_name",
        "東京タワーで会議",
        "",
    ],
)
def test_abbreviations_and_plain_words_stay_whole(text: str) -> None:
    assert identifier_pieces(text) == []


def test_every_occurrence_counts() -> None:
    assert identifier_pieces("maxResults, then maxResults") == ["max", "Results"] * 2


class TestKeywordAnalysis:
    def test_the_index_holds_the_name_and_then_its_words(self) -> None:
        assert fts_document("Set relevanceFloor now") == "Set relevanceFloor now relevance Floor"

    def test_text_without_identifiers_is_indexed_as_before(self) -> None:
        assert fts_document("The deploy runs on Fridays.") == "The deploy runs on Fridays."

    def test_a_query_names_the_identifier_and_ors_its_words(self) -> None:
        assert build_fts_query("the relevanceFloor default") == (
            '"relevancefloor" OR "default" OR "relevance" OR "floor"'
        )

    def test_a_stop_word_or_a_term_already_asked_is_not_added_again(self) -> None:
        assert build_fts_query("YouTube tube") == '"youtube" OR "tube"'
