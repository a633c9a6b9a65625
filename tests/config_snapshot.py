"""The config snapshot: what every known config resolves to, to keep a refactoring honest.

Cases come from two places:

- every config tree the config tests hand to the resolver (recorded by running those tests with
  the resolver's public functions wrapped), each with the agent it was asked for;
- the reference-shaped fixtures under tests/fixtures/reference, read end to end the way the CLI
  reads them (file, `$include`, `${VAR}`, `env` block, flags) for every agent they name.

Each case's outcome is its settings flattened field by field (or the error, with its key), its
ignored keys and, for the fixtures, the paths and workspace chosen. Regenerate with
`python -m tests.config_snapshot` only when a change of behaviour is meant.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SNAPSHOT = ROOT / "fixtures" / "config_snapshot.json"
REFERENCE = ROOT / "fixtures" / "reference"
# The test files whose config trees are recorded.
RECORDED_TESTS = (
    "tests/unit/entrypoints/test_config_resolution.py",
    "tests/unit/entrypoints/test_config_file.py",
    "tests/unit/entrypoints/test_config_schema.py",
    "tests/unit/entrypoints/test_reference_config.py",
    "tests/unit/entrypoints/test_redaction_settings.py",
    "tests/unit/entrypoints/test_store_selection.py",
    "tests/integration/embedding/test_fallback_ids.py",
)
# The fixtures' `${VAR}`s and the agents they name.
FIXTURE_ENV = {
    "PROXY_EMBED_KEY": "sk-proxy",
    "GEMINI_API_KEY": "gm-key",
    "GATEWAY_TOKEN": "gw",
    "TELEGRAM_BOT_TOKEN": "tg",
}
TREE_FUNCTIONS = (
    "resolve_settings",
    "ignored_settings",
    "ignored_keys",
    "default_agent_id",
    "resolve_workspace",
)


# --- outcomes ---------------------------------------------------------------------------------


def flat(value: object, prefix: str = "") -> dict[str, object]:
    """A value as {dotted field: JSON value}, so two outcomes compare field by field."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, object] = {}
        for field in dataclasses.fields(value):
            out.update(flat(getattr(value, field.name), f"{prefix}{field.name}."))
        return out or {prefix.rstrip("."): {}}
    if isinstance(value, tuple | list):
        return {prefix.rstrip("."): [_plain(item) for item in value]}
    return {prefix.rstrip("."): _plain(value)}


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in flat(value).items()}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, Path):
        return str(value)
    return value


def _said(ignored: Any) -> dict[str, object]:
    """An ignored key as recorded: its key and reason (how a warning words it came later)."""
    return {"key": ignored.key, "reason": ignored.reason}


def _error(exc: Exception) -> dict[str, object]:
    return {"error": type(exc).__name__, "key": getattr(exc, "key", None), "message": str(exc)}


def tree_outcome(case: Mapping[str, Any]) -> dict[str, object]:
    """What the tree functions return for one recorded (tree, agent) case."""
    from memlane.entrypoints.config import runtime

    tree, agent = case["tree"], case["agent"]
    calls: dict[str, Callable[[], object]] = {
        "settings": lambda: flat(runtime.resolve_settings(tree, agent)),
        "ignored_settings": lambda: [_said(i) for i in runtime.ignored_settings(tree)],
        "ignored_keys": lambda: runtime.ignored_keys(tree),
        "default_agent_id": lambda: runtime.default_agent_id(tree),
        "workspace": lambda: runtime.resolve_workspace(tree, agent),
    }
    out: dict[str, object] = {}
    for name, call in calls.items():
        try:
            out[name] = call()
        except Exception as exc:  # the error is the outcome
            out[name] = _error(exc)
    return out


