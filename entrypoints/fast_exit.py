"""Ending a finished CLI process without the interpreter's teardown.

After a search of a million-chunk index the interpreter's own exit (module teardown, freeing
every object the index loaded) took 0.3-0.6 s here (`bench/cli_cold_start.py`), paid after the
answer was printed by every caller that waits for the process (an agent's tool call, a shell
pipeline). By the time the command returns it has closed what it opened (the manager, the
store); what the teardown would still do that matters is run by hand: the atexit callbacks
(logging's flush, pools joining their workers) and the flush of stdout and stderr.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading


def exit_code(status: object) -> int:
    """The process exit code of a `SystemExit` argument, as the interpreter would give it."""
    if status is None:
        return 0
    if isinstance(status, int):
        return status & 0xFF
    sys.stderr.write(f"{status}\n")  # sys.exit("message"): printed, then exit code 1
    return 1


def exit_without_teardown(code: int) -> None:
    """Flush, run the atexit callbacks and end the process with `code`.

    A non-daemon thread still running gets the ordinary exit, which waits for it.
    """
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon and t.is_alive() for t in others):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to deliver
            if code == 0 and stream is sys.stdout:
                code = 1  # the reader went away before the output was written
    os._exit(code)
