"""Turning file bytes into text."""

from __future__ import annotations

import pytest

from memlane.domain.text_decoding import NotText, decode_text


class TestDecodeText:
    def test_utf8_passes_through_and_a_bom_is_dropped(self) -> None:
        assert decode_text("héllo 世界".encode()).text == "héllo 世界"
        assert decode_text(b"\xef\xbb\xbfhi").text == "hi"

    def test_invalid_bytes_are_replaced_and_counted(self) -> None:
        decoded = decode_text("café".encode("latin-1") + "\ufffd".encode())

        assert decoded.text == "caf\ufffd\ufffd"
        assert decoded.replaced_bytes == 1

    def test_binary_data_is_refused(self) -> None:
        with pytest.raises(NotText):
            decode_text(b"\x89PNG\r\n\x1a\n\x00\x00")

    @pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
    def test_utf16_text_is_named_as_such_not_as_binary(self, encoding: str) -> None:
        data = "# Notes\nwe deploy on Fridays\n".encode(encoding)
        if encoding == "utf-16-be":
            data = b"\xfe\xff" + data

        with pytest.raises(NotText, match=r"UTF-16 text: .* save this one as UTF-8"):
            decode_text(data)
