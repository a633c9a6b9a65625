"""choose_provider: auto order, explicit provider, fallback, keyword-only with a reason."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memlane.application.ports.embedding import (
    EmbeddingProvider,
    EmbeddingRejected,
    ProviderNotConfigured,
)
from memlane.application.provider_selection import ProviderFactory, choose_provider
from memlane.domain.errors import ConfigError
from tests.fakes.embedding import FakeEmbeddingProvider


def works(name: str, built: list[str]) -> ProviderFactory:
    def factory() -> EmbeddingProvider:
        built.append(name)
        return FakeEmbeddingProvider(id=name)

    return factory


def fails(error: Exception, name: str, built: list[str]) -> Callable[[], EmbeddingProvider]:
    def factory() -> EmbeddingProvider:
        built.append(name)
        raise error

    return factory


def missing(name: str, built: list[str]) -> ProviderFactory:
    return fails(ProviderNotConfigured(f"No API key found for provider {name}"), name, built)


class TestAutoSelection:
    def test_local_wins_when_it_can_run(self) -> None:
        built: list[str] = []
        factories = {"local": works("local", built), "openai": works("openai", built)}

        choice = choose_provider("auto", "none", factories)

        assert choice.provider is not None
        assert choice.provider.id == "local"
        assert built == ["local"]
        assert "local" in choice.reason

    def test_providers_are_tried_in_order_skipping_the_unconfigured(self) -> None:
        built: list[str] = []
        factories = {
            "mistral": works("mistral", built),
            "gemini": missing("gemini", built),
            "openai": missing("openai", built),
            "local": missing("local", built),
            "voyage": works("voyage", built),
            "ollama": works("ollama", built),
        }

        choice = choose_provider("auto", "none", factories)

        assert choice.provider is not None
        assert choice.provider.id == "voyage"
        assert built == ["local", "openai", "gemini", "voyage"]
        assert "openai" in choice.reason

    def test_nothing_available_means_keyword_only_with_every_reason(self) -> None:
        built: list[str] = []
        names = ["local", "openai", "gemini", "voyage", "mistral"]
        factories = {name: missing(name, built) for name in names}
        factories["ollama"] = works("ollama", built)

        choice = choose_provider("auto", "none", factories)

        assert choice.provider is None
        assert choice.keyword_only
        assert built == names  # ollama is never auto-selected
        assert all(name in choice.reason for name in names)

    def test_a_broken_local_model_is_skipped(self) -> None:
        built: list[str] = []
        factories = {
            "local": fails(EmbeddingRejected("model file corrupt"), "local", built),
            "openai": works("openai", built),
        }

        choice = choose_provider("auto", "none", factories)

        assert choice.provider is not None
        assert choice.provider.id == "openai"

    @pytest.mark.parametrize(
        "error", [ProviderNotConfigured("model file not found: /x.onnx"), EmbeddingRejected("bad")]
    )
    def test_a_local_model_set_up_on_purpose_that_cannot_run_is_named_not_skipped_quietly(
        self, error: Exception
    ) -> None:
        built: list[str] = []
        factories = {"local": fails(error, "local", built), "openai": missing("openai", built)}

        keyword_only = choose_provider("auto", "none", factories, configured=frozenset({"local"}))
        unconfigured = choose_provider("auto", "none", factories)

        assert keyword_only.provider is None
        assert (keyword_only.fallback_from, keyword_only.fallback_reason) == ("local", str(error))
        assert unconfigured.fallback_from is None  # the bundled model: auto's best effort

    def test_a_broken_remote_configuration_is_fatal(self) -> None:
        built: list[str] = []
        factories = {
            "local": missing("local", built),
            "openai": fails(EmbeddingRejected("bad base URL"), "openai", built),
            "gemini": works("gemini", built),
        }

        with pytest.raises(EmbeddingRejected, match="bad base URL"):
            choose_provider("auto", "none", factories)


class TestExplicitSelection:
    def test_the_requested_provider_is_used(self) -> None:
        built: list[str] = []

        choice = choose_provider("ollama", "none", {"ollama": works("ollama", built)})

        assert choice.provider is not None
        assert choice.provider.id == "ollama"
        assert choice.fallback_from is None
        assert choice.requested == "ollama"

    def test_failure_falls_back_and_says_so(self) -> None:
        built: list[str] = []
        factories = {"openai": missing("openai", built), "local": works("local", built)}

        choice = choose_provider("openai", "local", factories)

        assert choice.provider is not None
        assert choice.provider.id == "local"
        assert choice.fallback_from == "openai"
        assert choice.fallback_reason is not None
        assert "No API key" in choice.fallback_reason

    def test_missing_key_without_fallback_is_keyword_only(self) -> None:
        choice = choose_provider("voyage", "none", {"voyage": missing("voyage", [])})

        assert choice.provider is None
        assert "voyage" in choice.reason

    def test_both_unconfigured_is_keyword_only(self) -> None:
        factories = {"openai": missing("openai", []), "gemini": missing("gemini", [])}

        choice = choose_provider("openai", "gemini", factories)

        assert choice.provider is None
        assert "openai" in choice.reason
        assert "gemini" in choice.reason

    def test_a_real_failure_without_fallback_is_raised(self) -> None:
        factories = {"openai": fails(EmbeddingRejected("bad headers"), "openai", [])}

        with pytest.raises(EmbeddingRejected, match="bad headers"):
            choose_provider("openai", "none", factories)

    def test_a_real_failure_of_both_is_raised_with_both_reasons(self) -> None:
        factories = {
            "openai": fails(EmbeddingRejected("bad headers"), "openai", []),
            "gemini": missing("gemini", []),
        }

        with pytest.raises(EmbeddingRejected, match=r"bad headers.*gemini"):
            choose_provider("openai", "gemini", factories)

    def test_fallback_equal_to_the_provider_is_ignored(self) -> None:
        built: list[str] = []

        choice = choose_provider("openai", "openai", {"openai": missing("openai", built)})

        assert choice.provider is None
        assert built == ["openai"]

    def test_unknown_names_are_configuration_errors(self) -> None:
        with pytest.raises(ConfigError, match="provider"):
            choose_provider("cohere", "none", {})
        with pytest.raises(ConfigError, match="fallback"):
            choose_provider("openai", "cohere", {"openai": missing("openai", [])})
