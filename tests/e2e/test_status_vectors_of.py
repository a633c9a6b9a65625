"""`status` in a later process says whose vectors the index holds when they are not the configured
model's: after the model was changed in the config, and after a runtime fallback (the configured
provider refused, `fallback: ollama` embedded everything). A final failure says what to fix.

One HTTP server on 127.0.0.1 speaks the OpenAI embeddings wire format (refusing the key with 401
while `refusing` is set) and Ollama's `/api/embed`; each model answers with its own dimensions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home, no_traceback
from tests.e2e._loud_support import memlane as run_cli
from tests.loopback_http import QuietHandler, serving

pytestmark = pytest.mark.e2e

DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "nomic-embed-text": 768}


@dataclass
class Server:
    url: str
    refusing: bool = False


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server(url="")

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body = self.json_body()
            assert isinstance(body, dict)
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vector = [1.0] + [0.0] * (DIMS[body["model"]] - 1)
            payload: dict[str, object]
            code = 200
            if self.path == "/api/embed":
                payload = {"model": body["model"], "embeddings": [vector for _ in texts]}
            elif state.refusing:
                error = {"message": "Incorrect API key", "code": "invalid_api_key"}
                payload, code = {"error": error}, 401
            else:
                data = [{"index": i, "embedding": vector} for i in range(len(texts))]
                payload = {"object": "list", "model": body["model"], "data": data}
            self.reply_json(code, payload)

    with serving(Handler) as state.url:
        yield state


def _env(home: Path, server: Server, model: str, *, fallback: str = "none") -> dict[str, str]:
    block = {
        "provider": "openai",
        "model": model,
        "fallback": fallback,
        "remote": {"baseUrl": f"{server.url}/v1", "apiKey": "sk-test", "timeoutSeconds": 5},
    }
    tree = {
        "models": {"providers": {"ollama": {"baseUrl": server.url}}},
        "agents": {"defaults": {"memorySearch": block}},
    }
    config = home / "config.json5"
    config.write_text(json.dumps(tree))
    env = cli_env(home, MEMLANE_CONFIG=str(config), MEMLANE_NO_DAEMON="1")
    del env["MEMLANE_PROVIDER"]
    return env


def _status(home: Path, env: dict[str, str]) -> tuple[str, dict[str, object]]:
    text = run_cli(home, "status", env=env)
    as_json = run_cli(home, "status", "--json", env=env)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    assert no_traceback(text) and no_traceback(as_json)
    return text.stdout, json.loads(as_json.stdout)


def _line(text: str, prefix: str) -> str:
    (line,) = [x for x in text.splitlines() if x.startswith(prefix)]
    return line


def test_a_changed_model_is_said_until_the_index_is_re_embedded(
    tmp_path: Path, server: Server
) -> None:
    home = make_home(tmp_path)
    assert run_cli(home, "index", env=_env(home, server, "text-embedding-3-small")).returncode == 0
    env = _env(home, server, "text-embedding-3-large")  # the user edits the config

    text, payload = _status(home, env)

    assert _line(text, "Model:") == "Model: text-embedding-3-large"
    assert _line(text, "Vectors:") == (
        "Vectors: 2 / 2 (100 %) chunks embedded by openai text-embedding-3-small; "
        "0 / 2 (0 %) by openai text-embedding-3-large (configured)"
    )
    assert _line(text, "Warning:").endswith(
        "re-embedding pending, the next sync (`memlane index`) embeds them"
    )
    assert payload["reembedding"] == {
        "indexedProvider": "openai",
        "indexedModel": "text-embedding-3-small",
        "provider": "openai",
        "model": "text-embedding-3-large",
        "vectors": {"done": 0, "total": 2},
        "byFallback": False,
    }
    assert payload["vectorDims"] == 1536

    assert run_cli(home, "index", env=env).returncode == 0
    text, payload = _status(home, env)

    assert payload["reembedding"] is None and payload["warnings"] == []
    assert payload["vectorDims"] == 3072
    assert _line(text, "Vectors:") == "Vectors: 2 / 2 (100 %) chunks embedded"


def test_a_new_process_says_the_vectors_are_the_fallbacks_and_why(
    tmp_path: Path, server: Server
) -> None:
    home = make_home(tmp_path)
    env = _env(home, server, "text-embedding-3-small", fallback="ollama")
    server.refusing = True
    indexed = run_cli(home, "index", env=env)
    assert indexed.returncode == 0, indexed.stderr

    text, payload = _status(home, env)  # a new process: it runs openai again

    assert (payload["provider"], payload["vectorDims"]) == ("openai", 768)
    assert payload["fallbackFrom"] == "openai"
    reason = payload["fallbackReason"]
    assert isinstance(reason, str) and "401" in reason and "OPENAI_API_KEY" in reason
    assert _line(text, "Fallback:") == f"Fallback: from openai ({reason})"
    assert _line(text, "Vectors:").startswith(
        "Vectors: 2 / 2 (100 %) chunks embedded by ollama nomic-embed-text (the fallback); "
    )
    reembedding = payload["reembedding"]
    assert isinstance(reembedding, dict) and reembedding["byFallback"] is True
    assert _line(text, "Warning:").endswith(
        "the next sync tries openai again and re-embeds if it answers"
    )

    server.refusing = False  # the key works again
    assert run_cli(home, "index", env=env).returncode == 0
    _text, payload = _status(home, env)

    assert payload["fallbackFrom"] is None and payload["reembedding"] is None
    assert payload["vectorDims"] == 1536


def test_a_refused_key_says_what_to_fix_not_that_it_retries(tmp_path: Path, server: Server) -> None:
    home = make_home(tmp_path)
    env = _env(home, server, "text-embedding-3-small")
    server.refusing = True
    assert run_cli(home, "index", env=env).returncode == 0

    text, _payload = _status(home, env)

    issue = _line(text, "  (vectors):")
    assert "will retry" not in issue
    assert "check remote.apiKey or OPENAI_API_KEY" in issue  # the error's own hint
    assert issue.endswith(
        "retrying cannot fix this; fix the key, quota, model or endpoint it names, "
        "then run `memlane index`"
    )


def test_a_fallback_in_the_middle_of_a_sync_re_embeds_the_index_and_the_sync_succeeds(
    tmp_path: Path, server: Server
) -> None:
    """The key is refused while a later sync indexes a new note: the fallback embeds it, the
    index records the fallback's model (other dimensions) instead of refusing its vectors."""
    home = make_home(tmp_path)
    env = _env(home, server, "text-embedding-3-small", fallback="ollama")
    assert run_cli(home, "index", env=env).returncode == 0
    (home / "ws" / "memory" / "gateway.md").write_text("# Gateway\nIt moved to port 9000.\n")
    server.refusing = True

    indexed = run_cli(home, "index", env=env)

    assert indexed.returncode == 0, indexed.stderr
    assert "using the fallback ollama" in indexed.stderr
    assert "1 file(s) indexed" in indexed.stdout
    text, payload = _status(home, env)
    assert payload["vectorDims"] == 768 and payload["fallbackFrom"] == "openai"
    assert _line(text, "Vectors:").startswith(
        "Vectors: 3 / 3 (100 %) chunks embedded by ollama nomic-embed-text (the fallback); "
    )
    found = run_cli(home, "search", "gateway port", "--json", env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "memory/gateway.md"

    server.refusing = False  # the key works again: the configured model takes the index back
    assert run_cli(home, "index", env=env).returncode == 0
    _text, payload = _status(home, env)
    assert payload["fallbackFrom"] is None and payload["reembedding"] is None
    assert payload["vectorDims"] == 1536
