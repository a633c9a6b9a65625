"""The wheel ships every subpackage: pyproject's package list is written out by hand (the
repo root is the package, so `find_packages` would also pick up tests/ and bench/), and a
folder missing from it installs from a checkout but not from a wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("domain", "application", "adapters", "entrypoints")


def _packages_on_disk() -> set[str]:
    found = {"memlane"}
    for top in SHIPPED:
        for init in (ROOT / top).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT).parts
            if "__pycache__" not in parts:
                found.add(".".join(("memlane", *parts)))
    return found


def test_every_subpackage_is_in_the_package_list() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )

    assert _packages_on_disk() - listed == set()


def test_the_package_list_names_no_missing_folder() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )

    assert listed - _packages_on_disk() == set()
