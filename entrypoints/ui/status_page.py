"""Entry point (ui): the health page: counts, provider, live vector progress, problems, timeline.

`status_json` is what the page's script polls (`/status.json`) to move the progress bars without
a reload while a backfill or a first index runs; the page itself is rendered complete on the
server, so it reads the same without the script.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.reports import StatusReport
from memlane.domain.events import event_to_record, type_name
from memlane.entrypoints.ui.charts import Series, time_plot
from memlane.entrypoints.ui.history import SyncRun, sync_runs
from memlane.entrypoints.ui.html import Safe, fill, join


def status_json(report: StatusReport, *, first_sync_done: bool) -> dict[str, object]:
    """The live part of the health page."""
    vectors = report.vectors
    indexing = report.indexing
    return {
        "files": report.files,
        "chunks": report.chunks,
        "dirty": report.dirty,
        "lastSyncedAt": report.last_synced_at,
        "firstSyncDone": first_sync_done,
        "vectors": None if vectors is None else {"done": vectors.done, "total": vectors.total},
        "vectorsText": "keyword-only index" if vectors is None else _vectors_text(report),
        "indexing": None
        if indexing is None
        else {"done": indexing.files_done, "total": indexing.files_total},
        "problems": len(problems(report)),
        "eventsPosition": report.events_position,
    }


def _vectors_text(report: StatusReport) -> str:
    """The index's vectors, of all chunks; while they are not the configured model's (a model
    changed, a fallback's vectors), whose they are and how far the configured model's are."""
    assert report.vectors is not None
    r = report.reembedding
    return report.vectors.ratio() + ("" if r is None else f" {r.whose()}")


def problems(report: StatusReport) -> list[tuple[str, str]]:
    """What is wrong, each with its reason: (what, why)."""
    found: list[tuple[str, str]] = [(i.path, i.reason) for i in report.issues]
    if report.vector_error:
        found.append(("vector search", report.vector_error))
    if report.fallback_from:
        found.append((f"provider {report.fallback_from}", report.fallback_reason or "fell back"))
    if report.read_only:
        found.append(("index", f"read-only: {report.read_only}"))
    if report.last_sync_failure is not None:
        found.append(("last sync", report.last_sync_failure.text()))
    if report.embed_failures:
        found.append(("embedding", f"{report.embed_failures} failed embedding call(s)"))
    found += [("warning", w) for w in report.warnings]
    return found


def _row(label: str, value: object, ident: str = "") -> Safe:
    return fill(
        '<tr><th scope="row">$label</th><td$ident>$value</td></tr>',
        label=label,
        value=value,
        ident=Safe(f' id="{ident}"' if ident else ""),
    )


def _progress(report: StatusReport) -> Safe:
    vectors = report.vectors
    if vectors is None:
        return Safe('<p id="vector-text">keyword-only index: no vectors to compute</p>')
    state = "complete" if vectors.complete else "running"
    return fill(
        '<div class="progress"><progress id="vector-progress" max="$total" value="$done">'
        '</progress> <span id="vector-text" data-state="$state">$text</span></div>',
        total=max(vectors.total, 1),
        done=vectors.done,
        state=state,
        text=_vectors_text(report),
    )


def _indexing(report: StatusReport) -> Safe:
    i = report.indexing
    if i is None:
        return Safe("")
    return fill(
        '<p class="warning" id="indexing-text">first index: $done / $total files$state</p>',
        done=f"{i.files_done:,}",
        total=f"{i.files_total:,}",
        state={True: " (running)", False: " (interrupted)", None: ""}[i.running],
    )


def _problems_html(report: StatusReport) -> Safe:
    found = problems(report)
    if not found:
        return Safe('<p class="ok" id="problems">No problems.</p>')
    items = join(fill("<li><b>$what</b>: $why</li>", what=w, why=y) for w, y in found)
    return fill('<ul class="problems" id="problems">$items</ul>', items=items)


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _runs_html(runs: Sequence[SyncRun], sizes: dict[float, float]) -> Safe:
    rows = join(
        fill(
            "<tr><td>$when</td><td>$kind</td><td>$indexed</td><td>$removed</td>"
            "<td>$duration</td><td>$chunks</td></tr>",
            when=_when(r.started),
            kind="rebuild" if r.rebuilt else "sync",
            indexed=r.files_indexed,
            removed=r.files_removed,
            duration=f"{r.duration_ms:,.0f} ms",
            chunks="–" if r.finished not in sizes else f"{sizes[r.finished]:,.0f}",
        )
        for r in reversed(runs)
    )
    return fill(
        '<table class="runs"><thead><tr><th>started (UTC)</th><th>kind</th><th>indexed</th>'
        "<th>removed</th><th>took</th><th>chunks after</th></tr></thead><tbody>$rows</tbody>"
        "</table>",
        rows=rows,
    )


def _events_html(records: Sequence[RecordedEvent]) -> Safe:
    items = join(
        fill(
            '<li class="event ev-$kind"><span class="pos">#$pos</span> <time>$when</time> '
            '<span class="kind">$kind</span> <span class="details">$details</span></li>',
            pos=r.position,
            when=r.event.occurred_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            kind=type_name(r.event),
            details=" ".join(
                f"{k}={v}" for k, v in event_to_record(r.event).items() if k != "occurred_at"
            ),
        )
        for r in reversed(records)
    )
    return fill('<ol class="timeline" id="timeline">$items</ol>', items=items)


def status_html(
    report: StatusReport,
    records: Sequence[RecordedEvent],
    *,
    first_sync_done: bool,
    sync_form: Safe,
    seen: Sequence[tuple[float, float]] = (),
) -> Safe:
    """The whole health page body; `seen`: index sizes the UI saw (`SizeSamples.points`)."""
    by_source = "; ".join(
        f"{b.source}: {b.files} files, {b.chunks} chunks" for b in report.by_source
    )
    provider = report.provider + (
        f" (requested {report.requested_provider})"
        if report.requested_provider != report.provider
        else ""
    )
    summary = join(
        [
            _row("files", f"{report.files:,}", "files"),
            _row("chunks", f"{report.chunks:,}", "chunks"),
            _row("per source", by_source or "-"),
            _row("provider", provider),
            _row("model", report.model or "-"),
            _row("search mode", report.search_mode),
            _row("last sync", report.last_synced_at or "never", "last-sync"),
            _row("changes pending", "yes" if report.dirty else "no", "dirty"),
            _row("first sync", "done" if first_sync_done else "running", "first-sync"),
            _row("embedding cache", f"{report.cache_entries:,} entries"),
            _row(
                "event log", f"position {report.events_position}, {report.events_pending} pending"
            ),
            _row("workspace", report.workspace),
            _row("store", report.store_path),
        ]
    )
    runs = sync_runs(records)
    durations = Series("sync duration", "ms", [(r.started, r.duration_ms) for r in runs], "dur")
    stated = {r.finished: float(r.chunks) for r in runs if r.chunks is not None}
    known = {**stated, **dict(seen)}  # the store's count wins where both are
    sizes = sorted(known.items())
    if runs and (not sizes or sizes[-1][0] < runs[-1].finished):
        sizes.append((runs[-1].finished, float(report.chunks)))  # the store's count, now
    size = Series("index size (chunks)", "", sizes, "size")
    return fill(
        '<div class="status-grid"><section><h1>Health</h1>'
        '<table class="summary">$summary</table>$sync</section>'
        "<section><h2>Vectors</h2>$progress$indexing<h2>Problems</h2>$problems</section></div>"
        '<section><h2>Over time</h2><div class="plots">$plot1$plot2</div>'
        "<h3>Syncs in the log</h3>$runs</section>"
        '<section><h2>Event log</h2><p class="meta">newest first, the last $n events</p>'
        "$events</section>",
        summary=summary,
        sync=sync_form,
        progress=_progress(report),
        indexing=_indexing(report),
        problems=_problems_html(report),
        plot1=time_plot(durations, bars=True),
        plot2=time_plot(size),
        runs=_runs_html(runs, known),
        n=len(records),
        events=_events_html(records),
    )
