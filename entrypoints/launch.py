"""The `memlane` console script: a running daemon answers, else the full CLI runs here.

Kept apart from `cli.py` so that a command a daemon answers never imports click, SQLAlchemy or
the container (daemon/client.py).
"""

from __future__ import annotations

import sys

# structlog imports rich (and better_exceptions) whenever they are installed, to pretty-print
# tracebacks; the CLI renders with structlog's plain formatter (entrypoints/logging.py), so on a
# machine that has rich the import was 0.1-0.15 s of every command's start for nothing
# (`python -X importtime`, this machine). Marking them absent makes `import rich` raise
# ImportError, which structlog treats as "not installed". Only this process's console script
# does it: a host app importing memlane keeps its own modules.
_UNUSED_BY_THE_CLI = ("rich", "better_exceptions")


def main() -> None:
    for name in _UNUSED_BY_THE_CLI:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    from memlane.entrypoints.daemon.client import serve_through_daemon

    serve_through_daemon(sys.argv[1:])  # ends the process when a daemon answered
    from memlane.entrypoints.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
