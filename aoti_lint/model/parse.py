"""The parse step: one libcst parse of a Python text, refused (with CPython's own wording) where CPython's parser
gives up or libcst's would overflow the C stack.

libcst is imported only here, inside the functions, i.e. only when some file passes the prefilter.
"""

from __future__ import annotations

import re

from aoti_lint.read.source import PYTHON_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import libcst as cst

    from aoti_lint.read.source import SourceFile

# Why a text does not parse: the message, its row and its column (AOTI000 reports it, ``rules.syntax_error``).
Refusal = tuple[str, int, int]


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


def syntax_error(text: str) -> Refusal | None:
    """Why CPython's parser refuses a text, in its own wording; None when it parses. Asked of
    every text a rule reads, whether or not libcst reads it next, so that its AOTI000 never depends on the path
    it takes through the engine. ``ast`` compiles nothing and runs nothing; a text it refuses never reaches
    libcst, whose native parser overflows the C stack past CPython's nesting limits (~1,200 nested brackets) or
    takes minutes on them."""
    from aoti_lint.model.syntax_tree import parse

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
    return message, row, column


def python_syntax_error(text: str) -> tuple[str, int, int] | None:
    """CPython's own wording of a syntax error (clearer than libcst's), found by ast.parse: it compiles
    nothing and runs nothing."""
    from aoti_lint.model.syntax_tree import parse

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


# Past this many bytes of a Python text, libcst builds no fix (its parse costs time and memory many times the
# text's size: docs/reliability.md, "Cost limits"); the rules read the whole text from ``ast``.
MAX_LIBCST_BYTES = 200_000


_WORD = re.compile(r"\w+")


def folds_names(text: str) -> bool:
    """Whether some word of the text is not its own NFKC form, which ``ast`` gives identifiers and libcst does not
    (U+FF58, the fullwidth x, is ``x`` to one and another name to the other): a superset of the identifiers,
    strings and comments included."""
    import unicodedata

    return not text.isascii() and any(unicodedata.normalize("NFKC", word) != word for word in _WORD.findall(text))
