"""One ``ast.parse`` per text, shared by the second prefilter stage and the syntax checks.

``ast`` compiles nothing and runs nothing. The last text's outcome is kept: the runner, then ``check_source``,
then the parse guard ask about the same text in a row.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import warnings
from collections.abc import Iterator

# A line and its end, as CPython numbers them (``\r\n``, ``\r`` or ``\n``; not the form feed
# ``str.splitlines`` also splits on); the last line may have no end.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@functools.lru_cache(maxsize=1)
def parse(text: str) -> ast.Module | BaseException:
    """The module's tree, or the exception CPython's parser raised (SyntaxError, RecursionError, ...); the last
    text's kept."""
    return parse_text(text)


def parse_text(text: str | bytes) -> ast.Module | BaseException:
    """``parse`` without keeping the outcome: for a module read beside the one being checked."""
    try:
        with warnings.catch_warnings():
            # The parser warns of what it reads (`"\#"`: a SyntaxWarning from Python 3.12, printed by default):
            # the user's code is not being run, and those lines would only clutter the report.
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return exc
    if sys.version_info < (3, 11) and _deeper_than(tree, 3 * sys.getrecursionlimit()):
        # Python 3.11 refuses a tree this deep (20,000 chained attributes or operators) as it builds it; 3.10
        # builds it, and libcst's native parser, given the text next, overflows the C stack on it.
        return RecursionError("maximum recursion depth exceeded during ast construction")
    return tree


def _deeper_than(root: ast.AST, limit: int) -> bool:
    """Whether some node lies more than ``limit`` levels below ``root``, found without recursion."""
    stack = [(root, 1)]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node, depth = pop()
        if depth > limit:
            return True
        for value in node.__dict__.values():
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push((item, depth + 1))
            elif isinstance(value, node_type):
                push((value, depth + 1))
    return False


def walk(root: ast.AST, skip: tuple[type[ast.AST], ...] | None = None) -> Iterator[ast.AST]:
    """Every node under ``root``, itself included, as ``ast.walk`` yields them but in another order (depth
    first, the last child first) and without the expression contexts (``Load``, ``Store``, ``Del``: many of a
    tree's nodes, and no reader asks for them); ``skip``: node types left out, with everything under them (not
    ``root``). It makes no generator per node, as ``ast.iter_child_nodes`` does."""
    node_type = ast.AST
    fields = CHILD_FIELDS
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        yield node
        kind = type(node)
        names = fields.get(kind)
        if names is None:
            names = child_fields(kind)
        for name in names:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type) and not (skip and isinstance(item, skip)):
                        push(item)
            elif isinstance(value, node_type) and not (skip and isinstance(value, skip)):
                push(value)


# Each node type's fields that may hold nodes, the expression context aside (see ``walk``).
CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# Fields that hold a name, a number, a flag or a constant's value in every node type that has them (the grammar's
# `identifier`, `int`, `string` and `constant`), never a node: a `Name` or a `Constant`, most of a tree's nodes,
# then has no field to look at.
_LEAF_FIELDS = frozenset(
    {"id", "attr", "arg", "name", "asname", "module", "level", "type_comment", "kind", "conversion", "is_async"}
    | {"simple", "rest", "kwd_attrs", "tag", "ctx"}
)
_LEAF_FIELDS_OF: dict[type, frozenset[str]] = {
    ast.Constant: frozenset({"value"}),
    ast.Global: frozenset({"names"}),
    ast.Nonlocal: frozenset({"names"}),
}


def child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes, the expression context aside (see ``walk``)."""
    names = CHILD_FIELDS.get(kind)
    if names is None:
        leaves = _LEAF_FIELDS | _LEAF_FIELDS_OF.get(kind, frozenset())
        if kind.__name__ == "TypeAlias":
            leaves = leaves - {"name"}  # Python 3.12's `type X = ...`: its name is a `Name` node
        names = CHILD_FIELDS[kind] = tuple(name for name in kind._fields if name not in leaves)
    return names


def children(node: ast.AST) -> list[ast.AST]:
    """The node's children in field order, as ``ast.iter_child_nodes`` gives them, the expression context aside."""
    found: list[ast.AST] = []
    for name in child_fields(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def source_lines(text: str) -> list[str]:
    """The text's lines with their ends, numbered as ``ast`` numbers them: split once for many
    ``source_segment`` calls (``ast.get_source_segment`` splits the whole text, a character at a time, on
    every call)."""
    return _LINE.findall(text)


def source_segment(lines: list[str], node: ast.AST) -> str:
    """The source of ``node`` (``ast.get_source_segment``), from the text's ``source_lines``."""
    first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if first == last:
        return lines[first].encode()[start:end].decode()
    head = lines[first].encode()[start:].decode()
    tail = lines[last].encode()[:end].decode()
    return "".join([head, *lines[first + 1 : last], tail])
