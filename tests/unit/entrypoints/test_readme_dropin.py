"""The README and packaging promises of issue 15, item 11, checked against the code."""

from __future__ import annotations

import tomllib
from pathlib import Path

from click.testing import CliRunner

from memlane.entrypoints.cli import cli
from memlane.entrypoints.config.read import DEFAULT_CONFIG, ENV_OVERRIDES

ROOT = Path(__file__).parent.parent.parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_license_file_matches_the_declared_license() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert (ROOT / "py.typed").exists()


def test_the_setup_line_names_the_venv_command() -> None:
    assert ".venv/bin/memlane" in README and "source .venv/bin/activate" in README


def test_the_default_config_path_and_every_environment_variable_are_documented() -> None:
    assert DEFAULT_CONFIG in README
    for name in ("MEMLANE_CONFIG", "MEMLANE_STATE_DIR", "OPENCLAW_STATE_DIR", *ENV_OVERRIDES):
        assert f"`{name}`" in README, name


def test_the_documented_completion_variable_is_clicks() -> None:
    result = CliRunner().invoke(
        cli, [], prog_name="memlane", env={"_MEMLANE_COMPLETE": "bash_source"}
    )

    assert "_MEMLANE_COMPLETE" in README
    assert "complete" in result.output and "memlane" in result.output


def test_the_readme_has_the_differences_table_and_the_grpc_client() -> None:
    assert "### Differences from the reference system" in README
    for topic in ('`provider: "auto"`', "transcripts", 'fusion: "weighted"'):
        assert topic in README
    assert "from memlane.entrypoints.grpc.client import MemlaneClient" in README
