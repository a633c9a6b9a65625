"""Entry points: `python -m memlane.entrypoints` runs the CLI."""

from memlane.entrypoints.cli import main

main()
