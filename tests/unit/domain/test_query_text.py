"""A query holding bytes that did not decode is the caller's mistake, said as InvalidQuery."""

from __future__ import annotations

import os

import pytest

from memlane.domain.errors import InvalidQuery
from memlane.domain.search import check_query_text


def test_an_undecodable_byte_is_refused_by_its_value_and_place() -> None:
    query = os.fsdecode(b"deploy \xff\xfe")  # what argv or stdin hand over

    with pytest.raises(InvalidQuery, match=r"not valid UTF-8 text \(byte 0xff at character 7\)"):
        check_query_text(query)


def test_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(InvalidQuery, match=r"not valid UTF-8 text \(lone surrogate U\+D800"):
        check_query_text("deploy \ud800")


def test_the_message_itself_is_text() -> None:
    with pytest.raises(InvalidQuery) as refused:
        check_query_text("\udcff")

    str(refused.value).encode("utf-8")  # shown on stderr, in JSON payloads, over gRPC
