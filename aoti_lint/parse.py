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
    import libcst as cst

    try:
        if "\x00" in text:
            raise ValueError("source code contains NUL bytes")
        if _too_deep_for_python(text):
            raise RecursionError
        limit = _over_tokenizer_limit(text)
        if limit is not None:
            # No Python accepts it; past these limits libcst's native parser overflows the C stack (a
            # segfault, ~1,200 nested brackets) or takes minutes, so it is never given such a text.
            message, row, column = limit
        else:
            return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message, row, column = python_syntax_error(text) or (
            f"SyntaxError: {exc.message}",
            exc.raw_line,
            exc.raw_column + 1,
        )
    except RecursionError:
        message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
    except (ValueError, UnicodeError) as exc:
        message, row, column = f"SyntaxError: {exc}", 1, 1
    return syntax_error_finding(source, message, row, column)


def _too_deep_for_python(text: str) -> bool:
    """Whether CPython's own parser gives up on the nesting (thousands of chained attributes or operators).

    libcst takes minutes on such files, or overflows the C stack; ast.parse refuses them in milliseconds,
    and a file Python cannot compile needs no further analysis. It compiles nothing and runs nothing.
    """
    from aoti_lint.pyast import parse

    return isinstance(parse(text), (RecursionError, MemoryError))


# CPython's tokenizer limits (200 nested brackets, 100 indentation levels), the same in every version.
_TOKENIZER_LIMITS = ("too many nested parentheses", "too many levels of indentation")


def _over_tokenizer_limit(text: str) -> tuple[str, int, int] | None:
    """CPython's error when ``text`` nests past its tokenizer's limits, else None."""
    from aoti_lint.pyast import parse

    outcome = parse(text)
    if isinstance(outcome, SyntaxError) and outcome.msg in _TOKENIZER_LIMITS:
        return f"SyntaxError: {outcome.msg}", outcome.lineno or 1, outcome.offset or 1
    return None


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
