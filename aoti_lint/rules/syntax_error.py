"""AOTI000: the file could not be read as Python, so no other rule could look at it."""

from __future__ import annotations

from aoti_lint.diagnostics import Finding, Position, Severity
from aoti_lint.knowledge.references import PEP_263
from aoti_lint.read.source import PYTHON_KINDS
from aoti_lint.rules.base import Invalid, Rule, Valid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from aoti_lint.read.source import SourceFile


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a file that aoti-lint must read but that CPython cannot parse: a syntax error, bytes that are not
    valid in the file's declared encoding (PEP 263), or NUL bytes. The finding points at the line and column of
    the problem. aoti-lint must read a file whose text spells what one of the enabled rules reads (a name of the
    API, a debug switch, a `.so` or `.pt2` path...), as its prefilter tells from the bytes and the text without
    parsing; a file it settles cannot hold a finding, and is not parsed at all: run ruff (or
    `python -m py_compile`) to find every syntax error.

    ## Why is this bad?
    A file that does not parse cannot be checked: every rule that wanted to read it is blind to it, and `--fix`
    will not touch it. The run goes on with the other files.

    ## Known problems
    Parsing every file only to report syntax errors would make a run over a large tree several times slower
    (most of its files hold none of the rules' words and are never decoded), for errors every Python linter
    already reports.
    """

    code = "AOTI000"
    name = "syntax-error"
    references = (PEP_263,)
    summary = "A file some rule must read could not be parsed; no rule could check it"
    severity = Severity.ERROR
    file_kinds = PYTHON_KINDS
    # No token of its own: the engine asks CPython's parser of every file another rule's words bring in
    # (``model.parse.syntax_error``).
    triggers = ()

    @classmethod
    def refusal(cls, source: SourceFile, message: str, row: int, column: int) -> Finding:
        """The finding of a text that does not parse, at the row and column given."""
        where = Position(max(row, 1), max(column, 1))
        return Finding(cls.code, message, source.display_path, where, where, cls.severity, url=cls.url())

    VALID = [Valid("x = 1\n")]
    INVALID = [
        Invalid(
            """
            import torch
            so = torch._export.aot_compile(model, (x,)
            """,
            message_contains="SyntaxError",
        )
    ]
