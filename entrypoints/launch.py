"""The `memlane` console script: a running daemon answers, else the full CLI runs here.

Kept apart from `cli.py` so that a command a daemon answers never imports click, SQLAlchemy or
the container (daemon/client.py).
"""

from __future__ import annotations

import sys

# structlog imports rich (and better_exceptions) whenever they are installed, to pretty-print
# tracebacks; the CLI renders with structlog's plain formatter (entrypoints/logging.py), so on a
# machine that has rich the import was paid by every command's start for nothing: `memlane
# status` took a median 912 ms without this and 842 ms with it (15 alternating fresh processes,
# session 29). Marking them absent makes `import rich` raise ImportError, which structlog treats
# as "not installed". Only this process's console script does it: a host app importing memlane
# keeps its own modules (tests/architecture/test_cli_start_imports.py).
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
