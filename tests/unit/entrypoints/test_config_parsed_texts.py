"""A config text is parsed once per process; each reader still gets a tree of its own."""

from __future__ import annotations

from pathlib import Path

import json5
import pytest

from memlane.entrypoints.config.read import ConfigFileError, parse_config

_TEXT = "{ agents: { defaults: { memorySearch: { provider: 'local' } } } }"


def test_the_same_text_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = json5.loads

    def counting(text: str, *, allow_duplicate_keys: bool) -> object:
        calls.append(text)
        return real(text, allow_duplicate_keys=allow_duplicate_keys)

    monkeypatch.setattr(json5, "loads", counting)
    text = _TEXT + " "  # a text no other test parsed first in this process
    first = parse_config(text, Path("a.json5"))
    second = parse_config(text, Path("a.json5"))
    assert calls == [text]
    assert first == second == real(_TEXT)


def test_a_changed_tree_does_not_leak_into_the_next_reader() -> None:
    text = _TEXT + "  "
    first = parse_config(text, Path("a.json5"))
    agents = first["agents"]
    assert isinstance(agents, dict)
    agents["defaults"] = "changed"
    first["extra"] = 1
    assert parse_config(text, Path("a.json5")) == json5.loads(_TEXT)


def test_an_edited_text_is_parsed_anew() -> None:
    tree = parse_config(_TEXT.replace("'local'", "'openai'"), Path("a.json5"))
    assert tree["agents"] == {"defaults": {"memorySearch": {"provider": "openai"}}}


def test_a_bad_text_fails_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ConfigFileError, match="line 1"):
            parse_config("{ a: }", Path("bad.json5"))
