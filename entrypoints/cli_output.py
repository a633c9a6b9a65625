"""Entry points: how the `memlane` command line prints what it got (text and JSON).

JSON output uses one key casing everywhere, camelCase (entrypoints/casing.py), the casing of
the reference's tool payloads (`startLine`) and of the config keys, so scripts read `status`,
`get`, `events` and `search` alike.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import PurePath

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.reports import SearchResponse, StatusReport, SyncReport
from memlane.domain.confidence import NO_STRONG_MATCH
from memlane.domain.events import event_to_record, type_name
from memlane.domain.sources import readable_path
from memlane.entrypoints.casing import camel_dict
from memlane.entrypoints.config.runtime import RuntimeConfig
from memlane.entrypoints.config.schema import effective_settings


def summary(report: SyncReport) -> str:
    kind = "full reindex" if report.full_reindex else "sync"
    issues = (
        f", {len(report.issues)} issue(s) (see `memlane status --deep`)" if report.issues else ""
    )
    return (
        f"{kind}: {report.files_indexed} file(s) indexed, {report.files_removed} removed, "
        f"{report.files_unchanged} unchanged, {report.chunks_embedded} chunk(s) embedded "
        f"in {report.duration_ms / 1000:.1f}s{issues}"
    )


def readable_strings(value: object) -> object:
    r"""`value` with every string (and path) spelled as the sources spell a name that is not
    valid UTF-8 (`caf\xe9`): Python holds such a folder name with surrogates, which JSON output
    cannot carry as UTF-8 text. Valid UTF-8 strings are unchanged."""
    if isinstance(value, str | PurePath):
        return readable_path(str(value))
    if isinstance(value, dict):
        return {readable_strings(k): readable_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [readable_strings(v) for v in value]
    return value


def check_time_options(since: str | None, until: str | None, as_of: str | None) -> None:
    """Refuse an unreadable --since / --until / --as-of before any sync (exit 2); the search
    itself refuses an empty window (it knows now)."""
    from memlane.domain.time_bounds import parse_time_bound

    for name, value in (("--since", since), ("--until", until), ("--as-of", as_of)):
        parse_time_bound(value, now=0.0, end=False, name=name)


def result_json(r: object, explain: bool) -> dict[str, object]:
    from memlane.domain.search import SearchResult
    from memlane.entrypoints.tool_payloads import result_payload

    assert isinstance(r, SearchResult)
    data = result_payload(r)
    if explain and r.explanation is not None:
        data["explain"] = camel_dict(asdict(r.explanation))
    return data


def search_output(response: SearchResponse, *, as_json: bool, explain: bool) -> str:
    """What `search` prints on stdout: the JSON payload, or one block per hit (its score, place,
    time, confidence and, with `--explain`, what made the score), "No matches." when none."""
    if as_json:
        payload: dict[str, object] = {
            "results": [result_json(r, explain) for r in response.results],
            "provider": response.provider,
            "model": response.model,
            "mode": response.mode,
            "noStrongMatch": response.no_strong_match,
        }
        if response.warnings:
            payload["warnings"] = list(response.warnings)
        if response.time_words:
            payload["timeWords"] = response.time_words
        return json.dumps(payload, ensure_ascii=False, indent=2)
    lines = [f"time words: {response.time_words}"] if explain and response.time_words else []
    if not response.results:
        return "\n".join([*lines, "No matches."])
    if response.no_strong_match:
        lines.append(f"{NO_STRONG_MATCH}\n")
    blocks = []
    for r in response.results:
        head = f"{r.score:.3f} {r.path}:{r.start_line}-{r.end_line}"
        if r.time is not None:
            head += f" {r.time}"
        if r.confidence is not None:
            head += f" (confidence {r.confidence:.1f})"
        if r.agent is not None:
            head = f"[{r.agent}] {head}"
        if explain and r.explanation is not None:
            e = r.explanation
            head += (
                f"  [vector={fmt(e.vector_score)} text={fmt(e.text_score)} "
                f"decay={e.decay_factor:.3f} time={e.time_boost:.3f} rank={e.mmr_rank}"
                + (f" piece={e.best_piece:.3f}" if e.best_piece is not None else "")
                + "]"
            )
        blocks.append(f"{head}\n{r.snippet.strip()}")
    return "\n".join([*lines, "\n\n".join(blocks)])


def event_json(record: RecordedEvent) -> dict[str, object]:
    return {
        "position": record.position,
        "type": type_name(record.event),
        **event_to_record(record.event),
    }


def config_details(runtime: RuntimeConfig) -> dict[str, object]:
    """What `status --json` adds: where the config came from and what it resolved to."""
    return {
        "configPath": str(runtime.config_path) if runtime.config_path else None,
        "referenceStateDir": str(runtime.reference_state) if runtime.reference_state else None,
        "sessionsDir": str(runtime.sessions_dir),
        "ignoredKeys": [{"key": i.key, "reason": i.reason} for i in runtime.ignored],
        # The resolved value of every key, derived from the key table like the JSON Schema.
        "settings": effective_settings(runtime.settings),
    }


def verbose_text(payload: dict[str, object]) -> str:
    lines = [f"Config: {payload['configPath'] or '(none: built-in defaults)'}"]
    ignored = payload["ignoredKeys"]
    assert isinstance(ignored, list)
    lines += [f"Ignored: {i['key']} ({i['reason']})" for i in ignored]
    settings = payload["settings"]
    assert isinstance(settings, dict)
    lines.append("Settings:")
    lines += [
        f"  {key} = {json.dumps(value, ensure_ascii=False)}" for key, value in settings.items()
    ]
    return "\n".join(lines)


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _vector_index_line(s: StatusReport) -> list[str]:
    v = s.vector_index
    if v is None:
        return []
    covered = "" if v.vectors is None else f", {v.vectors} vectors"
    return [f"Vector index: {v.engine}{covered} — {v.state}"]


def _vectors_line(s: StatusReport) -> list[str]:
    if s.vectors is None:
        return []
    line = f"Vectors: {s.vectors.ratio()} chunks embedded"
    # Not the configured model's: whose they are, and the configured model's own count.
    return [line if s.reembedding is None else f"{line} {s.reembedding.whose()}"]


def _indexing_line(s: StatusReport) -> list[str]:
    i = s.indexing
    if i is None:
        return []
    percent = 100 * i.files_done // i.files_total if i.files_total else 100
    state = {
        True: "first index running",
        False: "first index interrupted; `memlane index` completes it",
        None: "first index",
    }[i.running]
    return [f"Indexing: {i.files_done:,} / {i.files_total:,} files ({percent} %), {state}"]


def _watcher_line(s: StatusReport) -> list[str]:
    if s.watcher is None:
        return []
    state = (
        "every change indexed (searches skip their scan while so)"
        if s.watcher.fresh
        else "changes pending (searches scan the files first)"
    )
    return [f"Watcher: pid {s.watcher.pid}, {state}"]


def _held_back_line(s: StatusReport) -> list[str]:
    if not s.files_held_back:
        return []
    return [
        f"Held back: {s.files_held_back} transcript(s) held back until they grow past "
        "sync.sessions thresholds; `memlane index` indexes them now"
    ]


def _failure_lines(s: StatusReport) -> list[str]:
    f = s.last_sync_failure
    if f is None:
        return []
    return [f"Last sync failed: {f.at} ({f.trigger})", *(f"  {r}" for r in f.reasons)]


def status_text(s: StatusReport) -> str:
    lines = [
        f"Memory ({s.agent_id})",
        f"Provider: {s.provider} (requested: {s.requested_provider})"
        + (f" — {s.provider_reason}" if s.provider_reason else ""),
        f"Model: {s.model or '-'}",
        f"Search mode: {s.search_mode}",
        f"Sources: {', '.join(s.sources)}",
        f"Indexed: {s.files} files · {s.chunks} chunks",
    ]
    lines += [f"  {b.source} · {b.files} files · {b.chunks} chunks" for b in s.by_source]
    lines += [
        f"Dirty: {'yes' if s.dirty else 'no'}",
        *_watcher_line(s),
        f"Last sync: {s.last_synced_at or 'never'}"
        + (f" ({s.last_sync_reason})" if s.last_sync_reason else ""),
        *_held_back_line(s),
        *_failure_lines(s),
        f"Store: {s.store_path}",
        f"Workspace: {s.workspace}",
        f"Vector: {'ready' if s.vector_available else 'unavailable'}"
        + (f" ({s.vector_error})" if s.vector_error else ""),
        f"Vector dims: {s.vector_dims or '-'}",
        *_indexing_line(s),
        *_vectors_line(s),
        *_vector_index_line(s),
        f"Embedding cache: {s.cache_entries} entries (cap {s.cache_max_entries or 'none'})",
        f"Events: position {s.events_position}, {s.events_pending} pending",
    ]
    if s.fallback_from:
        lines.append(f"Fallback: from {s.fallback_from} ({s.fallback_reason})")
    if s.read_only:
        lines.append(f"Read-only: {s.read_only}")
    lines += [f"Warning: {w}" for w in s.warnings]
    if s.issues:
        lines.append("Issues:")
        lines += [f"  {i.path}: {i.reason}" for i in s.issues]
    return "\n".join(lines)
