"""What AOTI201 (``debug_env_var``) and AOTI202 (``debug_inductor_config``) share: the byte patterns their
prefilters are built from, the removal fix, and the reading of a Python module both are built on
(``PythonSwitchReading``: which code runs only under a debug condition, where a finding lies, what a fix removes)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Sequence

from aoti_lint.diagnostics import Applicability, Edit, Finding, Fix, Position
from aoti_lint.knowledge.debug_switches import (
    DEBUG_CONDITION_MARKER,
    DEBUGGING_TOOL_FOLDERS,
    DEBUGGING_TOOL_NAME_WORDS,
)
from aoti_lint.rules.base import AstReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from aoti_lint.model.semantic import SemanticModel
    from aoti_lint.rules.base import AstModule

# What builds a fix's edits (``Fix.build``).
Removal = Callable[[], tuple[Edit, ...]]


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


def sets_one_key(call: ast.Call) -> bool:
    """The call sets exactly one key: ``f(K=V)`` or ``f({K: V})``."""
    if len(call.args) + len(call.keywords) != 1:
        return False
    if call.keywords:
        return call.keywords[0].arg is not None
    arg = call.args[0]
    return type(arg) is ast.Dict and len(arg.keys) == 1


def is_debugging_tool(path: str) -> bool:
    """Whether the file at ``path`` (as aoti-lint shows it) is a debugging tool by its folder or its name."""
    parts = path.replace("\\", "/").split("/")
    folders, name = parts[:-1], parts[-1]
    if DEBUGGING_TOOL_FOLDERS.intersection(folders):
        return True
    return not DEBUGGING_TOOL_NAME_WORDS.isdisjoint(re.split(r"[_.\-]", name.lower()))


def remove_fix(name: str, edits: Sequence[Edit], path: str) -> Fix | None:
    """The fix removing a setting with ``edits`` (a scanner's, in a file that is not Python), none in a debugging
    tool (its switches are there on purpose)."""
    if is_debugging_tool(path):
        return None
    return Fix(Applicability.UNSAFE, f"Remove `{name}`", tuple(edits), reason=WANTED_WHERE_IT_IS) if edits else None


def removal_fix(name: str, build: Removal | None, path: str) -> Fix | None:
    """The fix removing a setting whose edits ``build`` makes (``aoti_lint.fixes.removals``); none where the setting
    cannot go alone (``build`` None) or in a debugging tool (its switches are there on purpose)."""
    if build is None or is_debugging_tool(path):
        return None
    return Fix(Applicability.UNSAFE, f"Remove `{name}`", build=build, reason=WANTED_WHERE_IT_IS)


# Why removing a debug switch is unsafe (the rules' "Fix safety").
WANTED_WHERE_IT_IS = "the switch may be wanted where it is, e.g. in a job that exists to debug"


# Where a node's own names are bound: what a dict variable holds is known within one of these.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class PythonSwitchReading(AstReader):
    """One Python module read for AOTI201 or AOTI202: ``read`` is called for each node of the reader's types, knowing
    whether an ``if`` whose condition mentions debug holds it (``deliberate``: switched on on purpose) and the
    function or class whose body it is in (``scope``: its decorators too); then ``finish``. A fix's edits are built
    by ``aoti_lint.fixes.removals`` at the place named here, when a run needs them."""

    def __init__(self, rule: Any, module: AstModule) -> None:
        super().__init__(rule, module)
        self.tree, self.text, self.path = module.tree, module.text, module.path
        self.parents = module.parents
        self._current: ast.AST = module.tree
        self._debug_tests: dict[int, bool] = {}

    @property
    def lines(self) -> list[str]:
        return self.module.lines

    @property
    def model(self) -> SemanticModel:
        return self.module.model

    def visit(self, node: ast.AST) -> None:
        self._current = node
        self.read(node)

    def read(self, node: ast.AST) -> None:
        """Read one node of the reader's types."""

    def finish(self) -> None:
        """Report what is known once every node is read."""

    def findings(self) -> list[Finding]:
        self.finish()
        return self.found

    @property
    def deliberate(self) -> bool:
        """Whether an ``if`` whose condition mentions debug holds the node being read (its test, its branches)."""
        parent = self.parents.get(self._current)
        while parent is not None:
            if type(parent) is ast.If and self._debug_test(parent):
                return True
            parent = self.parents.get(parent)
        return False

    def _debug_test(self, node: ast.If) -> bool:
        found = self._debug_tests.get(id(node))
        if found is None:
            found = self._debug_tests[id(node)] = DEBUG_CONDITION_MARKER in self.module.segment(node.test).lower()
        return found

    @property
    def scope(self) -> ast.AST:
        """The function or class whose body (or decorators) holds the node being read, else the module."""
        parent = self.parents.get(self._current)
        while parent is not None and not isinstance(parent, _SCOPES):
            parent = self.parents.get(parent)
        return parent if parent is not None else self.tree

    def report(self, node: Any, name: str, text: str, removal: Removal | None, width: int | None = None) -> None:
        """A finding at ``node`` (its first ``width`` characters, or all of it) whose fix removes the setting of
        ``name`` with the edits ``removal`` builds (no fix where it is None)."""
        fix = removal_fix(name, removal, self.path)
        self.found.append(self.rule.finding_at(node, self.module, text, fix, width))

    # The removals a fix may make

    def start(self, node: Any) -> Position:
        return self.module.start(node)

    def statement_removal(self, statement: ast.stmt) -> Removal:
        from aoti_lint.fixes.removals import remove_statement

        return functools.partial(remove_statement, self.text, self.start(statement))

    def call_statement_removal(self, call: ast.Call) -> Removal | None:
        """Removing the statement that is the call alone; None where the call is part of something else."""
        statement = self.parents.get(call)
        return self.statement_removal(statement) if type(statement) is ast.Expr else None

    def element_removal(self, node: Any) -> Removal:
        """Removing the dict entry whose key is ``node`` (or the ``**`` entry whose value is ``node``), or the
        keyword argument ``node``."""
        from aoti_lint.fixes.removals import remove_element

        return functools.partial(remove_element, self.text, self.start(node))
