"""The exit code of a SystemExit argument, as the interpreter itself would give it."""

from __future__ import annotations

import pytest

from memlane.entrypoints.fast_exit import exit_code


@pytest.mark.parametrize(("status", "code"), [(None, 0), (0, 0), (2, 2), (256 + 3, 3)])
def test_numbers_and_none(status: object, code: int) -> None:
    assert exit_code(status) == code


def test_a_message_is_printed_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code("no such agent") == 1
    assert capsys.readouterr().err == "no such agent\n"
