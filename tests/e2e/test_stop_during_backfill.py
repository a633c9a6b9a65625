"""Issue #27: a process told to stop while its background vector backfill runs stops within
one provider call, not a whole batch. A slow OpenAI-compatible embedding server on 127.0.0.1
(0.6 s per text, the pace of a local model on long passages) answers `memlane watch`, then
`memlane serve`, each SIGTERMed as its first embedding request arrives: each exits well before
the old whole batch (32 texts, ~19 s) would have been answered, every text the server answered
is committed, and `index` then embeds the rest without asking for a committed chunk again."""

from __future__ import annotations

import hashlib
import json
import math
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from memlane.application.vector_backfill import BACKFILL_BATCH
from tests.e2e._loud_support import cli_env, make_home
from tests.e2e._loud_support import memlane as run_cli
from tests.integration.store.helpers import raw_connect

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PER_TEXT_S = 0.6
NOTES = BACKFILL_BATCH + 8
DIMS = 8
# The old code answered SIGTERM after its whole batch: BACKFILL_BATCH * PER_TEXT_S (~19 s).
STOPS_WITHIN_S = 12.0


class _SlowEmbeddings(BaseHTTPRequestHandler):
    """POST /v1/embeddings: notes the arrival of each request for chunks, takes PER_TEXT_S per
    input, records the chunks it answered."""

    lock = threading.Lock()
    asked: ClassVar[list[list[str]]] = []
    answered: ClassVar[list[str]] = []
    arrived = threading.Event()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        cls = type(self)
        notes = [t for t in inputs if t.startswith("# Note")]  # not the dimension probe
        with cls.lock:
            cls.asked.append(notes)
        if notes:
            cls.arrived.set()
        time.sleep(PER_TEXT_S * len(inputs))
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(t)}
            for i, t in enumerate(inputs)
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        with cls.lock:
            cls.answered.extend(notes)

    def log_message(self, *_args: object) -> None:
        pass


def _vector(text: str) -> list[float]:
    raw = struct.unpack(f"{DIMS}b", hashlib.sha256(text.encode()).digest()[:DIMS])
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


@pytest.fixture
def server() -> Iterator[str]:
    _SlowEmbeddings.asked, _SlowEmbeddings.answered = [], []
    _SlowEmbeddings.arrived.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _SlowEmbeddings)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _committed(db: Path) -> set[str]:
    conn = raw_connect(db)
    try:
        return {t for (t,) in conn.execute("SELECT text FROM chunks WHERE embedding IS NOT NULL")}
    finally:
        conn.close()


def _stop_while_embedding(argv: list[str], env: dict[str, str], log: Path) -> float:
    """Start the process, SIGTERM it as the server receives its first embedding request, and
    return how long it took to exit from there."""
    _SlowEmbeddings.arrived.clear()
    with log.open("ab") as out:
        child = subprocess.Popen(argv, env=env, stdout=out, stderr=out)
    try:
        assert _SlowEmbeddings.arrived.wait(120), log.read_text()
        asked = time.monotonic()
        child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=120)
        took = time.monotonic() - asked
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert code == 0, log.read_text()
    return took


def test_watch_and_serve_stop_within_one_provider_call_and_keep_what_was_embedded(
    tmp_path: Path, server: str
) -> None:
    notes = {
        f"memory/n{n:03}.md": f"# Note {n}\n\nService {n} owns queue q{n}.\n" for n in range(NOTES)
    }
    home = make_home(tmp_path, notes)
    config = home / "config.json5"
    # No note pieces: at 0.6 s a text they would add ~50 s to the last `index` and nothing to
    # what this test is about (pieces follow the vectors; tests/unit/.../test_vector_backfill.py).
    block = {"provider": "openai", "model": "test-embed-8",
             "remote": {"baseUrl": server, "apiKey": "sk-test"},
             "query": {"pieceWeight": 0}}  # fmt: skip
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    env = cli_env(home, MEMLANE_CONFIG=str(config), MEMLANE_NO_DAEMON="1")
    del env["MEMLANE_PROVIDER"]
    db = home / "state" / "agents" / "main" / "memory.db"
    where = ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")]
    cli = [sys.executable, "-m", "memlane.entrypoints", *where]
    log = tmp_path / "servers.log"

    # `watch` indexes the keyword rows, then embeds in the background: stopped in its first call.
    took = _stop_while_embedding([*cli, "watch"], env, log)
    assert took < STOPS_WITHIN_S, (took, _SlowEmbeddings.asked)
    first = _committed(db)
    assert first and first == set(_SlowEmbeddings.answered)  # what was embedded is stored
    assert len(first) < NOTES

    # `serve` resumes the backfill from what is missing; stopped the same way.
    took = _stop_while_embedding([*cli, "serve", "--port", "0"], env, log)
    assert took < STOPS_WITHIN_S, (took, _SlowEmbeddings.asked)
    second = _committed(db)
    assert first < second and second == set(_SlowEmbeddings.answered)
    assert len(second) < NOTES

    asked_before = [t for call in _SlowEmbeddings.asked for t in call]
    assert len(asked_before) == len(set(asked_before))  # nothing was embedded twice
    _SlowEmbeddings.asked.clear()
    done = run_cli(home, "index", env=env, timeout=300)  # the rest, and only the rest
    assert done.returncode == 0, done.stderr
    assert len(_committed(db)) == NOTES
    asked_after = {t for call in _SlowEmbeddings.asked for t in call}
    assert asked_after.isdisjoint(second)
