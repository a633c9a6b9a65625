"""Entry point for `python -m bench` (from the repository root) and `python -m memlane.bench`."""

from __future__ import annotations

import sys

from memlane.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
