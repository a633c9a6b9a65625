"""scripts/check: a failed dev install stops it, and a build/ left by `pip install .` is ignored."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BAD_CODE = 'import os\n\nx: int = "not a number"\n'  # an unused import (ruff), a type error (mypy)


def test_a_failed_dev_install_fails_the_check_before_any_gate(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check", tmp_path / "scripts" / "check")
    fake_python = tmp_path / ".venv" / "bin" / "python"
    fake_python.parent.mkdir(parents=True)
    # pip fails the way a broken index does: an error line and exit status 1.
    fake_python.write_text(
        '#!/bin/sh\necho "ERROR: No matching distribution found for x"\nexit 1\n'
    )
    fake_python.chmod(0o755)

    done = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "check")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert done.returncode == 1
    assert "the dev install (pip install -e '.[dev]') failed" in done.stderr
    assert "No matching distribution" in done.stderr  # pip's own reason is shown, not swallowed
    assert "== ruff" not in done.stdout  # no gate ran against a stale install


def _project_with_build_copy(tmp_path: Path) -> Path:
    """A tiny checkout with the real pyproject and a broken module under build/lib/."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "__init__.py").write_text('"""A package."""\n')
    copy = tmp_path / "build" / "lib" / "memlane"
    copy.mkdir(parents=True)
    (copy / "__init__.py").write_text("")
    (copy / "bad.py").write_text(BAD_CODE)
    (tmp_path / ".typecheck").mkdir()
    (tmp_path / ".typecheck" / "memlane").symlink_to("..")
    return tmp_path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "MYPYPATH": ".typecheck", "HOME": str(cwd)}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=180
    )


def test_ruff_and_mypy_skip_a_build_folder_left_by_pip_install(tmp_path: Path) -> None:
    project = _project_with_build_copy(tmp_path)
    bad = "build/lib/memlane/bad.py"
    # The copy really is broken: named explicitly, both tools reject it.
    assert _run([str(BIN / "ruff"), "check", "--no-cache", bad], project).returncode == 1
    assert _run([str(BIN / "mypy"), "--no-incremental", bad], project).returncode == 1

    ruff = _run([str(BIN / "ruff"), "check", "--no-cache", "."], project)
    mypy = _run([str(BIN / "mypy"), "--no-incremental", "-p", "memlane"], project)

    assert ruff.returncode == 0, ruff.stdout
    assert mypy.returncode == 0, mypy.stdout
    assert "1 source file" in mypy.stdout  # only the package's own __init__.py was checked
    assert os.path.exists(project / bad)


# The fast check: stand-in tools that record how scripts/check calls them.
_RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "$CALLS"\n'
FAST_TESTS = (
    "tests/unit tests/contract tests/architecture -m not integration and not e2e and not postgres"
)


def _checkout_with_a_change(tmp_path: Path) -> Path:
    """A git checkout whose branch changed one module since `main`, with recording tools."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check", tmp_path / "scripts" / "check")
    for tool in ("python", "ruff", "mypy", "lint-imports"):
        path = tmp_path / ".venv" / "bin" / tool
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_RECORDER)
        path.chmod(0o755)
    (tmp_path / "application").mkdir()
    (tmp_path / "application" / "kept.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("readme\n")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "scripts", "application", "README.md")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    git("checkout", "-q", "-b", "work")
    (tmp_path / "application" / "changed.py").write_text("y = 2\n")
    (tmp_path / "README.md").write_text("readme, edited\n")
    return tmp_path


def _check(project: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    calls = project / "calls.log"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(project), "CALLS": str(calls)}
    done = subprocess.run(
        ["bash", str(project / "scripts" / "check"), *args],
        cwd=project, env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    return done, calls.read_text().splitlines() if calls.exists() else []


def test_fast_skips_the_install_and_checks_the_changed_files(tmp_path: Path) -> None:
    project = _checkout_with_a_change(tmp_path)

    done, calls = _check(project, "--fast")

    assert done.returncode == 0, done.stderr
    assert not any("pip install" in c for c in calls)
    assert "ruff check ." in calls
    assert "mypy .typecheck/memlane/application/changed.py" in calls  # the README is no module
    assert "lint-imports " in calls
    pytest_calls = [c for c in calls if c.startswith("python -m pytest")]
    assert len(pytest_calls) == 1 and FAST_TESTS in pytest_calls[0]


def test_fast_without_changed_modules_runs_no_mypy(tmp_path: Path) -> None:
    project = _checkout_with_a_change(tmp_path)
    (project / "application" / "changed.py").unlink()

    done, calls = _check(project, "--fast")

    assert done.returncode == 0, done.stderr
    assert not any(c.startswith("mypy") for c in calls)
    assert "no changed Python module" in done.stdout


def test_the_full_check_still_installs_and_runs_everything(tmp_path: Path) -> None:
    project = _checkout_with_a_change(tmp_path)

    done, calls = _check(project, "-x")

    assert done.returncode == 0, done.stderr
    assert any("pip install" in c for c in calls)
    assert "mypy -p memlane" in calls
    # Three workers, a whole file at a time in the collected order, and the arguments passed on
    # (`scripts/check -x`).
    assert "python -m pytest -n 3 --dist loadfile --no-loadscope-reorder -x" in calls


def test_a_mypy_error_fails_the_full_check_after_pytest_with_its_report(tmp_path: Path) -> None:
    # mypy runs beside pytest: its failure must still decide the exit status, and be shown.
    project = _checkout_with_a_change(tmp_path)
    mypy = project / ".venv" / "bin" / "mypy"
    mypy.write_text(_RECORDER + 'echo "changed.py:1: error: a type error"\nexit 1\n')

    done, calls = _check(project)

    assert done.returncode == 1
    assert any(c.startswith("python -m pytest -n 3") for c in calls)  # pytest ran all the same
    assert "changed.py:1: error: a type error" in done.stdout
    assert done.stdout.index("== mypy --strict (report)") < done.stdout.index("a type error")


def test_a_ruff_finding_stops_the_check(tmp_path: Path) -> None:
    # `ruff check .` finds something and `ruff format --check .` would pass: under `set -e` a
    # failure on the left of `&&` does not stop a script, which once let CI pass with findings.
    project = _checkout_with_a_change(tmp_path)
    ruff = project / ".venv" / "bin" / "ruff"
    ruff.write_text(_RECORDER + 'if [ "$1" = check ]; then exit 1; fi\n')

    done, calls = _check(project, "--fast")

    assert done.returncode == 1
    assert "ruff check ." in calls
    assert not any(c.startswith(("lint-imports", "python -m pytest")) for c in calls)
