"""Imports that fixes left unused, removed as a person would: no blank line left opening a block.

Used after fixes (``Rule.tidy_after_fix``); imports libcst, so only fix runs load it, but not libcst's codemod
framework (which imports ``libcst.matchers``: about a second), nor its scope analysis: an import goes only when the
name it binds is spelled nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# (module, imported name or None for `import module`, alias or None)
ImportEntry = tuple[str, str | None, str | None]


def drop_unused(text: str, wanted: Callable[[str, str | None, str | None], bool]) -> str:
    """``text`` without the imports selected by ``wanted(module, name, alias)`` that no code uses any more.

    Text that is not Python comes back unchanged.
    """
    from aoti_lint.fixes.parse import libcst_module

    try:
        module = libcst_module(text)
    except cst.ParserSyntaxError:
        return text
    from aoti_lint.fixes.node_positions import gives_back

    if not gives_back(module.code, text):
        return text  # libcst does not give the text back: its code generation would edit lines no fix touched
    imports, spelled, strings = _imports(module)
    # An import goes only when the name it binds appears nowhere else in the code, nor in any string (`__all__`, a
    # string annotation): one still spelled somewhere stays, even where a local of that name shadows it.
    entries = [
        entry
        for entry in imports
        if wanted(*entry) and bound_name(entry) not in spelled and not _in_strings(bound_name(entry), strings)
    ]
    if not entries:
        return text
    tidied = module.visit(RemoveImports(set(entries)))
    from aoti_lint.fixes.edits import with_last_line_end

    return with_last_line_end(without_blank_openings(module, tidied).code, text)


def _imports(module: cst.Module) -> tuple[list[ImportEntry], set[str], list[str]]:
    """The module's absolute imports, every name spelled in its code outside them, and its strings' texts."""
    found: list[ImportEntry] = []
    spelled: set[str] = set()
    strings: list[str] = []

    class Finder(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            for alias in node.names:
                asname = _as_name(alias)
                found.append((cst.helpers.get_full_name_for_node_or_raise(alias.name), None, asname))
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
                return False
            source = cst.helpers.get_full_name_for_node_or_raise(node.module)
            for alias in node.names:
                asname = _as_name(alias)
                found.append((source, cst.helpers.get_full_name_for_node_or_raise(alias.name), asname))
            return False

        def visit_Name(self, node: cst.Name) -> None:
            spelled.add(node.value)

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            strings.append(node.value)

        def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
            strings.append(node.value)

    module.visit(Finder())
    return found, spelled, strings


def _in_strings(name: str, strings: list[str]) -> bool:
    import re

    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    return any(word.search(text) for text in strings)


class RemoveImports(cst.CSTTransformer):
    """Takes the given (module, name, alias) imports out of their statements, wherever they stand; a statement left
    with none goes. The caller has checked that nothing else spells the names they bind."""

    def __init__(self, entries: set[ImportEntry]) -> None:
        super().__init__()
        self.entries = entries

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> Any:
        if updated_node.relative or updated_node.module is None or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        source = cst.helpers.get_full_name_for_node(updated_node.module)
        return self._keep(updated_node, lambda alias: (source, cst.helpers.get_full_name_for_node(alias.name)))

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> Any:
        return self._keep(updated_node, lambda alias: (cst.helpers.get_full_name_for_node(alias.name), None))

    def _keep(self, node: Any, key: Callable[[cst.ImportAlias], tuple[str | None, str | None]]) -> Any:
        names = [alias for alias in node.names if (*key(alias), _as_name(alias)) not in self.entries]
        if len(names) == len(node.names):
            return node
        if not names:
            return cst.RemoveFromParent()
        # The last alias kept takes the comma the statement's last alias had (a parenthesised list keeps its own).
        names[-1] = names[-1].with_changes(comma=node.names[-1].comma)
        return node.with_changes(names=names)


def bound_name(entry: ImportEntry) -> str:
    """The name an import binds: its alias, the name imported from a module, or a module's first part."""
    module, name, alias = entry
    return alias or name or module.split(".")[0]


def without_blank_openings(before: cst.Module, after: cst.Module) -> cst.Module:
    """``after`` (``before`` with statements removed) where a block whose first statement went does not start
    with the blank lines that separated that statement from the next one. At the top of a file, they go only
    when no comment heads the file."""
    if after is before:
        return after
    old, new = _blocks(before), _blocks(after)
    if len(old) != len(new):  # not a removal of statements only: leave it as it is
        return after
    flags = [
        bool(n.body) and len(n.body) < len(o.body) and before.code_for_node(o.body[0]) != after.code_for_node(n.body[0])
        for o, n in zip(old, new, strict=True)
    ]
    if not any(flags):
        return after
    return after.visit(_StripOpenings(flags))


def _blocks(module: cst.Module) -> list[cst.Module | cst.IndentedBlock]:
    """The module and its indented blocks, in the order a visit enters them."""
    return [node for node in statement_nodes(module) if isinstance(node, cst.Module | cst.IndentedBlock)]


# What holds statements: blocks and suites, statements, and the clauses of compound statements. Expressions hold none
# (a lambda has no block), so a walk of these alone meets every statement, block and import.
_HOLDS_STATEMENTS = (
    cst.BaseSuite,
    cst.BaseStatement,
    cst.Else,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.MatchCase,
)


def statement_nodes(module: cst.Module) -> list[cst.CSTNode]:
    """The module, its statements, blocks and suites and their clauses, and the small statements of its lines (an
    import among them), in the order a visit enters them: a walk that skips every expression."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            stack.extend(reversed(node.body))  # small statements: none holds another statement
        elif isinstance(node, cst.Module | cst.IndentedBlock):
            stack.extend(reversed(node.body))
        elif not isinstance(node, cst.BaseSmallStatement):
            stack.extend(child for child in reversed(node.children) if isinstance(child, _HOLDS_STATEMENTS))
    return found


class _StripOpenings(cst.CSTTransformer):
    """Visits the blocks in the order ``_blocks`` lists them and strips the flagged ones' opening blank lines."""

    def __init__(self, flags: list[bool]) -> None:
        super().__init__()
        self.flags = flags
        self.count = 0
        self.open: list[int] = []

    def visit_Module(self, node: cst.Module) -> bool:
        return self._enter()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return self._enter()

    def _enter(self) -> bool:
        self.open.append(self.count)
        self.count += 1
        return True

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock):
        return self._strip(updated_node)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module):
        if any(line.comment is not None for line in updated_node.header):
            self.open.pop()
            return updated_node
        return self._strip(updated_node)

    def _strip(self, block):
        if not self.flags[self.open.pop()]:
            return block
        first = block.body[0]
        lines = list(first.leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        return block.with_changes(body=[first.with_changes(leading_lines=lines), *block.body[1:]])


def _as_name(alias: cst.ImportAlias) -> str | None:
    """The name ``import a as b`` binds (``b``), or None without ``as``."""
    asname = alias.asname
    return asname.name.value if asname is not None and isinstance(asname.name, cst.Name) else None
