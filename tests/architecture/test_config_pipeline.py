"""Configuration runs as a pipeline: read -> validate -> merge -> build, each entered once.

The calls between the modules of entrypoints/config/ are recorded while one agent's runtime is
resolved from a file that uses `$include`, the `env` block, `${VAR}`, `models.providers`, two
agents and a flag override. No stage may call into an earlier one, and the driver (runtime.py)
enters each stage once. The package holds the stages, the driver, the key table and its
publisher, and nothing else: at most 8 modules a newcomer walks in order.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import FrameType

from memlane.entrypoints.config.runtime import resolve_runtime

STAGES = ("read.py", "validate.py", "merge.py", "build.py")
MODULES = ("__init__.py", *STAGES, "runtime.py", "keys.py", "schema.py")
_PACKAGE = "/entrypoints/config/"

CONFIG = """{
  $include: "shared.json5",
  env: { vars: { PROXY_KEY: "sk-test" } },
  models: { providers: { proxy: { baseUrl: "http://127.0.0.1:9/v1", apiKey: "${PROXY_KEY}" } } },
  agents: {
    defaults: { memorySearch: { provider: "proxy", query: { maxResults: 500 } } },
    list: [
      { id: "main", default: true },
      { id: "work", memorySearch: { extraPaths: ["notes"], local: { modelCacheDir: "x" } } },
    ],
  },
  memory: { citations: "on" },
}"""


def test_the_package_holds_the_stages_the_driver_and_the_key_table_only() -> None:
    folder = Path(resolve_runtime.__code__.co_filename).parent
    assert sorted(path.name for path in folder.glob("*.py")) == sorted(MODULES)
    assert len(MODULES) <= 8


def _module(frame: FrameType | None) -> str | None:
    if frame is None or _PACKAGE not in frame.f_code.co_filename:
        return None
    return frame.f_code.co_filename.split(_PACKAGE)[1]


def test_each_stage_is_entered_once_and_none_calls_back(tmp_path: Path) -> None:
    (tmp_path / "config.json5").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "shared.json5").write_text(
        "{agents: {defaults: {memorySearch: {sync: {watch: false}}}}}", encoding="utf-8"
    )
    calls: Counter[tuple[str, str]] = Counter()
    runs: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        callee = _module(frame)
        caller = _module(frame.f_back)
        if event != "call" or callee is None or caller is None or caller == callee:
            return
        calls[(caller, callee)] += 1
        if not runs or runs[-1] != (caller, callee):
            runs.append((caller, callee))

    sys.setprofile(profile)
    try:
        rc = resolve_runtime(
            env={"HOME": str(tmp_path)},
            cwd=tmp_path,
            config=str(tmp_path / "config.json5"),
            agent_id="work",
            flags={"query.minScore": 0.1},
            state=str(tmp_path / "state"),
        )
    finally:
        sys.setprofile(None)

    assert rc.settings.query.max_results == 100  # clamped: the stages ran
    assert [key.key for key in rc.ignored] == [
        "agents.list[1].memorySearch.local.modelCacheDir",
        "agents.defaults.memorySearch.query.maxResults",  # 500 brought into range, and said
    ]
    driver = [callee for caller, callee in runs if caller == "runtime.py"]
    assert driver == list(STAGES), runs
    backwards = [
        (caller, callee)
        for caller, callee in calls
        if caller in STAGES and callee in STAGES and STAGES.index(callee) < STAGES.index(caller)
    ]
    assert backwards == []
    assert {caller for caller, _ in calls} <= {"runtime.py", *STAGES}, calls
