# ruff: noqa: PTH100, PTH118, PTH120
# (os.walk and os.stat on purpose: one stat per module, no Path object per file)

"""Whether the code a long-lived process runs is still the code installed on disk.

The daemon (and `watch`, `serve`, `mcp` when they host the CLI) answers a client by running its
own copy of the CLI, imported when it started. Every build of the package says the same version
between releases, so after a `git pull`, an editable install's edit or a reinstall of the same
version, a daemon started before went on answering with the old code: it even rebuilt an index
the new CLI had just upgraded back to its own chunking. The daemon therefore notes the package's
source files (path, size, mtime) when it starts and says in its hello when they changed since;
the client then answers in-process and asks for a restart (protocol.py, `mismatch`).

The look costs one stat per module (about 300, a few milliseconds) and is taken at most once per
`RECHECK_S` by the daemon, never by the client.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from typing import Final

import memlane

# The subpackages whose code a hosted command runs (tests and benchmarks are no part of it).
_CODE_FOLDERS: Final = ("domain", "application", "adapters", "entrypoints")
RECHECK_S: Final = 2.0


def code_fingerprint(root: str | None = None) -> str:
    """A digest of the package's module files (relative path, size, mtime); "" when the
    package's folder cannot be read (the check then never finds a change)."""
    base = root or os.path.dirname(os.path.abspath(memlane.__file__))
    digest = hashlib.blake2b(digest_size=12)
    try:
        for folder in _CODE_FOLDERS:
            for current, dirs, files in os.walk(os.path.join(base, folder)):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    # Not an editor's lock or backup file (`.#module.py`, a dangling link).
                    if name.endswith(".py") and not name.startswith("."):
                        path = os.path.join(current, name)
                        st = os.lstat(path)
                        relative = os.path.relpath(path, base)
                        digest.update(f"{relative}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    except OSError:
        return ""
    return digest.hexdigest()


class CodeWatch:
    """The fingerprint at start, and whether the files on disk still match it."""

    def __init__(
        self, root: str | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._root = root
        self._clock = clock
        self._started = code_fingerprint(root)
        self._lock = threading.Lock()
        self._checked_at = self._clock()
        self._changed = False

    def replaced(self) -> str | None:
        """Why this process's code is not the installed code (None while it is): its module
        files changed on disk since it started. Once changed, it stays changed."""
        with self._lock:
            now = self._clock()
            if not self._changed and self._started and now - self._checked_at >= RECHECK_S:
                self._checked_at = now
                found = code_fingerprint(self._root)
                self._changed = bool(found) and found != self._started  # "": not looked
            if self._changed:
                return "runs code that was replaced on disk since it started (an upgrade)"
            return None
