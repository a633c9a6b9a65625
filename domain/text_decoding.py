"""Domain: turning file bytes into text, refusing binary data and reporting bad encodings."""

from __future__ import annotations

from dataclasses import dataclass

# A NUL byte never occurs in UTF-8 text; binary files almost always contain one early on.
_BINARY_SNIFF_BYTES = 8192
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")  # the byte-order marks of UTF-16 LE and BE


class NotText(ValueError):
    """The bytes are not text (binary content)."""


@dataclass(frozen=True, slots=True)
class DecodedText:
    """Decoded text and, when the input was not valid UTF-8, how many bytes were replaced."""

    text: str
    replaced_bytes: int = 0


def decode_text(data: bytes) -> DecodedText:
    """Decode UTF-8 (a BOM is dropped); invalid sequences become U+FFFD and are counted.

    Raises NotText when the data looks binary (a NUL byte in the first 8 KiB).
    """
    if data.startswith(_UTF16_MARKS):  # e.g. Notepad's "Unicode": every ASCII letter has a NUL
        raise NotText("UTF-16 text: notes are read as UTF-8; save this one as UTF-8")
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise NotText("binary content (NUL byte)")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return DecodedText(data.decode("utf-8"))
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        already_there = data.count("\ufffd".encode())
        return DecodedText(text, replaced_bytes=text.count("\ufffd") - already_there)
