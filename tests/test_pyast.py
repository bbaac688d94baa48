"""``pyast``: ``source_segment`` reads what ``ast.get_source_segment`` reads, splitting the text once; ``parse``
refuses a tree deeper than any Python since 3.11 builds, on every version."""

from __future__ import annotations

import ast

import pytest

from aoti_lint.pyast import _deeper_than, parse, source_lines, source_segment, walk

TEXTS = [
    "a = 'x'\r\nb = 'é.so'\rc = f'{a}.so'\n\x0cd = ('a'\n 'b.so')",
    "x = 'ü'  ;y = 'a.so'",
    'call(\n    \'first\',\r\n    """multi\rline""",\n)\n',
    "def f():\n    return {'k': [1,\n  2]}",
]


@pytest.mark.parametrize("text", TEXTS)
def test_every_node_reads_as_get_source_segment(text):
    tree = ast.parse(text)
    lines = source_lines(text)
    nodes = [node for node in walk(tree) if isinstance(node, (ast.expr, ast.stmt))]
    assert nodes
    for node in nodes:
        assert source_segment(lines, node) == ast.get_source_segment(text, node)


def test_lines_split_as_cpython_numbers_them():
    assert source_lines("a\r\nb\rc\x0cd\n\ne") == ["a\r\n", "b\r", "c\x0cd\n", "\n", "e"]


def test_walk_meets_every_node_ast_walk_meets_but_the_expression_contexts():
    from pathlib import Path

    text = (Path(__file__).parent.parent / "aoti_lint" / "rules" / "debug_inductor_config.py").read_text()
    tree = ast.parse(text)
    expected = [node for node in ast.walk(tree) if not isinstance(node, ast.expr_context)]
    met = list(walk(tree))
    assert len(met) == len(expected) and {id(node) for node in met} == {id(node) for node in expected}
    assert not any(isinstance(node, ast.expr_context) for node in met)


def test_depth_is_counted_without_recursion():
    tree = ast.parse("x = a" + ".a" * 50)  # Module, Assign, 50 Attributes, Name, its Load context: 54 levels
    assert _deeper_than(tree, 53) and not _deeper_than(tree, 54)


@pytest.mark.parametrize("unit", [".a", " + a", "[0]"])
def test_a_tree_python_311_refuses_is_refused_on_every_version(unit):
    """3.10 builds 20,000 chained attributes, and libcst's native parser, given them next, overflowed the C
    stack (a segfault, found running the suite on 3.10): the parse says RecursionError, as 3.11 does."""
    assert isinstance(parse("x = a" + unit * 20_000), RecursionError)
    assert isinstance(parse("x = a" + unit * 2_000), ast.Module)


def test_the_parser_warns_nothing_of_the_code_it_reads():
    """An invalid escape (`"\\#"`) makes CPython's parser warn (a SyntaxWarning from 3.12, printed by default):
    aoti-lint reads the code without running it, and prints no such line."""
    import warnings

    text = 'x = "\\#"\ny = b"\\d"\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(parse(text), ast.Module)


def _trees() -> list[ast.AST]:
    """The repository's modules and the installed torch's own (read, never imported), and nodes built by hand: an
    optional field unset, a field absent, a list holding other values, a subclass of a node type."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).parent.parent
    paths = sorted(path for folder in ("aoti_lint", "tests") for path in (root / folder).rglob("*.py"))
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        paths += sorted(Path(next(iter(spec.submodule_search_locations))).glob("_inductor/*.py"))
    trees: list[ast.AST] = []
    for path in paths:
        tree = parse(path.read_text(encoding="utf-8", errors="replace"))
        trees += [tree] if isinstance(tree, ast.Module) else []  # a fixture of a syntax error has none

    class Named(ast.Name):
        pass

    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[None, ast.Constant(1)], defaults=[])
    built = ast.FunctionDef(name="f", args=arguments, body=[ast.Pass(), "not a node", Named(id="x")], decorator_list=[])
    # (`returns`, optional, is left unset: getattr's default, on Pythons that set none)
    trees += [built, ast.Module(body=[ast.Expr(ast.Lambda(arguments, Named(id="y")))], type_ignores=[]), ast.Pass()]
    return trees


def test_the_compiled_walk_gives_the_python_walks_nodes_in_its_order():
    """``aoti_lint/_tree_walk.c`` against ``_walk_in_python`` and ``_children_in_python``: the same nodes, the same
    objects, in the same order, with and without node types skipped."""
    pytest.importorskip("aoti_lint._tree_walk", reason="the extension is not built here (.ci/run builds it)")
    from aoti_lint import _tree_walk, pyast
    from aoti_lint.kernel_prefilter import _SCOPES

    def compiled(root, skip=None):
        return _tree_walk.walk(root, ast.AST, pyast._CHILD_FIELDS, pyast.child_fields, skip)

    walked = 0
    for tree in _trees():
        for skip in (None, _SCOPES, (ast.Call,)):
            expected = list(pyast._walk_in_python(tree, skip))
            found = compiled(tree, skip)
            assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True))
            walked += len(found)
        for node in expected:
            found = _tree_walk.children(node, ast.AST, pyast._CHILD_FIELDS, pyast.child_fields)
            assert [id(child) for child in found] == [id(child) for child in pyast._children_in_python(node)]
    assert walked > 100_000


def test_the_compiled_walk_is_used_unless_extensions_are_turned_off():
    import os
    import subprocess
    import sys

    probe = "from aoti_lint import pyast; print(pyast._COMPILED is not None)"
    environment = {**os.environ, "AOTI_LINT_NO_EXTENSIONS": "1"}
    off = subprocess.run([sys.executable, "-c", probe], env=environment, capture_output=True, text=True)
    assert off.stdout.strip() == "False"
    try:
        import aoti_lint._tree_walk  # noqa: F401
    except ImportError:
        pytest.skip("the extension is not built here (.ci/run builds it)")
    environment.pop("AOTI_LINT_NO_EXTENSIONS")
    on = subprocess.run([sys.executable, "-c", probe], env=environment, capture_output=True, text=True)
    assert on.stdout.strip() == "True"
