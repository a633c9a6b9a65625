"""`memlane search "--dry-run"`: the shell drops the quotes, so the query reaches click as an
option. The usage error says how to search for it; a near option is still taken for a typo."""

from __future__ import annotations

from click.testing import CliRunner

from memlane.entrypoints.cli import cli


def test_an_unknown_option_says_how_to_search_for_it() -> None:
    done = CliRunner().invoke(cli, ["search", "--dry-run"])

    assert done.exit_code == 2
    assert "No such option: --dry-run" in done.output
    assert "memlane search -- --dry-run" in done.output
    assert "--query=--dry-run" in done.output


def test_a_near_option_is_a_typo_with_click_s_suggestion() -> None:
    done = CliRunner().invoke(cli, ["search", "--max-result", "3", "q"])

    assert done.exit_code == 2
    assert "Did you mean '--max-results'?" in done.output
    assert "starts with '-'" not in done.output


def test_the_hint_repeats_the_whole_query_and_keeps_the_options_before_it() -> None:
    done = CliRunner().invoke(
        cli, ["search", "deploy", "--dry-run", "--json", "--max-results", "3", "plan"]
    )

    assert done.exit_code == 2
    assert "memlane search --json --max-results 3 -- 'deploy --dry-run plan'" in done.output
    assert "--query='deploy --dry-run plan'" in done.output
    hinted = ["search", "--max-results", "3", "--", "deploy --dry-run plan"]
    assert CliRunner().invoke(cli, hinted).exit_code != 2  # what it says is a usable command
