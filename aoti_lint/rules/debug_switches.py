"""What AOTI201 (``debug_env_var``) and AOTI202 (``debug_inductor_config``) share: the byte patterns their
prefilters are built from, literal values, the removal fix, and the Python plumbing of both rules (where
statements and elements are, how to remove them, which code runs only under a debug condition)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from aoti_lint.diagnostics import Applicability, Edit, Fix, Position
from aoti_lint.knowledge.debug_switches import (
    DEBUG_CONDITION_MARKER,
    DEBUGGING_TOOL_FOLDERS,
    DEBUGGING_TOOL_NAME_WORDS,
)
from aoti_lint.lazy import cst
from aoti_lint.rules.base import PythonRule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    pass

UNKNOWN = object()
_LINE_END = re.compile(r"\r\n?|\n")


# Between a key and its value: blanks, line continuations, comments. A comment runs to the end of its line
# (one way to match it: `# ####` must not backtrack through every split).
GAP = rb"(?:\s|\\\r?\n|#[^\n]*(?![^\n]))*"
# The start of a literal that may be "on": True, a number other than 0, a string (parenthesised or not).
ON_VALUE = rb"(?:\(" + GAP + rb")*(?:True\b|(?!0\b)[0-9]|[rRuU]?[\"'])"
# `a.key = b = True`: the value comes after another target of the same assignment.
CHAINED = rb"[^\n=]*[^=!<>\n]=(?!=)"
STRING_VALUE = rb"(?:\(" + GAP + rb")*[rRuU]?[\"']"


def quoted_setting_pattern(keys: bytes, value: bytes) -> bytes:
    """A key in quotes set by a subscript assignment (``d["K"] = V``, or chained: ``d["K"] = e["K"] = V``; group
    ``settled``), a dict entry (``"K": V``; group ``entry``), or a call's two arguments (``f("K", V)``: whether the
    key is the call's first is the caller's to tell, ``opens_call``)."""
    return (
        rb"[\"'](?:"
        + keys
        + rb")[\"']"
        + GAP
        + rb"(?:(?P<settled>\])"
        + GAP
        + rb"=(?!=)"
        + GAP
        + rb"(?:"
        + value
        + b"|"
        + CHAINED
        + rb")|(?P<entry>:)"
        + GAP
        + value
        + b"|,"
        + GAP
        + value
        + b")"
    )


def is_word_byte(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


# What a name or an argument may be preceded by, read backwards over the bytes (``may_follow``, ``opens_call``).
_BLANKS = frozenset(b" \t\f\\")
_LINE_ENDS = frozenset(b"\r\n")
_OPENING = ord("(")
_CLOSING = frozenset(b")]")


def _index_before(data: bytes, at: int) -> int | None:
    """Where the byte before ``at`` that is no blank, line end or line continuation lies (-1: none); None where a
    line before it may end in a comment (it holds a `#`), which hides what precedes."""
    index = at - 1
    while index >= 0:
        byte = data[index]
        if byte in _BLANKS:
            index -= 1
        elif byte in _LINE_ENDS:
            # The line before: a comment there may sit between the name and what precedes it (inside brackets).
            start = max(data.rfind(b"\n", 0, index), data.rfind(b"\r", 0, index)) + 1
            if b"#" in data[start:index]:
                return None
            index -= 1
        else:
            return index
    return -1


def may_follow(data: bytes, at: int, allowed: frozenset[int]) -> bool:
    """Whether what precedes the name at ``at`` may be one of ``allowed``."""
    index = _index_before(data, at)
    return index is None or (index >= 0 and data[index] in allowed)


def opens_call(data: bytes, at: int) -> bool:
    """Whether the argument at ``at`` may be the first of a call: after a `(` that follows a name or a bracket."""
    opening = _index_before(data, at)
    if opening is None:
        return True
    return opening >= 0 and data[opening] == _OPENING and follows_callee(data, opening)


def follows_callee(data: bytes, at: int) -> bool:
    """Whether the `(` at ``at`` may open a call: it follows a name or a closing bracket."""
    callee = _index_before(data, at)
    return callee is None or (callee >= 0 and (is_word_byte(data[callee]) or data[callee] in _CLOSING))


def literal_value(node: Any) -> Any:
    """The value of a literal string, number, bool or None; ``UNKNOWN`` for anything else."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else UNKNOWN
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return UNKNOWN


def string_literal(node: Any) -> str | None:
    value = literal_value(node)
    return value if isinstance(value, str) else None


def sets_one_key(call: Any) -> bool:
    """The call sets exactly one key: ``f(K=V)`` or ``f({K: V})``."""
    if len(call.args) != 1 or call.args[0].star:
        return False
    arg = call.args[0]
    return arg.keyword is not None or (isinstance(arg.value, cst.Dict) and len(arg.value.elements) == 1)


def is_debugging_tool(path: str) -> bool:
    """Whether the file at ``path`` (as aoti-lint shows it) is a debugging tool by its folder or its name."""
    parts = path.replace("\\", "/").split("/")
    folders, name = parts[:-1], parts[-1]
    if DEBUGGING_TOOL_FOLDERS.intersection(folders):
        return True
    return not DEBUGGING_TOOL_NAME_WORDS.isdisjoint(re.split(r"[_.\-]", name.lower()))