def runtime_outcome(case: Mapping[str, Any]) -> dict[str, object]:
    """What resolve_runtime makes of a fixture installed in a fresh home."""
    from memlane.entrypoints.config.runtime import resolve_runtime

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        state = home / ".openclaw"
        state.mkdir()
        for name in ("shared-memory.json5", case["fixture"]):
            shutil.copy(
                REFERENCE / name,
                state
                / ("openclaw.json" if name == case["fixture"] and case["as_reference"] else name),
            )
        config = None if case["as_reference"] else str(state / case["fixture"])
        env = {
            "HOME": str(home),
            "MEMLANE_STATE_DIR": str(home / ".memlane"),
            **FIXTURE_ENV,
            **({"OPENCLAW_STATE_DIR": str(state)} if case["as_reference"] else {}),
        }
        try:
            rc = resolve_runtime(
                env=env, cwd=home, config=config, agent_id=case["agent"], flags=case["flags"]
            )
        except Exception as exc:  # the error is the outcome
            return {"error": _error(exc)}

        def shown(path: Path | None) -> str | None:
            return None if path is None else str(path).replace(str(home), "<home>")

        return {
            "agent_id": rc.agent_id,
            "settings": flat(rc.settings),
            "workspace": shown(rc.workspace),
            "workspace_origin": rc.workspace_origin,
            "state_dir": shown(rc.state_dir),
            "store_path": shown(rc.store_path),
            "sessions_dir": shown(rc.sessions_dir),
            "config_path": shown(rc.config_path),
            "reference_state": shown(rc.reference_state),
            "ignored": [
                {k: str(v).replace(str(home), "<home>") for k, v in _said(i).items()}
                for i in rc.ignored
            ],
            "env_added": {k: v for k, v in sorted(rc.env.items()) if env.get(k) != v},
        }


def runtime_cases() -> Iterator[dict[str, object]]:
    for path in sorted(REFERENCE.glob("*.json5")):
        if path.name == "shared-memory.json5":
            continue  # included by the others
        for as_reference in (True, False):
            for agent in (None, "main", "work", "gpu", "ops"):
                yield {
                    "fixture": path.name,
                    "as_reference": as_reference,
                    "agent": agent,
                    "flags": None,
                }
        yield {
            "fixture": path.name,
            "as_reference": False,
            "agent": None,
            "flags": {"provider": "none", "query.maxResults": 3},
        }


# --- recording --------------------------------------------------------------------------------


def _encodable(tree: object) -> bool:
    try:
        json.dumps(tree, allow_nan=True)
    except (TypeError, ValueError):
        return False
    return True


def record() -> list[dict[str, object]]:
    """Run the config tests with the tree functions wrapped; return each distinct case."""
    import pytest

    from memlane.entrypoints.config import runtime

    seen: dict[str, dict[str, object]] = {}

    def keep(root: Any, agent_id: Any) -> None:
        case = {"tree": root, "agent": agent_id if isinstance(agent_id, str) else None}
        if _encodable(case):
            seen.setdefault(json.dumps(case, allow_nan=True), case)

    def wrap(name: str) -> None:
        original = getattr(runtime, name)

        def recording(root: Any, agent_id: Any = None, *args: Any, **kwargs: Any) -> Any:
            keep(root, agent_id)
            return (
                original(root, agent_id, *args, **kwargs)
                if agent_id is not None or args
                else original(root, **kwargs)
            )

        setattr(runtime, name, recording)

    for name in TREE_FUNCTIONS:
        wrap(name)
    if hasattr(runtime, "validate"):  # the pipeline: resolve_runtime's trees reach it directly
        validate = runtime.validate

        def validating(tree: Any, written: Any = None, agent_id: Any = None) -> Any:
            keep(tree, agent_id)
            return validate(tree, written, agent_id)

        runtime.validate = validating
    code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", *RECORDED_TESTS])
    if code != 0:
        sys.exit(f"the config tests failed ({code}); no snapshot written")
    return [json.loads(json.dumps(case, allow_nan=True)) for case in seen.values()]


def main() -> None:
    cases = record()
    snapshot = {
        "trees": [{**case, "outcome": tree_outcome(case)} for case in cases],
        "runtime": [{**case, "outcome": runtime_outcome(case)} for case in runtime_cases()],
    }
    SNAPSHOT.write_text(json.dumps(snapshot, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(
        f"{len(snapshot['trees'])} trees, {len(snapshot['runtime'])} runtime cases -> {SNAPSHOT}\n"
    )


if __name__ == "__main__":
    main()
