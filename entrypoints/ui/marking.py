"""Entry point (ui): text shown with the query's words marked and redaction masks visible.

The words are the keyword search's own query terms (`fts_query_terms`: lowercased words, CJK
bigrams), so what is marked is what the keyword leg looked for. Terms may overlap (数据, 据库):
every character any term covers is marked, and neighbouring marked characters form one mark.
"""

from __future__ import annotations

from collections.abc import Sequence

from memlane.domain.keywords import fts_query_terms
from memlane.domain.redaction import mask_spans
from memlane.entrypoints.ui.html import Safe, esc, join


def query_terms(query: str) -> list[str]:
    """The terms to mark for `query` (empty for a blank one)."""
    return [t for t in fts_query_terms(query) if t.strip()] if query.strip() else []


def _term_cover(text: str, terms: Sequence[str]) -> list[bool]:
    # Lowered character by character: the few that grow when lowered ("İ") stay as they are,
    # so positions still match the text and one such letter does not unmark the rest.
    lowered = "".join(c if len(low := c.lower()) != 1 else low for c in text)
    covered = [False] * len(text)
    for term in terms:
        start = lowered.find(term)
        while start >= 0:
            for i in range(start, start + len(term)):
                covered[i] = True
            start = lowered.find(term, start + 1)
    return covered


def marked(text: str, terms: Sequence[str] = ()) -> Safe:
    """`text` escaped, with `<mark>` around the terms and `<span class="mask">` around masks."""
    covered = _term_cover(text, terms)
    masks = mask_spans(text)
    parts: list[Safe] = []
    done = 0
    for start, end in [*masks, (len(text), len(text))]:
        parts.append(_marked_run(text, covered, done, start))
        if end > start:
            parts.append(Safe(f'<span class="mask" title="redacted">{esc(text[start:end])}</span>'))
        done = end
    return join(parts)


def _marked_run(text: str, covered: list[bool], start: int, end: int) -> Safe:
    parts: list[Safe] = []
    i = start
    while i < end:
        j = i
        while j < end and covered[j] == covered[i]:
            j += 1
        piece = esc(text[i:j])
        parts.append(Safe(f"<mark>{piece}</mark>") if covered[i] else piece)
        i = j
    return join(parts)
