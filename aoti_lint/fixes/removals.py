"""The edits that remove a statement, a dict entry or a call's argument, for the fixes of rules that read the code
from ``ast``: the rule names what goes by where it starts in the text, and libcst, the one parser here that keeps
every comma, comment and blank line, says what text that is. Only a run that applies or shows a fix's edits
builds them (``Fix.build``), so only a file that gets an edit is parsed with libcst."""

from __future__ import annotations

import functools
import re

from aoti_lint.diagnostics import Edit, Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.fixes.node_positions import NodePositions

# Rows as the edits count them (a lone "\r" ends a line too, see aoti_lint.fixes.edits).
_LINE_END = re.compile(r"\r\n?|\n")


class _Module:
    """One text's libcst module, where each of its nodes lies, and its statements and elements by start."""

    def __init__(self, text: str) -> None:
        import libcst as cst

        from aoti_lint.fixes.node_positions import NodePositions
        from aoti_lint.fixes.parse import libcst_module

        self.module = libcst_module(text)
        self.positions: NodePositions = NodePositions(self.module, text)
        self.lines = _LINE_END.split(text)
        # libcst's code generation moves form feeds (its columns are counted on the code it generates): a line
        # holding one is mapped to the text's by the characters other than form feeds (``_column``).
        self.code_lines = self.lines if "\f" not in text else _LINE_END.split(self.module.code)
        self.statements: dict[Position, Any] = {}
        # (start, end, element) of each dict entry by its key (a ``**`` entry by its value) and each keyword argument
        # by its keyword: an ``ast`` key's start lies within (libcst's key holds the parentheses around it, ``ast``'s
        # not).
        self.elements: list[tuple[Position, Position, Any]] = []
        for node in self.positions:
            if isinstance(node, cst.BaseSmallStatement):
                start = self.start(node)
                line = self.lines[start.row - 1]
                while line[start.column - 1 : start.column] == "\f":  # libcst's statement holds a form feed before it
                    start = Position(start.row, start.column + 1)
                self.statements[start] = node
            elif isinstance(node, cst.DictElement):
                self.elements.append((self.start(node.key), self.end(node.key), node))
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                self.elements.append((self.start(node.keyword), self.end(node.keyword), node))
            elif isinstance(node, cst.StarredDictElement):  # by its value: ``ast`` has no node for the entry
                self.elements.append((self.start(node.value), self.end(node.value), node))

    def _at(self, line: int, column: int) -> Position:
        code_line = self.code_lines[line - 1] if line <= len(self.code_lines) else ""
        text_line = self.lines[line - 1] if line <= len(self.lines) else ""
        if code_line == text_line:
            return Position(line, column + 1)
        wanted = len(code_line[:column].replace("\f", ""))
        seen = index = 0
        while seen < wanted and index < len(text_line):
            seen += text_line[index] != "\f"
            index += 1
        return Position(line, index + 1)

    def start(self, node: Any) -> Position:
        point = self.positions[node].start
        return self._at(point.line, point.column)

    def end(self, node: Any) -> Position:
        point = self.positions[node].end
        return self._at(point.line, point.column)


@functools.lru_cache(maxsize=1)
def _read(text: str) -> _Module:
    return _Module(text)


def remove_statement(text: str, start: Position) -> tuple[Edit, ...]:
    """Remove the small statement starting at ``start``, leaving valid code (`pass` in an emptied block)."""
    import libcst as cst

    read = _read(text)
    statement = read.statements.get(start)
    if statement is None:
        return ()
    line = read.positions.parent(statement)
    body = list(line.body)  # type: ignore[union-attr]
    if len(body) > 1:
        index = next(i for i, small in enumerate(body) if small is statement)
        if index + 1 < len(body):
            return (Edit("", read.start(statement), read.start(body[index + 1])),)
        return (Edit("", read.end(body[index - 1]), read.end(statement)),)
    block = read.positions.parent(line) if isinstance(line, cst.SimpleStatementLine) else None
    if isinstance(block, cst.Module) or (isinstance(block, cst.IndentedBlock) and len(block.body) > 1):
        first, last = read.start(line).row, read.end(line).row
        first, last = _with_blank_lines(text, first, last, opens_block=block.body[0] is line)
        start, end = Position(first, 1), Position(last + 1, 1)
        # Empty edits at both ends: removals whose ranges meet (neighbouring statements) then overlap and go
        # in separate rounds, so each one's blank lines are counted on the text the other left.
        edits = [Edit("", start, end), Edit("", start, start), Edit("", end, end)]
        if isinstance(block, cst.IndentedBlock):
            # An empty edit at the block's header: two removals from one block overlap there, so they
            # are applied in separate rounds and the last statement left becomes `pass`, never nothing.
            anchor = read.start(block.header)
            edits.append(Edit("", anchor, anchor))
        return tuple(edits)
    return (Edit("pass", read.start(statement), read.end(statement)),)


def _with_blank_lines(text: str, first: int, last: int, opens_block: bool) -> tuple[int, int]:
    """The rows to remove with statement rows ``first..last`` so that no run of blank lines is left: the
    blank lines around it merge into the longer of the two, none opens a block, none ends the file."""
    lines = _LINE_END.split(text)
    real = len(lines) - (1 if lines and lines[-1] == "" else 0)  # the "" after a final newline is no line

    def blank(row: int) -> bool:
        return 1 <= row <= real and not lines[row - 1].strip()

    before = after = 0
    while blank(first - before - 1):
        before += 1
    while blank(last + after + 1):
        after += 1
    if last + after >= real:
        return first - before, last + after
    if opens_block:
        return first, last + after
    return first, last + min(before, after)


def remove_element(text: str, at: Position) -> tuple[Edit, ...]:
    """Remove the dict entry whose key (a ``**`` entry: whose value), or the call argument whose keyword, holds
    ``at``, and the comma that goes with it."""
    import libcst as cst

    read = _read(text)
    found = [(start, element) for start, end, element in read.elements if start <= at < end]
    if not found:
        return ()
    element = max(found, key=lambda pair: pair[0])[1]  # the innermost
    parent = read.positions.parent(element)
    elements = list(parent.elements if isinstance(parent, cst.Dict) else parent.args)  # type: ignore[union-attr]
    index = next(i for i, item in enumerate(elements) if item is element)

    def span(item: Any) -> tuple[Position, Position]:
        first = getattr(item, "key", None) or getattr(item, "keyword", None) or item.value
        if getattr(item, "star", "") or isinstance(item, cst.StarredDictElement):
            first = item
        return read.start(first), read.end(item.value)

    start, end = span(element)
    if index + 1 < len(elements):
        return (Edit("", start, span(elements[index + 1])[0]),)
    if index > 0:
        return (Edit("", span(elements[index - 1])[1], end),)
    if isinstance(element.comma, cst.Comma):
        end = read.end(element.comma)
    return (Edit("", start, end),)
