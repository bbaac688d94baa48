"""``model.module_facts.parent_map`` gives every node the parent libcst's ``ParentNodeProvider`` gives it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from aoti_lint.model.module_facts import ModuleFacts, parent_map
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
VISITED = frozenset(
    {
        cst.Module,
        cst.Call,
        cst.Name,
        cst.Attribute,
        cst.Import,
        cst.ImportFrom,
        cst.Assign,
        cst.If,
        cst.SimpleStatementLine,
        cst.SimpleStatementSuite,
        cst.IndentedBlock,
        cst.FunctionDef,
        cst.Decorator,
        cst.ClassDef,
        cst.Expr,
        cst.Arg,
        cst.Subscript,
        cst.SimpleString,
        cst.Comparison,
        cst.Lambda,
    }
)


def _batched_events(module: cst.Module, kinds: frozenset[type]) -> list[tuple[bool, int]]:
    events: list[tuple[bool, int]] = []

    class Recorder(cst.BatchableCSTVisitor):
        def get_visitors(self):
            found = {}
            for kind in kinds:
                found[f"visit_{kind.__name__}"] = lambda node: events.append((True, id(node)))
                found[f"leave_{kind.__name__}"] = lambda node: events.append((False, id(node)))
            return found

    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([Recorder()])
    return events


def test_visits_come_in_the_order_libcst_batched_traversal_makes_them():
    paths = [*sorted(FIXTURES.rglob("*.py")), *sorted((REPO / "aoti_lint" / "rules").glob("*.py"))]
    checked = events = 0
    for path, module in libcst_modules(paths):
        facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
        visits = facts.visits(VISITED)
        expected = _batched_events(module, VISITED)
        assert [(entering, id(node)) for entering, node in visits] == expected, path
        checked += 1
        events += len(expected)
    assert checked > 100 and events > 50_000


def test_an_empty_node_among_the_visited_kinds_comes_where_libcst_visits_it():
    # Nodes without code (the parameters of `def f()`, an empty module) have no range of their own to order by:
    # their code generation still starts and ends where libcst's traversal visits and leaves them.
    kinds = frozenset({cst.Parameters, cst.Name, cst.Module, cst.Expr})
    for text in ("def f():\n    pass\n", "", "# c\n", "def f(): pass\nlambda: 0\nx\n", "class A:\n    def g(): ...\n"):
        module = cst.parse_module(text)
        facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
        assert [(entering, id(node)) for entering, node in facts.visits(kinds)] == _batched_events(module, kinds)


def test_whitespace_among_the_visited_kinds_leaves_the_order_to_libcst():
    # Five classes generate a whitespace child's code before the child libcst's traversal visits first (found in
    # review): the events of the other kinds keep libcst's order; with a whitespace kind, libcst's traversal runs.
    texts = ["import a as b\n", "del x\n", "def f(a, /, b): pass\n", "from m import (a as  # c\n  b)\n"]
    texts.append("with a as b[f()]:\n    pass\n")
    for text in texts:
        module = cst.parse_module(text)
        facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
        for kinds in ({cst.Comment, cst.Name}, {cst.SimpleWhitespace}, {cst.ParenthesizedWhitespace, cst.Call}):
            assert facts.visits(frozenset(kinds)) is None, (text, kinds)
        kinds = frozenset({cst.Name, cst.Comma, cst.Call, cst.AsName, cst.Del, cst.Param, cst.ParamSlash})
        assert [(entering, id(node)) for entering, node in facts.visits(kinds)] == _batched_events(module, kinds)


def test_a_rule_visiting_an_empty_node_or_an_attribute_gets_the_events_of_libcst_traversal():
    from aoti_lint.read.source import SourceFile
    from aoti_lint.rules.base import PythonRule
    from aoti_lint.run.engine import check_source
    from aoti_lint.run.file_context import FileContext

    text = "@d\ndef f():\n    return g(x)\n"
    module = cst.parse_module(text)
    expected = _events_of(module)
    assert (True, "Parameters") in expected and (True, "Call.func") in expected

    seen: list[tuple[bool, str]] = []

    class Recording(PythonRule):
        code = "AOTI999"
        name = "recording"
        summary = "records what it is shown"
        triggers = ((b"def",),)

        def visit_Parameters(self, node):  # empty in `def f()`
            seen.append((True, "Parameters"))

        def visit_Name(self, node):
            seen.append((True, "Name"))

        def leave_Name(self, node):
            seen.append((False, "Name"))

        def visit_Call_func(self, node):  # an attribute visitor: libcst's traversal calls it
            seen.append((True, "Call.func"))

    source = SourceFile(path=Path("example.py"), display_path="example.py", kind="python", data=text.encode())
    check_source(source, FileContext.of([Recording]), prefilter=False)
    assert seen == expected


def _events_of(module: cst.Module) -> list[tuple[bool, str]]:
    events: list[tuple[bool, str]] = []

    class Recorder(cst.BatchableCSTVisitor):
        def visit_Parameters(self, node):
            events.append((True, "Parameters"))

        def visit_Name(self, node):
            events.append((True, "Name"))

        def leave_Name(self, node):
            events.append((False, "Name"))

        def visit_Call_func(self, node):
            events.append((True, "Call.func"))

    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([Recorder()])
    return events
