"""``model.syntax_tree``: ``source_segment`` reads what ``ast.get_source_segment`` reads, splitting the text once;
``parse`` refuses a tree deeper than any Python since 3.11 builds, on every version."""

from __future__ import annotations

import ast

import pytest

from aoti_lint.model.syntax_tree import _deeper_than, parse, source_lines, source_segment, walk

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


def test_the_fields_a_walk_skips_never_hold_a_node():
    """``child_fields`` leaves out the fields that hold a name, a number, a flag or a constant's value: on the
    standard library's modules and this repository's, no node holds a node in one of them, so ``walk`` and
    ``children`` meet every node ``ast.walk`` meets (the expression contexts aside)."""
    import sysconfig
    from pathlib import Path

    from aoti_lint.model.syntax_tree import child_fields

    stdlib, own = Path(sysconfig.get_paths()["stdlib"]), Path(__file__).parents[1] / "aoti_lint"
    read = 0
    for paths in (stdlib.glob("*.py"), own.rglob("*.py")):
        for path in sorted(paths):
            try:
                tree = ast.parse(path.read_bytes())
            except (SyntaxError, ValueError):
                continue
            read += 1
            walked = {id(node) for node in walk(tree)}
            for node in ast.walk(tree):
                if isinstance(node, ast.expr_context):
                    continue
                assert id(node) in walked, (path, ast.dump(node)[:80])
                kept = set(child_fields(type(node)))
                for name in set(node._fields) - kept - {"ctx"}:
                    value = getattr(node, name, None)
                    assert not any(isinstance(item, ast.AST) for item in (value if type(value) is list else [value])), (
                        path,
                        type(node).__name__,
                        name,
                    )
    assert read > 150
