"""libcst's parse of a Python text the fix layer rewrites: refused (with CPython's own wording) where CPython's parser
gives up or libcst's would overflow the C stack, and the check that a fixed text still parses."""

from __future__ import annotations

from aoti_lint.model.parse import Refusal, python_syntax_error, syntax_error
from aoti_lint.read.source import PYTHON_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import libcst as cst

    from aoti_lint.read.source import SourceFile

# Past this many bytes of a Python text, libcst builds no fix (its parse costs time and memory many times the
# text's size: docs/reliability.md, "Cost limits"); the rules read the whole text from ``ast``.
MAX_LIBCST_BYTES = 200_000


def parse_module(source: SourceFile, text: str) -> cst.Module | Refusal:
    """The module, or why it cannot be parsed."""
    refused = syntax_error(text)
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
    return message, row, column


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
