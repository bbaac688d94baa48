"""What is generated from the rule modules (docs/rules/, the README's table, aoti_lint/rule_manifest.py); a missing
or stale file fails here."""

from __future__ import annotations

from aoti_lint.docs import discovered_rules, expected_files, expected_pages
from tests.conftest import REPO


def test_generated_files_are_current():
    stale = []
    for path, text in expected_files(REPO / "docs" / "rules").items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path.relative_to(REPO)))
    assert not stale, f"run `python -m aoti_lint.docs` to regenerate: {stale}"


def test_the_registry_is_every_rule_module_s_rules():
    """A rule is registered by its module alone: the manifest lists what discovery finds, in code order."""
    from aoti_lint.rules import ALL_RULES

    assert list(ALL_RULES) == discovered_rules()


def test_rule_pages_have_ruff_sections():
    for name, text in expected_pages().items():
        if name == "README.md" or name == "AOTI000.md":
            continue
        for section in ("## What it does", "## Why is this bad?", "## Example", "## References"):
            assert section in text, (name, section)


def test_references_come_from_the_knowledge_tables():
    """No docstring types a References list by hand: each rule names its pages in ``knowledge/references.py``
    (the deprecated-API rules through their symbol's own list), and the docs render them."""
    from aoti_lint.knowledge.deprecated_api import AOT_COMPILE, AOT_LOAD
    from aoti_lint.rules import ALL_RULES, RULES_BY_CODE

    for rule in ALL_RULES:
        assert "## References" not in (rule.__doc__ or ""), rule.code
        assert rule.references, rule.code
        assert rule.explanation().endswith(rule.references[-1].markdown()), rule.code
    assert RULES_BY_CODE["AOTI001"].references[:2] == AOT_COMPILE.references
    assert RULES_BY_CODE["AOTI002"].references[:2] == AOT_LOAD.references


def test_rules_index_links_each_rules_source_file():
    """docs/rules/README.md gives each code's source file: one file per rule (AOTI001/002 share one), named after
    the rule, that defines its class."""
    from aoti_lint.docs import source_path
    from aoti_lint.rules import ALL_RULES

    index = (REPO / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    for rule in ALL_RULES:
        source = REPO / source_path(rule)
        assert f"(../../{source_path(rule)})" in index, rule.code
        assert f"\nclass {rule.__name__}(" in source.read_text(encoding="utf-8"), rule.code
        if rule.code not in ("AOTI001", "AOTI002"):
            assert source.stem == rule.name.replace("-", "_"), rule.code
