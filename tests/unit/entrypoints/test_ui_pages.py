"""Unit tests: the UI's HTML building blocks: escaping, marked text, evidence bars, plots and the
syncs read from the event log."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.ports.index_store import VectorProgress
from memlane.application.reports import GetResult, SearchResponse
from memlane.domain import events
from memlane.domain.confidence import NO_STRONG_MATCH
from memlane.domain.search import ScoreExplanation, SearchResult
from memlane.entrypoints.ui.charts import Series, evidence_bars, time_plot
from memlane.entrypoints.ui.file_page import Highlight, note_html
from memlane.entrypoints.ui.history import SizeSamples, sync_runs
from memlane.entrypoints.ui.html import Safe, esc, fill
from memlane.entrypoints.ui.marking import marked, query_terms
from memlane.entrypoints.ui.search_page import SearchForm, results_html
from memlane.entrypoints.ui.status_page import status_html
from tests.unit.entrypoints.test_grpc_messages import _status

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class TestEscaping:
    def test_values_are_escaped_and_safe_markup_is_not(self) -> None:
        html = fill(
            "<p title=$t>$body</p>$raw", t='"x" onmouseover=1', body="<script>", raw=Safe("<b>")
        )

        assert html == "<p title=&quot;x&quot; onmouseover=1>&lt;script&gt;</p><b>"

    def test_esc_leaves_safe_markup_alone(self) -> None:
        assert esc(Safe("<i>")) == "<i>" and esc("<i>") == "&lt;i&gt;"


class TestMarked:
    def test_query_words_are_marked_case_insensitively_and_the_rest_escaped(self) -> None:
        html = marked("Roll back <b>the</b> deploy", query_terms("roll back deploy"))

        assert (
            html == "<mark>Roll</mark> <mark>back</mark> &lt;b&gt;the&lt;/b&gt; <mark>deploy</mark>"
        )

    def test_a_letter_that_grows_when_lowered_leaves_the_other_marks(self) -> None:
        html = marked("İzmir office: the Tapir project, TAPIR budget.", ["tapir"])

        assert html.count("<mark>") == 2

    def test_overlapping_cjk_bigrams_make_one_mark(self) -> None:
        html = marked("把数据库迁移到新服务器", query_terms("数据库迁移"))

        assert "<mark>数据库迁移</mark>" in html

    def test_masks_are_shown_as_masks_not_as_marks(self) -> None:
        html = marked("key: sk-pro…3456 and ***", query_terms("key"))

        assert re.findall(r'<span class="mask"[^>]*>([^<]*)</span>', html) == ["sk-pro…3456", "***"]
        assert html.startswith("<mark>key</mark>: ")

    def test_a_script_in_a_note_stays_text(self) -> None:
        html = marked("<script>alert(1)</script>", query_terms("script alert"))

        assert "<script" not in html and "&lt;" in html


class TestEvidenceBars:
    def test_each_leg_is_a_bar_as_long_as_its_share_and_a_missing_leg_says_so(self) -> None:
        svg = evidence_bars(
            ScoreExplanation(vector_score=None, text_score=0.5, fused_score=0.25, decay_factor=1.0)
        )

        widths = dict(
            re.findall(
                r'data-evidence="(\w+)".*?class="ev-track"/><rect x="56" y="[\d.]+" width="([\d.]+)"',
                svg,
            )
        )
        assert widths == {"keyword": "60.0", "vector": "0.0", "fusion": "30.0", "decay": "120.0"}
        assert 'data-evidence="vector" data-value="–"' in svg

    def test_a_time_boost_is_a_fifth_bar_only_when_the_question_named_a_time(self) -> None:
        plain = evidence_bars(ScoreExplanation(vector_score=0.5, text_score=0.5, fused_score=0.5))
        boosted = evidence_bars(
            ScoreExplanation(vector_score=0.5, text_score=0.5, fused_score=0.5, time_boost=1.25)
        )

        assert 'data-evidence="time"' not in plain
        assert 'data-evidence="time" data-value="×1.250"' in boosted
        assert re.search(r'data-evidence="time".*?class="ev-bar" ?/?>?', boosted)
        assert 'width="30.0" height="9" class="ev-bar"' in boosted.split('data-evidence="time"')[1]

    def test_a_time_demotion_is_drawn_as_long_as_its_cut_in_the_down_colour(self) -> None:
        demoted = evidence_bars(
            ScoreExplanation(vector_score=0.5, text_score=0.5, fused_score=0.5, time_boost=0.75)
        )

        row = demoted.split('data-evidence="time"')[1]
        assert 'data-value="×0.750"' in row
        assert 'width="30.0" height="9" class="ev-bar ev-down"' in row

    def test_a_best_piece_is_a_bar_only_when_the_vector_score_mixed_one_in(self) -> None:
        plain = evidence_bars(ScoreExplanation(vector_score=0.5, text_score=0.5, fused_score=0.5))
        pieced = evidence_bars(
            ScoreExplanation(vector_score=0.6, text_score=0.5, fused_score=0.5, best_piece=0.75)
        )

        assert 'data-evidence="piece"' not in plain
        assert 'data-evidence="piece" data-value="0.750"' in pieced
        assert 'width="90.0" height="9" class="ev-bar"' in pieced.split('data-evidence="piece"')[1]

    def test_no_explanation_draws_nothing(self) -> None:
        assert evidence_bars(None) == ""


class TestTimePlot:
    def test_every_point_is_drawn_with_its_value_in_the_tooltip(self) -> None:
        t = T0.timestamp()
        svg = time_plot(
            Series("sync duration", "ms", [(t, 10.0), (t + 60, 40.0)], "dur"), bars=True
        )

        assert svg.count("<rect") == 2
        assert 'data-points="2"' in svg and "40 ms" in svg

    def test_no_points_says_so(self) -> None:
        assert "no data yet" in time_plot(Series("size", "", [], "size"))


def _when(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class TestSyncRuns:
    def test_a_sync_is_its_changes_and_the_outcomes_after_them(self) -> None:
        records = [
            RecordedEvent(1, events.ReindexRequired(occurred_at=_when(0), reason="no_index")),
            RecordedEvent(2, events.IndexRebuilt(occurred_at=_when(2), reason="no_index", files=3, chunks=30, duration_ms=1500.0)),
            RecordedEvent(3, events.FileChanged(occurred_at=_when(60), source="memory", path="a.md", mtime=1.0, size=9)),
            RecordedEvent(4, events.FileChanged(occurred_at=_when(60), source="memory", path="b.md", mtime=1.0, size=9)),
            RecordedEvent(5, events.FileIndexed(occurred_at=_when(61), source="memory", path="a.md", chunks=4, embedded=4, cached=0, duration_ms=300.0)),
            RecordedEvent(6, events.FileIndexed(occurred_at=_when(61.5), source="memory", path="b.md", chunks=2, embedded=2, cached=0, duration_ms=200.0)),
            RecordedEvent(7, events.FileDeleted(occurred_at=_when(120), source="memory", path="a.md")),
            RecordedEvent(8, events.FileRemoved(occurred_at=_when(120.1), source="memory", path="a.md")),
        ]  # fmt: skip

        runs = sync_runs(records)

        assert [(r.first_position, r.rebuilt, r.files_indexed, r.files_removed) for r in runs] == [
            (1, True, 3, 0),  # the files the rebuild states, as it lists no FileIndexed
            (3, False, 2, 0),
            (7, False, 0, 1),
        ]
        assert [r.duration_ms for r in runs] == [2000.0, 1500.0, 100.0]
        assert [r.chunks for r in runs] == [30, None, None]  # a file says what it has, not had

    def test_no_events_no_syncs(self) -> None:
        assert sync_runs([]) == []

    def test_the_health_page_row_of_a_rebuild_shows_the_files_it_indexed(self) -> None:
        records = [
            RecordedEvent(1, events.ReindexRequired(occurred_at=_when(0), reason="no_index")),
            RecordedEvent(2, events.IndexRebuilt(occurred_at=_when(1), reason="no_index", files=7, chunks=21, duration_ms=900.0)),
        ]  # fmt: skip
        report = _status(VectorProgress(done=21, total=21))

        page = str(status_html(report, records, first_sync_done=True, sync_form=Safe("")))

        (row,) = re.findall(r'<table class="runs">.*?<tbody><tr>(.*?)</tr>', page)
        assert re.findall(r"<td>(.*?)</td>", row)[1:4] == ["rebuild", "7", "0"]


class TestSizeSamples:
    def test_one_size_per_log_position_oldest_first_the_oldest_dropped_past_the_limit(
        self,
    ) -> None:
        samples = SizeSamples(limit=2)
        samples.add(5, 300.0, 12)
        samples.add(3, 100.0, 10)
        samples.add(4, 200.0, 11)

        assert samples.points() == [(200.0, 11.0), (300.0, 12.0)]
        assert samples.known(5) and not samples.known(3)


class TestResults:
    HIT = SearchResult("MEMORY.md", 1, 2, 0.5, "the weather was mild", "memory")

    def test_no_strong_match_is_said_above_the_hits_it_keeps(self) -> None:
        marked_response = SearchResponse([self.HIT], "local", "m", "hybrid", no_strong_match=True)
        html = results_html(SearchForm(q="chess"), marked_response)

        assert f'<p class="warning" id="no-strong-match">{esc(NO_STRONG_MATCH)}</p>' in html
        assert html.index("no-strong-match") < html.index('<ol class="hits"')

    def test_a_strong_or_unjudged_search_says_nothing(self) -> None:
        for flag in (False, None):
            response = SearchResponse([self.HIT], "local", "m", "hybrid", no_strong_match=flag)
            assert "no-strong-match" not in results_html(SearchForm(q="weather"), response)


class TestFilePage:
    def test_a_note_cut_at_the_read_cap_says_where_it_goes_on(self) -> None:
        cut = GetResult("memory/long.md", "a\nb", 1, 10_000, "memory", more_from=10_001)
        whole = GetResult("memory/short.md", "a\nb", 1, 10_000, "memory")

        shown = str(note_html(cut, Highlight()))

        assert "goes on after line 10000" in shown
        assert "memlane get memory/long.md --from 10001" in shown
        assert "goes on" not in str(note_html(whole, Highlight()))
