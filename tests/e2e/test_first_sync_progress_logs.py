"""Item 14.8, without a terminal: the first sync behind a search through the Python API, the
gRPC server and the MCP server writes `sync_progress` log lines on stderr (files done/total,
chunks embedded, rate, ETA). MEMLANE_PROGRESS_SECONDS=0 logs every step, so nothing here depends
on timing; the interval itself is tested on a fake clock (tests/unit/application/test_progress).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import memlane
from memlane.application.reports import SyncProgress
from memlane.entrypoints.grpc.client import MemlaneClient
from tests.e2e._loud_support import cli_env, make_home
from tests.e2e.test_grpc_subprocess import Process, _command, _free_port, _wait_serving

pytestmark = pytest.mark.e2e

FILES = 120


@pytest.fixture
def home(tmp_path: Path) -> Path:
    notes = {f"memory/note-{i:04d}.md": f"# Note {i}\n\ntopic{i} words\n" for i in range(FILES)}
    notes["MEMORY.md"] = "# Preferences\n\nThe user prefers tabs over spaces.\n"
    return make_home(tmp_path, notes)


def _env(home: Path) -> dict[str, str]:
    return cli_env(home, MEMLANE_PROGRESS_SECONDS="0", PYTHONUNBUFFERED="1")


def _progress(stderr: str) -> list[dict[str, object]]:
    """The `sync_progress` records among the JSON log lines (stderr is not a terminal)."""
    found = []
    for line in stderr.splitlines():
        if '"sync_progress"' in line:
            record = json.loads(line)
            assert record["event"] == "sync_progress"
            found.append(record)
    return found


def _check(records: list[dict[str, object]]) -> None:
    assert records, "no progress line"
    total = FILES + 1
    assert {r["files_total"] for r in records if r["phase"] == "rebuild"} == {total}
    assert any(r["files_done"] == total for r in records)
    assert any(isinstance(r["eta_s"], float) for r in records)  # mid-way: an ETA
    for r in records:
        assert {"chunks_embedded", "chunks_per_s", "elapsed_s", "level"} <= set(r)
        assert r["level"] == "warning"  # shown at every entry point's default level


def test_the_python_api(home: Path) -> None:
    script = (
        "import memlane, sys\n"
        f"m = memlane.open(workspace={str(home / 'ws')!r}, state_dir={str(home / 'state')!r})\n"
        "print(m.search('tabs').results[0].path)\n"
        "m.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=_env(home),
        timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "MEMORY.md"  # stdout stays the host's
    _check(_progress(done.stderr))


def test_the_grpc_server(home: Path) -> None:
    port = _free_port()
    stderr = home / "serve.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [*_command(), "--state-dir", str(home / "state"), "--workspace", str(home / "ws"),
             "serve", "--host", "127.0.0.1", "--port", str(port), "--token", "t0ken"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=_env(home),
        )  # fmt: skip
    process = Process(proc, port, stderr)
    try:
        _wait_serving(process)
        with MemlaneClient(f"127.0.0.1:{port}", token="t0ken", timeout=120) as client:
            assert client.search("tabs").results[0].path == "MEMORY.md"
    finally:
        proc.terminate()
        # A stopping server lets the provider call in progress of its vector backfill finish
        # (about 2 s of work; longer on a loaded machine), then the gRPC grace. This test is
        # about the progress lines, not the stop's latency (test_stop_during_backfill.py).
        proc.wait(120)
    _check(_progress(stderr.read_text()))


def test_the_mcp_server(home: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memlane.entrypoints", "--state-dir", str(home / "state"),
              "--workspace", str(home / "ws"), "mcp"],
        env=_env(home),
    )  # fmt: skip
    log = home / "mcp.log"

    async def main() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                payload: dict[str, object] = {}
                for _ in range(300):  # until the first sync (in the background) has finished
                    result = await c.call_tool("memory_search", {"query": "tabs"})
                    payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
                    if "warnings" not in payload:
                        break
                    await anyio.sleep(0.2)
                assert payload["results"][0]["path"] == "MEMORY.md"  # type: ignore[index]

    anyio.run(main)
    _check(_progress(log.read_text()))


def test_the_python_api_takes_a_progress_callback(home: Path) -> None:
    """`refresh(progress=...)` before the first search: every step goes to the callback."""
    seen: list[SyncProgress] = []
    manager = memlane.open(workspace=home / "ws", state_dir=home / "state", env=_env(home))
    try:
        manager.refresh(progress=seen.append)
        assert manager.search("tabs").results[0].path == "MEMORY.md"
    finally:
        manager.close()
    rebuild = [p for p in seen if p.phase == "rebuild"]
    assert rebuild[-1].files_done == rebuild[-1].files_total == FILES + 1
    assert [p.files_done for p in rebuild] == sorted(p.files_done for p in rebuild)
