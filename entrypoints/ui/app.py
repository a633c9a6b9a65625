"""Entry point (ui): `memlane ui`, a local web page over one live manager (Starlette + uvicorn,
the HTTP stack the MCP server runs on).

Pages: `/` and `/search` (hits with their evidence), `/file` (a hit in its file), `/status`
(health, live vector progress, the event log over time) and `/status.json` (what the health
page polls). The one write, "sync now", is a POST with the session's CSRF token and is not
offered with `--read-only`. Like `memlane mcp`, the server answers at once while the first sync
runs in the background; then the watcher and the background syncer (vector backfill included)
keep the index fresh.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from importlib.resources import files
from typing import Final
from urllib.parse import parse_qs, urlencode

import structlog
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from memlane.application.memory import MemoryManager
from memlane.application.ports.file_source import FileMissing, FileRefused, FileTooLarge
from memlane.application.reading import source_of
from memlane.application.reports import StatusReport
from memlane.application.search_syncs import FIRST_SYNC_RUNNING
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain.errors import InvalidQuery
from memlane.entrypoints.errors import text as error_text
from memlane.entrypoints.listen import is_loopback
from memlane.entrypoints.mcp.http import serve_http
from memlane.entrypoints.ui.file_page import Highlight, note_html, transcript_html
from memlane.entrypoints.ui.history import SizeSamples
from memlane.entrypoints.ui.html import Safe, fill, message_page, page
from memlane.entrypoints.ui.search_page import SearchForm, error_html, form_html, results_html
from memlane.entrypoints.ui.security import Sessions, UiGate, session_of
from memlane.entrypoints.ui.status_page import status_html, status_json

DEFAULT_PORT: Final = 8766
# Lines shown above a hit when the page of a long note starts near it.
LINES_BEFORE_HIT: Final = 200
EVENTS_SHOWN: Final = 200
MAX_FORM_BYTES: Final = 4096
_STATIC: Final = {"ui.css": "text/css", "ui.js": "text/javascript"}
_log = structlog.get_logger("memlane.ui")


@dataclass(frozen=True, slots=True)
class UiOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    read_only: bool = False
    open_browser: bool = False

    @property
    def url(self) -> str:
        """The address to open (with the token, which the first visit turns into a cookie)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        shown = "127.0.0.1" if host in {"0.0.0.0", "[::]"} else host  # noqa: S104 - a display
        return f"http://{shown}:{self.port}/" + (f"?token={self.token}" if self.token else "")


@dataclass
class _State:
    manager: MemoryManager
    options: UiOptions
    sessions: Sessions = field(default_factory=Sessions)
    first_sync: threading.Event = field(default_factory=threading.Event)
    sizes: SizeSamples = field(default_factory=SizeSamples)

    def report(self) -> StatusReport:
        """The status report; keeps the index size for the log position it was taken at."""
        report = self.manager.status()
        position = report.events_position
        if report.events_pending == 0 and position and not self.sizes.known(position):
            newest = self.manager.recent_events(1)
            if newest and newest[-1].position == position:
                at = newest[-1].event.occurred_at.timestamp()
                self.sizes.add(position, at, report.chunks)
        return report


def _html(body: Safe, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status)


