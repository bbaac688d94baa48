"""C and C++ sources read with a real parser: tree-sitter and its C++ grammar, imported on first use.

Python-only runs never load tree-sitter: the import happens in ``parse`` and only for files whose bytes
passed a rule's prefilter. Positions follow the rest of aoti-lint: 1-based rows, 1-based character columns
(tree-sitter counts bytes; a column is converted through the line's decoded prefix).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from aoti_lint.diagnostics import Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from tree_sitter import Node, Tree

    class Spanned(Protocol):
        """A tree-sitter node, or a span built from two (a declaration's type to its arguments)."""

        @property
        def start_point(self) -> tuple[int, int]: ...

        @property
        def end_point(self) -> tuple[int, int]: ...


# Suffixes read as C/C++ (CUDA included: the grammar reads its host code).
CPP_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl"})

_PARSER = None


class CppParserMissing(RuntimeError):
    """tree-sitter or its C++ grammar is not installed."""


def _parser():
    global _PARSER
    if _PARSER is None:
        try:
            import tree_sitter_cpp
            from tree_sitter import Language, Parser
        except ImportError as exc:  # both are dependencies; a broken install still gets a clear message
            raise CppParserMissing(
                f"reading C++ needs tree-sitter and tree-sitter-cpp ({exc}); pip install tree-sitter tree-sitter-cpp"
            ) from exc
        _PARSER = Parser(Language(tree_sitter_cpp.language()))
    return _PARSER


def parse(data: bytes) -> Tree:
    """Parse C/C++ bytes. tree-sitter never fails: broken code gives ERROR nodes, the rest is still read."""
    return _parser().parse(data)


def walk(root: Node, types: Iterable[str] | None = None) -> Iterator[Node]:
    """Nodes under ``root`` in source order (iteratively: a deep file must not exhaust Python's stack)."""
    wanted = None if types is None else frozenset(types)
    stack = [root]
    while stack:
        node = stack.pop()
        if wanted is None or node.type in wanted:
            yield node
        stack.extend(reversed(node.children))


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def string_value(node: Node) -> str | None:
    """The value of a string literal (adjacent literals concatenated), or None if it is not one literal.

    Escapes other than ``\\\\`` and ``\\"`` make the value uncertain: None, so callers stay silent.
    """
    if node.type == "concatenated_string":
        parts = [string_value(child) for child in node.named_children]
        return None if any(part is None for part in parts) else "".join(parts)  # type: ignore[arg-type]
    if node.type == "raw_string_literal":
        content = [child for child in node.named_children if child.type == "raw_string_content"]
        return text(content[0]) if content else ""
    if node.type != "string_literal":
        return None
    value = []
    for child in node.named_children:
        if child.type == "string_content":
            value.append(text(child))
        elif child.type == "escape_sequence" and text(child) in ("\\\\", '\\"'):
            value.append(text(child)[1])
        else:
            return None
    return "".join(value)


def last_name(node: Node) -> str:
    """``torch::inductor::AOTIModelContainerRunnerCpu`` -> ``AOTIModelContainerRunnerCpu``."""
    while node.type == "qualified_identifier":
        name = node.child_by_field_name("name")
        if name is None:
            break
        node = name
    if node.type == "template_type" or node.type == "template_function":
        name = node.child_by_field_name("name")
        if name is not None:
            node = name
    return text(node)


class Locator:
    """tree-sitter's 0-based (row, byte column) points as 1-based rows and character columns."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._starts = [0, *(match.end() for match in re.finditer(rb"\n", data))]

    def position(self, point: tuple[int, int]) -> Position:
        row, byte_column = point
        start = self._starts[row] if row < len(self._starts) else len(self.data)
        prefix = self.data[start : start + byte_column]
        return Position(row + 1, len(prefix.decode("utf-8", "replace")) + 1)

    def span(self, node: Spanned) -> tuple[Position, Position]:
        (start_row, start_column), (end_row, end_column) = node.start_point, node.end_point
        return self.position((start_row, start_column)), self.position((end_row, end_column))
