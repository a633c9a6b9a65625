"""EmbeddingRuntime: lazy selection that is never sticky on failure, and a one-time fallback."""

from __future__ import annotations

import functools
from collections.abc import Callable

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.issues import IssueBoard
from memlane.application.ports.embedding import EmbeddingUnavailable, ProviderNotConfigured
from memlane.application.ports.index_store import RecordedIssue
from memlane.application.provider_failures import ProviderFailureRecord
from tests.fakes.clock import FakeClock
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.index_store import FakeIndexStore

PRIMARY = FakeEmbeddingProvider(id="openai", model="small")
BACKUP = FakeEmbeddingProvider(id="local", model="tiny")


def counting(result: Callable[[], Selection]) -> tuple[Callable[[], Selection], list[int]]:
    calls: list[int] = []

    def select() -> Selection:
        calls.append(1)
        return result()

    return select, calls


class TestSelection:
    def test_nothing_is_selected_until_asked(self) -> None:
        select, calls = counting(lambda: Selection(provider=PRIMARY))
        runtime = EmbeddingRuntime(select)

        assert (runtime.is_selected, calls) == (False, [])
        assert runtime.provider is PRIMARY
        assert runtime.provider is PRIMARY
        assert (runtime.is_selected, len(calls)) == (True, 1)

    def test_a_failed_selection_is_keyword_only_and_retried_next_time(self) -> None:
        outcomes: list[Selection | Exception] = [
            ProviderNotConfigured("no key"),
            Selection(provider=PRIMARY),
        ]

        def select() -> Selection:
            outcome = outcomes.pop(0)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        runtime = EmbeddingRuntime(select)

        first = runtime.selection
        assert (first.provider, first.reason) == (None, "no key")
        assert not runtime.is_selected
        assert runtime.provider is PRIMARY

    def test_a_keyword_only_selection_keeps_its_reason(self) -> None:
        runtime = EmbeddingRuntime(lambda: Selection(provider=None, reason="no provider"))

        assert (runtime.provider, runtime.selection.reason) == (None, "no provider")

    def test_auto_warns_only_when_it_passed_a_provider_set_up_on_purpose(self) -> None:
        quiet = EmbeddingRuntime(lambda: Selection(provider=None, reason="none"), requested="auto")
        passed = EmbeddingRuntime(
            lambda: Selection(
                provider=None,
                reason="keyword-only",
                fallback_from="local",
                fallback_reason="local: model file not found: /x.onnx",
            ),
            requested="auto",
        )
        moved_on = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY, fallback_from="local", fallback_reason="corrupt"),
            requested="auto",
        )

        assert quiet.warning is None
        assert passed.warning == (
            "embedding provider local cannot run (local: model file not found: /x.onnx); "
            "search is keyword-only"
        )
        assert (
            moved_on.warning == f"embedding provider local cannot run (corrupt); using {PRIMARY.id}"
        )


class TestFallBack:
    def test_without_a_fallback_there_is_nothing_to_switch_to(self) -> None:
        runtime = EmbeddingRuntime(lambda: Selection(provider=PRIMARY))

        assert runtime.fall_back(EmbeddingUnavailable("down")) is None
        assert runtime.provider is PRIMARY

    def test_the_fallback_takes_over_and_records_why(self) -> None:
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY), lambda: Selection(provider=BACKUP)
        )
        runtime.selection  # noqa: B018 (select the primary first)

        switched = runtime.fall_back(EmbeddingUnavailable("rate limited"))

        assert switched == Selection(
            provider=BACKUP, fallback_from="openai", fallback_reason="rate limited"
        )
        assert runtime.provider is BACKUP
        assert runtime.selection.fallback_from == "openai"

    def test_the_fallback_is_used_only_once(self) -> None:
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY), lambda: Selection(provider=None, reason="none")
        )
        runtime.selection  # noqa: B018
        assert runtime.fall_back(EmbeddingUnavailable("down")) is not None

        assert runtime.fall_back(EmbeddingUnavailable("down again")) is None
        assert runtime.selection.fallback_reason == "down"

    def test_a_fallback_equal_to_the_current_provider_is_no_switch(self) -> None:
        same = FakeEmbeddingProvider(id="openai", model="small")
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY), lambda: Selection(provider=same)
        )
        runtime.selection  # noqa: B018

        assert runtime.fall_back(EmbeddingUnavailable("down")) is None
        assert runtime.provider is PRIMARY

    def test_the_same_provider_with_another_model_is_a_switch(self) -> None:
        other_model = FakeEmbeddingProvider(id="openai", model="large")
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY), lambda: Selection(provider=other_model)
        )
        runtime.selection  # noqa: B018

        assert runtime.fall_back(EmbeddingUnavailable("down")) is not None
        assert runtime.provider is other_model

    def test_a_fallback_that_cannot_start_leaves_the_provider_in_place(self) -> None:
        def broken() -> Selection:
            raise ProviderNotConfigured("no model package")

        runtime = EmbeddingRuntime(lambda: Selection(provider=PRIMARY), broken)
        runtime.selection  # noqa: B018

        assert runtime.fall_back(EmbeddingUnavailable("down")) is None
        assert runtime.provider is PRIMARY

    def test_before_any_selection_the_requested_name_is_the_origin(self) -> None:
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY),
            lambda: Selection(provider=None, reason="keyword-only"),
            requested="gemini",
        )

        switched = runtime.fall_back(EmbeddingUnavailable("down"))

        assert switched is not None
        assert (switched.fallback_from, switched.provider, switched.reason) == (
            "gemini",
            None,
            "keyword-only",
        )
        assert runtime.provider is None


