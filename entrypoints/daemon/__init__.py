"""Entry points: the resident memlane process (`memlane daemon`) and the CLI's client of it."""
