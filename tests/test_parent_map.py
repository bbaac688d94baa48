"""``model.module_facts.parent_map`` gives every node the parent libcst's ``ParentNodeProvider`` gives it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from aoti_lint.fixes.module_facts import ModuleFacts, parent_map
from tests.helpers import libcst_modules

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent


def test_parents_are_libcst_own_on_every_fixture_and_a_large_module():
    paths = [*sorted(FIXTURES.rglob("*.py")), REPO / "aoti_lint" / "rules" / "debug_inductor_config.py"]
    checked = 0
    for path, module in libcst_modules(paths):
        expected = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider))
        assert parent_map(module) == expected, path
        checked += 1
    assert checked > 50


# The kinds the rules and the device-flow reader ask for, alone and together.
KINDS = [
    (cst.Call,),
    (cst.SimpleString, cst.FormattedStringText),
    (cst.Assign, cst.AnnAssign, cst.AugAssign),
    (cst.With,),
    (cst.Expr,),
    (cst.Name, cst.Attribute),
]


def _visited(module: cst.Module, kinds: tuple[type, ...]) -> list[cst.CSTNode]:
    met: list[cst.CSTNode] = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node) in kinds:
                met.append(node)
            return True

    module.visit(Visitor())
    return met


def test_nodes_of_a_kind_come_in_the_order_a_libcst_visitor_meets_them():
    paths = [*sorted(FIXTURES.rglob("*.py")), *sorted((REPO / "aoti_lint" / "rules").glob("*.py"))]
    checked = nodes = 0
    for path, module in libcst_modules(paths):
        facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
        for kinds in KINDS:
            expected = _visited(module, kinds)
            assert [id(node) for node in facts.nodes(*kinds)] == [id(node) for node in expected], (path, kinds)
            nodes += len(expected)
        checked += 1
    assert checked > 100 and nodes > 15_000


def test_nested_calls_come_outer_first_as_a_visitor_meets_them():
    module = cst.parse_module("f(g(h()))(k())\nx = [a(b) for b in c()]\n")
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    assert [module.code_for_node(call.func) for call in facts.nodes(cst.Call)] == [
        "f(g(h()))",
        "f",
        "g",
        "h",
        "k",
        "a",
        "c",
    ]


# What the rules visit and leave, and kinds whose nodes sit outside their parent's syntactic range
# (a def's decorators) or share it (a statement and its only expression).
