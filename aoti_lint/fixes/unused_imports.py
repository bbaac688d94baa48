"""Imports that fixes left unused, removed as a person would: no blank line left opening a block.

Used after fixes (``Rule.tidy_after_fix``); imports libcst, so only fix runs load it.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

# (module, imported name or None for `import module`, alias or None)
ImportEntry = tuple[str, str | None, str | None]


def drop_unused(text: str, wanted: Callable[[str, str | None, str | None], bool]) -> str:
    """``text`` without the imports selected by ``wanted(module, name, alias)`` that no code uses any more.

    Text that is not Python comes back unchanged.
    """
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return text
    from aoti_lint.model.node_positions import gives_back

    if not gives_back(module.code, text):
        return text  # libcst does not give the text back: its code generation would edit lines no fix touched
    imports, spelled = _imports(module)
    # libcst's scope analysis of the whole module (seconds for a large one) decides only about imports whose name
    # no longer appears in the code: one still spelled somewhere stays, even where a local of that name shadows it.
    entries = [entry for entry in imports if wanted(*entry) and _bound_name(entry) not in spelled]
    if not entries:
        return text
    from libcst.codemod import CodemodContext  # imports libcst.matchers (about a second): only when needed
    from libcst.codemod.visitors import RemoveImportsVisitor

    context = CodemodContext()
    for name, obj, asname in entries:
        RemoveImportsVisitor.remove_unused_import(context, name, obj, asname)
    tidied = RemoveImportsVisitor(context).transform_module(module)
    from aoti_lint.fixes.edits import with_last_line_end

    return with_last_line_end(without_blank_openings(module, tidied).code, text)


def _imports(module: cst.Module) -> tuple[list[ImportEntry], set[str]]:
    """The module's absolute imports, and every name spelled in its code outside them."""
    found: list[ImportEntry] = []
    spelled: set[str] = set()

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

    module.visit(Finder())
    return found, spelled


def _bound_name(entry: ImportEntry) -> str:
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
    found: list[cst.Module | cst.IndentedBlock] = []

    class Collector(cst.CSTVisitor):
        def visit_Module(self, node: cst.Module) -> None:
            found.append(node)

        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            found.append(node)

    module.visit(Collector())
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
