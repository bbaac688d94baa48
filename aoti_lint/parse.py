"""The parse step: one libcst parse of a Python text, refused (with CPython's own wording) where CPython's parser
gives up or libcst's would overflow the C stack.

libcst is imported only here, inside the functions, i.e. only when some file passes the prefilter.
"""

from __future__ import annotations

from aoti_lint.diagnostics import Finding, Position
from aoti_lint.rules.syntax_error import SyntaxErrorRule
from aoti_lint.source import PYTHON_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import libcst as cst

    from aoti_lint.source import SourceFile


def syntax_error_finding(source: SourceFile, message: str, row: int, column: int) -> Finding:
    return Finding(
        code=SyntaxErrorRule.code,
        message=message,
        path=source.display_path,
        start=Position(max(row, 1), max(column, 1)),
        end=Position(max(row, 1), max(column, 1)),
        severity=SyntaxErrorRule.severity,
        url=SyntaxErrorRule.url(),
    )


def parse_module(source: SourceFile, text: str) -> cst.Module | Finding:
    """The module, or the syntax error (an AOTI000 finding) that stops it from being parsed."""
    refused = syntax_error(source, text)
    if refused is not None:
        return refused
    import libcst as cst

    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message, row, column = f"SyntaxError: {exc.message}", exc.raw_line, exc.raw_column + 1
    except RecursionError:
        message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
    except (ValueError, UnicodeError) as exc:
        message, row, column = f"SyntaxError: {exc}", 1, 1
    return syntax_error_finding(source, message, row, column)


def syntax_error(source: SourceFile, text: str) -> Finding | None:
    """The AOTI000 finding of a text CPython's parser refuses, in its own wording; None when it parses. Asked of
    every Python file whether or not libcst reads it next, so that a file's AOTI000 never depends on what else it
    holds. ``ast`` compiles nothing and runs nothing; a text it refuses never reaches libcst, whose native parser
    overflows the C stack past CPython's nesting limits (~1,200 nested brackets) or takes minutes on them."""
    from aoti_lint.pyast import parse

    if "\x00" in text:
        message, row, column = "SyntaxError: source code contains NUL bytes", 1, 1
    else:
        outcome = parse(text)
        if isinstance(outcome, SyntaxError):
            message, row, column = f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
        elif isinstance(outcome, (RecursionError, MemoryError)):
            message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
        elif isinstance(outcome, BaseException):
            message, row, column = f"SyntaxError: {outcome}", 1, 1
        else:
            return None
    return syntax_error_finding(source, message, row, column)


def python_syntax_error(text: str) -> tuple[str, int, int] | None:
    """CPython's own wording of a syntax error (clearer than libcst's), found by ast.parse: it compiles
    nothing and runs nothing."""
    from aoti_lint.pyast import parse

    outcome = parse(text)
    if isinstance(outcome, SyntaxError):
        return f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
    return None


def parse_error(source: SourceFile) -> str | None:
    """Why the fixed text of a Python file does not parse, or None. Re-parsed whatever the prefilter says."""
    if source.kind not in PYTHON_KINDS:
        return None
    import libcst as cst

    try:
        cst.parse_module(source.text)
    except Exception as exc:  # any parser failure means: do not write
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        cpython = python_syntax_error(source.text)
        return cpython[0].removeprefix("SyntaxError: ") if cpython else first_line
    return None
