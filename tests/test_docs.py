"""docs/rules/ is generated from the rules; a missing or stale page fails here."""

from __future__ import annotations

from aoti_lint.docs import expected_pages
from tests.conftest import REPO


def test_rule_pages_are_current():
    directory = REPO / "docs" / "rules"
    stale = []
    for name, text in expected_pages().items():
        page = directory / name
        if not page.exists() or page.read_text(encoding="utf-8") != text:
            stale.append(name)
    assert not stale, f"run `python -m aoti_lint.docs` to regenerate: {stale}"


def test_rule_pages_have_ruff_sections():
    for name, text in expected_pages().items():
        if name == "README.md" or name == "AOTI000.md":
            continue
        for section in ("## What it does", "## Why is this bad?", "## Example", "## References"):
            assert section in text, (name, section)
