"""Entry point (ui): a file opened from a hit: its lines (or conversation) with the hit marked.

Notes are read through `MemoryManager.get` and transcripts through `MemoryManager.messages`,
the `memory_get` use case: the same allow-list, traversal refusals and redaction. Lines of a
note and messages of a transcript carry `id="L<line>"` (a transcript's JSONL line, the line
numbers its hits have), so the hit's link scrolls to its first line without any script.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from memlane.application.reports import GetResult
from memlane.domain.transcripts import TranscriptMessage
from memlane.entrypoints.ui.html import Safe, fill, join
from memlane.entrypoints.ui.marking import marked


@dataclass(frozen=True, slots=True)
class Highlight:
    """The hit's lines (1-based, inclusive); none when both are 0."""

    start: int = 0
    end: int = 0

    def covers(self, line: int) -> bool:
        return self.start <= line <= max(self.start, self.end) and self.start > 0


def note_html(got: GetResult, highlight: Highlight) -> Safe:
    """A note's lines, numbered, the hit's lines marked; masks of redacted notes visible."""
    lines = got.text.split("\n") if got.text else []
    if lines and lines[-1] == "":  # the newline ending the last line starts no line of its own
        lines.pop()
    rows = join(
        fill(
            '<div class="line$cls" id="L$n"><a class="no" href="#L$n">$n</a>'
            "<code>$text</code></div>",
            cls=" hit-line" if highlight.covers(n) else "",
            n=n,
            text=marked(line) if line else Safe("&#8203;"),
        )
        for n, line in enumerate(lines, start=got.from_line)
    )
    empty = '<p class="empty">This file is empty.</p>'
    more = (
        fill(
            '<p class="empty">The file goes on after line $last: a page shows $count lines at '
            "most (<code>memlane get $path --from $next</code> reads on).</p>",
            last=got.more_from - 1,
            count=f"{got.lines:,}",
            path=got.path,
            next=got.more_from,
        )
        if got.more_from is not None
        else Safe("")
    )
    earlier = (
        fill(
            '<p class="empty">Lines 1–$before are not shown: the page starts near the hit '
            '(<a href="$href">from the first line</a>).</p>',
            before=f"{got.from_line - 1:,}",
            href=f"/file?{urlencode({'path': got.path})}",
        )
        if got.from_line > 1
        else Safe("")
    )
    return fill(
        '$head$earlier<div class="file note">$rows</div>$more',
        head=_head(got.path, "note", highlight),
        earlier=earlier,
        rows=rows if lines else Safe(empty),
        more=more,
    )


def transcript_html(path: str, messages: tuple[TranscriptMessage, ...], hl: Highlight) -> Safe:
    """A transcript as a conversation: role, time, text (masks visible), the hit marked."""
    items = join(
        fill(
            '<article class="msg $role$cls" id="L$line"><header><span class="role">$label</span>'
            '<time datetime="$iso">$when</time><a class="no" href="#L$line">line $line</a>'
            "</header><p>$text</p></article>",
            role=m.role,
            cls=" hit-line" if hl.covers(m.line) else "",
            line=m.line,
            label="User" if m.role == "user" else "Assistant",
            iso=_iso(m.timestamp),
            when=_shown_time(m.timestamp),
            text=marked(m.text),
        )
        for m in messages
    )
    empty = '<p class="empty">No messages in this transcript.</p>'
    return fill(
        '$head<div class="file conversation">$items</div>',
        head=_head(path, "transcript", hl),
        items=items if messages else Safe(empty),
    )


def _head(path: str, kind: str, hl: Highlight) -> Safe:
    where = f"hit at lines {hl.start}–{max(hl.start, hl.end)} · " if hl.start else ""
    return fill(
        '<h1 class="file-title"><span class="path">$path</span> <span class="tag">$kind</span>'
        '</h1><p class="meta">$where<a href="/" data-back>back to the search</a></p>',
        path=path,
        kind=kind,
        where=where,
    )


def _iso(stamp: float | None) -> str:
    return "" if stamp is None else datetime.fromtimestamp(stamp, UTC).isoformat()


def _shown_time(stamp: float | None) -> str:
    if stamp is None:
        return "no time"
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
