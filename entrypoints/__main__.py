"""Entry points: `python -m memlane.entrypoints` runs the CLI (through a daemon when one runs)."""

from memlane.entrypoints.launch import main

main()
