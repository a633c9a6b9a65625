"""Entry point: `memlane ui`, the local web page (search, files, health)."""
