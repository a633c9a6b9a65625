"""Entry point (ui): the search page: the form, the hits, each with its evidence drawn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode

from memlane.application.reports import SearchResponse
from memlane.domain.confidence import NO_STRONG_MATCH
from memlane.domain.config import MAX_RESULTS_LIMIT
from memlane.domain.search import SearchResult
from memlane.entrypoints.ui.charts import evidence_bars
from memlane.entrypoints.ui.html import Safe, fill, join
from memlane.entrypoints.ui.marking import marked, query_terms

# The most hits a page asks for when "more" is followed: the search's own bound.
MAX_RESULTS: Final = MAX_RESULTS_LIMIT


@dataclass(frozen=True, slots=True)
class SearchForm:
    """The search page's parameters, as the address carries them
    (`/search?q=...&agents=...&since=...&until=...`; since / until as `search --since` reads
    them: a date, a time or a span back from now such as `7d`).

    A new filter is one field here, one entry in `from_query` and `params`, one input in
    `form_html`, and its argument in `ui/app.py`'s search call.
    """

    q: str = ""
    agents: str = ""
    since: str = ""
    until: str = ""
    # Hits asked for (`n`); None: the configured maxResults. Set by the "more" link.
    n: int | None = None

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> SearchForm:
        asked = params.get("n", "")
        return cls(
            q=params.get("q", ""),
            agents=params.get("agents", ""),
            since=params.get("since", ""),
            until=params.get("until", ""),
            n=min(int(asked), MAX_RESULTS) if asked.isdigit() and int(asked) > 0 else None,
        )

    def params(self) -> dict[str, str]:
        """The non-empty parameters (for links back to this search)."""
        pairs = {"q": self.q, "agents": self.agents, "since": self.since, "until": self.until}
        kept = {k: v for k, v in pairs.items() if v}
        return kept if self.n is None else {**kept, "n": str(self.n)}


def form_html(form: SearchForm) -> Safe:
    """The search box (focused on load: typing starts at once; Enter searches)."""
    return fill(
        '<form class="search" action="/search" method="get" role="search">'
        '<input id="q" name="q" type="search" value="$q" autofocus autocomplete="off" '
        'placeholder="Search the memory (any language)" aria-label="query">'
        '<input id="agents" name="agents" type="text" value="$agents" '
        'placeholder="agents (a,b)" aria-label="agents" class="agents">'
        '<input id="since" name="since" type="text" value="$since" '
        'placeholder="since (2026-11-01, 7d)" aria-label="since" class="agents">'
        '<input id="until" name="until" type="text" value="$until" '
        'placeholder="until" aria-label="until" class="agents">'
        '<button type="submit">Search</button></form>'
        '<p class="keys">Enter searches · ↑ ↓ move through hits · Enter opens · / back to the '
        "box</p>",
        q=form.q,
        agents=form.agents,
        since=form.since,
        until=form.until,
    )


def file_link(result: SearchResult) -> str:
    """The address of a hit in its file, scrolled to its first line."""
    params = {"path": result.path, "from": str(result.start_line), "to": str(result.end_line)}
    if result.agent is not None:
        params["agent"] = result.agent
    return f"/file?{urlencode(params)}#L{result.start_line}"


def _hit(index: int, result: SearchResult, terms: list[str]) -> Safe:
    agent = fill('<span class="tag agent">$a</span>', a=result.agent) if result.agent else ""
    when = fill('<span class="tag time">$t</span>', t=result.time) if result.time else ""
    return fill(
        '<li class="hit" id="hit-$i" data-index="$i">'
        '<div class="hit-head"><a class="open" href="$href">'
        '<span class="path">$path</span> <span class="lines">lines $start–$end</span></a>'
        '$agent$when<span class="tag source">$source</span>'
        '<span class="score" title="score">$score</span></div>'
        '<div class="hit-body"><pre class="snippet">$snippet</pre>$bars</div></li>',
        i=index,
        href=file_link(result),
        path=result.path,
        start=result.start_line,
        end=result.end_line,
        agent=Safe(agent),
        when=Safe(when),
        source=result.source,
        score=f"{result.score:.3f}",
        snippet=marked(result.snippet.strip(), terms),
        bars=evidence_bars(result.explanation),
    )


def results_html(form: SearchForm, response: SearchResponse, *, asked: int = 0) -> Safe:
    """The hits, the mode and provider they came from, any warning (incomplete answers) and the
    note the CLI and the agent tools give when the search found no strong match; a "more" link
    when the search returned all `asked` hits (there may be others)."""
    terms = query_terms(form.q)
    warnings = join(fill('<p class="warning">$w</p>', w=w) for w in response.warnings)
    if response.no_strong_match:
        note = fill('<p class="warning" id="no-strong-match">$t</p>', t=NO_STRONG_MATCH)
        warnings = join([warnings, note])
    head = fill(
        '<p class="meta" id="result-meta">$n hit(s) · $mode search · $provider$model</p>',
        n=len(response.results),
        mode=response.mode,
        provider=response.provider,
        model=f" / {response.model}" if response.model else "",
    )
    if not response.results:
        return join([warnings, head, Safe('<p class="empty">No matches.</p>')])
    hits = join(_hit(i, r, terms) for i, r in enumerate(response.results))
    more = Safe("")
    if asked and len(response.results) >= asked and asked < MAX_RESULTS:
        wider = SearchForm(form.q, form.agents, form.since, form.until, min(asked * 2, MAX_RESULTS))
        more = fill(
            '<p class="meta"><a id="more" href="/search?$qs">more hits</a> (this page shows '
            "the first $asked; query.maxResults sets how many)</p>",
            qs=urlencode(wider.params()),
            asked=asked,
        )
    return join([warnings, head, fill('<ol class="hits" id="hits">$h</ol>', h=hits), more])


def error_html(text: str) -> Safe:
    return fill('<p class="error" role="alert">$t</p>', t=text)
