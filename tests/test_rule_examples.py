"""Every rule's VALID and INVALID examples run as tests (Fixit's habit)."""

from __future__ import annotations

import pytest

from aoti_lint.rules import ALL_RULES
from tests.helpers import lint_text

VALID = [(rule, index, example) for rule in ALL_RULES for index, example in enumerate(rule.VALID)]
INVALID = [(rule, index, example) for rule in ALL_RULES for index, example in enumerate(rule.INVALID)]


def _ids(cases):
    return [f"{rule.code}-{index}" for rule, index, _ in cases]


@pytest.mark.parametrize(("rule", "index", "example"), VALID, ids=_ids(VALID))
def test_valid_example_is_silent(rule, index, example):
    result = lint_text(example.source, example.filename)
    assert not result.errors
    assert [f for f in result.findings if f.code == rule.code] == []


@pytest.mark.parametrize(("rule", "index", "example"), INVALID, ids=_ids(INVALID))
def test_invalid_example_is_reported(rule, index, example):
    result = lint_text(example.source, example.filename)
    assert not result.errors
    findings = [f for f in result.findings if f.code == rule.code]
    assert len(findings) == example.count, findings
    first = findings[0]
    if example.line is not None:
        assert first.start.row == example.line
    if example.column is not None:
        assert first.start.column == example.column
    if example.message_contains is not None:
        assert example.message_contains in first.message


def test_every_rule_has_examples_and_docs():
    for rule in ALL_RULES:
        assert rule.INVALID, rule.code
        assert rule.VALID, rule.code
        assert "## What it does" in rule.explanation(), rule.code
        assert "## Why is this bad?" in rule.explanation(), rule.code


def test_codes_and_names_are_unique():
    assert len({rule.code for rule in ALL_RULES}) == len(ALL_RULES)
    assert len({rule.name for rule in ALL_RULES}) == len(ALL_RULES)


FIXED = [(rule, index, example) for rule, index, example in INVALID if example.fixed is not None]


@pytest.mark.parametrize(("rule", "index", "example"), FIXED, ids=_ids(FIXED))
def test_invalid_example_fixes_to_its_fixed_code(cli, tmp_path, rule, index, example):
    target = tmp_path / example.filename
    target.write_text(example.source)
    result = cli(
        "--isolated", "--fix", "--unsafe-fixes", "--target-torch", example.target_torch, example.filename, cwd=tmp_path
    )
    assert result.returncode in (0, 1), result.stderr
    assert target.read_text() == example.fixed_source
