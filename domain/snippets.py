"""Domain: search-result snippets and `path#Lstart-Lend` citations for agent tools."""

from __future__ import annotations

from typing import Final

DEFAULT_SNIPPET_LIMIT: Final = 700


def make_snippet(text: str, limit: int = DEFAULT_SNIPPET_LIMIT) -> str:
    """At most `limit` code points of `text`, never ending between the halves of a surrogate pair.

    Python strings hold an emoji as one code point; the pair case arises only for text carrying
    raw surrogates (e.g. UTF-16 decoded with "surrogatepass", or built from escapes).
    """
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if "\ud800" <= cut[-1] <= "\udbff" and "\udc00" <= text[limit] <= "\udfff":
        return cut[:-1]
    return cut


def citation_for(path: str, start_line: int, end_line: int) -> str:
    """`path#L5` for a single line, else `path#L5-L9`."""
    if end_line <= start_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"
