"""E2E (issue #32 item 6): a password in a URL is masked wherever the CLI prints it.

The real CLI with debug JSON logs: `status --json` (the effective settings), `status`, `index`
and `search` with an embedding base URL or a PostgreSQL URL holding a password, malformed URLs
included (an error, not a traceback). Neither stream may ever show the password.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home, memlane, no_traceback

pytestmark = pytest.mark.e2e

PASSWORD = "Hunter2-url-password-42"


def _config(home: Path, name: str, memory_search: str) -> Path:
    path = home / f"{name}.json5"
    path.write_text(f"{{agents: {{defaults: {{memorySearch: {memory_search}}}}}}}\n")
    return path


def _run(home: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(home)
    env.pop("MEMLANE_PROVIDER", None)  # the config names the provider
    # In the home folder: a target taken for a relative folder would be made there, in sight.
    return memlane(
        home, "--log-level", "debug", "--log-json", "--config", str(config), *args,
        env=env, timeout=120, cwd=home,
    )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(home, config): one home indexed with `provider: "none"`, for the `store copy` refusals.

    Read-only: every copy below is refused before it writes anything, and the tests that check
    that nothing was made check it in this home. `a-file` is the file a target may wrongly name.
    """
    home = make_home(tmp_path_factory.mktemp("copy"))
    config = _config(home, "none", '{provider: "none"}')
    assert _run(home, config, "index").returncode == 0
    (home / "a-file").write_text("not a state dir")
    return home, config


@pytest.mark.parametrize(
    "base_url",
    [f"http://app:{PASSWORD}@127.0.0.1:1/v1", f"htp://app:{PASSWORD}@127.0.0.1:1/v1"],
    ids=["unreachable", "bad-scheme"],
)
def test_an_embedding_base_url_password_is_never_printed(home: Path, base_url: str) -> None:
    config = _config(
        home,
        "remote",
        f'{{provider: "openai", fallback: "none", '
        f'remote: {{baseUrl: "{base_url}", apiKey: "test-key-not-real"}}}}',
    )
    runs = [
        _run(home, config, "index"),
        _run(home, config, "search", "tabs"),
        _run(home, config, "status", "--deep"),
        _run(home, config, "status", "--json"),
    ]

    for done in runs:
        assert PASSWORD not in done.stdout + done.stderr, done.args
        assert no_traceback(done)
    shown = json.loads(runs[-1].stdout)["settings"]["remote.baseUrl"]
    assert shown == base_url.replace(PASSWORD, "***")


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://app:{PASSWORD}@127.0.0.1:1/memory",
        f"postgresql://app:{PASSWORD}@[::1/memory",  # unparseable: no traceback either
        f"postgres://app:{PASSWORD}@db:99999/memory",
    ],
    ids=["refused", "unclosed-bracket", "bad-port"],
)
def test_a_store_url_password_is_never_printed(home: Path, url: str) -> None:
    config = _config(
        home, "pg", f'{{provider: "none", store: {{driver: "postgres", url: "{url}"}}}}'
    )

    for args in (("status",), ("status", "--json"), ("index",), ("search", "tabs")):
        done = _run(home, config, *args)
        assert done.returncode == 1, done.stderr
        assert "index error:" in done.stderr and "app:***@" in done.stderr
        assert PASSWORD not in done.stdout + done.stderr
        assert no_traceback(done)


def test_a_store_copy_target_password_is_never_printed(indexed: tuple[Path, Path]) -> None:
    home, config = indexed

    done = _run(home, config, "store", "copy", "--to", f"postgresql://app:{PASSWORD}@[::1/db")

    assert done.returncode == 1 and "app:***@" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert no_traceback(done)


@pytest.mark.parametrize("scheme", ["mysql", "postgresq", "MySQL+pymysql"])
def test_a_url_target_no_store_supports_is_refused_not_made_a_folder(
    indexed: tuple[Path, Path], scheme: str
) -> None:
    home, config = indexed

    done = _run(home, config, "store", "copy", "--to", f"{scheme}://app:{PASSWORD}@db.example/mem")

    assert done.returncode == 2, done.stderr
    assert f"unsupported store '{scheme}://app:***@db.example/mem'" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert no_traceback(done)
    assert not (home / f"{scheme}:").exists() and not list(home.rglob(f"{scheme}:*"))


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql:///memory?host=127.0.0.1&port=1&user=app&password={PASSWORD}",
        f"postgresql://app:{PASSWORD}#with/marks@127.0.0.1:1/memory",
    ],
    ids=["query-parameter", "unescaped-marks"],
)
def test_the_forms_libpq_also_accepts_are_masked_too(home: Path, url: str) -> None:
    config = _config(
        home, "pg", f'{{provider: "none", store: {{driver: "postgres", url: "{url}"}}}}'
    )

    for args in (("status",), ("status", "--json")):
        done = _run(home, config, *args)
        assert PASSWORD not in done.stdout + done.stderr
        assert "***" in done.stdout + done.stderr
        assert no_traceback(done)


@pytest.mark.parametrize("target", ["", "  ", "sqlite:", "A FILE"])
def test_a_copy_target_that_names_no_folder_is_refused(
    indexed: tuple[Path, Path], target: str
) -> None:
    home, config = indexed  # indexed, with `a-file` in it
    before = sorted(p.name for p in home.iterdir())
    target = str(home / "a-file") if target == "A FILE" else target

    done = _run(home, config, "store", "copy", "--to", target)

    assert done.returncode == 2, done.stdout
    assert "--to" in done.stderr and no_traceback(done)
    assert sorted(p.name for p in home.iterdir()) == before  # nothing made, here or anywhere


def test_a_copy_target_the_machine_refuses_is_one_error_line(indexed: tuple[Path, Path]) -> None:
    home, config = indexed

    done = _run(home, config, "store", "copy", "--to", "/proc/memlane-copy")

    assert done.returncode == 1
    assert "cannot write the copy of main to /proc/memlane-copy" in done.stderr
    assert no_traceback(done)
