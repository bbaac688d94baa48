"""One ``ast.parse`` per text, shared by the second prefilter stage and the syntax checks.

``ast`` compiles nothing and runs nothing. The last text's outcome is kept: the runner, then ``check_source``,
then the parse guard ask about the same text in a row.
"""

from __future__ import annotations

import ast
import functools


@functools.lru_cache(maxsize=1)
def parse(text: str) -> ast.Module | BaseException:
    """The module's tree, or the exception CPython's parser raised (SyntaxError, RecursionError, ...)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return exc
