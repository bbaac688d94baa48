"""Fixture files under tests/fixtures/lint: each ``X.py`` is linted and compared with ``X.py.expected``."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoti_lint.rules import ALL_RULES
from aoti_lint.source import file_kind
from tests.conftest import FIXTURES
from tests.helpers import lint_text

LINT_FIXTURES = sorted([*(FIXTURES / "lint").glob("*.py"), *(FIXTURES / "lint").glob("*.cpp")])


@pytest.mark.parametrize("path", LINT_FIXTURES, ids=[p.name for p in LINT_FIXTURES])
def test_fixture_output(cli, path: Path):
    result = cli(path.name, "--quiet", "--isolated", cwd=path.parent)
    expected = path.with_name(path.name + ".expected").read_text()
    assert result.stdout == expected
    assert result.returncode == (1 if expected else 0), result.stderr


def _all_linted_fixtures() -> list[Path]:
    """Every fixture aoti-lint reads: Python, and the shell, Dockerfile, YAML and .env files."""
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and file_kind(p) is not None)


def _sources():
    for path in _all_linted_fixtures():
        # The full path: extension-less scripts are recognised by their shebang.
        yield path.name, str(path), path.read_bytes().decode("utf-8", "replace")
    for rule in ALL_RULES:
        for index, example in enumerate(rule.INVALID + rule.VALID):
            yield f"{rule.code}-example-{index}", example.filename, example.source


def test_prefilter_is_sound():
    """Run every rule on every fixture and example without the prefilter: each finding's rule must pass it."""
    checked = 0
    for name, filename, text in _sources():
        unfiltered = lint_text(text, filename, prefilter=False)
        for finding in unfiltered.findings:
            if finding.code == "AOTI000":
                continue
            rule = next(rule for rule in ALL_RULES if rule.code == finding.code)
            assert rule.could_match(text.encode("utf-8")), (name, finding)
            checked += 1
        filtered = lint_text(text, filename)
        assert [f.code for f in filtered.findings if f.code != "AOTI000"] == [
            f.code for f in unfiltered.findings if f.code != "AOTI000"
        ], name
    assert checked > 20
