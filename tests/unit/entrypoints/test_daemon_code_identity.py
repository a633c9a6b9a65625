"""A daemon tells when the code it runs was replaced on disk since it started
(entrypoints/daemon/code_identity.py), and the hello carries it to the client (protocol.py)."""

from __future__ import annotations

from pathlib import Path

from memlane.entrypoints.daemon.code_identity import RECHECK_S, CodeWatch, code_fingerprint
from memlane.entrypoints.daemon.protocol import hello, mismatch


def _package(root: Path) -> Path:
    for folder in ("domain", "application", "adapters", "entrypoints"):
        (root / folder).mkdir(parents=True)
        (root / folder / "module.py").write_text("X = 1\n")
    (root / "tests").mkdir()
    return root


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_edited_module_is_seen_after_the_recheck_interval(tmp_path: Path) -> None:
    root, clock = _package(tmp_path), Clock()
    watch = CodeWatch(str(root), clock=clock)
    (root / "domain" / "module.py").write_text("X = 22\n")

    assert watch.replaced() is None  # not looked at again yet
    clock.now = RECHECK_S
    assert "replaced on disk" in str(watch.replaced())
    (root / "domain" / "module.py").write_text("X = 1\n")
    clock.now = 2 * RECHECK_S
    assert watch.replaced() is not None  # once replaced, the process stays old


def test_an_added_module_counts_and_tests_or_caches_do_not(tmp_path: Path) -> None:
    root = _package(tmp_path)
    before = code_fingerprint(str(root))
    (root / "tests" / "test_x.py").write_text("pass\n")
    (root / "domain" / "__pycache__").mkdir()
    (root / "domain" / "__pycache__" / "module.cpython-311.py").write_text("")
    assert code_fingerprint(str(root)) == before

    (root / "adapters" / "new.py").write_text("")
    assert code_fingerprint(str(root)) != before


def test_an_unchanged_package_is_never_replaced(tmp_path: Path) -> None:
    root, clock = _package(tmp_path), Clock()
    watch = CodeWatch(str(root), clock=clock)
    clock.now = 10 * RECHECK_S
    assert watch.replaced() is None


def test_the_hello_of_a_replaced_daemon_is_refused_with_its_reason() -> None:
    theirs = hello("1.2.3", pid=7, replaced="runs code that was replaced on disk")
    assert mismatch(theirs, "1.2.3") == "runs code that was replaced on disk"
    assert mismatch(hello("1.2.3", pid=7, replaced=None), "1.2.3") is None


def test_an_editor_lock_file_is_no_module(tmp_path: Path) -> None:
    """Emacs's `.#module.py` is a link to nothing: it made the look fail, and a failed look
    made the daemon "replaced" for good."""
    root, clock = _package(tmp_path), Clock()
    watch = CodeWatch(str(root), clock=clock)
    (root / "domain" / ".#module.py").symlink_to("nobody@host.1234")
    clock.now = RECHECK_S

    assert watch.replaced() is None