def build_ui_app(manager: MemoryManager, options: UiOptions, *, start: bool = True) -> UiGate:
    """The ASGI app behind its gate; `start` runs the first sync and the watcher at start-up."""
    state = _State(manager=manager, options=options)
    agent = manager.agent_id

    async def home(request: Request) -> Response:
        form = SearchForm.from_query(request.query_params)
        if form.q.strip():
            return await search(request)
        body = fill('<section class="search-page">$form</section>', form=form_html(form))
        return _html(page(title="Search", page_name="search", agent=agent, body=body))

    async def search(request: Request) -> Response:
        form = SearchForm.from_query(request.query_params)
        if form.q.strip() and any(not v for _k, v in request.query_params.multi_items()):
            # The form sends its empty filters too: the address a user copies names only those set.
            return RedirectResponse(f"/search?{urlencode(form.params())}", status_code=303)
        status = 200
        if not form.q.strip():
            results = error_html("Type something to search for.")
            status = 400
        else:
            try:
                response = await run_in_threadpool(
                    partial(
                        manager.search,
                        form.q,
                        explain=True,
                        agents=form.agents or None,
                        since=form.since or None,
                        until=form.until or None,
                        max_results=form.n,
                    )
                )
                if not state.first_sync.is_set() and FIRST_SYNC_RUNNING not in response.warnings:
                    response = replace(response, warnings=(*response.warnings, FIRST_SYNC_RUNNING))
                asked = form.n or manager.settings.query.max_results
                results = results_html(form, response, asked=asked)
            except InvalidQuery as exc:
                results, status = error_html(str(exc)), 400
            except Exception as exc:  # the one error table, shown, never a crashed page
                results, status = error_html(error_text(exc)), 500
                _log.warning("ui_search_failed", error=type(exc).__name__)
        body = fill(
            '<section class="search-page">$form<div id="results">$results</div></section>',
            form=form_html(form),
            results=results,
        )
        title = f"{form.q} — search" if form.q else "Search"
        return _html(page(title=title, page_name="search", agent=agent, body=body), status)

    async def file(request: Request) -> Response:
        params = request.query_params
        path = params.get("path", "")
        other = params.get("agent") or None
        try:
            highlight = Highlight(_line(params.get("from")), _line(params.get("to")))
            if source_of(path.strip()) == "sessions":
                shown, messages = await run_in_threadpool(
                    lambda: manager.messages(path, agent=other)
                )
                if not messages:  # none, or no file: only a read tells which
                    got = await run_in_threadpool(lambda: manager.get(path, agent=other))
                    if got.missing:
                        return _missing(shown)
                body = transcript_html(shown, messages, highlight)
            else:
                got = await run_in_threadpool(lambda: manager.get(path, agent=other))
                if got.missing:
                    return _missing(got.path)
                if got.more_from is not None and highlight.start >= got.more_from:
                    # The hit lies past the first page of a long note: the page starts near it.
                    start = max(1, highlight.start - LINES_BEFORE_HIT)
                    got = await run_in_threadpool(
                        lambda: manager.get(path, from_line=start, agent=other)
                    )
                body = note_html(got, highlight)
        except InvalidQuery as exc:
            return _html(message_page(title="Bad request", text=str(exc), agent=agent), 400)
        except (FileRefused, FileTooLarge) as exc:
            return _html(message_page(title="Refused", text=error_text(exc), agent=agent), 403)
        except FileMissing as exc:
            return _html(message_page(title="Not found", text=error_text(exc), agent=agent), 404)
        except Exception as exc:
            _log.warning("ui_file_failed", error=type(exc).__name__)
            return _html(message_page(title="Error", text=error_text(exc), agent=agent), 500)
        return _html(page(title=path, page_name="file", agent=agent, body=body))

    def _missing(path: str) -> Response:
        # A hit's file deleted since the last sync: the index still names it until the next.
        text = f"{path} does not exist (any more); the next sync drops its hits from the index."
        return _html(message_page(title="Not found", text=text, agent=agent), 404)

    async def status(request: Request) -> Response:
        report = await run_in_threadpool(state.report)
        records = await run_in_threadpool(manager.recent_events, EVENTS_SHOWN)
        body = status_html(
            report,
            records,
            first_sync_done=state.first_sync.is_set(),
            sync_form=_sync_form(
                state, session_of(request), requested=request.query_params.get("sync") is not None
            ),
            seen=state.sizes.points(),
        )
        return _html(page(title="Health", page_name="status", agent=agent, body=body))

    async def status_data(_request: Request) -> Response:
        report = await run_in_threadpool(state.report)
        return JSONResponse(status_json(report, first_sync_done=state.first_sync.is_set()))

    async def sync_now(request: Request) -> Response:
        if options.read_only:
            text = "This UI runs with --read-only: it offers no write action."
            return _html(message_page(title="Read-only", text=text, agent=agent), 403)
        body = await request.body()
        fields = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
        token = next(iter(fields.get("csrf", [])), None)
        if len(body) > MAX_FORM_BYTES or not state.sessions.csrf_valid(session_of(request), token):
            _log.warning("ui_csrf_refused", path=request.url.path)
            text = "The form's CSRF token is missing or wrong: reload the page and try again."
            return _html(message_page(title="Refused", text=text, agent=agent), 403)
        manager.request_sync(SyncTrigger.EXPLICIT)
        return RedirectResponse("/status?sync=requested", status_code=303)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        text = files("memlane.entrypoints.ui").joinpath("static", name).read_text("utf-8")
        return Response(text, media_type=_STATIC[name])

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "serving", "firstSyncDone": state.first_sync.is_set()})

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if start:
            _start_background(state)
        else:
            state.first_sync.set()
        if options.open_browser:
            threading.Thread(target=webbrowser.open, args=(options.url,), daemon=True).start()
        yield

    routes = [
        Route("/", home, methods=["GET"]),
        Route("/search", search, methods=["GET"]),
        Route("/file", file, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        Route("/status.json", status_data, methods=["GET"]),
        Route("/sync", sync_now, methods=["POST"]),
        Route("/static/{name}", static, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        # Browsers ask for it on every page; no icon is served, and no 404 fills the console.
        Route("/favicon.ico", lambda _request: Response(status_code=204), methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    return UiGate(app, token=options.token, loopback=is_loopback(options.host))


def _line(value: str | None) -> int:
    if value is None or value == "":
        return 0
    try:
        number = int(value)
    except ValueError as exc:
        raise InvalidQuery("from and to must be whole numbers") from exc
    return max(number, 0)


def _sync_form(state: _State, session: str | None, *, requested: bool = False) -> Safe:
    if state.options.read_only:
        return Safe('<p class="meta" id="read-only">read-only: no write actions</p>')
    said = (
        '<p class="ok" id="sync-requested" role="status">Sync requested: it runs in the '
        "background; the log below shows it (nothing to index leaves the log as it was).</p>"
        if requested
        else ""
    )
    return fill(
        '<form method="post" action="/sync" class="sync">'
        '<input type="hidden" name="csrf" value="$csrf">'
        '<button type="submit" id="sync-now">Sync now</button></form>$said',
        csrf=state.sessions.csrf_token(session or ""),
        said=Safe(said),
    )


def _start_background(state: _State) -> threading.Thread:
    """The first sync (keyword rows first), then the watcher and background syncer."""

    def run() -> None:
        manager = state.manager
        if not manager.settings.enabled:
            state.first_sync.set()
            return
        try:
            manager.sync(wait_for_vectors=False)
        except Exception as exc:  # the pages still answer from what is indexed
            _log.error("ui_first_sync_failed", error=str(exc), error_type=type(exc).__name__)
        finally:
            state.first_sync.set()
        try:
            manager.start()  # the file watcher as `sync.watch` says
        except Exception as exc:
            _log.error("ui_watch_failed", error=str(exc), error_type=type(exc).__name__)

    thread = threading.Thread(target=run, name="memlane-ui-start", daemon=True)
    thread.start()
    return thread


def run_ui(
    manager: MemoryManager, options: UiOptions, on_ready: Callable[[], object] = lambda: None
) -> None:
    """Serve the UI until SIGINT/SIGTERM."""
    serve_http(
        build_ui_app(manager, options),
        host=options.host,
        port=options.port,
        on_ready=on_ready,
        server_name="ui",
    )
