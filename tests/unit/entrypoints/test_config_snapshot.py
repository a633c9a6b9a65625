"""Every recorded config resolves, field by field, to what the snapshot says (tests/config_snapshot.py).

The snapshot was taken on the code before configuration became a pipeline of stages; a field that
differs is a change of behaviour, named here by case and field.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.config_snapshot import SNAPSHOT, runtime_outcome, tree_outcome

_DATA: dict[str, list[dict[str, Any]]] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def _differences(expected: object, actual: object, where: str = "") -> list[str]:
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in sorted(set(expected) | set(actual)):
            if key not in actual or key not in expected:
                found.append(f"{where}{key}: {expected.get(key)!r} != {actual.get(key)!r}")
            else:
                found += _differences(expected[key], actual[key], f"{where}{key}.")
        return found
    same = json.dumps(expected, sort_keys=True) == json.dumps(actual, sort_keys=True)
    return [] if same else [f"{where.rstrip('.')}: {expected!r} != {actual!r}"]


def test_the_snapshot_covers_many_configs() -> None:
    assert len(_DATA["trees"]) > 100
    assert {case["fixture"] for case in _DATA["runtime"]} >= {
        "gemini-custom-ollama.json5",
        "multi-agent-lmstudio.json5",
        "proxy-openai.json5",
    }


@pytest.mark.parametrize("index", range(len(_DATA["trees"])))
def test_a_recorded_tree_resolves_as_before(index: int) -> None:
    case = _DATA["trees"][index]
    actual = json.loads(json.dumps(tree_outcome(case), allow_nan=True))
    assert _differences(case["outcome"], actual) == [], json.dumps(case["tree"])[:2000]


@pytest.mark.parametrize("index", range(len(_DATA["runtime"])))
def test_a_reference_fixture_resolves_as_before(index: int) -> None:
    case = _DATA["runtime"][index]
    actual = json.loads(json.dumps(runtime_outcome(case), allow_nan=True))
    assert _differences(case["outcome"], actual) == []