def remove_fix(name: str, edits: Sequence[Edit], path: str, deferred: bool = False) -> Fix | None:
    """The fix removing a setting, none in a debugging tool (its switches are there on purpose); ``deferred``: its
    edits are left for libcst to build when a run needs them."""
    if is_debugging_tool(path):
        return None
    if deferred:
        return Fix(Applicability.UNSAFE, f"Remove `{name}`", deferred=True, reason=WANTED_WHERE_IT_IS)
    return Fix(Applicability.UNSAFE, f"Remove `{name}`", tuple(edits), reason=WANTED_WHERE_IT_IS) if edits else None


def removal_fix(name: str, build: Callable[[], tuple[Edit, ...]] | None, path: str) -> Fix | None:
    """The fix removing a setting whose edits ``build`` makes (``aoti_lint.fixes.removals``); none where the setting
    cannot go alone (``build`` None) or in a debugging tool (its switches are there on purpose)."""
    if build is None or is_debugging_tool(path):
        return None
    return Fix(Applicability.UNSAFE, f"Remove `{name}`", build=build, reason=WANTED_WHERE_IT_IS)


# Why removing a debug switch is unsafe (the rules' "Fix safety").
WANTED_WHERE_IT_IS = "the switch may be wanted where it is, e.g. in a job that exists to debug"


class PythonSwitchRule(PythonRule):
    """Shared Python plumbing: where statements and elements are, how to remove them, debug conditions."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self._debug_conditions: list[bool] = []
        self._blocks: list[Any] = []
        self._line: Any = None

    def visit_If(self, node: cst.If) -> None:
        test = self.context.module.code_for_node(node.test)
        self._debug_conditions.append(DEBUG_CONDITION_MARKER in test.lower())

    def leave_If(self, node: cst.If) -> None:
        self._debug_conditions.pop()

    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._line = node

    @property
    def deliberate(self) -> bool:
        """Inside an `if` whose condition mentions debug: switched on on purpose."""
        return any(self._debug_conditions)

    def _position(self, node: Any, end: bool = False) -> Position:
        code_range = self.context.positions()[node]
        point = code_range.end if end else code_range.start
        return Position(point.line, point.column + 1)

    def remove_statement(self, statement: Any) -> tuple[Edit, ...]:
        """Remove a small statement of the current line, leaving valid code (`pass` in an emptied block)."""
        line = self._line
        if line is None or not any(small is statement for small in line.body):
            return ()
        body = list(line.body)
        if len(body) > 1:
            index = next(i for i, small in enumerate(body) if small is statement)
            if index + 1 < len(body):
                return (Edit("", self._position(statement), self._position(body[index + 1])),)
            return (Edit("", self._position(body[index - 1], end=True), self._position(statement, end=True)),)
        block = self._blocks[-1] if self._blocks else None
        if isinstance(line, cst.SimpleStatementLine) and (
            isinstance(block, cst.Module) or (block is not None and len(block.body) > 1)
        ):
            first, last = self._position(line).row, self._position(line, end=True).row
            first, last = self._with_blank_lines(first, last, opens_block=block.body[0] is line)
            start, end = Position(first, 1), Position(last + 1, 1)
            # Empty edits at both ends: removals whose ranges meet (neighbouring statements) then overlap and go
            # in separate rounds, so each one's blank lines are counted on the text the other left.
            edits = [Edit("", start, end), Edit("", start, start), Edit("", end, end)]
            if isinstance(block, cst.IndentedBlock):
                # An empty edit at the block's header: two removals from one block overlap there, so they
                # are applied in separate rounds and the last statement left becomes `pass`, never nothing.
                anchor = self._position(block.header)
                edits.append(Edit("", anchor, anchor))
            return tuple(edits)
        return (Edit("pass", self._position(statement), self._position(statement, end=True)),)

    def _lines(self) -> list[str]:
        # Rows as the edits count them (a lone "\r" ends a line too, see aoti_lint.fixes.edits).
        return self.context.memo("debug-switch-lines", lambda: _LINE_END.split(self.context.text))

    def _with_blank_lines(self, first: int, last: int, opens_block: bool) -> tuple[int, int]:
        """The rows to remove with statement rows ``first..last`` so that no run of blank lines is left: the
        blank lines around it merge into the longer of the two, none opens a block, none ends the file."""
        lines = self._lines()
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

    def remove_element(self, elements: Sequence[Any], element: Any) -> tuple[Edit, ...]:
        """Remove a dict element or a call argument, and the comma that goes with it."""
        index = next(i for i, item in enumerate(elements) if item is element)

        def span(item: Any) -> tuple[Position, Position]:
            first = getattr(item, "key", None) or getattr(item, "keyword", None) or item.value
            if getattr(item, "star", "") or isinstance(item, cst.StarredDictElement):
                first = item
            return self._position(first), self._position(item.value, end=True)

        start, end = span(element)
        if index + 1 < len(elements):
            return (Edit("", start, span(elements[index + 1])[0]),)
        if index > 0:
            return (Edit("", span(elements[index - 1])[1], end),)
        if isinstance(element.comma, cst.Comma):
            end = self._position(element.comma, end=True)
        return (Edit("", start, end),)

    def statement_of(self, expression: Any) -> Any:
        """The small statement that is exactly ``expression`` (a call used as a statement), or None."""
        line = self._line
        if line is None:
            return None
        return next(
            (s for s in line.body if isinstance(s, cst.Expr) and s.value is expression),
            None,
        )
