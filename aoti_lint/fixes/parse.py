"""libcst's parse of a Python text the fix layer rewrites: refused (with CPython's own wording) where CPython's parser
gives up or libcst's would overflow the C stack, and the check that a fixed text still parses as CPython reads it."""

from __future__ import annotations

import functools

from aoti_lint.model.parse import Refusal, syntax_error
from aoti_lint.read.source import PYTHON_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import libcst as cst

    from aoti_lint.read.source import SourceFile

# Past this many bytes of a Python text, libcst builds no fix (its parse costs time and memory many times the
# text's size: docs/reliability.md, "Cost limits"); the rules read the whole text from ``ast``.
MAX_LIBCST_BYTES = 200_000


@functools.lru_cache(maxsize=2)
def libcst_module(text: str) -> cst.Module:
    """libcst's module of a text, parsed once however many fix steps ask in a row (the check builds a file's edits,
    then the migration rewrites the same text). Its nodes are never changed in place: a rewrite makes new ones."""
    import libcst as cst

    return cst.parse_module(text)


def parse_module(source: SourceFile, text: str) -> cst.Module | Refusal:
    """The module, or why it cannot be parsed."""
    refused = syntax_error(text)
    if refused is not None:
        return refused
    import libcst as cst

    try:
        return libcst_module(text)
    except cst.ParserSyntaxError as exc:
        message, row, column = f"SyntaxError: {exc.message}", exc.raw_line, exc.raw_column + 1
    except RecursionError:
        message, row, column = "SyntaxError: too deeply nested to parse", 1, 1
    except (ValueError, UnicodeError) as exc:
        message, row, column = f"SyntaxError: {exc}", 1, 1
    return message, row, column


def parse_error(source: SourceFile) -> str | None:
    """Why CPython would refuse the fixed text of a Python file, or None: the program must still run, and its
    parser is the one that runs it. Re-parsed whatever the prefilter says (the check of the fixed text has parsed
    it already: ``syntax_tree.parse`` keeps the last text's tree)."""
    if source.kind not in PYTHON_KINDS:
        return None
    refused = syntax_error(source.text)
    return None if refused is None else refused[0].removeprefix("SyntaxError: ")