def _recording(requested: str = "openai") -> tuple[EmbeddingRuntime, FakeIndexStore]:
    """A runtime keeping failures on an issue board over a fake store, as the container wires."""
    store = FakeIndexStore()
    runtime = EmbeddingRuntime(lambda: Selection(provider=PRIMARY), requested=requested)
    runtime.keep_failures_in(ProviderFailureRecord(IssueBoard(store)))
    return runtime, store


class TestFailureKeptWithTheIndex:
    def test_a_failure_is_written_once_and_read_by_a_new_runtime(self) -> None:
        runtime, store = _recording()
        runtime.selection  # noqa: B018
        runtime.note_failure(EmbeddingUnavailable("HTTP 500\nbody"))
        runtime.note_failure(EmbeddingUnavailable("HTTP 500\nagain"))  # same line: no write

        assert store.issues() == [RecordedIssue("provider", "openai", "HTTP 500")]
        fresh = EmbeddingRuntime(lambda: Selection(provider=PRIMARY), requested="openai")
        fresh.keep_failures_in(ProviderFailureRecord(IssueBoard(store)))
        assert fresh.warning == (
            "embedding provider openai failed when last used (HTTP 500); "
            "search may be keyword-only, the next search tries it again"
        )
        assert fresh.recalled_warning() == fresh.warning  # also without selecting

    def test_a_success_clears_the_record_and_the_warning(self) -> None:
        runtime, store = _recording()
        runtime.note_failure(EmbeddingUnavailable("down"))
        fresh = EmbeddingRuntime(lambda: Selection(provider=PRIMARY), requested="openai")
        fresh.keep_failures_in(ProviderFailureRecord(IssueBoard(store)))

        fresh.note_success()

        assert (store.issues(), fresh.warning) == ([], None)

    def test_the_record_is_not_a_file_problem(self) -> None:
        runtime, store = _recording()
        runtime.note_failure(EmbeddingUnavailable("down"))

        assert IssueBoard(store).all() == []

    def test_another_provider_or_none_does_not_inherit_the_record(self) -> None:
        runtime, store = _recording()
        runtime.selection  # noqa: B018
        runtime.note_failure(EmbeddingUnavailable("down"))
        for requested, chosen in (("local", Selection(provider=BACKUP)), ("none", Selection(None))):
            other = EmbeddingRuntime(functools.partial(lambda c: c, chosen), requested=requested)
            other.keep_failures_in(ProviderFailureRecord(IssueBoard(store)))
            assert other.warning is None


class TestAFailureWhoseCauseIsGone:
    """#30.5: a failure is kept with the configuration it happened under; once that changed (a
    key removed or replaced, another endpoint), it is not said again and the record goes."""

    OLD, NEW = "0123456789abcdef", "fedcba9876543210"

    def _runtime(self, store: FakeIndexStore, config: str) -> EmbeddingRuntime:
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY), requested="openai", config=config
        )
        runtime.keep_failures_in(ProviderFailureRecord(IssueBoard(store)))
        return runtime

    def test_the_same_configuration_still_says_it(self) -> None:
        store = FakeIndexStore()
        self._runtime(store, self.OLD).note_failure(EmbeddingUnavailable("HTTP 401 bad key"))

        assert "HTTP 401 bad key" in (self._runtime(store, self.OLD).recalled_warning() or "")

    def test_another_configuration_neither_says_nor_keeps_it(self) -> None:
        store = FakeIndexStore()
        self._runtime(store, self.OLD).note_failure(EmbeddingUnavailable("HTTP 401 bad key"))
        changed = self._runtime(store, self.NEW)

        assert changed.recalled_warning() is None  # a fresh `status`: nothing selected
        assert changed.warning is None  # selecting clears the record
        assert store.issues() == []

    def test_a_record_from_before_fingerprints_is_still_said(self) -> None:
        store = FakeIndexStore()
        store.replace_issues([RecordedIssue("provider", "openai", "HTTP 500")])

        assert self._runtime(store, self.NEW).recalled_warning() is not None


class TestFallBackAfterAFailure:
    """The callers note the failure first, then fall back (vector_backfill, handlers)."""

    def _failed_over(self) -> EmbeddingRuntime:
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY),
            lambda: Selection(provider=BACKUP),
            requested="openai",
            clock=FakeClock(),
            cooldown=60.0,
        )
        runtime.selection  # noqa: B018
        error = EmbeddingUnavailable("openai embeddings failed: connection refused")
        runtime.note_failure(error)
        runtime.fall_back(error)
        return runtime

    def test_the_fallback_is_usable_at_once_not_after_the_cool_down(self) -> None:
        assert self._failed_over().usable is BACKUP

    def test_the_warning_names_the_failed_provider_and_the_fallback_in_use(self) -> None:
        assert self._failed_over().warning == (
            "embedding provider openai failed (openai embeddings failed: connection refused); "
            "using the fallback local"
        )

    def test_a_keyword_only_fallback_keeps_the_cool_down(self) -> None:
        runtime = EmbeddingRuntime(
            lambda: Selection(provider=PRIMARY),
            lambda: Selection(provider=None, reason="keyword-only"),
            requested="openai",
            clock=FakeClock(),
            cooldown=60.0,
        )
        runtime.selection  # noqa: B018
        runtime.note_failure(EmbeddingUnavailable("down"))
        runtime.fall_back(EmbeddingUnavailable("down"))

        assert runtime.usable is None
        assert runtime.warning is not None
        assert runtime.warning.startswith("embedding provider openai failed (down)")
