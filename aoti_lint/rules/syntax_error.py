"""AOTI000: the file could not be read as Python, so no other rule could look at it."""

from __future__ import annotations

from aoti_lint.diagnostics import Severity
from aoti_lint.knowledge.references import PEP_263
from aoti_lint.rules.base import Invalid, Rule, Valid
from aoti_lint.source import PYTHON_KINDS


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a file that aoti-lint could not parse: a syntax error, bytes that are not valid in the file's
    declared encoding (PEP 263), or NUL bytes. The finding points at the line and column of the problem.

    ## Why is this bad?
    A file that does not parse cannot be checked: every other rule is blind to it, and `--fix` will not
    touch it. The run goes on with the other files.
    """

    code = "AOTI000"
    name = "syntax-error"
    references = (PEP_263,)
    summary = "The file could not be parsed; no other rule could check it"
    severity = Severity.ERROR
    file_kinds = PYTHON_KINDS
    # No token: any file may be broken. Stage one asks CPython's parser of every Python file instead
    # (``FileContext.reads``), and the entry point does too (``fast_path``).
    triggers = ()

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
