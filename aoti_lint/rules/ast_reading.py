"""What the rules' ``ast`` readings (``PythonRule.check_ast``) share: the tree's parents, the places a reading
settles alone, names from the semantic model, and findings at libcst's positions.

A reading answers only where its answer is the one the rule's libcst traversal gives, and returns None
anywhere the two could differ; ``tests/test_debug_switches.py`` compares both readings on generated texts.
"""

from __future__ import annotations

import functools
import re

from aoti_lint.diagnostics import Finding, Fix, Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Texts that libcst 1.9 reads otherwise than Python does (found by differential fuzzing in review): a line holding
# only a backslash (its code generation drops it: positions move), a backslash continuation ending the text (it
# cannot parse it). libcst's answer for them (an error, AOTI000) is the one to give.
_MISREAD_BY_LIBCST = re.compile(r"(?:^|[\r\n])[ \t\f]*\\(?:\r\n|\r|\n)|\\(?:\r\n|\r|\n)?\Z")


class AstReading:
    """One rule's reading of one module's ``ast`` tree (``code``: its ``aoti_lint.model.name_index.CodeIndex``)."""

    # Statements in these bodies, each directly in the one before, are outside any `if` (whose condition may
    # make a setting deliberate) and any other compound statement whose bodies libcst's removal treats apart.
    _BLOCKS = ("Module", "FunctionDef", "AsyncFunctionDef", "ClassDef")
    # Past this depth libcst's recursive traversal may stop with a RecursionError (the file is then reported as
    # too deeply nested, without findings); such a tree is left to it. An `ast` level may be three of libcst's
    # (a subscript), and its traversal stops near 96 nested subscripts: half that is left to it.
    _MAX_DEPTH = 48

    def __init__(self, rule: Any, code: Any, path: str) -> None:
        self.rule, self.code, self.path = rule, code, path
        self.parents: dict[Any, Any] = {}
        self.model: Any = None
        # The statements directly in a module's, class's or function's body (``outside_compound_statements``).
        self._in_body: set[int] = set()

    def nodes(self) -> list[Any] | None:
        """Every node of the tree, each child's parent recorded; None without a tree, past the depth, or for a
        text libcst reads otherwise than Python does: ``_MISREAD_BY_LIBCST``, a parenthesised annotated target
        (``(x): int``) and ``\\N{...}`` in an f-string, which libcst 1.9 cannot parse."""
        import ast

        from aoti_lint.model.syntax_tree import children

        tree, text = self.code.tree, self.code.text
        if tree is None or _MISREAD_BY_LIBCST.search(text):
            return None
        named_escapes = "\\N{" in text
        found: list[Any] = []
        parents, in_body = self.parents, self._in_body
        stack: list[tuple[Any, int]] = [(tree, 0)]
        while stack:
            node, depth = stack.pop()
            if depth > self._MAX_DEPTH:
                return None
            kind = type(node)
            if kind is ast.AnnAssign and (node.target.lineno, node.target.col_offset) != (node.lineno, node.col_offset):
                return None
            if kind is ast.JoinedStr and named_escapes:
                return None
            found.append(node)
            if kind.__name__ in self._BLOCKS:
                in_body.update(id(statement) for statement in node.body)
            for child in children(node):
                parents[child] = node
                stack.append((child, depth + 1))
        return found

    def read_imports(self) -> bool:
        """The module's semantic model (``aoti_lint.model.semantic``), for the names the reading asks about."""
        from aoti_lint.model.semantic import model_of

        self.model = model_of(self.code.tree)
        return True

    def qualified_names(self, node: Any) -> set[str]:
        """The qualified names of a name or an attribute chain on a name (``SemanticModel.qualified_names``)."""
        return self.model.qualified_names(node)

    def ascii(self, node: Any) -> bool:
        """Whether the node's source is ASCII: ``ast`` gives identifiers in NFKC form (a fullwidth `os` is
        `os`), libcst as written, and the names the readings follow are ASCII in their NFKC form."""
        if self.code.text.isascii():
            return True
        from aoti_lint.model.syntax_tree import source_segment

        return source_segment(self.lines, node).isascii()

    def outside_compound_statements(self, statement: Any) -> bool:
        """The statement sits in a module, class or function body, each directly in the one before."""
        node = statement
        while True:
            parent = self.parents.get(node)
            if parent is None:
                return type(node).__name__ == "Module"
            if type(parent).__name__ not in self._BLOCKS or id(node) not in self._in_body:
                return False
            node = parent

    def statement_of(self, node: Any) -> Any:
        """The statement holding the node, or None."""
        import ast

        while node is not None and not isinstance(node, ast.stmt):
            node = self.parents.get(node)
        return node

    def finding(self, node: Any, message: str, fix: Fix | None) -> Finding | None:
        """The rule's finding at the node, at libcst's positions (columns in characters); None where a form
        feed comes before it on its line (libcst counts a line's columns from after its last form feed)."""
        lines = self.lines
        before_start = lines[node.lineno - 1].encode()[: node.col_offset].decode()
        before_end = lines[node.end_lineno - 1].encode()[: node.end_col_offset].decode()
        if "\f" in before_start or "\f" in before_end:
            return None
        rule = self.rule
        return Finding(
            code=rule.code,
            message=message,
            path=self.path,
            start=Position(node.lineno, len(before_start) + 1),
            end=Position(node.end_lineno, len(before_end) + 1),
            severity=rule.severity,
            fix=fix,
            url=rule.url(),
        )

    @functools.cached_property
    def lines(self) -> list[str]:
        from aoti_lint.model.syntax_tree import source_lines

        return source_lines(self.code.text)
