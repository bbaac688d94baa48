"""What CPython's parser says of a Python text: why it refuses it, in its own wording (AOTI000), and whether its
names are read otherwise than they are written (NFKC)."""

from __future__ import annotations

import re

# Why a text does not parse: the message, its row and its column (AOTI000 reports it, ``rules.syntax_error``).
Refusal = tuple[str, int, int]


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


_WORD = re.compile(r"\w+")


def folds_names(text: str) -> bool:
    """Whether some word of the text is not its own NFKC form, which ``ast`` gives identifiers and libcst does not
    (U+FF58, the fullwidth x, is ``x`` to one and another name to the other): a superset of the identifiers,
    strings and comments included."""
    import unicodedata

    return not text.isascii() and any(unicodedata.normalize("NFKC", word) != word for word in _WORD.findall(text))
