"""The semantic model's answers (``aoti_lint.model.semantic``) asked with libcst's nodes, for the readings that
still walk libcst's tree.

A libcst node is matched with the ``ast`` name it starts with, by its position (a def's or class's name by the
statement's). A node no read or store of a name starts (an attribute's last part, a keyword's name, a name inside
an import statement) names nothing.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata

from aoti_lint.model.semantic import SemanticModel, model_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from aoti_lint.fixes.node_positions import NodePositions

# `as NAME` anywhere (imports, but also with/except: a superset is fine), across a line continuation.
AS_ALIAS = re.compile(r"\bas[\s\\]+([^\W\d]\w*)")


def _identifier(text: str) -> str:
    """The name as Python reads it: identifiers are NFKC-normalised (U+FF4F U+FF53, a fullwidth `os`, is `os`)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


class QualifiedNames:
    """The qualified names of one module's libcst nodes."""

    def __init__(self, wrapper: MetadataWrapper, text: str) -> None:
        from aoti_lint.model.syntax_tree import parse

        self._wrapper = wrapper
        self._text = text
        tree = parse(text)
        self.model: SemanticModel | None = None if isinstance(tree, BaseException) else model_of(tree)
        self._lines: list[str] | None = None

    @property
    def text(self) -> str:
        """The module's source text."""
        return self._text

    @functools.cached_property
    def positions(self) -> NodePositions:
        """Each node's range (``aoti_lint.fixes.node_positions``), shared with ``ModuleFacts``."""
        from aoti_lint.fixes.node_positions import NodePositions

        return NodePositions(self._wrapper.module, self._text)

    def __call__(self, node: cst.CSTNode, *, across_modules: bool = True) -> set[str]:
        model = self.model
        if model is None:
            return set()
        parts = []
        while True:
            kind = type(node).__name__
            if kind == "Attribute":
                parts.append(_identifier(node.attr.value))  # type: ignore[attr-defined]
                node = node.value  # type: ignore[attr-defined]
            elif kind == "Call":
                node = node.func  # type: ignore[attr-defined]
            elif kind == "Subscript":
                node = node.value  # type: ignore[attr-defined]
            else:
                break
        if kind != "Name":
            return set()
        tail = parts[::-1]
        head = self.ast_name(node)  # type: ignore[arg-type]
        return set() if head is None else model.names_of(head, tail, across_modules=across_modules)

    def ast_name(self, node: cst.Name) -> ast.AST | None:
        """The ``ast`` node a libcst name is (a Name, an argument, a def or class by its name), or None where it is
        none (see the module's docstring)."""
        found = self._at(node)
        if found is None:
            parent = self.positions.parent(node)
            if type(parent).__name__ in ("FunctionDef", "ClassDef") and parent.name is node:  # type: ignore[union-attr]
                found = self._at(parent)  # type: ignore[arg-type]
        # Before Python 3.12 ast may place a name inside an f-string wrongly: a node spelled otherwise is not it.
        spelled = getattr(found, "id", None) or getattr(found, "arg", None) or getattr(found, "name", None)
        return found if spelled == _identifier(node.value) else None

    def _at(self, node: cst.CSTNode) -> ast.AST | None:
        model = self.model
        if model is None:
            return None
        start = self.positions[node].start
        line = self._line(start.line)
        column = start.column if line.isascii() else len(line[: start.column].encode())
        return model.name_at(start.line, column)

    def char_position(self, node: ast.AST) -> tuple[int, int]:
        """Where an ``ast`` node starts, as libcst counts: the line, and the column in characters."""
        line = self._line(node.lineno)  # type: ignore[attr-defined]
        column: int = node.col_offset  # type: ignore[attr-defined]
        return node.lineno, column if line.isascii() else len(line.encode()[:column].decode(errors="replace"))  # type: ignore[attr-defined]

    def _line(self, number: int) -> str:
        lines = self._lines
        if lines is None:
            from aoti_lint.model.syntax_tree import source_lines

            lines = self._lines = source_lines(self._text)
        return lines[number - 1] if 0 < number <= len(lines) else ""

    def may_name(self, node: cst.CSTNode, short_names: frozenset[str] | set[str]) -> bool:
        """Whether ``node`` can have a qualified name whose last part is in ``short_names``: a test of its spelling,
        to make before asking for its names. A call is named by its callee, a subscript by its value; a name keeps
        its own unless an ``as`` import renamed it."""
        kind = type(node).__name__
        while kind == "Call" or kind == "Subscript":
            node = node.func if kind == "Call" else node.value  # type: ignore[attr-defined]
            kind = type(node).__name__
        if kind == "Attribute":
            return node.attr.value in short_names  # type: ignore[attr-defined]
        if kind != "Name":
            return False
        name = _identifier(node.value)  # type: ignore[attr-defined]
        model = self.model
        if model is None:
            return name in short_names or name in AS_ALIAS.findall(self._text)
        return model.may_be_named(name, short_names)

    def may_be_function(self, name: str) -> bool:
        """Whether some def of the module has this name (so that a read of it may be that function)."""
        return self.model is None or name in self.model.functions
