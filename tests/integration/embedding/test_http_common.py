"""Behaviour every HTTP provider shares: retries, classification, validation, concurrency."""

from __future__ import annotations

import math
import threading
import time

import httpx
import pytest

from memlane.application.ports.embedding import (
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
)
from memlane.domain.embedding import sanitize_and_normalize
from tests.integration.embedding._support import (
    CASES,
    SECRET,
    ProviderCase,
    Script,
    answer,
    body_of,
    raising,
    raw_vector,
    status,
)

pytestmark = pytest.mark.integration
by_name = pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])


@by_name
class TestHttpProviders:
    def test_documents_come_back_normalised_in_input_order(self, case: ProviderCase) -> None:
        script = Script([answer(case)])
        provider = case.build(transport=script.transport, sleep=lambda s: None)

        vectors = provider.embed_documents(["alpha", "beta", "gamma"])

        assert vectors == [sanitize_and_normalize(raw_vector(case.dims, i)) for i in range(3)]
        assert all(math.isclose(math.hypot(*v), 1.0) for v in vectors)
        assert len(script.requests) == 1

    def test_empty_input_makes_no_request(self, case: ProviderCase) -> None:
        script = Script([])
        provider = case.build(transport=script.transport)

        assert provider.embed_documents([]) == []
        assert script.requests == []

    def test_429_waits_what_retry_after_says_then_succeeds(self, case: ProviderCase) -> None:
        sleeps: list[float] = []
        script = Script([status(429, case.error_429, {"Retry-After": "7"}), answer(case)])
        provider = case.build(transport=script.transport, sleep=sleeps.append)

        vector = provider.embed_query("q")

        assert len(vector) == case.dims
        assert sleeps == [7.0]
        assert len(script.requests) == 2

    def test_500_is_retried_with_jittered_backoff(self, case: ProviderCase) -> None:
        sleeps: list[float] = []
        script = Script([status(500, case.error_500), status(503, case.error_500), answer(case)])
        provider = case.build(transport=script.transport, sleep=sleeps.append)

        provider.embed_documents(["a"])

        assert len(sleeps) == 2
        assert 0.5 <= sleeps[0] <= 0.6
        assert 1.0 <= sleeps[1] <= 1.2

    def test_persistent_5xx_gives_up_as_unavailable(self, case: ProviderCase) -> None:
        script = Script([status(502, case.error_500)] * 3)
        provider = case.build(transport=script.transport, sleep=lambda s: None, max_retries=2)

        with pytest.raises(EmbeddingUnavailable, match="after 3 attempt"):
            provider.embed_documents(["a"])
        assert len(script.requests) == 3

    def test_auth_failure_is_final_and_never_echoes_the_key(self, case: ProviderCase) -> None:
        body = {"error": {"message": f"Incorrect API key provided: {SECRET}", "code": "invalid"}}
        script = Script([status(401, body)])
        provider = case.build(transport=script.transport, sleep=lambda s: None)

        with pytest.raises(EmbeddingRejected) as caught:
            provider.embed_documents(["a"])

        assert SECRET not in str(caught.value)
        assert "401" in str(caught.value)
        assert len(script.requests) == 1

    def test_malformed_json_is_rejected(self, case: ProviderCase) -> None:
        script = Script([lambda request: httpx.Response(200, text="<html>oops</html>")])
        provider = case.build(transport=script.transport)

        with pytest.raises(EmbeddingRejected, match="not valid JSON"):
            provider.embed_documents(["a"])

    def test_wrong_vector_count_is_rejected(self, case: ProviderCase) -> None:
        script = Script([answer(case, extra=1)])
        provider = case.build(transport=script.transport)

        with pytest.raises(EmbeddingRejected, match="3 vectors returned for 2 inputs"):
            provider.embed_documents(["a", "b"])

    def test_wrong_dimensions_are_rejected(self, case: ProviderCase) -> None:
        script = Script([answer(case, dims=case.dims - 1)])
        provider = case.build(transport=script.transport)

        with pytest.raises(EmbeddingRejected, match="dimensions"):
            provider.embed_documents(["a"])

    def test_non_finite_components_are_zeroed(self, case: ProviderCase) -> None:
        def handler(request: httpx.Request) -> httpx.Response:
            vector = raw_vector(case.dims, 0)
            vector[0] = math.nan
            vector[1] = math.inf
            payload = case.answer([vector])
            if case.name == "gemini":
                payload = {"embeddings": [{"values": vector}]}
            return httpx.Response(200, content=httpx_json(payload))

        provider = case.build(transport=Script([handler]).transport)

        vector = provider.embed_documents(["a"])[0]

        assert vector[0] == 0.0
        assert vector[1] == 0.0
        assert all(math.isfinite(x) for x in vector)

    def test_timeouts_are_retried_then_reported_as_timeout(self, case: ProviderCase) -> None:
        sleeps: list[float] = []
        script = Script([raising(httpx.ReadTimeout)] * 2)
        provider = case.build(transport=script.transport, sleep=sleeps.append, max_retries=1)

        with pytest.raises(EmbeddingTimeout):
            provider.embed_documents(["a"])
        assert len(script.requests) == 2
        assert len(sleeps) == 1

    def test_connection_reset_is_retried(self, case: ProviderCase) -> None:
        script = Script([raising(httpx.RemoteProtocolError), answer(case)])
        provider = case.build(transport=script.transport, sleep=lambda s: None)

        assert len(provider.embed_documents(["a"])[0]) == case.dims

    def test_key_is_stable_secret_free_and_tracks_the_model(self, case: ProviderCase) -> None:
        first = case.build(headers={"X-Team": "a"})
        again = case.build(headers={"x-team": "a"})
        other = case.build(model="another-model", dimensions=8)

        assert first.key == again.key
        assert first.key != other.key
        assert SECRET not in first.key


@pytest.mark.parametrize("case", [c for c in CASES if c.name != "gemini"], ids=lambda c: c.name)
class TestRequestBatching:
    def test_large_inputs_are_split_by_byte_budget_and_reassembled(
        self, case: ProviderCase
    ) -> None:
        script = Script([answer(case)] * 3)
        provider = case.build(transport=script.transport, max_concurrency=1)
        texts = ["x" * 3000, "y" * 3000, "z" * 9000, "w" * 10]

        vectors = provider.embed_documents(texts)

        inputs = [body_of(request)["input"] for request in script.requests]
        assert [[text[0] for text in batch] for batch in inputs] == [["x", "y"], ["z"], ["w"]]
        assert vectors == [sanitize_and_normalize(raw_vector(case.dims, i)) for i in (0, 1, 0, 0)]

    def test_no_more_requests_in_flight_than_configured(self, case: ProviderCase) -> None:
        lock = threading.Lock()
        state = {"now": 0, "peak": 0}
        reply = answer(case)

        def slow(request: httpx.Request) -> httpx.Response:
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.03)
            with lock:
                state["now"] -= 1
            return reply(request)

        provider = case.build(transport=httpx.MockTransport(slow), max_concurrency=2)

        vectors = provider.embed_documents(["t" * 5000] * 8)

        assert len(vectors) == 8
        assert state["peak"] == 2


def httpx_json(payload: object) -> bytes:
    import json

    return json.dumps(payload).encode()
