"""``dataflow.parent_map`` gives every node the parent libcst's ``ParentNodeProvider`` gives it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from aoti_lint.dataflow import parent_map

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent


def test_parents_are_libcst_own_on_every_fixture_and_a_large_module():
    paths = [*sorted(FIXTURES.rglob("*.py")), REPO / "aoti_lint" / "rules" / "debug_inductor_config.py"]
    checked = 0
    for path in paths:
        try:
            module = cst.parse_module(path.read_text())
        except cst.ParserSyntaxError:
            continue
        expected = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider))
        assert parent_map(module) == expected, path
        checked += 1
    assert checked > 50
