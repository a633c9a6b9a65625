"""Entry point: memlane as a Model Context Protocol server (stdio and streamable HTTP)."""
