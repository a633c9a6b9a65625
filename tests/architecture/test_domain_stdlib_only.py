"""The domain imports the standard library and itself only.

import-linter's `pure-domain` contract forbids the third-party packages the project installs by
name; this test holds the rule for any package, one installed tomorrow included, by reading
every import statement of domain/.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

DOMAIN = Path(__file__).resolve().parents[2] / "domain"


def _imported(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_every_domain_import_is_the_standard_library_or_the_domain() -> None:
    outside: dict[str, set[str]] = {}
    for path in sorted(DOMAIN.rglob("*.py")):
        for name in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            if name == "memlane.domain" or name.startswith("memlane.domain."):
                continue
            outside.setdefault(path.name, set()).add(name)
    assert outside == {}
    assert len(list(DOMAIN.rglob("*.py"))) > 30  # the folder was found and read
