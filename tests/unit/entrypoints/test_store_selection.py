"""Unit tests: `store.driver` / `store.url` / MEMLANE_STORE_URL select and locate the store."""

from __future__ import annotations

import pytest

from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.running.credentials import store_url_for
from memlane.entrypoints.config.runtime import resolve_settings
from memlane.entrypoints.config.schema import effective_settings

URL = "postgresql://memlane:s3cret@db.internal:5432/memory"


class TestStoreSelection:
    def test_sqlite_stays_the_default(self) -> None:
        chosen = resolve_settings({}).store

        assert chosen.driver == "sqlite"
        assert chosen.url is None and chosen.url_ref is None

    def test_postgres_with_a_url(self) -> None:
        chosen = resolve_settings(
            {
                "agents": {
                    "defaults": {"memorySearch": {"store": {"driver": "postgres", "url": URL}}}
                }
            }
        )

        assert chosen.store.driver == "postgres"
        assert store_url_for(chosen, {}) == URL

    def test_the_url_may_come_from_an_env_reference(self) -> None:
        chosen = resolve_settings(
            {
                "agents": {
                    "defaults": {
                        "memorySearch": {
                            "store": {"driver": "postgres", "url": {"source": "env", "id": "PG"}}
                        }
                    }
                }
            }
        )

        assert chosen.store.url_ref is not None
        assert chosen.store.url_ref.id == "PG"
        assert store_url_for(chosen, {"PG": URL}) == URL
        with pytest.raises(ConfigError, match="PG is not set"):
            store_url_for(chosen, {})

    def test_memlane_store_url_fills_in_when_the_config_has_none(self) -> None:
        chosen = resolve_settings(
            {"agents": {"defaults": {"memorySearch": {"store": {"driver": "postgres"}}}}}
        )

        assert store_url_for(chosen, {"MEMLANE_STORE_URL": URL}) == URL
        with pytest.raises(ConfigError, match="MEMLANE_STORE_URL"):
            store_url_for(chosen, {})

    def test_an_unknown_driver_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="driver"):
            resolve_settings(
                {"agents": {"defaults": {"memorySearch": {"store": {"driver": "mysql"}}}}}
            )

    def test_the_url_is_never_shown(self) -> None:
        """Neither the settings' repr nor status --json's effective settings carry the URL."""
        chosen = resolve_settings(
            {
                "agents": {
                    "defaults": {"memorySearch": {"store": {"driver": "postgres", "url": URL}}}
                }
            }
        )

        assert "s3cret" not in repr(chosen)
        assert "s3cret" not in repr(effective_settings(chosen))
        assert effective_settings(chosen)["store.driver"] == "postgres"
