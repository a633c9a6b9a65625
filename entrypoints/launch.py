"""The `memlane` console script: a running daemon answers, else the full CLI runs here.

Kept apart from `cli.py` so that a command a daemon answers never imports click, SQLAlchemy or
the container (daemon/client.py).
"""

from __future__ import annotations

import sys


def main() -> None:
    from memlane.entrypoints.daemon.client import serve_through_daemon

    serve_through_daemon(sys.argv[1:])  # ends the process when a daemon answered
    from memlane.entrypoints.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
