"""The provider configuration's fingerprint (a recorded failure's cause, #30.5)."""

from __future__ import annotations

from dataclasses import replace

from memlane.domain.config import MemorySettings, RemoteSettings
from memlane.entrypoints.container.embedding import provider_config_fingerprint

OPENAI = MemorySettings(provider="openai")


def test_removing_or_replacing_the_key_changes_it() -> None:
    with_key = provider_config_fingerprint(OPENAI, {"OPENAI_API_KEY": "sk-bad"})

    assert provider_config_fingerprint(OPENAI, {}) != with_key
    assert provider_config_fingerprint(OPENAI, {"OPENAI_API_KEY": "sk-good"}) != with_key
    assert provider_config_fingerprint(OPENAI, {"OPENAI_API_KEY": "sk-bad"}) == with_key


def test_an_endpoint_or_a_configured_key_changes_it() -> None:
    base = provider_config_fingerprint(OPENAI, {})
    moved = replace(OPENAI, remote=RemoteSettings(base_url="http://127.0.0.1:9/v1"))
    keyed = replace(OPENAI, remote=RemoteSettings(api_key="sk-x"))

    assert len({base, *(provider_config_fingerprint(s, {}) for s in (moved, keyed))}) == 3


def test_unrelated_variables_do_not() -> None:
    assert provider_config_fingerprint(OPENAI, {"HOME": "/a"}) == provider_config_fingerprint(
        OPENAI, {"HOME": "/b"}
    )
