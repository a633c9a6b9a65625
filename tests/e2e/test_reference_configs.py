"""End to end: three realistic configs of the reference system start memlane unchanged.

Each is copied into a fake `~/.openclaw/` and read the way a user would: through
`OPENCLAW_STATE_DIR` or `--config ~/.openclaw/openclaw.json`. `status --json` must show the
config path, every ignored key (each also warned about once on stderr) and the effective
settings the reference's keys map to.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).parent.parent / "fixtures" / "reference"


def install(home: Path, name: str) -> Path:
    """Put fixture `name` where the reference keeps its config; return the state dir."""
    state = home / ".openclaw"
    state.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / name, state / "openclaw.json")
    shutil.copy(FIXTURES / "shared-memory.json5", state / "shared-memory.json5")
    (state / "workspace" / "memory").mkdir(parents=True, exist_ok=True)
    (state / "workspace" / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    # The other agents' workspaces: a workspace that does not exist is an error, not an empty
    # index.
    for other in ("work-notes", "gpu-notes"):
        (home / other).mkdir(exist_ok=True)
    return state


def memlane(home: Path, *args: str, extra_env: dict[str, str] | None = None) -> dict[str, object]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMLANE_", "OPENAI_", "OPENCLAW_", "GEMINI_", "PROXY_"))
    }
    env |= {"HOME": str(home), "MEMLANE_STATE_DIR": str(home / ".memlane"), **(extra_env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", *args, "status", "--json"],
        capture_output=True, text=True, env=env, timeout=240, check=False, cwd=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert isinstance(payload, dict)
    payload["_stderr"] = done.stderr
    return payload


def ignored(payload: dict[str, object]) -> list[str]:
    found = payload["ignoredKeys"]
    assert isinstance(found, list)
    return [item["key"] for item in found]


def settings(payload: dict[str, object]) -> dict[str, object]:
    found = payload["settings"]
    assert isinstance(found, dict)
    return found


def test_a_proxy_setup_found_through_openclaw_state_dir(tmp_path: Path) -> None:
    state = install(tmp_path, "proxy-openai.json5")

    payload = memlane(tmp_path, extra_env={"OPENCLAW_STATE_DIR": str(state)})

    assert payload["configPath"] == str(state / "openclaw.json")
    assert payload["workspace"] == str(tmp_path / ".openclaw" / "workspace")
    assert payload["sessionsDir"] == str(state / "agents" / "main" / "sessions")
    # The reference's index file is never opened: memlane keeps its own.
    assert ignored(payload) == ["memorySearch.store.path"]
    assert payload["storePath"] == str(tmp_path / ".memlane" / "agents" / "main" / "memory.db")
    shown = settings(payload)
    assert shown["provider"] == "openai"
    assert shown["remote.timeoutSeconds"] == 300.0  # sync.embeddingBatchTimeoutSeconds
    assert shown["remote.maxConcurrency"] == 2  # remote.nonBatchConcurrency
    assert shown["remote.headers"] == ["Authorization"]  # names only: values may be secrets
    assert shown["query.maxResults"] == 8
    assert str(payload["_stderr"]).count("is ignored") == 1


def test_a_two_agent_lmstudio_setup_with_an_include(tmp_path: Path) -> None:
    state = install(tmp_path, "multi-agent-lmstudio.json5")
    config = str(state / "openclaw.json")

    main = memlane(tmp_path, "--config", config)
    work = memlane(tmp_path, "--config", config, "--agent", "work")

    expected = [
        "agents.defaults.memorySearch.sync.sessions.postCompactionForce",  # the included file
        "agents.defaults.memorySearch.local.contextSize",
        "agents.list[1].memorySearch.multimodal.enabled",
        "memory.backend",
    ]
    assert ignored(main) == ignored(work) == expected
    for payload in (main, work):  # one warning line per ignored key, and nothing else
        lines = str(payload["_stderr"]).splitlines()
        assert len(lines) == len(expected)
        assert all("is ignored" in line for line in lines)
    shown = settings(main)
    assert shown["provider"] == "openai"  # lmstudio is an OpenAI-compatible server
    assert shown["queryInputType"] == "search_query"
    assert shown["documentInputType"] == "search_document"
    assert shown["query.hybrid.mmr.enabled"] is True  # from the included file
    assert shown["sync.intervalMinutes"] == 30
    assert work["workspace"] == str(tmp_path / "work-notes")
    assert settings(work)["extraPaths"] == ["../team-docs"]


def test_a_gemini_setup_with_a_custom_ollama_agent_and_a_disabled_one(tmp_path: Path) -> None:
    state = install(tmp_path, "gemini-custom-ollama.json5")
    config = str(state / "openclaw.json")

    main = memlane(tmp_path, "--config", config)
    gpu = memlane(tmp_path, "--config", config, "--agent", "gpu")
    ops = memlane(tmp_path, "--config", config, "--agent", "ops")

    assert ignored(main) == [
        "agents.defaults.memorySearch.local.modelPath",
        "agents.defaults.memorySearch.local.modelCacheDir",
        "agents.defaults.memorySearch.store.vector.extensionPath",
        "agents.defaults.memorySearch.store.fts.tokenizer",
    ]
    assert settings(main)["outputDimensionality"] == 1536
    assert settings(main)["local.modelPath"] is None  # hf: paths are not downloaded
    assert settings(gpu)["provider"] == "ollama"  # models.providers.ollama-5080.api
    assert gpu["workspace"] == str(tmp_path / "gpu-notes")
    assert ops["enabled"] is False and ops["status"] == "disabled"
    assert not (tmp_path / ".memlane" / "agents" / "ops").exists()  # nothing indexed
