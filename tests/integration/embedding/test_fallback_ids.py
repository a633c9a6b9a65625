"""A `fallback` named by an OpenAI-compatible id (issue 15) takes over against a real server.

Servers on 127.0.0.1 speak the OpenAI embeddings wire format (or answer 500); the provider set
is the one the application builds (provider_factories + make_runtime).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from memlane.application.ports.embedding import EmbeddingError
from memlane.entrypoints.config.runtime import resolve_settings
from memlane.entrypoints.container.embedding import make_runtime, provider_factories
from tests.loopback_http import QuietHandler, serving

DIMS = 1536  # text-embedding-3-small, the default model a fallback runs (checked by the adapter)


@dataclass
class Server:
    url: str
    fail: bool
    seen: list[tuple[str, str | None, dict[str, object]]] = field(default_factory=list)


def _serve(fail: bool) -> Iterator[Server]:
    state = Server(url="", fail=fail)

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body = self.json_body()
            assert isinstance(body, dict)
            state.seen.append((self.path, self.headers.get("Authorization"), body))
            payload: dict[str, object]
            if state.fail:
                payload, code = {"error": {"message": "down", "type": "server_error"}}, 500
            else:
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": [1.0] + [0.0] * (DIMS - 1)}
                    for i in range(len(inputs))
                ]
                payload, code = {"object": "list", "data": data, "model": body["model"]}, 200
            self.reply_json(code, payload)

    with serving(Handler) as root:
        state.url = f"{root}/v1"
        yield state


@pytest.fixture
def good() -> Iterator[Server]:
    yield from _serve(fail=False)


@pytest.fixture
def bad() -> Iterator[Server]:
    yield from _serve(fail=True)


def _tree(memory_search: dict[str, object], providers: dict[str, object]) -> dict[str, object]:
    return {
        "models": {"providers": providers},
        "agents": {"defaults": {"memorySearch": memory_search}},
    }


def test_a_custom_id_stands_in_for_a_provider_without_a_key(good: Server) -> None:
    settings = resolve_settings(
        _tree(
            {"provider": "openai", "fallback": "lab-box", "remote": {"timeoutSeconds": 5}},
            {"lab-box": {"baseUrl": good.url, "apiKey": "k-lab"}},
        )
    )
    runtime = make_runtime(settings, provider_factories(settings, {}))  # no OPENAI_API_KEY

    selection = runtime.selection
    assert selection.provider is not None
    assert selection.fallback_from == "openai"
    vector = selection.provider.embed_query("hello")

    assert len(vector) == DIMS
    (path, auth, body) = good.seen[0]
    assert (path, auth, body["model"]) == (
        "/v1/embeddings",
        "Bearer k-lab",
        "text-embedding-3-small",
    )


def test_openai_takes_over_from_a_failing_lmstudio_at_its_own_endpoint(
    good: Server, bad: Server
) -> None:
    settings = resolve_settings(
        _tree(
            {"provider": "lmstudio", "model": "nomic-embed", "fallback": "openai",
             "remote": {"timeoutSeconds": 5}},
            {"lmstudio": {"baseUrl": bad.url}},
        )
    )  # fmt: skip
    env = {"OPENAI_API_KEY": "sk-real", "OPENAI_BASE_URL": good.url}
    runtime = make_runtime(settings, provider_factories(settings, env))
    first = runtime.selection.provider
    assert first is not None

    with pytest.raises(EmbeddingError) as failed:
        first.embed_query("hello")
    switched = runtime.fall_back(failed.value)

    assert switched is not None and switched.provider is not None
    assert len(switched.provider.embed_query("hello")) == DIMS
    assert {(auth, body["model"]) for _, auth, body in bad.seen} == {
        (None, "nomic-embed")
    }  # retried
    assert [(auth, body["model"]) for _, auth, body in good.seen] == [
        ("Bearer sk-real", "text-embedding-3-small")
    ]
